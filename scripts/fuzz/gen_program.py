#!/usr/bin/env python3
# Random valid .poly programs for differential testing (issue 28): deterministic from a seed, each with
# its param values and random inputs (.npy) in ranges that keep the results finite and well-conditioned.
# Every program is checked with `polyc check` while it is built (a definition that fails is replaced).
#
#   gen_program.py --seed S --out DIR        # DIR/<name>.poly, DIR/inputs/*.npy, DIR/case.json
#   gen_program.py --seed S --print          # the program only
#   gen_program.py --huge --seed S --print   # a program with huge sizes (for `polyc check` only)
import argparse
import copy
import json
import os
import math
import random
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from polyast import (Binding, Bin, Call, ConstDecl, Equation, FuncDecl, Lit, Program, Read, Red,  # noqa: E402
                     Repeat, Sample, Tup, Un, Var, ArrayDecl)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT_POLYC = os.path.join(ROOT, "build", "compiler", "driver", "polyc")

KEYWORDS = set("param const boundary func input output inout f32 f64 i32 repeat in where sum max min select "
               "zero clamp mirror".split())
BUILTINS = {"exp", "log", "sqrt", "abs", "tanh", "min", "max", "pow", "select"}

PLAIN_ARRAYS = ["x", "y", "z", "a", "b", "u", "v", "w", "h", "s", "q", "r", "src", "dst", "img", "acc", "tmp",
                "coef", "wt", "bias", "hist", "grad", "out1", "rate", "field", "gain", "pre", "idx", "perm"]
PLAIN_PARAMS = ["N", "M", "T", "H", "W", "K", "L", "P", "Q", "E", "C", "D", "R", "S", "B", "F"]
PLAIN_INDEX = ["i", "j", "k", "l", "t", "m", "n", "r1", "r2", "k1", "k2", "ii", "jj", "c", "e", "d"]
# Identifiers that the code generators, the runtime, C, C++, OpenCL C, CUDA and their headers use (found
# in the emitted code of the examples and in the languages): a program may use any of them as a name.
COLLIDE = ["p", "program", "stream", "grid", "i0", "i1", "j1", "lane", "lanes", "G", "args", "argc", "argv",
           "row", "col", "value", "values", "timer", "device", "context", "wavefront", "N", "T", "C", "n", "t",
           "result", "scratch", "lid", "gid", "tid", "members", "width", "warp", "run", "state", "offset",
           "data", "info", "step", "steps", "limit", "next", "base", "done", "item", "group", "groups",
           "column", "columns", "lock", "locks", "progress", "band", "band0", "S0", "S1", "sum0", "polyc_min",
           "polyc_mod", "polyc_clamp", "polyc_mirror", "polyc_div_i32", "polyc_n_j1", "polyc_lo_j1", "kernel",
           "global", "local", "constant", "private", "half", "bool", "char", "uint", "ulong", "int", "float",
           "double", "long", "short", "unsigned", "signed", "void", "auto", "class", "struct", "union", "enum",
           "template", "typename", "namespace", "using", "new", "delete", "this", "operator", "friend",
           "virtual", "public", "return", "if", "else", "for", "while", "do", "switch", "case", "default",
           "break", "continue", "goto", "sizeof", "static", "extern", "inline", "register", "volatile",
           "restrict", "true", "false", "nullptr", "NULL", "and", "or", "not", "xor", "bitand", "compl", "std",
           "size_t", "int32_t", "int64_t", "INT32_MIN", "INT32_MAX", "INT_MAX", "FLT_MAX", "DBL_MAX",
           "INFINITY", "NAN", "M_PI", "EOF", "errno", "stdin", "stdout", "stderr", "printf", "exit", "abort",
           "rand", "time", "clock", "strlen", "puts", "getenv", "remove", "div", "system", "qsort",
           "main", "assert", "barrier", "get_global_id", "threadIdx", "blockIdx", "blockDim", "gridDim",
           "dim3", "warpSize", "__syncthreads", "exp", "log", "sqrt", "abs", "tanh", "pow", "fabs", "fmax",
           "fminf", "floor", "sin", "Index", "Storage", "xIndex1", "xStorage", "tmp", "red", "linux", "unix",
           "_1", "__x", "_Tmp", "CLK_LOCAL_MEM_FENCE", "POLYC_USE_FP64", "Prog", "prog_run", "prog_params",
           "ProgDevice", "ProgCompute", "ProgOpenCL", "cl_mem", "queue", "event", "buffer", "status", "err",
           "out", "tmp0", "sum1", "polyc_arg0", "polyc_point", "polyc_group", "polyc_wf_state",
           "polyc_scratch_f32", "rStorage", "strideX", "firstX", "groupSize", "graphKey", "kKernelSource",
           "S", "Shape", "shape", "launch", "stripWidth", "sharedBytes", "board", "strip",
           "runAs", "prepareAs", "indexFitsInt", "polyc_index"]
FILE_NAMES = ["prog.poly", "prog.poly", "prog.poly", "value.poly", "program.poly", "main.poly", "int.poly",
              "x-y.poly", "9lives.poly", "grid.poly", "kernel.poly", "Prog.poly"]


def npy_file(name):
    """The .npy file of an array: its name, cut and made unique by a hash when name + ".npy" would pass a
    file name's 255 bytes (identifiers of 256 characters are valid)."""
    if len(name) <= 200:
        return name + ".npy"
    import hashlib
    return name[:180] + "-" + hashlib.sha1(name.encode()).hexdigest()[:10] + ".npy"

# Bugs found by this fuzzer that the generator avoids unless --known-bugs is given; each has a minimal
# reproducer under test/fuzz-programs/regressions (XFAIL until fixed). Remove an entry when it is fixed.
KNOWN_BUGS = {}
# Names that break the generated code of some target today, in any role, and those that break it as a
# param only; from scripts/fuzz/names.py and the batches. Empty since compiler/codegen/Names.cpp spells
# every user name (issue 28; regressions/name-collision-*.poly).
KNOWN_BAD_NAMES = set()
KNOWN_BAD_PARAM_NAMES = set()

TYPES = ["f32", "f64", "i32"]
FLOAT_LITS = ["0.5", "0.25", "1.5", "2.0", "0.125", "2.", "1e-1", "2.5E-1", "0.75", "3.0", "1.0", "0.3"]
LIMIT = 1e3  # magnitude above which a float subexpression is squashed
ILIMIT = 1e5  # for i32 values (no overflow anywhere)
SIZE_MAX = 3000  # elements of one array
WORK_MAX = 60000  # instances x reduction terms of one equation


class Arr:
    """An array as the generator sees it: its declaration plus what it knows of its values."""

    def __init__(self, name, role, ty, shape, shape_vals, boundary=None):
        self.decl = ArrayDecl(name, role, ty, shape, boundary)
        self.shape_vals = list(shape_vals)
        self.bound = 1.0  # |value| <= bound (an estimate)
        self.exact = role in ("input",)  # values that every evaluation computes bit for bit
        self.data = None  # inputs and inouts: how to draw the values
        self.in_repeat = None  # the repeat block it is (re)defined in
        self.readable_after_repeat = True

    name = property(lambda self: self.decl.name)
    role = property(lambda self: self.decl.role)
    ty = property(lambda self: self.decl.ty)
    rank = property(lambda self: len(self.decl.shape))

    def size(self):
        n = 1
        for v in self.shape_vals:
            n *= v
        return n


class IVar:
    """An index variable in scope: its name, the values it takes (lo..hi-1) and a shape extent >= hi."""

    def __init__(self, name, kind, lo, hi, ext_expr, ext_val):
        self.name, self.kind = name, kind
        self.lo, self.hi = lo, hi
        self.ext_expr, self.ext_val = ext_expr, ext_val

    def count(self):
        return max(0, self.hi - self.lo)

    def bound(self):
        return max(abs(self.lo), abs(self.hi), 1)


class Ctx:
    def __init__(self, ty, ivars, readable, rep=None, domain=1):
        self.ty = ty
        self.ivars = list(ivars)
        self.readable = list(readable)
        self.rep = rep
        self.domain = domain
        self.work = 1
        self.in_gather = False
        self.self_read = None  # a callable that makes a read of the array being defined (recurrences)
        self.exact_only = ty == "i32"

    def child(self, **kw):
        c = copy.copy(self)
        c.ivars = list(self.ivars)
        for k, v in kw.items():
            setattr(c, k, v)
        return c


def mentions(e, name):
    """Whether expression e names `name` (an index variable: a fresh name, so its text is enough)."""
    return re.search(r"\b%s\b" % re.escape(name), e.render()) is not None


def lit_int(v):
    return Lit(str(v)) if v >= 0 else Un("-", Lit(str(-v)))


def add_off(e, off):
    if off == 0:
        return e
    return Bin("+", e, Lit(str(off))) if off > 0 else Bin("-", e, Lit(str(-off)))


class CheckFailed(Exception):
    pass


class Polyc:
    """Runs `polyc check` on program text; waits while the build directory is being relinked."""

    def __init__(self, path=DEFAULT_POLYC):
        self.path = path
        # Removed when this object goes (or at exit): a long fuzz run makes one per program.
        self._dir = tempfile.TemporaryDirectory(prefix="polyc-fuzz-check-")
        self.dir = self._dir.name
        self.calls = 0

    def check(self, text, filename="prog.poly"):
        self.calls += 1
        path = os.path.join(self.dir, filename)
        with open(path, "w") as f:
            f.write(text)
        for attempt in range(20):
            if not os.access(self.path, os.X_OK):
                time.sleep(30)
                continue
            try:
                p = subprocess.run([self.path, "check", path], capture_output=True, text=True, timeout=60)
            except OSError:
                time.sleep(30)
                continue
            except subprocess.TimeoutExpired:
                return False, "polyc check timed out"
            return p.returncode == 0, p.stderr
        raise RuntimeError("polyc not found at " + self.path)


class Gen:
    def __init__(self, seed, polyc=None, huge=False, known_bugs=False):
        self.seed = seed
        # Without known_bugs, the generator stays away from what KNOWN_BUGS lists (each has a reproducer
        # under test/fuzz-programs/regressions), so that a batch finds what is new.
        self.known_bugs = known_bugs
        self.rng = random.Random(seed)
        # Choices added later that leave the programs of earlier seeds as they were where not taken.
        self.extra_rng = random.Random(seed ^ 0x5EED)
        self.polyc = polyc
        self.huge = huge
        self.prog = Program()
        self.arrs = []  # Arr, in creation order
        self.globals = set()
        self.index_names = set()
        self.param_vals = {}
        self.int_consts = {}  # name -> value
        self.float_consts = {}
        self.funcs = []  # (name, arity, boundfn, int_ok)
        self.cur_repeat = None
        self.check_failures = 0
        self.collide_rate = self.rng.choice([0.0, 0.2, 0.4, 0.7])

    # ---------------------------------------------------------------- names
    def fresh_global(self, pool, param=False):
        r = self.rng
        for _ in range(200):
            if r.random() < self.collide_rate:
                name = r.choice(COLLIDE)
                if not self.known_bugs and (name in KNOWN_BAD_NAMES
                                            or (param and name in KNOWN_BAD_PARAM_NAMES)):
                    continue
            elif r.random() < 0.02:
                name = "v" + "x" * r.randint(20, 255)
            else:
                name = r.choice(pool)
                if r.random() < 0.3:
                    name += str(r.randint(0, 9))
            if name in KEYWORDS or name in self.globals or name in self.index_names:
                continue
            self.globals.add(name)
            return name
        n = len(self.globals)
        while "g%d" % n in self.globals or "g%d" % n in self.index_names:
            n += 1
        self.globals.add("g%d" % n)
        return "g%d" % n

    def fresh_index(self, taken):
        r = self.rng
        for _ in range(200):
            if r.random() < self.collide_rate:
                name = r.choice(COLLIDE)
                if not self.known_bugs and name in KNOWN_BAD_NAMES:
                    continue
            else:
                name = r.choice(PLAIN_INDEX)
            if name in KEYWORDS or name in self.globals or name in taken:
                continue
            self.index_names.add(name)
            return name
        n = 0
        while ("ix%d" % n) in self.globals or ("ix%d" % n) in taken:
            n += 1
        self.index_names.add("ix%d" % n)
        return "ix%d" % n

    # ---------------------------------------------------------------- top level
    def start_program(self):
        """The file name, the layout, the params, the consts and the program's boundary rule."""
        r = self.rng
        self.prog.filename = r.choice(FILE_NAMES)
        self.prog.layout = r.choice([0, 0, 0, 1, 2, 3])
        self.make_params()
        self.make_consts()
        if r.random() < 0.5:
            self.prog.boundary = r.choice(["zero", "clamp", "mirror"])

    def generate(self):
        r = self.rng
        self.start_program()
        self.make_funcs()
        ndefs = r.randint(1, 5)
        kinds = ["map", "map", "pieces", "pieces", "rec", "rec", "rec", "reduce", "reduce", "scalar", "gather",
                 "i32", "repeat", "update", "scatter"]
        done = 0
        for _ in range(ndefs * 3):
            if done >= ndefs:
                break
            kind = r.choice(kinds)
            if kind == "repeat" and any(isinstance(it, Repeat) for it in self.prog.items) and r.random() < 0.7:
                continue
            if self.try_add(kind):
                done += 1
        if not any(a.role in ("output", "inout") for a in self.arrs):
            if not self.try_add("map"):
                self.try_add("scalar")
        self.finish()
        return self.prog

    def generate_stepped(self):
        """A time-stepped program, the form `polyc build --stream` streams: a step param; inputs [T, ...]
        read at steps t - k under any boundary rule (k up to 3, or a window sum over the last frames), and
        inputs without the step; arrays defined over [t, ...] from the inputs, from arrays defined before
        them at the same or earlier steps, and from their own previous step (boundary zero); the last
        one an output, the others outputs or locals. Sizes include 0 and 1."""
        r = self.rng
        self.start_program()
        steps = self.fresh_global(PLAIN_PARAMS, param=True)
        self.param_vals[steps] = r.choice([0, 1, 2, 3, 4, 7, 12, 20])
        space = self.shape(r.choice([0, 1, 1, 2]))
        while self.param_vals[steps] * max(1, math.prod(max(v, 1) for _, v in space)) > SIZE_MAX:
            space = space[:-1]
        step_dim = (Var(steps), self.param_vals[steps])
        frames = [self.new_input([step_dim] + space, ty=r.choice(["f32", "f32", "f64"]))
                  for _ in range(r.randint(1, 2))]
        weights = self.new_input(space, ty="f32") if space and r.random() < 0.6 else None
        defined = []
        for k in range(r.randint(1, 3)):
            a = self.new_array("output", r.choice(["f32", "f32", "f64"]), [step_dim] + space)
            vs = self.lhs_vars(a)
            t = Var(vs[0].name)
            point = [Var(v.name) for v in vs[1:]]

            def at(array, lag, shift=True):
                idx = [Bin("-", copy.deepcopy(t), Lit(str(lag))) if lag else copy.deepcopy(t)]
                for v in point:
                    d = r.choice([-1, 0, 0, 1]) if shift else 0
                    idx.append(add_off(copy.deepcopy(v), d) if d else copy.deepcopy(v))
                return Read(array.name, idx)

            terms = []
            for x in frames:
                if r.random() < 0.8:
                    terms.append(Bin("*", Lit(r.choice(["0.5", "0.25", "-1.0", "2.0"])), at(x, r.choice([0, 0, 1, 2, 3]))))
            if r.random() < 0.3:
                width = r.randint(1, 4)
                a_var = self.fresh_index({v.name for v in vs})
                x = r.choice(frames)
                idx = [Bin("-", copy.deepcopy(t), Var(a_var))] + [copy.deepcopy(v) for v in point]
                terms.append(Red("sum", [Binding([a_var], Lit("0"), Lit(str(width)))], None, Read(x.name, idx)))
            for earlier in defined:
                if r.random() < 0.6:
                    terms.append(Bin("*", Lit("0.5"), at(earlier, r.choice([0, 0, 1, 2]), shift=False)))
            if r.random() < 0.6:
                a.decl.boundary = "zero"  # its own step before: 0 at the first step
                terms.append(Bin("*", Lit(r.choice(["0.5", "-0.5", "0.9"])), at(a, 1)))
            if weights is not None and r.random() < 0.5:
                terms.append(Read(weights.name, [copy.deepcopy(v) for v in point]))
            if not terms:
                terms.append(at(frames[0], 0))
            e = terms[0]
            for term in terms[1:]:
                e = Bin("+", e, term)
            if r.random() < 0.3:
                e = Call("tanh", [e])
            self.emit(Equation(a.name, [Var(v.name) for v in vs], "=", e))
            self.finish_def(a, 100.0)
            defined.append(a)
        for a in defined[:-1]:
            if r.random() < 0.4:
                a.decl.role = "local"
        self.sync_decls()
        return self.prog

    def snapshot(self):
        saved_rng = self.rng
        self.rng = None
        polyc = self.polyc
        self.polyc = None
        snap = copy.deepcopy(self.__dict__)
        self.rng = saved_rng
        self.polyc = polyc
        return snap

    def restore(self, snap):
        rng, polyc, failures = self.rng, self.polyc, self.check_failures
        self.__dict__.update(snap)
        self.rng, self.polyc, self.check_failures = rng, polyc, failures

    def try_add(self, kind):
        for attempt in range(4):
            snap = self.snapshot()
            try:
                getattr(self, "def_" + kind)()
                self.sync_decls()
                if self.polyc is not None:
                    ok, err = self.polyc.check(self.prog.render(), self.prog.filename)
                    if not ok:
                        self.check_failures += 1
                        if os.environ.get("POLYC_FUZZ_DEBUG"):
                            sys.stderr.write("gen: rejected %s:\n%s\n%s\n" % (kind, self.prog.render(), err))
                        raise CheckFailed(err)
                return True
            except CheckFailed:
                self.restore(snap)
            except GiveUp:
                self.restore(snap)
        return False

    def sync_decls(self):
        self.prog.arrays = [a.decl for a in self.arrs]
        self.prog.params = list(self.param_vals.keys())
        self.prog.param_values = dict(self.param_vals)

    def finish(self):
        # Outputs that later equations read may become locals; an output that nothing defines is impossible
        # (every definition creates its array).
        r = self.rng
        for a in self.arrs:
            if a.role == "output" and a.in_repeat is None and self.is_read(a.name) and r.random() < 0.6:
                a.decl.role = "local"
        if not any(a.role in ("output", "inout") for a in self.arrs):
            for a in reversed(self.arrs):
                if a.role == "local":
                    a.decl.role = "output"
                    break
        self.sync_decls()
        if r.random() < 0.3 and len(self.arrs) > 1:
            order = list(self.arrs)
            r.shuffle(order)
            self.prog.arrays = [a.decl for a in order]
        self.prog.params = list(self.param_vals.keys())
        self.prog.param_values = dict(self.param_vals)
        self.prog.header = ["generated by scripts/fuzz/gen_program.py --seed %d" % self.seed]
        env = dict(self.param_vals)
        env.update(self.int_consts)
        for a in self.arrs:
            vals = [eval_int(e, env) for e in a.decl.shape]
            assert vals == a.shape_vals, (a.name, vals, a.shape_vals, self.prog.render())

    def is_read(self, name):
        for eq in self.prog.equations():
            from polyast import names_in
            if name in names_in(eq.rhs):
                return True
            if any(name in names_in(e) for e in eq.lhs):
                return True
        return False

    # ---------------------------------------------------------------- params, consts, funcs
    def make_params(self):
        r = self.rng
        n = r.randint(1, 4)
        edge = r.random() < 0.15
        for _ in range(n):
            name = self.fresh_global(PLAIN_PARAMS, param=True)
            if self.huge:
                v = r.choice([0, 1, 3, 1 << 20, (1 << 31) - 1, 1 << 31, 1 << 40, (1 << 62), (1 << 63) - 1])
            elif edge and r.random() < 0.6:
                v = r.choice([0, 1, 1])
            else:
                x = r.random()
                v = r.randint(2, 6) if x < 0.6 else r.randint(7, 16) if x < 0.9 else r.randint(33, 70)
            self.param_vals[name] = v

    def make_consts(self):
        r = self.rng
        for _ in range(r.choice([0, 0, 1, 1, 2, 3])):
            name = self.fresh_global(["K", "R", "Z", "c0", "width", "tau", "half"])
            if self.int_consts and r.random() < 0.3:
                other = r.choice(sorted(self.int_consts))
                k = r.randint(1, 3)
                expr = r.choice([(Bin("+", Var(other), Lit(str(k))), self.int_consts[other] + k),
                                  (Bin("*", Var(other), Lit("2")), self.int_consts[other] * 2),
                                  (Bin("-", Bin("*", Var(other), Lit("3")), Lit("1")), self.int_consts[other] * 3 - 1),
                                  (Bin("/", Bin("+", Var(other), Lit("7")), Lit("2")), (self.int_consts[other] + 7) // 2),
                                  (Bin("%", Bin("+", Var(other), Lit("7")), Lit("4")), (self.int_consts[other] + 7) % 4)])
                if expr[1] < 0:
                    continue
                self.prog.consts.append(ConstDecl(name, expr[0]))
                self.int_consts[name] = expr[1]
            elif r.random() < 0.6:
                v = r.randint(1, 5)
                self.prog.consts.append(ConstDecl(name, Lit(str(v))))
                self.int_consts[name] = v
            else:
                v, text = r.choice([(0.5, "0.5"), (10.0, "10.0"), (0.1, "1e-1"), (0.25, "0.5 * 0.5"),
                                    (1.5, "3.0 / 2"), (2.0, "2.")])
                self.prog.consts.append(ConstDecl(name, Lit(text)))
                self.float_consts[name] = v

    def make_funcs(self):
        r = self.rng
        for _ in range(r.choice([0, 0, 1, 1, 2, 3])):
            self.add_func()

    def add_func(self):
        r = self.rng
        name = None
        for _ in range(50):
            name = self.fresh_global(["f", "g", "sig", "relu", "act", "mix", "scale", "soft"])
            if name not in BUILTINS:
                break
            self.globals.discard(name)
            name = None
        if name is None:
            return
        taken = set(self.param_vals) | set(self.int_consts) | set(self.float_consts)
        args = []
        for _ in range(3):
            for _ in range(50):
                a = r.choice(["a", "b", "z", "v", "arg", "value", "p", "x", "y", "lane", "self", "tmp", "G"])
                if a not in taken and a not in args and a not in KEYWORDS:
                    args.append(a)
                    break
        if len(args) < 2:
            return
        a, b = args[0], args[1]
        A, B = Var(a), Var(b)
        c1 = r.choice(["0.5", "0.25", "0.75"])
        templates = [
            (1, Bin("/", Lit("1"), Bin("+", Lit("1"), Call("exp", [Un("-", A)]))), lambda x: 1.0, False),
            (2, Bin("+", Bin("*", Call("tanh", [A]), Lit(c1)), Bin("*", B, Lit("0.5"))),
             lambda x, y: 1 + 0.5 * y, False),
            (2, Bin("/", A, Bin("+", Lit("1"), Call("abs", [B]))), lambda x, y: x, False),
            (2, Bin("-", Call("max", [A, B]), Call("min", [A, B])), lambda x, y: x + y, True),
            (2, Call("select", [Bin(">", A, B), Bin("-", A, B), Bin("*", Bin("-", B, A), Lit("0.5"))]),
             lambda x, y: x + y, True),
            (1, Call("sqrt", [Bin("+", Bin("*", A, A), Lit("1"))]), lambda x: x + 1, False),
            (1, Call("select", [Bin(">", A, Lit("0")), A, Bin("*", A, Lit("0.1"))]), lambda x: x, False),
            (0, Lit(r.choice(["0.5", "2", "1.25"])), lambda: 2.0, True),
        ]
        if self.param_vals:
            pn = r.choice(sorted(self.param_vals))
            pv = self.param_vals[pn]
            templates.append((1, Bin("*", A, Bin("/", Lit("1.0"), Bin("+", Var(pn), Lit("1")))),
                              lambda x: x, False))
            _ = pv
        if self.float_consts:
            cn = r.choice(sorted(self.float_consts))
            cv = self.float_consts[cn]
            templates.append((1, Call("tanh", [Bin("*", A, Var(cn))]), lambda x: 1.0, False))
            _ = cv
        if self.funcs:
            prev = r.choice([f for f in self.funcs if f[1] >= 1] or [None])
            if prev is not None:
                pname, parity, pbound, pint = prev
                pargs = [A] * parity
                pb = pbound
                templates.append((1, Bin("+", Bin("*", Call(pname, pargs), Lit("0.5")), Lit("0.25")),
                                  (lambda pb, parity: (lambda x: 0.5 * pb(*([x] * parity)) + 0.25))(pb, parity),
                                  False))
        arity, body, bfn, int_ok = r.choice(templates)
        used = args[:arity]
        if arity == 1 and len(args) > 1 and r.random() < 0.2:
            used = args[:2]  # an argument the body ignores
            bfn = (lambda f: (lambda x, y: f(x)))(bfn)
        elif arity == 0:
            used = []
        self.prog.funcs.append(FuncDecl(name, used, body))
        self.funcs.append((name, len(used), bfn, int_ok))

    # ---------------------------------------------------------------- shapes and arrays
    def extent(self, want_small=False):
        """A shape extent: (Expr, value)."""
        r = self.rng
        opts = []
        for pn, pv in self.param_vals.items():
            opts.append((Var(pn), pv))
            opts.append((Bin("+", Var(pn), Lit("1")), pv + 1))
            if pv <= 20:
                opts.append((Bin("*", Lit("2"), Var(pn)), 2 * pv))
        for cn, cv in self.int_consts.items():
            opts.append((Var(cn), cv))
            for pn, pv in self.param_vals.items():
                opts.append((Bin("+", Var(pn), Var(cn)), pv + cv))
        ps = list(self.param_vals.items())
        if len(ps) >= 2:
            (a, av), (b, bv) = r.sample(ps, 2)
            opts.append((Bin("+", Var(a), Var(b)), av + bv))
        opts += [(Lit(str(v)), v) for v in (1, 2, 3, 4, 5)]
        if want_small:
            opts = [o for o in opts if o[1] <= 8] or [(Lit("3"), 3)]
        # Prefer plain params: they are what the executables infer from shapes.
        plain = [o for o in opts if isinstance(o[0], Var) and o[0].name in self.param_vals]
        if plain and r.random() < 0.6:
            return r.choice(plain)
        return r.choice(opts)

    def shape(self, rank):
        for _ in range(30):
            dims = [self.extent(want_small=(rank >= 3 and d > 0)) for d in range(rank)]
            n = 1
            for _, v in dims:
                n *= max(v, 1)
            if n <= SIZE_MAX or self.huge:
                return dims
        return [(Lit("3"), 3) for _ in range(rank)]

    def new_array(self, role, ty, dims, boundary=None, pool=PLAIN_ARRAYS):
        name = self.fresh_global(pool)
        a = Arr(name, role, ty, [d[0] for d in dims], [d[1] for d in dims], boundary)
        a.in_repeat = self.cur_repeat
        self.arrs.append(a)
        return a

    def new_input(self, dims, ty=None, kind=None, **data):
        r = self.rng
        ty = ty or r.choice(["f32", "f32", "f32", "f64", "i32"])
        boundary = r.choice([None, None, None, "zero", "clamp", "mirror"])
        a = self.new_array("input", ty, dims, boundary)
        if kind is None:
            if ty == "i32":
                kind = "int"
            else:
                kind = r.choice(["unit", "unit", "unit", "pos", "quarter"])
        a.data = dict(kind=kind, **data)
        a.bound = {"unit": 1.0, "pos": 1.5, "quarter": 4.0, "int": 5.0, "index": max(data.get("hi", 5), 5),
                   "coef": data.get("scale", 1.0)}[kind]
        a.exact = True
        a.in_repeat = None
        return a

    def boundary_of(self, a):
        return a.decl.boundary or self.prog.boundary or "zero"

    # ---------------------------------------------------------------- expressions
    def readable(self, exclude=None):
        out = []
        for a in self.arrs:
            if a is exclude or a.bound > 1e30:
                continue
            if a.role == "output" or a.role == "local":
                if not getattr(a, "defined", False):
                    continue
                if a.in_repeat is not None and a.in_repeat is not self.cur_repeat and not a.readable_after_repeat:
                    continue
                # loss[e]-like outputs: only after their block (inside it, a later iteration's element
                # is not defined yet).
                if getattr(a, "e_indexed", False) and a.in_repeat is self.cur_repeat:
                    continue
            out.append(a)
        return out

    def val(self, ctx, depth):
        """A value expression of ctx.ty: (Expr, bound)."""
        r = self.rng
        if depth <= 0 or r.random() < 0.25:
            return self.leaf(ctx)
        ty = ctx.ty
        choice = r.random()
        if ty == "i32":
            return self.val_i32(ctx, depth, choice)
        if choice < 0.3:
            (a, ba), (b, bb) = self.val(ctx, depth - 1), self.val(ctx, depth - 1)
            op = r.choice(["+", "-", "+"])
            return Bin(op, a, b), ba + bb
        if choice < 0.45:
            (a, ba), (b, bb) = self.val(ctx, depth - 1), self.val(ctx, depth - 1)
            return self.squash(Bin("*", a, b), ba * bb)
        if choice < 0.52:
            a, ba = self.val(ctx, depth - 1)
            k = r.random()
            if k < 0.4:
                d = r.choice(["2", "4", "0.5", "3", "1.5", "8"])
                return Bin("/", a, Lit(d)), ba / min(float(d), 1.0) if float(d) < 1 else ba
            if k < 0.7:
                b, bb = self.val(ctx, depth - 1)
                return Bin("/", a, Bin("+", Call("abs", [b]), Lit("1"))), ba
            if k < 0.85 and self.param_vals:
                pn = r.choice(sorted(self.param_vals))
                return Bin("/", a, Bin("+", Var(pn), Lit("1"))), ba
            b, bb = self.val(ctx, depth - 1)
            return Bin("/", a, Bin("+", Bin("*", b, b), Lit("0.5"))), ba * 2
        if choice < 0.57:
            a, ba = self.val(ctx, depth - 1)
            return Un("-", a), ba
        if choice < 0.72:
            return self.builtin(ctx, depth)
        if choice < 0.78:
            c = self.cond_exact(ctx, 2)
            (a, ba), (b, bb) = self.val(ctx, depth - 1), self.val(ctx, depth - 1)
            if r.random() < 0.7:
                return Call("select", [c, a, b]), max(ba, bb)
            return Bin("*", c, a), ba
        if choice < 0.9:
            return self.reduction(ctx, depth)
        if choice < 0.96 and self.funcs:
            return self.call_func(ctx, depth)
        return self.leaf(ctx)

    def val_i32(self, ctx, depth, choice):
        r = self.rng
        if choice < 0.3:
            (a, ba), (b, bb) = self.val(ctx, depth - 1), self.val(ctx, depth - 1)
            return self.isquash(Bin(r.choice(["+", "-"]), a, b), ba + bb)
        if choice < 0.42:
            (a, ba), (b, bb) = self.val(ctx, depth - 1), self.val(ctx, depth - 1)
            if ba * bb <= ILIMIT:
                return Bin("*", a, b), ba * bb
            return Bin("+", a, b), ba + bb
        if choice < 0.55:
            a, ba = self.val(ctx, depth - 1)
            d = r.choice([2, 3, -4, 5, 7])
            op = r.choice(["/", "%"])
            return Bin(op, a, lit_int(d) if r.random() < 0.8 else Lit(str(abs(d)))), ba
        if choice < 0.62:
            a, ba = self.val(ctx, depth - 1)
            b, bb = self.val(ctx, depth - 1)
            return Bin(r.choice(["/", "%"]), a, Bin("+", Call("abs", [b]), Lit("1"))), ba
        if choice < 0.72:
            (a, ba), (b, bb) = self.val(ctx, depth - 1), self.val(ctx, depth - 1)
            fn = r.choice(["min", "max", "abs"])
            if fn == "abs":
                return Call("abs", [a]), ba
            return Call(fn, [a, b]), max(ba, bb)
        if choice < 0.8:
            c = self.cond_exact(ctx, 2)
            (a, ba), (b, bb) = self.val(ctx, depth - 1), self.val(ctx, depth - 1)
            if r.random() < 0.6:
                return Call("select", [c, a, b]), max(ba, bb)
            return Bin("+", c, a), ba + 1
        if choice < 0.92:
            return self.reduction(ctx, depth)
        if self.funcs:
            fs = [f for f in self.funcs if f[3]]
            if fs:
                return self.call_func(ctx, depth, fs)
        return self.leaf(ctx)

    def isquash(self, e, b):
        if b <= ILIMIT:
            return e, b
        return Bin("%", e, Lit("1009")), 1009

    def squash(self, e, b):
        r = self.rng
        if b <= LIMIT:
            return e, b
        k = r.random()
        if b > 1e15:
            k = 0
        if k < 0.5:
            return Call("tanh", [Bin("*", e, Lit("1e-3"))]), 1.0
        if k < 0.8:
            return Call("max", [Call("min", [e, Lit("10.0")]), Un("-", Lit("10.0"))]), 10.0
        return Bin("/", e, Lit("%d" % int(b))), 1.0

    def builtin(self, ctx, depth):
        r = self.rng
        a, ba = self.val(ctx, depth - 1)
        k = r.randrange(12)
        if k == 0:
            return Call("tanh", [a]), 1.0
        if k == 1:
            return Call("abs", [a]), ba
        if k == 2:
            return Call("exp", [Call("tanh", [a])]), 2.72
        if k == 3:
            return Call("exp", [Un("-", Call("abs", [a]))]), 1.0
        if k == 4:
            return Call("log", [Bin("+", Call("abs", [a]), Lit("1"))]), 1 + ba
        if k == 5:
            return Call("sqrt", [Bin("+", Call("abs", [a]), Lit("0.25"))]), 1 + ba
        if k == 6:
            e = r.choice(["2", "0.5", "3", "1.5", "2.5"])
            if r.random() < 0.5:
                e = Un("-", Lit("1")) if e == "3" else Lit(e)
            else:
                e = Lit(e)
            return Call("pow", [Bin("+", Call("tanh", [a]), Lit("1.5")), e]), 16.0
        if k == 7 and ba <= 30:
            return Call("pow", [a, Lit("2")]), ba * ba
        if k in (8, 9):
            b, bb = self.val(ctx, depth - 1)
            return Call(r.choice(["min", "max"]), [a, b]), max(ba, bb)
        if k == 10:
            b, bb = self.val(ctx, depth - 1)
            # select on a comparison of computed values, written so that the result is continuous.
            return Call("select", [Bin(">", a, b), copy.deepcopy(a), copy.deepcopy(b)]), max(ba, bb)
        if k == 11 and ba <= 50:
            return Call("exp", [Bin("*", a, Lit("0.1"))]), 2.72 ** (0.1 * ba)
        return Call("tanh", [a]), 1.0

    def call_func(self, ctx, depth, fs=None):
        r = self.rng
        name, arity, bfn, _ = r.choice(fs or self.funcs)
        args, bounds = [], []
        for _ in range(arity):
            a, b = self.val(ctx, depth - 1)
            args.append(a)
            bounds.append(b)
        try:
            b = float(bfn(*bounds))
        except TypeError:
            b = 10.0
        return self.squash(Call(name, args), b) if ctx.ty != "i32" else (Call(name, args), b)

    def leaf(self, ctx):
        r = self.rng
        k = r.random()
        if k < 0.55:
            return self.read_any(ctx)
        if k < 0.7:
            if ctx.ty == "i32":
                if r.random() < 0.15:
                    t = r.choice(FLOAT_LITS)
                    return Lit(t), abs(float(t))
                v = r.randint(0, 9)
                return Lit(str(v)), v
            t = r.choice(FLOAT_LITS + ["1", "2", "3"])
            return Lit(t), abs(float(t))
        if k < 0.8 and (ctx.ivars or ctx.rep):
            v = r.choice(ctx.ivars + ([ctx.rep] if ctx.rep else []))
            return Var(v.name), v.bound()
        if k < 0.88 and self.param_vals:
            pn = r.choice(sorted(self.param_vals))
            return Var(pn), max(1, self.param_vals[pn])
        if k < 0.95 and (self.int_consts or self.float_consts):
            names = sorted(self.int_consts) + (sorted(self.float_consts) if ctx.ty != "i32" else [])
            if names:
                cn = r.choice(names)
                return Var(cn), abs(self.int_consts.get(cn, self.float_consts.get(cn, 1.0)))
        return self.read_any(ctx)

    def read_any(self, ctx):
        """A read of an array: an existing one that this equation may read, or a new input."""
        r = self.rng
        if ctx.self_read is not None and r.random() < 0.3:
            return ctx.self_read(ctx)
        cands = [a for a in ctx.readable if (a.exact or not ctx.exact_only)]
        if ctx.ty == "i32":
            cands = [a for a in cands if a.exact or a.ty == "i32"]
        if not cands or r.random() < 0.25:
            a = self.input_for(ctx)
        else:
            a = r.choice(cands)
        return self.read_of(ctx, a), a.bound

    def input_for(self, ctx, ty=None):
        r = self.rng
        rank = r.choice([0, 1, 1, 2, 2, 2, 3]) if ctx.ivars else r.choice([0, 1, 1, 2])
        vs = list(ctx.ivars)
        r.shuffle(vs)
        dims = []
        for v in vs[:rank]:
            dims.append((copy.deepcopy(v.ext_expr), v.ext_val))
        while len(dims) < rank:
            dims.append(self.extent(want_small=True))
        n = 1
        for _, v in dims:
            n *= max(v, 1)
        if n > SIZE_MAX:
            dims = dims[:1]
        if ctx.ty == "i32" and ty is None:
            ty = r.choice(["i32", "i32", "f32", "f64"])
            kind = "int" if ty == "i32" else "quarter"
            return self.new_input(dims, ty, kind=kind)
        return self.new_input(dims, ty)

    def read_of(self, ctx, a):
        r = self.rng
        if a.ty != "i32" and a.rank >= 1 and ctx.ty != "i32" and not ctx.exact_only and r.random() < 0.06:
            return self.sample_of(ctx, a)
        return Read(a.name, [self.index_for(ctx, a, d) for d in range(a.rank)])

    def sample_of(self, ctx, a):
        """sample(a, ...): some positions between elements (a fraction added or a scale), others indices."""
        r = self.rng
        positions = []
        for d in range(a.rank):
            index = self.index_for(ctx, a, d)
            k = r.random()
            if k < 0.35:
                positions.append(index)
            elif k < 0.8:
                positions.append(Bin("+", index, Lit(r.choice(["0.5", "0.25", "1.75", "0.125"]))))
            else:
                positions.append(Bin("*", Lit(r.choice(["0.5", "1.5", "0.75"])), index))
        return Sample(a.name, positions)

    def pick_var(self, ctx, a=None, d=None):
        r = self.rng
        vs = list(ctx.ivars)
        if ctx.rep is not None and r.random() < 0.15:
            return ctx.rep
        if not vs:
            return None
        if a is not None and r.random() < 0.6:
            same = [v for v in vs if v.ext_val == a.shape_vals[d]]
            if same:
                # Prefer the innermost (reduction variables are added last).
                return same[-1] if r.random() < 0.5 else r.choice(same)
        return vs[-1] if r.random() < 0.3 else r.choice(vs)

    def index_for(self, ctx, a, d):
        """An index into dimension d of array a (affine; out of range follows a's boundary rule)."""
        r = self.rng
        k = r.random()
        v = self.pick_var(ctx, a, d)
        ext = a.decl.shape[d]
        if v is not None and k < 0.05:  # quasi-affine: floor division or modulo by a constant
            return Bin(r.choice(["/", "%"]), add_off(Var(v.name), r.choice([0, 1, -1, -3])), Lit(str(r.choice([2, 3]))))
        if v is not None and k < 0.62:
            off = r.choice([0, 0, 0, 0, 0, 0, -1, 1, -2, 2, 3, -3])
            return add_off(Var(v.name), off)
        if v is not None and k < 0.68:
            return Bin("-", Bin("-", copy.deepcopy(ext), Lit("1")), Var(v.name))
        if v is not None and k < 0.73:
            return add_off(Bin("*", Lit("2"), Var(v.name)), r.choice([0, 1, -1]))
        if v is not None and len(ctx.ivars) >= 2 and k < 0.78:
            w = r.choice([x for x in ctx.ivars if x is not v] or [v])
            return add_off(Bin(r.choice(["+", "-"]), Var(v.name), Var(w.name)), r.choice([0, 0, -1, 1]))
        if k < 0.9 and not ctx.in_gather:
            return self.gather(ctx, a, d)
        c = r.random()
        if c < 0.4:
            return Lit("0")
        if c < 0.7:
            return Bin("-", copy.deepcopy(ext), Lit("1"))
        if c < 0.85:
            return Lit(str(r.randint(1, 3)))
        return add_off(copy.deepcopy(ext), r.randint(0, 2))  # past the end

    def gather(self, ctx, a, d):
        """g[...] (+|- offset): a read of an i32 array as an index."""
        r = self.rng
        target = a.shape_vals[d]
        gs = [g for g in ctx.readable if g.ty == "i32" and g.rank >= 1 and g is not a and
              (g.exact or not ctx.exact_only)]
        sub = ctx.child(in_gather=True)
        if gs and r.random() < 0.5:
            g = r.choice(gs)
        else:
            rank = r.choice([1, 2, 2])
            vs = list(ctx.ivars)
            r.shuffle(vs)
            dims = [(copy.deepcopy(v.ext_expr), v.ext_val) for v in vs[:rank]]
            while len(dims) < rank:
                dims.append(self.extent(want_small=True))
            g = self.new_input(dims, "i32", kind="index", lo=-3, hi=target + 2)
        e = Read(g.name, [self.index_for(sub, g, dd) for dd in range(g.rank)])
        k = r.random()
        if k < 0.7:
            return e
        if k < 0.8:
            return Bin("+", e, Lit(str(r.randint(1, 2))))
        if k < 0.9:
            return Bin("+", Lit(str(r.randint(1, 2))), e)
        v = self.pick_var(ctx)
        return Bin("-", e, Var(v.name) if v is not None else Lit("1"))

    # ---------------------------------------------------------------- conditions
    def affine_atom(self, ctx, vs):
        r = self.rng
        v = r.choice(vs)
        k = r.random()
        bound = self.small_bound(v)
        if k < 0.35:
            return Bin(r.choice(["<", "<=", ">", ">="]), Var(v.name), bound)
        if k < 0.5 and len(vs) >= 2:
            w = r.choice([x for x in vs if x is not v])
            return Bin(r.choice(["!=", "<", "==", ">="]), Var(v.name), Var(w.name))
        if k < 0.6 and len(vs) >= 2:
            w = r.choice([x for x in vs if x is not v])
            return Bin(r.choice(["<", ">="]), Bin("+", Var(v.name), Var(w.name)), bound)
        if k < 0.7:
            return Bin(r.choice(["==", "!="]), Var(v.name), Lit(str(r.randint(0, 2))))
        if k < 0.75:  # a parity or phase: quasi-affine
            return Bin(r.choice(["==", "!="]), Bin("%", add_off(Var(v.name), r.choice([0, 1, -2])), Lit(str(r.choice([2, 3])))),
                       Lit(str(r.randint(0, 1))))
        if k < 0.85 and len(vs) >= 2:
            ws = r.sample(vs, 2)
            return Bin(r.choice(["==", "!="]), Tup([Var(x.name) for x in ws]),
                       Tup([Lit(str(r.randint(0, 1))) for _ in ws]))
        return Bin(r.choice(["<=", ">"]), Bin("*", Lit("2"), Var(v.name)), bound)

    def small_bound(self, v):
        r = self.rng
        k = r.random()
        if k < 0.4:
            return Lit(str(r.randint(0, 3)))
        if k < 0.7:
            return Bin("-", copy.deepcopy(v.ext_expr), Lit(str(r.randint(1, 2))))
        if self.int_consts and k < 0.85:
            return Var(r.choice(sorted(self.int_consts)))
        if self.param_vals:
            return Var(r.choice(sorted(self.param_vals)))
        return Lit("2")

    def cond_affine(self, ctx, vs, depth=2):
        r = self.rng
        if depth <= 0 or r.random() < 0.55:
            return self.affine_atom(ctx, vs)
        k = r.random()
        if k < 0.4:
            return Bin("&&", self.cond_affine(ctx, vs, depth - 1), self.cond_affine(ctx, vs, depth - 1))
        if k < 0.8:
            return Bin("||", self.cond_affine(ctx, vs, depth - 1), self.cond_affine(ctx, vs, depth - 1))
        return Un("!", self.cond_affine(ctx, vs, depth - 1))

    def cond_exact(self, ctx, depth):
        """A condition every evaluation decides the same way: affine in index variables and params, or
        comparisons of values read from exact arrays (inputs, i32 arrays)."""
        r = self.rng
        vs = ctx.ivars
        if vs and r.random() < 0.5:
            return self.cond_affine(ctx, vs, depth)
        sub = ctx.child(exact_only=True)
        a = [x for x in ctx.readable if x.exact]
        if not a or r.random() < 0.3:
            arr = self.input_for(sub)
        else:
            arr = r.choice(a)
        left = self.read_of(sub, arr)
        if arr.ty == "i32" or arr.data and arr.data.get("kind") in ("int", "index"):
            right = Lit(str(r.randint(-1, 3)))
        else:
            right = Lit(r.choice(["0", "0.25", "0.5", "-0.5", "1"]))
            if right.text.startswith("-"):
                right = Un("-", Lit(right.text[1:]))
        c = Bin(r.choice(["<", "<=", ">", ">=", "==", "!="]), left, right)
        if depth > 0 and r.random() < 0.3:
            other = self.cond_exact(ctx, depth - 1)
            return Bin(r.choice(["&&", "||"]), c, other)
        if r.random() < 0.1:
            return Un("!", c)
        return c

    # ---------------------------------------------------------------- reductions
    def red_range(self, ctx, name):
        """A reduction range for a new variable: (lo Expr, hi Expr, IVar)."""
        r = self.rng
        k = r.random()
        encl = [v for v in ctx.ivars if v.kind in ("lhs", "red")]
        if encl and k < 0.3:
            v = r.choice(encl)
            if r.random() < 0.6:  # triangular: 0..v
                return Lit("0"), Var(v.name), IVar(name, "red", 0, max(v.hi - 1, 0), copy.deepcopy(v.ext_expr),
                                                   v.ext_val)
            return (Bin("+", Var(v.name), Lit("1")), copy.deepcopy(v.ext_expr),
                    IVar(name, "red", min(v.lo + 1, v.ext_val), v.ext_val, copy.deepcopy(v.ext_expr), v.ext_val))
        if encl and k < 0.45:  # a window around an enclosing variable
            v = r.choice(encl)
            a, b = r.randint(0, 2), r.randint(1, 3)
            lo = add_off(Var(v.name), -a)
            hi = add_off(Var(v.name), b)
            return lo, hi, IVar(name, "red", v.lo - a, v.hi + b, add_off(copy.deepcopy(v.ext_expr), a + b),
                                v.ext_val + a + b)
        ext, val = self.extent(want_small=r.random() < 0.5)
        if r.random() < 0.15:
            lo = Lit("1")
            return lo, ext, IVar(name, "red", 1, val, copy.deepcopy(ext), val)
        return Lit("0"), ext, IVar(name, "red", 0, val, copy.deepcopy(ext), val)

    def reduction(self, ctx, depth, op=None, body_fn=None, allow_extreme=False, allow_where=True):
        r = self.rng
        op = op or r.choice(["sum", "sum", "sum", "max", "min"])
        taken = {v.name for v in ctx.ivars} | ({ctx.rep.name} if ctx.rep else set())
        nvars = r.choice([1, 1, 1, 2, 2, 3])
        binds, newvars = [], []
        sub = ctx.child()
        i = 0
        while i < nvars:
            group = 1 if nvars - i == 1 or r.random() < 0.6 else 2
            names = []
            for _ in range(group):
                nm = self.fresh_index(taken)
                taken.add(nm)
                names.append(nm)
            lo, hi, iv = self.red_range(sub, names[0])
            for nm in names:
                nv = IVar(nm, "red", iv.lo, iv.hi, iv.ext_expr, iv.ext_val)
                newvars.append(nv)
            binds.append(Binding(names, lo, hi))
            i += group
        length = 1
        for v in newvars:
            length *= max(v.count(), 1)
        if ctx.domain * ctx.work * length > WORK_MAX:
            # Too much work at these sizes: short literal ranges instead.
            binds, newvars = [], []
            for nm in [n for b0 in [] for n in b0] or [self.fresh_index(taken)]:
                n = r.randint(1, 4)
                binds.append(Binding([nm], Lit("0"), Lit(str(n))))
                newvars.append(IVar(nm, "red", 0, n, Lit(str(n)), n))
            length = newvars[0].count()
        sub.ivars = ctx.ivars + newvars
        sub.work = ctx.work * max(length, 1)
        where = None
        if allow_where and r.random() < 0.35:
            if len(newvars) >= 2 and r.random() < 0.5:
                where = Bin("!=", Tup([Var(v.name) for v in newvars[:2]]), Tup([Lit("0"), Lit("0")]))
            else:
                where = self.cond_affine(sub, newvars + [v for v in ctx.ivars if v.kind == "lhs"], 1)
        if body_fn is not None:
            body, bb = body_fn(sub, newvars)
        else:
            body, bb = self.val(sub, depth - 1)
        e = Red(op, binds, where, body)
        if op == "sum":
            b = bb * max(length, 1)
            if ctx.ty == "i32":
                return self.isquash(e, b)
            return self.squash(e, b)
        # An empty max/min is the lowest/highest finite value of the type: keep it out of arithmetic that
        # could overflow it to infinity (the caller decides whether it may stand alone).
        if ctx.ty == "i32" or not allow_extreme or r.random() < 0.5:
            if op == "max":
                return Call("max", [e, Un("-", Lit("100"))]), max(bb, 100)
            return Call("min", [e, Lit("100")]), max(bb, 100)
        return e, 3.5e38

    # ---------------------------------------------------------------- definitions
    def lhs_vars(self, a, taken=None):
        taken = set(taken or ())
        vs = []
        for d in range(a.rank):
            nm = self.fresh_index(taken)
            taken.add(nm)
            vs.append(IVar(nm, "lhs", 0, a.shape_vals[d], copy.deepcopy(a.decl.shape[d]), a.shape_vals[d]))
        return vs

    def ctx_for(self, a, vs, exclude_self=True):
        dom = 1
        for v in vs:
            dom *= max(v.count(), 1)
        rep = None
        if self.cur_repeat is not None:
            rep = self.cur_repeat_ivar
        c = Ctx(a.ty, vs, self.readable(exclude=a if exclude_self else None), rep=rep, domain=dom)
        return c

    def rhs(self, ctx, depth=None):
        r = self.rng
        depth = depth if depth is not None else r.randint(1, 4)
        if r.random() < 0.08:
            # An empty max/min gives the lowest/highest finite value of the type: as a whole right-hand side.
            return self.reduction(ctx, max(depth, 2), op=r.choice(["max", "min"]), allow_extreme=True)
        e, b = self.val(ctx, depth)
        if isinstance(e, Red) and ctx.ty != "i32":
            return e, b
        if ctx.ty == "i32":
            return e, b
        return self.squash(e, b)

    def choose_type(self):
        return self.rng.choice(["f32", "f32", "f32", "f64", "f64", "i32"])

    def finish_def(self, a, bound):
        a.defined = True
        a.bound = max(min(bound, 3.5e38), 1e-3)
        if a.ty == "i32":
            a.exact = all(self.is_exact_expr(eq.rhs) for eq in self.prog.equations() if eq.name == a.name)

    def is_exact_expr(self, e):
        # i32 equations read only exact arrays or i32 arrays (ctx.exact_only), so they are exact.
        return True

    def new_defined(self, rank=None, ty=None):
        r = self.rng
        rank = rank if rank is not None else r.choice([0, 1, 1, 1, 2, 2, 2, 3])
        ty = ty or self.choose_type()
        dims = self.shape(rank)
        boundary = r.choice([None, None, None, "zero", "clamp", "mirror"])
        return self.new_array("output", ty, dims, boundary)

    def def_map(self):
        a = self.new_defined()
        vs = self.lhs_vars(a)
        ctx = self.ctx_for(a, vs)
        e, b = self.rhs(ctx)
        self.emit(Equation(a.name, [Var(v.name) for v in vs], "=", e))
        self.finish_def(a, b)

    def def_scalar(self):
        a = self.new_defined(rank=0)
        ctx = self.ctx_for(a, [])
        if self.rng.random() < 0.7:
            e, b = self.reduction(ctx, 3)
        else:
            e, b = self.rhs(ctx)
        self.emit(Equation(a.name, [], "=", e))
        self.finish_def(a, b)

    def def_i32(self):
        a = self.new_defined(ty="i32", rank=self.rng.choice([0, 1, 2]))
        vs = self.lhs_vars(a)
        ctx = self.ctx_for(a, vs)
        e, b = self.rhs(ctx)
        self.emit(Equation(a.name, [Var(v.name) for v in vs], "=", e))
        self.finish_def(a, b)

    def separable_body(self, ctx, newvars):
        """A sum's body of seed 000's form: a factor of each variable alone (a read indexed by it, beside the
        equation's own variables), then the product of two reads of one array at the same point, whose
        indices are an equation variable plus or minus the sum's variables (what FactorSums, PointTerms and
        the packages rewrite)."""
        r = self.rng
        lhs = [v for v in ctx.ivars if v.kind == "lhs"]
        body, bound = None, 1.0
        for v in newvars:
            dims = [(copy.deepcopy(v.ext_expr), v.ext_val)]
            if lhs and r.random() < 0.5:
                dims.insert(0, (copy.deepcopy(lhs[0].ext_expr), lhs[0].ext_val))
            w = self.new_input(dims, "f32" if ctx.ty != "f64" else "f64", kind="unit")
            idx = [Var(lhs[0].name)] if len(dims) == 2 else []
            factor = Read(w.name, idx + [Var(v.name)])
            body = factor if body is None else Bin("*", body, factor)
            bound *= w.bound
        cands = [a for a in ctx.readable if a.rank >= 1 and a.exact and a.ty == ctx.ty]
        if not cands or r.random() < 0.7:
            # Over the equation's own extents, so that every index can move with the sum.
            dims = [(copy.deepcopy(v.ext_expr), v.ext_val) for v in r.sample(lhs, r.randint(1, len(lhs)))] \
                if lhs else [self.extent(want_small=True)]
            a = self.new_input(dims, ctx.ty, kind="unit")
        else:
            a = r.choice(cands)
        idx = []
        for d in range(a.rank):
            same = [v for v in lhs if v.ext_val == a.shape_vals[d]]
            if same and newvars:
                e = Var(r.choice(same).name)
                for v in r.sample(newvars, r.randint(1, len(newvars))):
                    e = Bin(r.choice(["+", "-"]), e, Var(v.name))
                idx.append(add_off(e, r.choice([0, 0, -1, 1, -2])))
            else:
                idx.append(self.index_for(ctx, a, d))
        read = Read(a.name, idx)
        joint = Bin("*", read, copy.deepcopy(read))
        body = joint if body is None else Bin("*", body, joint)
        return body, bound * a.bound * a.bound

    def def_reduce(self):
        r = self.rng
        a = self.new_defined(rank=r.choice([0, 1, 1, 2]))
        vs = self.lhs_vars(a)
        ctx = self.ctx_for(a, vs)
        op = r.choice(["sum", "sum", "max", "min"])
        if op == "sum" and vs and a.ty != "i32" and r.random() < 0.6:
            e, b = self.reduction(ctx, 2, op="sum", body_fn=self.separable_body, allow_where=r.random() < 0.2)
            self.emit(Equation(a.name, [Var(v.name) for v in vs], "=", e))
            self.finish_def(a, b)
            return
        e, b = self.reduction(ctx, r.randint(2, 3), op=op, allow_extreme=True)
        if r.random() < 0.4 and a.ty != "i32" and b < 1e30:
            extra, eb = self.val(ctx, 1)
            e, b = Bin("+", e, extra), b + eb
        self.emit(Equation(a.name, [Var(v.name) for v in vs], "=", e))
        self.finish_def(a, b)

    def def_gather(self):
        r = self.rng
        a = self.new_defined(rank=r.choice([1, 1, 2]), ty=r.choice(["f32", "f64"]))
        vs = self.lhs_vars(a)
        ctx = self.ctx_for(a, vs)
        src = [x for x in ctx.readable if x.rank >= 1]
        if not src or r.random() < 0.4:
            dims = [self.extent() for _ in range(r.choice([1, 1, 2]))]
            s = self.new_input(dims, r.choice(["f32", "f64"]))
        else:
            s = r.choice(src)

        def body(sub, newvars):
            idx = []
            for d in range(s.rank):
                if d == 0 or r.random() < 0.5:
                    idx.append(self.gather(sub, s, d))
                else:
                    idx.append(self.index_for(sub, s, d))
            e = Read(s.name, idx)
            if r.random() < 0.5:
                w = self.input_for(sub)
                e = Bin("*", self.read_of(sub, w), e)
                return e, s.bound * w.bound
            return e, s.bound

        if r.random() < 0.6:
            e, b = self.reduction(ctx, 2, op="sum", body_fn=body)
        else:
            e, b = body(ctx, [])
        self.emit(Equation(a.name, [Var(v.name) for v in vs], "=", e))
        self.finish_def(a, b)

    def def_pieces(self):
        """An array defined by two or three pieces whose conditions partition its shape."""
        r = self.rng
        a = self.new_defined(rank=r.choice([1, 1, 2, 2, 3]))
        vs = self.lhs_vars(a)
        ctx = self.ctx_for(a, vs)
        scheme = r.choice(["split", "complement", "three", "fixed", "fixed-last"])
        d = r.randrange(a.rank)
        v = vs[d]
        pieces = []  # (lhs, where)
        allv = [Var(x.name) for x in vs]
        if scheme == "split":
            c = self.split_point(v)
            pieces = [(allv, Bin("<", Var(v.name), c)), (allv, Bin(">=", Var(v.name), copy.deepcopy(c)))]
        elif scheme == "complement":
            cond = self.cond_affine(ctx, vs, 2)
            pieces = [(allv, cond), (allv, Un("!", copy.deepcopy(cond)))]
        elif scheme == "three":
            c1 = r.randint(1, 2)
            c2 = c1 + r.randint(1, 3)
            pieces = [(allv, Bin("<", Var(v.name), Lit(str(c1)))),
                      (allv, Bin("&&", Bin(">=", Var(v.name), Lit(str(c1))), Bin("<", Var(v.name), Lit(str(c2))))),
                      (allv, Bin(">=", Var(v.name), Lit(str(c2))))]
            if r.random() < 0.5:
                cond = self.cond_affine(ctx, vs, 1)
                pieces = [(allv, cond), (allv, Bin("&&", Un("!", copy.deepcopy(cond)), Bin("<", Var(v.name), Lit(str(c1))))),
                          (allv, Bin("&&", Un("!", copy.deepcopy(cond)), Bin(">=", Var(v.name), Lit(str(c1)))))]
        elif scheme == "fixed":
            fixed = list(allv)
            fixed[d] = Lit("0")
            pieces = [(fixed, None), (allv, Bin(">=", Var(v.name), Lit("1")))]
        else:
            fixed = list(allv)
            fixed[d] = Bin("-", copy.deepcopy(a.decl.shape[d]), Lit("1"))
            pieces = [(fixed, None), (allv, Bin("<", Var(v.name), Bin("-", copy.deepcopy(a.decl.shape[d]), Lit("1"))))]
        bound = 0
        for lhs, where in pieces:
            pvs = [x for x, l in zip(vs, lhs) if isinstance(l, Var) and l.name == x.name]
            pctx = ctx.child(ivars=pvs)
            e, b = self.rhs(pctx)
            bound = max(bound, b)
            self.emit(Equation(a.name, [copy.deepcopy(x) for x in lhs], "=", e, where))
        self.finish_def(a, bound)

    def split_point(self, v):
        r = self.rng
        k = r.random()
        if k < 0.4:
            return Lit(str(r.randint(1, 3)))
        if k < 0.7:
            return Bin("-", copy.deepcopy(v.ext_expr), Lit(str(r.randint(1, 2))))
        if self.int_consts and k < 0.85:
            return Var(r.choice(sorted(self.int_consts)))
        return Lit("1")

    # ---------------------------------------------------------------- recurrences
    def def_rec(self):
        """A recurrence: the array reads its own strictly earlier elements in an order chosen here (a
        permutation of the dimensions and a direction for each), uniform or affine, guarded by first rows
        (any boundary: the self-reads stay inside) or not (boundary zero: reads before the first element
        are 0)."""
        r = self.rng
        ty = r.choice(["f32", "f32", "f64", "f64", "i32"])
        a = self.new_defined(rank=r.choice([1, 1, 2, 2, 2, 3]), ty=ty)
        n = a.rank
        vs = self.lhs_vars(a)
        order = list(range(n))
        r.shuffle(order)
        signs = [r.choice([1, -1]) for _ in range(n)]
        guarded = r.random() < 0.45
        lead = order[0]
        g = r.choice([1, 1, 2]) if guarded else 0
        if not guarded:
            if self.prog.boundary not in (None, "zero") or r.random() < 0.3:
                a.decl.boundary = "zero"
            else:
                a.decl.boundary = None
        ctx = self.ctx_for(a, vs)
        allv = [Var(x.name) for x in vs]
        lv = vs[lead]
        ext = a.decl.shape[lead]
        pieces = []
        if guarded:
            if signs[lead] > 0:
                rec_where = Bin(">=", Var(lv.name), Lit(str(g)))
                base = [(allv, Bin("<", Var(lv.name), Lit(str(g))))]
                if g == 1 and r.random() < 0.6:
                    f = list(allv)
                    f[lead] = Lit("0")
                    base = [(f, None)]
            else:
                rec_where = Bin("<", Var(lv.name), Bin("-", copy.deepcopy(ext), Lit(str(g))))
                base = [(allv, Bin(">=", Var(lv.name), Bin("-", copy.deepcopy(ext), Lit(str(g)))))]
                if g == 1 and r.random() < 0.6:
                    f = list(allv)
                    f[lead] = Bin("-", copy.deepcopy(ext), Lit("1"))
                    base = [(f, None)]
            pieces = base + [(allv, rec_where)]
        else:
            pieces = [(allv, None)]
        bound = 1.0
        self_bound = [10.0 if ty != "i32" else 1000.0]
        for lhs, where in pieces:
            is_rec = lhs is allv and (where is None or not guarded or where is pieces[-1][1])
            pvs = [x for x, l in zip(vs, lhs) if isinstance(l, Var) and l.name == x.name]
            pctx = ctx.child(ivars=pvs)
            if not is_rec:
                e, b = self.rhs(pctx, 2)
                if ty != "i32":
                    e, b = self.squash(e, b * 1e3) if b > 10 else (e, b)
                bound = max(bound, b)
                self.emit(Equation(a.name, [copy.deepcopy(x) for x in lhs], "=", e, where))
                continue
            e, b = self.rec_rhs(a, pctx, vs, order, signs, g)
            bound = max(bound, b)
            self.emit(Equation(a.name, [copy.deepcopy(x) for x in lhs], "=", e, where))
        self.finish_def(a, bound)

    def self_index(self, a, ctx, vs, order, signs, g, pos=0, lead_expr=None):
        """Indices of a strictly earlier element: dimensions before order[pos] equal, order[pos] earlier,
        the rest anything affine."""
        r = self.rng
        idx = [None] * a.rank
        for p in range(pos):
            d = order[p]
            idx[d] = Var(vs[d].name)
        d = order[pos]
        s = signs[d]
        if lead_expr is not None:
            idx[d] = lead_expr
        else:
            c = r.randint(1, g) if g else r.choice([1, 1, 1, 2, 3])
            k = r.random()
            others = [vs[x] for x in range(a.rank) if x != d]
            if k < 0.2 and others and not g:
                # Affine: further back the larger another index (which is >= 0).
                w = r.choice(others)
                e = Bin("-" if s > 0 else "+", Var(vs[d].name), Bin("+", Lit(str(c)), Var(w.name)))
                idx[d] = e
            else:
                idx[d] = add_off(Var(vs[d].name), -s * c)
        for p in range(pos + 1, a.rank):
            dd = order[p]
            k = r.random()
            if k < 0.55:
                idx[dd] = add_off(Var(vs[dd].name), r.choice([0, 0, -1, 1, 2, -2]))
            elif k < 0.65:
                idx[dd] = Bin("-", Bin("-", copy.deepcopy(a.decl.shape[dd]), Lit("1")), Var(vs[dd].name))
            elif k < 0.75:
                idx[dd] = add_off(Bin("*", Lit("2"), Var(vs[dd].name)), r.choice([0, -1]))
            elif k < 0.9:
                idx[dd] = self.gather(ctx, a, dd)
            else:
                idx[dd] = Lit(str(r.randint(0, 2)))
        return idx

    def rec_rhs(self, a, ctx, vs, order, signs, g):
        r = self.rng
        ty = a.ty
        n = a.rank
        terms = []  # (expr, weight)
        budget = 0.9
        nterms = r.randint(1, 3)
        for t in range(nterms):
            k = r.random()
            w = budget / (nterms - t) if t < nterms - 1 else budget
            w = round(w * r.uniform(0.5, 1.0), 3)
            budget -= w
            pos = 0 if (g or n == 1 or r.random() < 0.7) else r.randrange(n)
            if k < 0.45:
                e = Read(a.name, self.self_index(a, ctx, vs, order, signs, g, pos))
                if ty == "i32":
                    terms.append(("i32", e))
                else:
                    terms.append(("lin", Bin("*", Lit(fmt(w)), e)))
            elif k < 0.7:
                # A reduction over earlier elements: triangular in the leading dimension, or a window.
                d = order[pos]
                s = signs[d]
                taken = {v.name for v in ctx.ivars}
                kv = self.fresh_index(taken)
                if r.random() < 0.5:
                    if s > 0:
                        bind = Binding([kv], Lit("0"), Var(vs[d].name))
                    else:
                        bind = Binding([kv], Bin("+", Var(vs[d].name), Lit("1")), copy.deepcopy(a.decl.shape[d]))
                    lead = Var(kv)
                    count = a.shape_vals[d]
                    kext = (copy.deepcopy(a.decl.shape[d]), a.shape_vals[d])
                else:
                    m = r.randint(1, 4)
                    lo = 0 if g else r.choice([0, 1])
                    hi = min(m, g) + 1 if g else m + 1
                    if g:
                        lo = 1
                    bind = Binding([kv], Lit(str(lo if lo else 1)), Lit(str(max(hi, 2))))
                    lead = Bin("-" if s > 0 else "+", Var(vs[d].name), Var(kv))
                    count = max(hi, 2) - (lo if lo else 1)
                    kext = (Lit(str(max(hi, 2))), max(hi, 2))
                if ctx.domain * max(count, 1) > WORK_MAX:
                    e = Read(a.name, self.self_index(a, ctx, vs, order, signs, g, pos))
                    terms.append(("lin", Bin("*", Lit(fmt(w)), e)) if ty != "i32" else ("i32", e))
                    continue
                sub = ctx.child(ivars=ctx.ivars + [IVar(kv, "red", 0, count, kext[0], kext[1])])
                sub.work = ctx.work * max(count, 1)
                body = Read(a.name, self.self_index(a, sub, vs, order, signs, g, pos, lead_expr=lead))
                if ty == "i32":
                    red = Red(r.choice(["max", "min"]), [bind], None, body)
                    terms.append(("i32", Call("max" if red.op == "max" else "min",
                                              [red, Un("-", Lit("100")) if red.op == "max" else Lit("100")])))
                    continue
                if r.random() < 0.5:
                    coef_in = self.input_for(sub, ty=r.choice(["f32", "f64"]))
                    coef_in.data = dict(kind="coef", scale=w / max(count, 1))
                    coef_in.bound = w / max(count, 1)
                    body = Bin("*", self.read_of(sub, coef_in), body)
                    terms.append(("lin", Red("sum", [bind], None, body)))
                else:
                    red = Red("sum", [bind], None, body)
                    pn = self.count_param(d, a)
                    terms.append(("lin", Bin("*", Lit(fmt(w)), Bin("/", red, pn))))
            elif k < 0.8 and n >= 2 and not g and ty != "i32":
                # The IIR's window: sum over (k1, k2) != (0, 0) of b[k1, k2] * y[v1 -+ k1, v2 -+ k2].
                d1, d2 = order[0], order[1]
                taken = {v.name for v in ctx.ivars}
                k1 = self.fresh_index(taken)
                k2 = self.fresh_index(taken | {k1})
                m = r.randint(2, 3)
                if ctx.domain * m * m > WORK_MAX:
                    continue
                bind = Binding([k1, k2], Lit("0"), Lit(str(m)))
                sub = ctx.child(ivars=ctx.ivars + [IVar(k1, "red", 0, m, Lit(str(m)), m),
                                                   IVar(k2, "red", 0, m, Lit(str(m)), m)])
                idx = [Var(v.name) for v in vs]
                idx[d1] = Bin("-" if signs[d1] > 0 else "+", Var(vs[d1].name), Var(k1))
                idx[d2] = Bin("-" if signs[d2] > 0 else "+", Var(vs[d2].name), Var(k2))
                for p in range(2, n):
                    idx[order[p]] = Var(vs[order[p]].name)
                coef = self.new_input([(Lit(str(m)), m), (Lit(str(m)), m)], r.choice(["f32", "f64"]), kind="coef",
                                      scale=w / (m * m))
                body = Bin("*", Read(coef.name, [Var(k1), Var(k2)]), Read(a.name, idx))
                terms.append(("lin", Red("sum", [bind], Bin("!=", Tup([Var(k1), Var(k2)]), Tup([Lit("0"), Lit("0")])),
                                         body)))
            else:
                e = Read(a.name, self.self_index(a, ctx, vs, order, signs, g, pos))
                if ty == "i32":
                    terms.append(("i32", e))
                else:
                    terms.append(("lin", Bin("*", Lit(fmt(w)), Call(r.choice(["tanh", "tanh", "abs"]), [e]))))
        base, bb = self.rhs(ctx, r.randint(1, 3))
        if ty == "i32":
            if bb > 20:
                base = Bin("%", base, Lit("7"))
                bb = 7
            if not terms:
                return base, bb
            k = r.random()
            acc = terms[0][1]
            for _, t in terms[1:]:
                acc = Call(r.choice(["max", "min"]), [acc, t])
            length = 1
            for v in a.shape_vals:
                length *= max(v, 1)
            if k < 0.35:
                return Bin("+", acc, base), min(bb * length + 100, ILIMIT)
            if k < 0.55:
                return Call("max", [acc, base]), max(bb, 100)
            if k < 0.75:
                return Bin("%", Bin("+", acc, base), Lit(str(r.choice([5, 7, 3])))), 7
            return Bin("+", Bin("/", acc, Lit("2")), base), 2 * bb + 100
        if bb > 10:
            base, bb = Call("tanh", [base]), 1.0
        e = base
        for _, t in terms:
            e = Bin("+", e, t) if r.random() < 0.8 else Bin("+", t, e)
        if r.random() < 0.15:
            return Call("tanh", [e]), 1.0
        return e, bb * 10

    def count_param(self, d, a):
        # A divisor >= the number of terms of a triangular reduction along dimension d.
        return Bin("+", copy.deepcopy(a.decl.shape[d]), Lit("1"))

    # ---------------------------------------------------------------- repeat blocks and updates
    def emit(self, eq):
        if self.cur_repeat is not None:
            self.cur_repeat.eqs.append(eq)
        else:
            self.prog.items.append(eq)

    def new_inout(self, rank=None):
        r = self.rng
        rank = rank if rank is not None else r.choice([0, 1, 1, 2, 2])
        dims = self.shape(rank)
        a = self.new_array("inout", r.choice(["f32", "f32", "f64"]), dims,
                           r.choice([None, None, "zero", "clamp", "mirror"]))
        a.data = dict(kind="unit")
        a.bound = 1.0
        a.exact = False
        a.defined = True
        a.in_repeat = None
        return a

    def update(self, w, ctx_extra=None, scale=0.25):
        """w[...] += / -= a bounded change, over all of w, a fixed position, or a where condition."""
        r = self.rng
        vs = self.lhs_vars(w)
        lhs = [Var(v.name) for v in vs]
        where = None
        k = r.random()
        if w.rank and k < 0.2:
            d = r.randrange(w.rank)
            lhs[d] = r.choice([Lit("0"), Bin("-", copy.deepcopy(w.decl.shape[d]), Lit("1"))])
            if self.cur_repeat is not None and r.random() < 0.4:
                lhs[d] = Var(self.cur_repeat.var)  # a different element each iteration
            vs = [v for i, v in enumerate(vs) if i != d]
        elif w.rank and k < 0.4:
            # Any condition: not convex (t != 1), or never true (an update that changes nothing).
            where = self.cond_affine(None, vs, 1)
        # The update may read w itself anywhere: every read sees the old values (at a constant shift of
        # the point it writes it runs in place, elsewhere it reads a copy of the old values).
        ctx = self.ctx_for(w, vs, exclude_self=False)
        ctx.exact_only = False
        k = r.random()
        all_vars = all(isinstance(x, Var) for x in lhs)
        if k < 0.3 and w.rank:
            if all_vars and r.random() < 0.5:
                own = Read(w.name, [add_off(copy.deepcopy(x), r.choice([0, -1, 1, 2])) for x in lhs])
            else:
                own = Read(w.name, [self.index_for(ctx, w, d) for d in range(w.rank)])
            cur = Read(w.name, [copy.deepcopy(x) for x in lhs])
            e = Bin("*", Lit(fmt(scale)), Bin("-", own, cur))
        else:
            e, b = self.val(ctx, r.randint(1, 3))
            e = Bin("*", Lit(fmt(scale)), Call("tanh", [e]))
        self.emit(Equation(w.name, lhs, r.choice(["+=", "-="]), e, where))
        w.bound += scale * 2

    def def_update(self):
        r = self.rng
        ws = [a for a in self.arrs if a.role == "inout"]
        w = r.choice(ws) if ws and r.random() < 0.5 else self.new_inout()
        for _ in range(r.randint(1, 2)):
            self.update(w)

    def def_scatter(self):
        """w[computed, ...] += v for f in 0..n where c: a scatter (docs/language.md, "Scatters") into an
        inout array. Its computed indices and data conditions read inputs only, whose values every target
        has exactly: an affine index of a for variable, an i32 input plus an offset, or floor(x * n) of an
        f32 input (a product exact in f64)."""
        r = self.rng
        ws = [a for a in self.arrs if a.role == "inout" and a.rank >= 1]
        w = r.choice(ws) if ws and r.random() < 0.5 else self.new_inout(rank=r.choice([1, 1, 2]))
        taken = set()
        vs = self.lhs_vars(w, taken)
        taken |= {v.name for v in vs}
        fors = []
        for _ in range(r.randint(1, 2)):
            name = self.fresh_index(taken)
            taken.add(name)
            ext, val = self.extent(want_small=True)
            fors.append(IVar(name, "for", 0, val, ext, val))
        computed = set(r.sample(range(w.rank), r.randint(1, w.rank)))
        kept = [v for d, v in enumerate(vs) if d not in computed]
        ctx = self.ctx_for(w, kept + fors)
        ctx.exact_only = False
        lhs = []
        for d in range(w.rank):
            if d not in computed:
                lhs.append(Var(vs[d].name))
                continue
            k, f = r.random(), r.choice(fors)
            if k < 0.35:
                lhs.append(add_off(Var(f.name), r.choice([-2, -1, 0, 1, 2])))
            elif k < 0.7:
                g = self.new_input([(copy.deepcopy(f.ext_expr), f.ext_val)], "i32", kind="index", lo=-3,
                                   hi=w.shape_vals[d] + 2)
                lhs.append(add_off(Read(g.name, [Var(f.name)]), r.choice([0, 0, 1, -1])))
            else:
                x = self.new_input([(copy.deepcopy(f.ext_expr), f.ext_val)], "f32", kind="unit")
                lhs.append(Bin("*", Read(x.name, [Var(f.name)]), Lit(str(max(w.shape_vals[d], 1)))))
        where = None
        if r.random() < 0.4:
            c = self.new_input([(copy.deepcopy(f.ext_expr), f.ext_val) for f in fors[:1]], "f32", kind="unit")
            where = Bin(r.choice([">", "<="]), Read(c.name, [Var(fors[0].name)]), Lit(r.choice(["0", "0.5"])))
        e, _ = self.val(ctx, r.randint(1, 3))
        e = Bin("*", Lit("0.25"), Call("tanh", [e]))
        binds = [Binding([f.name], Lit("0"), copy.deepcopy(f.ext_expr)) for f in fors]
        self.emit(Equation(w.name, lhs, r.choice(["+=", "-="]), e, where, binds))
        points = 1
        for f in fors:
            points *= max(f.count(), 1)
        w.bound += 0.5 * points

    def def_rounds(self):
        """A repeat block of one update of a whole 1-D or 2-D inout array from its old values at offsets of
        -2 to 2 (a stencil a round), stopping early or not, for 0 to 20 rounds: what the GPU targets run as
        round tiles, 8 rounds a launch (docs/scheduling.md, "Round tiles")."""
        r = self.rng
        w = self.new_inout(rank=r.choice([1, 2, 2]))
        var = self.fresh_index(set())
        pn = self.fresh_global(["R", "rounds", "sweeps"], param=True)
        self.param_vals[pn] = r.choice([0, 1, 3, 8, 9, 13, 20])
        rep = Repeat(var, Lit("0"), Var(pn), [])
        self.prog.items.append(rep)
        self.cur_repeat = rep
        self.cur_repeat_ivar = IVar(var, "rep", 0, self.param_vals[pn], Var(pn), self.param_vals[pn])
        vs = self.lhs_vars(w, {var})
        point = [Var(v.name) for v in vs]
        reads = [Read(w.name, [add_off(Var(v.name), r.randint(-2, 2)) for v in vs]) for _ in range(r.randint(1, 3))]
        total = reads[0]
        for read in reads[1:]:
            total = Bin("+", total, read)
        # Half way to the mean of the reads: the values stay within their bounds.
        change = Bin("-", Bin("*", Lit(fmt(1.0 / len(reads))), total), Read(w.name, point))
        self.emit(Equation(w.name, point, "+=", Bin("*", Lit("0.5"), change)))
        if r.random() < 0.4:
            rep.until = [w.name]
        self.cur_repeat = None

    def def_repeat(self):
        if self.extra_rng.random() < 0.25:
            return self.def_rounds()
        r = self.rng
        taken = set()
        var = self.fresh_index(taken)
        k = r.random()
        nonempty = False
        if k < 0.4 and self.param_vals:
            pn = r.choice(sorted(self.param_vals))
            lo, hi = Lit("0"), Var(pn)
            lo_v, hi_v = 0, self.param_vals[pn]
        elif k < 0.6 and self.param_vals:
            pn = r.choice(sorted(self.param_vals))
            lo, hi = Lit("1"), Bin("+", Var(pn), Lit("2"))
            lo_v, hi_v = 1, self.param_vals[pn] + 2
            nonempty = True
        else:
            n = r.randint(1, 4)
            lo, hi = Lit("0"), Lit(str(n))
            lo_v, hi_v = 0, n
            nonempty = True
        if hi_v - lo_v > 6:
            # Keep the iteration count small: a new param for it.
            pn = self.fresh_global(["E", "epochs", "steps", "iters"], param=True)
            self.param_vals[pn] = r.randint(0, 4) if r.random() < 0.2 else r.randint(1, 4)
            lo, hi = Lit("0"), Var(pn)
            lo_v, hi_v = 0, self.param_vals[pn]
            nonempty = False
        rep = Repeat(var, lo, hi, [])
        self.prog.items.append(rep)
        self.cur_repeat = rep
        self.cur_repeat_ivar = IVar(var, "rep", lo_v, hi_v, hi, max(hi_v, 0))
        ws = [a for a in self.arrs if a.role == "inout"]
        nw = r.randint(1, 2)
        inouts = []
        for _ in range(nw):
            if ws and r.random() < 0.3:
                inouts.append(ws.pop())
            else:
                inouts.append(self.new_inout())
        steps = r.randint(2, 5)
        for s in range(steps):
            k = r.random()
            if k < 0.3:
                a = self.new_defined(rank=r.choice([0, 1, 1, 2]), ty=r.choice(["f32", "f64"]))
                a.decl.role = "local"
                a.readable_after_repeat = False
                vs = self.lhs_vars(a, {var})
                ctx = self.ctx_for(a, vs)
                e, b = self.rhs(ctx, r.randint(1, 3))
                self.emit(Equation(a.name, [Var(v.name) for v in vs], "=", e))
                self.finish_def(a, b)
            elif k < 0.5:
                # An output indexed by the repeat variable (all of it is covered over the iterations).
                inner = r.choice([0, 0, 1])
                if lo_v == 0:
                    dims = [(copy.deepcopy(hi), hi_v)]
                else:
                    dims = [(Bin("-", copy.deepcopy(hi), Lit(str(lo_v))), hi_v - lo_v)]
                dims += self.shape(inner)
                a = self.new_array("output", r.choice(["f32", "f64"]), dims, r.choice([None, "zero", "clamp"]))
                vs = self.lhs_vars(a, {var})
                evs = vs[1:]
                ctx = self.ctx_for(a, evs)
                ctx.domain = max(1, ctx.domain)
                if r.random() < 0.6:
                    e, b = self.reduction(ctx, 2, op="sum")
                else:
                    e, b = self.rhs(ctx, 2)
                if r.random() < 0.2 and a.rank == 1:
                    # The previous iteration's element (0 before the first, under zero or clamp rules).
                    e = Bin("+", e, Bin("*", Lit("0.5"), Read(a.name, [add_off(Var(var), -lo_v - 1)])))
                    a.decl.boundary = "zero"
                self.emit(Equation(a.name, [add_off(Var(var), -lo_v)] + [Var(v.name) for v in evs], "=", e))
                self.finish_def(a, b * 2)
                a.readable_after_repeat = True
                a.e_indexed = True
            elif k < 0.6 and nonempty:
                # Defined the same way every iteration: the last iteration's value remains.
                a = self.new_defined(rank=r.choice([0, 1]), ty=r.choice(["f32", "f64"]))
                a.readable_after_repeat = False
                vs = self.lhs_vars(a, {var})
                ctx = self.ctx_for(a, vs)
                e, b = self.rhs(ctx, 2)
                self.emit(Equation(a.name, [Var(v.name) for v in vs], "=", e))
                self.finish_def(a, b)
            else:
                self.update(r.choice(inouts), scale=r.choice([0.25, 0.1, 0.5]))
        if not any(eq.op != "=" for eq in rep.eqs):
            self.update(inouts[0])
        # Stopping early (`until unchanged`) where no left-hand side uses the repeat variable: most runs
        # go to the bound (the updates keep changing), some stop after an iteration whose updates change
        # nothing (a where condition never true, a change of 0).
        if r.random() < 0.3 and not any(mentions(x, var) for eq in rep.eqs for x in eq.lhs):
            updated = sorted({eq.name for eq in rep.eqs if eq.op != "="})
            rep.until = r.sample(updated, r.randint(1, len(updated)))
        self.cur_repeat = None


class GiveUp(Exception):
    pass


def fmt(x):
    s = ("%.3f" % x).rstrip("0")
    if s.endswith("."):
        s += "0"
    return s if s not in ("0.0", "-0.0") else "0.001"


def eval_int(e, env):
    """The value of an integer affine expression (shapes) under param and const values."""
    if isinstance(e, Lit):
        return int(e.text)
    if isinstance(e, Var):
        return env[e.name]
    if isinstance(e, Un):
        return -eval_int(e.a, env)
    if isinstance(e, Bin):
        a, b = eval_int(e.a, env), eval_int(e.b, env)
        if e.op == "+":
            return a + b
        if e.op == "-":
            return a - b
        if e.op == "*":
            return a * b
        if e.op == "/":
            return int(a / b)
        if e.op == "%":
            return a - b * int(a / b)
    raise ValueError(e)


# -------------------------------------------------------------------- huge mode
def generate_huge(seed):
    """Programs with sizes near or past 64 bits, for `polyc check` only: element counts that overflow,
    huge consts, offsets and reduction ranges."""
    r = random.Random(seed)
    big = [4611686018427387904, 9223372036854775807, 4294967296, 2147483648, 3037000500, 1 << 40, 1 << 21]
    K = r.choice(big)
    lines = ["// generated by scripts/fuzz/gen_program.py --huge --seed %d" % seed, "param N;",
             "const K = %d;" % K]
    shape = r.choice([["K", "K", "K"], ["K", "K"], ["K", "N"], ["K + K"], ["2 * K"], ["K", "K", "K", "K"],
                      ["K - 1", "K - 1"], ["N", "K", "K"], ["K * 2 - K"], ["3037000500", "3037000500"]])
    ty = r.choice(["f32", "f64", "i32"])
    lines.append("input %s x[%s];" % (ty, ", ".join(shape)))
    lines.append("output %s y[%s];" % (ty, ", ".join(shape[:1])))
    k = r.randrange(6)
    if k == 0:
        lines.append("y[i] = x[%s];" % ", ".join(["i"] + ["0"] * (len(shape) - 1)))
    elif k == 1:
        lines.append("y[i] = sum(k in 0..K) x[%s];" % ", ".join(["k"] + ["i"] * (len(shape) - 1)))
    elif k == 2:
        lines.append("y[i] = x[%s] + y[i - K];" % ", ".join(["i + K"] + ["K - 1"] * (len(shape) - 1)))
    elif k == 3:
        lines.append("y[i] = x[%s] where i < K;" % ", ".join(["i"] * len(shape)))
        lines.append("y[i] = 0 where i >= K;")
    elif k == 4:
        lines.append("y[i] = sum(a, b in 0..K) x[%s];" % ", ".join(["a"] + ["b"] * (len(shape) - 1)))
    else:
        lines.append("y[i] = x[%s] * %d;" % (", ".join(["i"] * len(shape)), K))
    return "\n".join(lines) + "\n"


# -------------------------------------------------------------------- inputs
def draw(rng, a, shape):
    kind = a.data["kind"]
    if kind == "unit":
        v = rng.uniform(-1, 1, size=shape)
    elif kind == "pos":
        v = rng.uniform(0.5, 1.5, size=shape)
    elif kind == "quarter":
        v = rng.integers(-16, 17, size=shape) / 4.0
    elif kind == "coef":
        s = a.data["scale"]
        v = rng.uniform(-s, s, size=shape)
    elif kind == "int":
        v = rng.integers(-5, 6, size=shape)
    elif kind == "index":
        v = rng.integers(a.data["lo"], a.data["hi"] + 1, size=shape)
    else:
        raise ValueError(kind)
    return v


def make_inputs(gen, seed):
    """The values of every input and inout array, for the generator's param values."""
    import numpy as np
    rng = np.random.default_rng(seed)
    out = {}
    dt = {"f32": np.float32, "f64": np.float64, "i32": np.int32}
    for a in gen.arrs:
        if a.role not in ("input", "inout"):
            continue
        v = draw(rng, a, tuple(a.shape_vals))
        out[a.name] = np.asarray(v).astype(dt[a.ty])
    return out


class Case:
    """A generated program with everything needed to run it."""

    def __init__(self, prog, gen, inputs, seed):
        self.prog = prog
        self.inputs = inputs  # name -> ndarray
        self.seed = seed
        self.input_meta = {a.name: dict(a.data or {}, role=a.role, ty=a.ty) for a in gen.arrs
                           if a.role in ("input", "inout")}
        self.outputs = [a.name for a in gen.arrs if a.role in ("output", "inout")]
        self.check_failures = gen.check_failures
        self.npy_variant = random.Random(seed * 7 + 1).random()

    def text(self):
        return self.prog.render()

    def params(self):
        return dict(self.prog.param_values)

    def write(self, d):
        import numpy as np
        os.makedirs(os.path.join(d, "inputs"), exist_ok=True)
        with open(os.path.join(d, self.prog.filename), "w") as f:
            f.write(self.text())
        files = {}
        for name, v in self.inputs.items():
            path = os.path.join(d, "inputs", npy_file(name))
            save_npy(path, v, self.npy_variant)
            files[name] = os.path.join("inputs", npy_file(name))
        meta = dict(seed=self.seed, program=self.prog.filename, params=self.params(), inputs=files,
                    outputs=self.outputs)
        with open(os.path.join(d, "case.json"), "w") as f:
            json.dump(meta, f, indent=1)
        return meta


def save_npy(path, v, variant):
    """Inputs in the layouts the executables accept: mostly C order little-endian, sometimes Fortran
    order or big-endian (docs/running.md)."""
    import numpy as np
    if v.ndim >= 2 and variant < 0.08:
        v = np.asfortranarray(v)
    elif variant > 0.94:
        v = v.astype(v.dtype.newbyteorder(">"))
    np.save(path, v)


def generate(seed, polyc=None, tries=6, known_bugs=False, stepped=False):
    """A Case for this seed whose program passes `polyc check` (when polyc is given); with `stepped`, a
    time-stepped one (Gen.generate_stepped)."""
    last_err = ""
    for attempt in range(tries):
        sub = seed if attempt == 0 else seed * 1000003 + attempt
        gen = Gen(sub, polyc, known_bugs=known_bugs)
        prog = gen.generate_stepped() if stepped else gen.generate()
        if polyc is not None:
            ok, err = polyc.check(prog.render(), prog.filename)
            if not ok:
                last_err = err
                continue
        inputs = make_inputs(gen, sub)
        case = Case(prog, gen, inputs, seed)
        case.gen_seed = sub
        case.attempts = attempt + 1
        return case
    raise RuntimeError("seed %d: no valid program in %d tries; last error:\n%s" % (seed, tries, last_err))


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", help="write the program, inputs/*.npy and case.json here")
    ap.add_argument("--print", action="store_true", help="print the program")
    ap.add_argument("--huge", action="store_true", help="a program with huge sizes (for polyc check only)")
    ap.add_argument("--polyc", default=DEFAULT_POLYC)
    ap.add_argument("--no-check", action="store_true", help="do not run polyc check while generating")
    ap.add_argument("--known-bugs", action="store_true",
                    help="also generate what triggers the bugs in KNOWN_BUGS (avoided by default)")
    args = ap.parse_args()
    if args.huge:
        text = generate_huge(args.seed)
        if args.out:
            os.makedirs(args.out, exist_ok=True)
            with open(os.path.join(args.out, "huge.poly"), "w") as f:
                f.write(text)
        if args.print or not args.out:
            sys.stdout.write(text)
        return 0
    case = generate(args.seed, None if args.no_check else Polyc(args.polyc), known_bugs=args.known_bugs)
    if args.out:
        meta = case.write(args.out)
        if not args.print:
            print(json.dumps(meta))
    if args.print or not args.out:
        sys.stdout.write(case.text())
        print("// params: " + " ".join("%s=%d" % kv for kv in case.params().items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
