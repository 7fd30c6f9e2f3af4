#!/usr/bin/env python3
# Differential testing of polyc's targets on random programs (issue 28): generates programs with
# gen_program.py, builds them for each target, runs them on the generated inputs and compares every output
# with the oracle (`polyc run` where it exists, else the CPU target). A mismatch is shrunk to a small
# program that still shows it and saved under fuzz-out/programs/ with a README line to reproduce it.
#
#   fuzz.py --count N [--seed S] [--targets "cpu opencl"]   # the fuzzing loop (scripts/fuzz-programs.sh)
#   fuzz.py --check-only --count N [--seed S]               # every generated program passes polyc check
#   fuzz.py --huge --count N [--seed S]                     # huge sizes: polyc check must not crash
#   fuzz.py --replay DIR [--targets ...]                    # rerun a saved case
import argparse
import copy
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen_program as gp  # noqa: E402
from polyast import (Bin, Binding, Call, Equation, Lit, Read, Red, Repeat, Tup, Un, Var, CMP_OPS,  # noqa: E402
                     names_in, subst)

import numpy as np  # noqa: E402

ROOT = gp.ROOT
# Tolerances, relative to max(1, max |reference|) over the output (see docs/testing.md): float32 results
# of reductions and recurrences are summed in different orders by the targets (OpenMP, work-group trees)
# and by the oracle; each order is within n * 2^-24 of the exact sum, and the generated programs keep
# their values within ~1e3 and their recurrences contractive, so 1e-4 leaves a margin of ~100 over the
# rounding differences of the programs' sizes while a wrong element, index or boundary is off by O(1).
TOL = {"f32": 1e-4, "f64": 1e-9}
EXTREME = 1e30  # |values| above this (empty max/min: the lowest/highest finite value) compare one by one
DTYPES = {np.dtype("float32"): "f32", np.dtype("float64"): "f64", np.dtype("int32"): "i32"}


def log(msg):
    sys.stdout.write(msg + "\n")
    sys.stdout.flush()


# ------------------------------------------------------------------------------------------ running
# The runtime's and the standard headers that the cpu target's code includes (CodeGenCpu's includes); a
# header missing here is only parsed the slow way.
# The headers each target's generated code includes, precompiled by --quick-builds.
PCH_HEADERS = {
    "cpu": ["polyc/Runtime.h", "polyc/Timer.h", "polyc/cpu/Parallel.h", "polyc/cpu/Wavefront.h",
            "algorithm", "cfloat", "chrono", "cmath", "cstdint", "cstdio", "cstdlib", "cstring",
            "stdexcept", "string", "vector"],
    "opencl": ["polyc/Runtime.h", "polyc/opencl/OpenCLRuntime.h", "algorithm", "cstdint", "cstdio",
               "string", "vector"],
}
# The optimisation level of each target's builds under --quick-builds: what `polyc build` uses for the
# cpu code, which the fuzzer checks; -O0 for the OpenCL host code, whose kernels PoCL compiles as before.
PCH_OPT = {"cpu": "-O3", "opencl": "-O0"}


def quick_build_flags(work, env):
    """POLYC_CXXFLAGS for a long run's builds, by target (--quick-builds): they take a third less time
    or more (measured 2026-11-28: cpu 0.67 -> 0.45 s, opencl 0.67 -> 0.35 s a program) and compile what
    every user gets, except the OpenCL host code:
    - cpu: a precompiled header of PCH_HEADERS["cpu"], made with the flags that `polyc build` uses;
    - opencl: the host code at -O0 with a precompiled header. The kernels, which are what the fuzzer
      checks there, are compiled by PoCL as before; the host code's runtime library stays optimised.
    The headers are precompiled only with GCC, which ignores a precompiled header that does not match
    (Clang would stop with an error)."""
    flags = {"opencl": "-O0"}
    cxx = (env.get("CXX") or "c++").split()
    try:
        version = subprocess.run(cxx + ["--version"], capture_output=True, text=True, timeout=30).stdout
    except OSError:
        return flags
    if "Free Software Foundation" not in version:
        return flags
    runtime = env.get("POLYC_RUNTIME_DIR")
    include = os.path.join(runtime, "include") if runtime else os.path.join(ROOT, "runtime", "include")
    for target, headers in PCH_HEADERS.items():
        header = os.path.join(work, "pch", target + ".h")
        os.makedirs(os.path.dirname(header), exist_ok=True)
        with open(header, "w") as f:
            f.writelines("#include <%s>\n" % h for h in headers)
        made = subprocess.run(cxx + ["-std=c++17", PCH_OPT[target], "-fopenmp", "-I" + include, "-x",
                                     "c++-header", header, "-o", header + ".gch"], capture_output=True,
                              timeout=300)
        if made.returncode == 0:
            own = "-O0 " if target == "opencl" else ""
            flags[target] = own + "-include " + header
    return flags


class Runner:
    """Builds and runs one program for the oracle and the targets; caches executables by program text."""

    def __init__(self, polyc, work, targets, oracle, run_timeout=60, build_timeout=120, gpu=False,
                 quick_builds=False):
        self.polyc = polyc
        self.work = work
        self.targets = targets  # list of (name, how): how is a polyc target or a path to a build script
        self.oracle = oracle  # "run" or "cpu"
        self.run_timeout = run_timeout
        self.build_timeout = build_timeout
        self.gpu = gpu
        self.cache = {}
        self.env = dict(os.environ)
        self.env.setdefault("OMP_NUM_THREADS", "2")
        self.env["POCL_CACHE_DIR"] = os.path.join(work, "pocl-cache")
        os.makedirs(self.env["POCL_CACHE_DIR"], exist_ok=True)
        self.build_flags = quick_build_flags(work, self.env) if quick_builds else {}
        self.counter = 0

    def build(self, tname, how, poly_path, text):
        key = (tname, hashlib.sha1((os.path.basename(poly_path) + "\0" + text).encode()).hexdigest())
        if key in self.cache:
            return self.cache[key]
        self.counter += 1
        exe = os.path.join(self.work, "exe", "%s-%d" % (tname, self.counter))
        os.makedirs(os.path.dirname(exe), exist_ok=True)
        if how in ("cpu", "opencl", "cuda"):
            cmd = [self.polyc, "build", poly_path, "--target=" + how, "-o", exe]
        elif how in STREAMED:
            cmd = [self.polyc, "build", poly_path, "--target=" + STREAMED[how], "--stream", "-o", exe]
        elif MPI_TARGET.match(how):
            cmd = [self.polyc, "build", poly_path, "--target=" + base_target(how), "--mpi", "-o", exe]
        else:
            cmd = [how, poly_path, "-o", exe]
        env = self.env
        if how in self.build_flags:
            env = {**env, "POLYC_CXXFLAGS": (env.get("POLYC_CXXFLAGS", "") + " " + self.build_flags[how]).strip()}
        res = wait_for_polyc(self.polyc, lambda: run_cmd(cmd, self.build_timeout, env))
        if res[0] == 0 and os.path.exists(exe):
            out = ("ok", exe)
        elif res[0] == "timeout":
            out = ("build-timeout", "no executable in %d s" % self.build_timeout)
        elif how in STREAMED and "error: --stream:" in res[2]:
            out = (NOT_STREAMED, first_error(res[2]))
        else:
            out = ("build", "%s\nexit %s: %s" % (first_error(res[2]), res[0], tail(res[2])))
        self.cache[key] = out
        return out

    def forget_builds(self):
        """Deletes the executables built so far: a long run keeps none (10,000 programs left 44 GB)."""
        self.cache.clear()
        shutil.rmtree(os.path.join(self.work, "exe"), ignore_errors=True)

    def run(self, cmd, meta, case_dir, outdir, env=None):
        os.makedirs(outdir, exist_ok=True)
        args = []
        for k, v in meta["params"].items():
            args += ["--param", "%s=%d" % (k, v)]
        for k, f in meta["inputs"].items():
            args += ["--in", "%s=%s" % (k, os.path.join(case_dir, f))]
        outs = {}
        for k in meta["outputs"]:
            outs[k] = os.path.join(outdir, gp.npy_file(k))
            args += ["--out", "%s=%s" % (k, outs[k])]
        rc, out, err = run_cmd(cmd + args, self.run_timeout, {**self.env, **(env or {})})
        if rc == "timeout":
            return ("timeout", "no result in %d s" % self.run_timeout)
        if rc != 0:
            return ("crash", "exit %d: %s" % (rc, tail(err)))
        res = {}
        for k, f in outs.items():
            try:
                res[k] = np.load(f)
            except Exception as e:  # noqa: BLE001
                return ("crash", "exit 0 but output %s unreadable: %s" % (k, e))
        return ("ok", res)

    def evaluate(self, case_dir, meta, text, only=None):
        """{name: status} for the oracle and each target (or only the one named)."""
        poly = os.path.join(case_dir, meta["program"])
        results = {}
        tag = "r%d" % self.counter
        self.counter += 1
        if self.oracle == "run":
            results["oracle"] = wait_for_polyc(
                self.polyc, lambda: self.run([self.polyc, "run", poly], meta, case_dir,
                                             os.path.join(case_dir, "out-oracle-" + tag)), check_missing=True)
        else:
            b = self.build("cpu", "cpu", poly, text)
            results["oracle"] = b if b[0] != "ok" else self.run([b[1]], meta, case_dir,
                                                                os.path.join(case_dir, "out-oracle-" + tag))
        for tname, how in self.targets:
            wide = tname + WIDE_INDEX_SUFFIX
            if only is not None and only not in (tname, wide):
                continue
            b = self.build(tname, how, poly, text)
            base = base_target(how)
            if b[0] != "ok":
                results[tname] = b
            elif base == "cuda" and not self.gpu:
                results[tname] = ("built", None)
            else:
                cmd, env = run_command(how, b[1])
                if only != wide:
                    results[tname] = self.run(cmd, meta, case_dir, os.path.join(case_dir, "out-%s-%s" % (tname, tag)),
                                              env=env)
                if base == "cuda" and only != tname:
                    # The kernels' int64_t instance too: a fuzzed program's sizes always fit in int, which
                    # the kernels take by default (docs/scheduling.md, section 5, "The index type").
                    results[wide] = self.run(cmd, meta, case_dir, os.path.join(case_dir, "out-%s-%s" % (wide, tag)),
                                             env={**(env or {}), "POLYC_CUDA_INDEX": "64"})
        return results


# The result of a CUDA executable run with its kernels' index arithmetic in int64_t (POLYC_CUDA_INDEX=64).
WIDE_INDEX_SUFFIX = "-i64"

# Targets built with --stream (docs/running.md), and the status of a program that polyc refuses to stream
# (no sequential outer loop, nothing indexed by it): no result, not a mismatch.
STREAMED = {"cpu-stream": "cpu", "cuda-stream": "cuda"}
NOT_STREAMED = "not-streamed"

# Targets built with --mpi and run under mpirun with R ranks (docs/running.md, "Ranks of MPI"): cpu-mpi3,
# opencl-mpi2, cuda-mpi2. Their sums split by their terms add in another order, within the tolerances.
MPI_TARGET = re.compile(r"^(cpu|opencl|cuda)-mpi([1-9][0-9]*)$")


def base_target(how):
    """The polyc target a target builds: cpu, opencl or cuda (or how itself, a build script)."""
    mpi = MPI_TARGET.match(how)
    return mpi.group(1) if mpi else STREAMED.get(how, how)


def run_command(how, exe):
    """The command that runs a target's executable: under mpirun for an MPI target, one OpenMP thread a
    rank (the ranks share the machine's cores)."""
    mpi = MPI_TARGET.match(how)
    if not mpi:
        return [exe], None
    return (["mpirun", "--oversubscribe", "--allow-run-as-root", "-np", mpi.group(2), exe],
            {"OMP_NUM_THREADS": "1"})


def wait_for_polyc(polyc, fn, check_missing=False):
    """Others relink build/: while polyc is missing, wait 30 s and retry."""
    for _ in range(20):
        if os.access(polyc, os.X_OK):
            res = fn()
            if not (isinstance(res, tuple) and res and res[0] in (127, "crash") and not os.access(polyc, os.X_OK)):
                return res
        time.sleep(30)
    raise RuntimeError("polyc not found at " + polyc)


def run_cmd(cmd, timeout, env):
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env, errors="replace")
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        return "timeout", "", ""
    except OSError as e:
        return 127, "", str(e)


def first_error(s):
    lines = (s or "").splitlines()
    for line in lines:
        if "error" in line:
            return line.strip()
    return lines[0].strip() if lines else ""


def tail(s, n=600):
    s = (s or "").strip()
    return s if len(s) <= n else "..." + s[-n:]


def tolerance_types(prog):
    """The type whose tolerance each output gets: an f64 (or i32) array computed from f32 values that
    are themselves computed (rounded to float32 by the targets, kept in float64 by the oracle) gets
    f32's. Inputs are exact in any type."""
    prec = {}
    for a in prog.arrays:
        prec[a.name] = "f32" if (a.ty == "f32" and a.role != "input") else "exact"
    changed = True
    while changed:
        changed = False
        for eq in prog.equations():
            if prec.get(eq.name) == "f32":
                continue
            used = names_in(eq.rhs)
            if eq.where is not None:
                names_in(eq.where, used)
            if any(prec.get(n) == "f32" for n in used if n != eq.name):
                prec[eq.name] = "f32"
                changed = True
    return {a.name: ("f32" if prec[a.name] == "f32" and a.ty == "f64" else a.ty) for a in prog.arrays
            if a.role in ("output", "inout")}


def compare(ref, got, tol_ty=None):
    """None when got matches ref within the tolerance of its type (or of tol_ty), else a message."""
    if got.shape != ref.shape:
        return "shape %s, oracle %s" % (got.shape, ref.shape)
    if got.dtype.newbyteorder("=") != ref.dtype.newbyteorder("="):
        return "dtype %s, oracle %s" % (got.dtype, ref.dtype)
    ty = DTYPES.get(ref.dtype.newbyteorder("="))
    if ref.size == 0:
        return None
    # numpy 2 refuses nonzero() on a scalar (0-d array): compare scalars as one-element arrays.
    ref, got = np.atleast_1d(ref), np.atleast_1d(got)
    if ty == "i32":
        bad = np.nonzero(got != ref)
        if bad[0].size:
            i = tuple(b[0] for b in bad)
            return "%d elements differ, first at %s: %s, oracle %s" % (bad[0].size, list(i), got[i], ref[i])
        return None
    r = ref.astype(np.float64)
    g = got.astype(np.float64)
    nan_r, nan_g = np.isnan(r), np.isnan(g)
    if (nan_r != nan_g).any():
        i = tuple(b[0] for b in np.nonzero(nan_r != nan_g))
        return "NaN at %s: %s, oracle %s" % (list(i), g[i], r[i])
    fin = ~nan_r
    inf_r, inf_g = np.isinf(r) & fin, np.isinf(g) & fin
    if (inf_r != inf_g).any() or (r[inf_r] != g[inf_r]).any():
        i = tuple(b[0] for b in np.nonzero((inf_r != inf_g) | (inf_r & (r != g))))
        return "infinity at %s: %s, oracle %s" % (list(i), g[i], r[i])
    regular = fin & ~inf_r & (np.abs(r) <= EXTREME)
    extreme = fin & ~inf_r & (np.abs(r) > EXTREME)
    tol = TOL[tol_ty if tol_ty in TOL else ty]
    scale = max(1.0, float(np.abs(r[regular]).max()) if regular.any() else 1.0)
    # g - r is taken everywhere and masked after: equal infinities give NaN there, which the masks drop.
    with np.errstate(invalid="ignore", over="ignore"):
        err = np.where(regular, np.abs(g - r), 0.0)
        # Extreme values (an empty max/min) must be the same value, relatively.
        err_x = np.where(extreme, np.abs(g - r) / np.maximum(np.abs(r), 1.0), 0.0)
    worst = float(err.max()) / scale
    if worst > tol or (extreme.any() and float(err_x.max()) > tol):
        if worst > tol:
            i = np.unravel_index(int(np.argmax(err)), err.shape)
        else:
            i = np.unravel_index(int(np.argmax(err_x)), err_x.shape)
        return "error %.3g of %.3g (tolerance %g) at %s: %r, oracle %r" % (
            abs(g[i] - r[i]), scale, tol, list(int(x) for x in i), float(g[i]), float(r[i]))
    return None


def signature(kind, msg):
    """What must stay the same while a mismatch is shrunk: the kind, and for a failed build the first
    line of the message without numbers and names in quotes (the same internal error)."""
    if kind in ("build", "both-build", "oracle-build") or kind.startswith("crash"):
        line = (msg or "").split("\n")[0]
        line = re.sub(r"'[^']*'", "'_'", line)
        line = re.sub(r"\u2018[^\u2019]*\u2019", "'_'", line)
        line = re.sub(r"/[^ :]*", "PATH", line)
        return kind + ":" + re.sub(r"[0-9]+", "N", line)[:120]
    return kind


# The compiler's error for a program in which an element depends on itself (analysis/Dependences.cpp,
# checkOrderable). Such a program defines no value there; the interpreter evaluates only the elements
# that the outputs need, so it may run it (the cycle is not needed) or stop at run time (exit 3).
ILL_DEFINED = "no order of evaluation can compute it"


def rejected_by_every_target(results):
    """Whether every target's build rejected the program as ill-defined (ILL_DEFINED): not a mismatch,
    whatever the oracle did; the generator made a program that the language does not define."""
    targets = [r for t, r in results.items() if t != "oracle" and r[0] != NOT_STREAMED]
    return bool(targets) and all(r[0] == "build" and ILL_DEFINED in (r[1] or "") for r in targets)


def mismatches(results, tol_types=None):
    """[(target, kind, message)] from evaluate()'s results."""
    tol_types = tol_types or {}
    out = []
    o = results["oracle"]
    if rejected_by_every_target(results):
        return out
    for t, res in results.items():
        if t == "oracle":
            continue
        if res[0] in ("built", NOT_STREAMED):
            continue
        if o[0] != "ok":
            if res[0] == "ok":
                out.append((t, "oracle-" + o[0], "the oracle failed (%s), %s succeeded" % (o[1], t)))
            else:
                out.append((t, "both-" + res[0], "the oracle failed (%s) and so did %s (%s)" % (o[1], t, res[1])))
            continue
        if res[0] != "ok":
            out.append((t, res[0], res[1]))
            continue
        for name, ref in o[1].items():
            got = res[1].get(name)
            msg = "missing" if got is None else compare(ref, got, tol_types.get(name))
            if msg:
                out.append((t, "value", "%s: %s" % (name, msg)))
    if not [r for r in results if r != "oracle"] and o[0] != "ok":
        out.append(("oracle", "oracle-" + o[0], o[1]))
    return out


# ------------------------------------------------------------------------------------------ cases
class Work:
    """A program with its params and inputs, as the shrinker changes them."""

    def __init__(self, prog, params, inputs):
        self.prog = prog
        self.params = dict(params)
        self.inputs = dict(inputs)

    def text(self):
        self.prog.param_values = dict(self.params)
        return self.prog.render()

    def meta(self):
        outs = [a.name for a in self.prog.arrays if a.role in ("output", "inout")]
        ins = {a.name: os.path.join("inputs", gp.npy_file(a.name)) for a in self.prog.arrays
               if a.role in ("input", "inout")}
        return dict(program=self.prog.filename, params=self.params, inputs=ins, outputs=outs,
                    tolerance=tolerance_types(self.prog))

    def write(self, d, seed=None):
        if os.path.exists(d):
            shutil.rmtree(d)
        os.makedirs(os.path.join(d, "inputs"))
        with open(os.path.join(d, self.prog.filename), "w") as f:
            f.write(self.text())
        meta = self.meta()
        for a in self.prog.arrays:
            if a.role in ("input", "inout"):
                np.save(os.path.join(d, "inputs", gp.npy_file(a.name)), self.inputs[a.name])
        if seed is not None:
            meta["seed"] = seed
        with open(os.path.join(d, "case.json"), "w") as f:
            json.dump(meta, f, indent=1)
        return meta


def const_env(prog, params):
    env = dict(params)
    for c in prog.consts:
        try:
            env[c.name] = gp.eval_int(c.expr, env)
        except (ValueError, KeyError, ZeroDivisionError):
            pass
    return env


def fit_inputs(work):
    """Slice (or zero-pad) every input to the shapes its declaration has under the current params."""
    env = const_env(work.prog, work.params)
    out = {}
    for a in work.prog.arrays:
        if a.role not in ("input", "inout"):
            continue
        shape = tuple(max(0, gp.eval_int(e, env)) for e in a.shape)
        v = work.inputs[a.name]
        if v.shape != shape:
            nv = np.zeros(shape, dtype=v.dtype)
            sl = tuple(slice(0, min(x, y)) for x, y in zip(shape, v.shape))
            nv[sl] = v[sl]
            v = nv
        out[a.name] = v
    work.inputs = out


# ------------------------------------------------------------------------------------------ shrinking
def enum_nodes(prog):
    """Every expression node of the program's equations and funcs, pre-order: (node, setter, context)
    with context 'value', 'index' or 'cond'."""
    out = []

    def visit(e, setter, ctx):
        out.append((e, setter, ctx))
        if isinstance(e, Read):
            for i in range(len(e.idx)):
                visit(e.idx[i], (lambda e, i: lambda v: e.idx.__setitem__(i, v))(e, i), "index")
        elif isinstance(e, Bin):
            if e.op in ("&&", "||"):
                cc = ctx
            elif e.op in CMP_OPS:
                cc = "index" if ctx == "cond" else ctx
            else:
                cc = ctx
            visit(e.a, (lambda e: lambda v: setattr(e, "a", v))(e), cc)
            visit(e.b, (lambda e: lambda v: setattr(e, "b", v))(e), cc)
        elif isinstance(e, Un):
            visit(e.a, (lambda e: lambda v: setattr(e, "a", v))(e), ctx)
        elif isinstance(e, Call):
            for i in range(len(e.args)):
                visit(e.args[i], (lambda e, i: lambda v: e.args.__setitem__(i, v))(e, i), "value")
        elif isinstance(e, Tup):
            for i in range(len(e.elems)):
                visit(e.elems[i], (lambda e, i: lambda v: e.elems.__setitem__(i, v))(e, i), "index")
        elif isinstance(e, Red):
            for b in e.binds:
                visit(b.lo, (lambda b: lambda v: setattr(b, "lo", v))(b), "index")
                visit(b.hi, (lambda b: lambda v: setattr(b, "hi", v))(b), "index")
            if e.where is not None:
                visit(e.where, (lambda e: lambda v: setattr(e, "where", v))(e), "cond")
            visit(e.body, (lambda e: lambda v: setattr(e, "body", v))(e), "value")

    for eq in prog.equations():
        visit(eq.rhs, (lambda eq: lambda v: setattr(eq, "rhs", v))(eq), "value")
    for f in prog.funcs:
        visit(f.body, (lambda f: lambda v: setattr(f, "body", v))(f), "value")
    return out


def node_edits(node, ctx):
    """Smaller replacements for one node, most drastic first."""
    edits = []
    if ctx == "value":
        if not (isinstance(node, Lit) and node.text in ("1", "0")):
            edits.append(Lit("1"))
            edits.append(Lit("0"))
        if isinstance(node, Bin) and node.op not in CMP_OPS and node.op not in ("&&", "||"):
            edits += [node.a, node.b]
        elif isinstance(node, Un):
            edits.append(node.a)
        elif isinstance(node, Call):
            edits += list(node.args[1:] if node.fn == "select" else node.args)
        elif isinstance(node, Red):
            mapping = {}
            for b in node.binds:
                for n in b.names:
                    mapping[n] = b.lo
            edits.append(subst(node.body, mapping))
            if node.where is not None:
                edits.append(Red(node.op, node.binds, None, node.body))
            for bi, b in enumerate(node.binds):
                for ni, n in enumerate(b.names):
                    if len(node.binds) == 1 and len(b.names) == 1:
                        continue
                    binds = copy.deepcopy(node.binds)
                    del binds[bi].names[ni]
                    if not binds[bi].names:
                        del binds[bi]
                    m = {n: b.lo}
                    edits.append(Red(node.op, binds, subst(node.where, m) if node.where is not None else None,
                                     subst(node.body, m)))
                if not (isinstance(b.hi, Bin) and b.hi.op == "+" and isinstance(b.hi.b, Lit) and b.hi.b.text == "1"):
                    binds = copy.deepcopy(node.binds)
                    binds[bi].hi = Bin("+", copy.deepcopy(b.lo), Lit("1"))
                    edits.append(Red(node.op, binds, node.where, node.body))
            if node.op != "sum":
                edits.append(Red("sum", node.binds, node.where, node.body))
    elif ctx == "index":
        if isinstance(node, Read):
            edits.append(Lit("0"))
            edits += [i for i in node.idx]
        elif isinstance(node, Bin) and node.op in ("+", "-"):
            edits += [node.a, node.b]
        elif isinstance(node, Bin) and node.op == "*":
            edits += [node.b, node.a]
    return edits


def strip_unused(prog):
    """Drop declarations nothing uses (after other edits): funcs, consts, params, inputs and locals."""
    changed = True
    while changed:
        changed = False
        used = set()
        for eq in prog.equations():
            names_in(eq.rhs, used)
            for e in eq.lhs:
                names_in(e, used)
            if eq.where is not None:
                names_in(eq.where, used)
        for it in prog.items:
            if isinstance(it, Repeat):
                names_in(it.lo, used)
                names_in(it.hi, used)
        for a in prog.arrays:
            for e in a.shape:
                names_in(e, used)
        for f in prog.funcs:
            names_in(f.body, used)
        for c in prog.consts:
            names_in(c.expr, used)
        defined = {eq.name for eq in prog.equations()}
        for a in list(prog.arrays):
            if a.name in used:
                continue
            if a.role == "input" or (a.role == "local"):
                prog.arrays.remove(a)
                remove_equations(prog, a.name)
                changed = True
        for f in list(prog.funcs):
            if f.name not in used:
                prog.funcs.remove(f)
                changed = True
        for c in list(prog.consts):
            if c.name not in used:
                prog.consts.remove(c)
                changed = True
        for p in list(prog.params):
            if p not in used:
                prog.params.remove(p)
                prog.param_values.pop(p, None)
                changed = True
        _ = defined
    prog.items = [it for it in prog.items if not (isinstance(it, Repeat) and not it.eqs)]


def remove_equations(prog, name):
    items = []
    for it in prog.items:
        if isinstance(it, Repeat):
            it.eqs = [e for e in it.eqs if e.name != name]
            items.append(it)
        elif it.name != name:
            items.append(it)
    prog.items = items


def replace_reads(prog, name):
    """Every read of array `name` becomes a literal (0 as an index, 1 as a value)."""
    for node, setter, ctx in enum_nodes(prog):
        if isinstance(node, (Read, Var)) and node.name == name:
            setter(Lit("0") if ctx == "index" else Lit("1"))
    for eq in prog.equations():
        for i, e in enumerate(eq.lhs):
            if name in names_in(e):
                eq.lhs[i] = Lit("0")


def structural_edits(work):
    """Candidate programs with whole parts removed, coarse first."""
    prog = work.prog
    outs = [a for a in prog.arrays if a.role in ("output", "inout")]
    cands = []
    # Drop a defined array (its equations; its reads become literals).
    for a in prog.arrays:
        if a.role == "input" or (a.role in ("output", "inout") and len(outs) <= 1):
            continue
        w = copy.deepcopy(work)
        w.prog.arrays = [x for x in w.prog.arrays if x.name != a.name]
        remove_equations(w.prog, a.name)
        replace_reads(w.prog, a.name)
        cands.append(("drop array " + a.name, w))
    # Drop an update.
    flat = list(prog.equations())
    for i, eq in enumerate(flat):
        if eq.op != "=":
            w = copy.deepcopy(work)
            target = list(w.prog.equations())[i]
            for it in w.prog.items:
                if isinstance(it, Repeat) and target in it.eqs:
                    it.eqs.remove(target)
            if target in w.prog.items:
                w.prog.items.remove(target)
            cands.append(("drop update of " + eq.name, w))
    # Unwrap a repeat block into its first iteration, or run it once.
    for ri, it in enumerate(prog.items):
        if isinstance(it, Repeat):
            w = copy.deepcopy(work)
            rep = w.prog.items[ri]
            rep.hi = Bin("+", copy.deepcopy(rep.lo), Lit("1"))
            cands.append(("one iteration", w))
            w = copy.deepcopy(work)
            rep = w.prog.items[ri]
            eqs = [Equation(e.name, [subst(x, {rep.var: rep.lo}) for x in e.lhs], e.op, subst(e.rhs, {rep.var: rep.lo}),
                            e.where, e.fors) for e in rep.eqs]
            w.prog.items[ri:ri + 1] = eqs
            cands.append(("unwrap repeat", w))
    # One piece instead of several: keep one equation of the array, without its where condition.
    by_array = {}
    for i, eq in enumerate(flat):
        if eq.op == "=":
            by_array.setdefault(eq.name, []).append(i)
    for name, idxs in by_array.items():
        if len(idxs) < 2:
            continue
        for keep in idxs:
            w = copy.deepcopy(work)
            eqs = list(w.prog.equations())
            k = eqs[keep]
            fresh = 0
            for d, e in enumerate(k.lhs):
                if not isinstance(e, Var):
                    k.lhs[d] = Var("q%d" % fresh)
                    fresh += 1
            k.where = None
            drop = {id(eqs[i]) for i in idxs if i != keep}
            for it in w.prog.items:
                if isinstance(it, Repeat):
                    it.eqs = [e for e in it.eqs if id(e) not in drop]
            w.prog.items = [it for it in w.prog.items if id(it) not in drop]
            cands.append(("one piece of " + name, w))
    # Boundaries back to the default.
    if prog.boundary:
        w = copy.deepcopy(work)
        w.prog.boundary = None
        cands.append(("no program boundary", w))
    for i, a in enumerate(prog.arrays):
        if a.boundary:
            w = copy.deepcopy(work)
            w.prog.arrays[i].boundary = None
            cands.append(("no boundary on " + a.name, w))
    return cands


def param_edits(work):
    cands = []
    for p, v in work.params.items():
        for nv in sorted({0, 1, 2, v // 2, v - 1}):
            if 0 <= nv < v:
                w = copy.deepcopy(work)
                w.params[p] = nv
                cands.append(("%s=%d" % (p, nv), w))
    return cands


def expr_edits(work):
    nodes = enum_nodes(work.prog)
    for i, (node, _, ctx) in enumerate(nodes):
        for j, rep in enumerate(node_edits(node, ctx)):
            yield ("node %d edit %d" % (i, j), i, j)


def apply_expr_edit(work, i, j):
    w = copy.deepcopy(work)
    nodes = enum_nodes(w.prog)
    node, setter, ctx = nodes[i]
    edits = node_edits(node, ctx)
    setter(copy.deepcopy(edits[j]))
    return w


class Shrinker:
    def __init__(self, runner, checker, target, kind, msg, work_dir, budget_s=600, log_fn=log):
        self.runner = runner
        self.checker = checker
        self.target = target
        self.kind = kind
        self.sig = signature(kind, msg)
        self.dir = work_dir
        self.deadline = time.time() + budget_s
        self.tries = 0
        self.log = log_fn
        self.seen = set()

    def interesting(self, w):
        if time.time() > self.deadline:
            return False
        w = copy.deepcopy(w)
        strip_unused(w.prog)
        w.params = {p: v for p, v in w.params.items() if p in w.prog.params}
        key = (w.text(), tuple(sorted(w.params.items())))
        if key in self.seen:
            return False  # no change, or a candidate already rejected
        self.seen.add(key)
        if not any(a.role in ("output", "inout") for a in w.prog.arrays):
            return False
        text = w.text()
        ok, _ = self.checker.check(text, w.prog.filename)
        if not ok:
            return False
        try:
            fit_inputs(w)
        except (KeyError, ValueError):
            return False
        self.tries += 1
        d = os.path.join(self.dir, "try%d" % self.tries)
        meta = w.write(d)
        only = self.target if self.target != "oracle" else "__none__"
        if self.kind in ("build", "build-timeout") and self.target != "oracle":
            # A failed build needs no oracle and no run.
            how = dict(self.runner.targets)[self.target]
            b = self.runner.build(self.target, how, os.path.join(d, meta["program"]), text)
            mm = [(self.target, b[0], b[1])] if b[0] != "ok" else []
        else:
            res = self.runner.evaluate(d, meta, text, only=only)
            mm = mismatches(res, meta["tolerance"])
        shutil.rmtree(d, ignore_errors=True)
        return any(t == self.target and signature(k, m) == self.sig for t, k, m in mm)

    def run(self, work):
        cur = copy.deepcopy(work)
        strip_unused(cur.prog)
        cur.params = {p: v for p, v in cur.params.items() if p in cur.prog.params}
        self.seen.add((cur.text(), tuple(sorted(cur.params.items()))))
        progress = True
        rounds = 0
        while progress and time.time() < self.deadline:
            progress = False
            rounds += 1
            for label, cand in structural_edits(cur) + param_edits(cur):
                if self.interesting(cand):
                    cur = cand
                    strip_unused(cur.prog)
                    progress = True
            i = 0
            while time.time() < self.deadline:
                nodes = enum_nodes(cur.prog)
                if i >= len(nodes):
                    break
                node, _, ctx = nodes[i]
                took = False
                for j in range(len(node_edits(node, ctx))):
                    cand = apply_expr_edit(cur, i, j)
                    if self.interesting(cand):
                        cur = cand
                        strip_unused(cur.prog)
                        progress = took = True
                        break
                if not took:
                    i += 1
        cur.params = {p: v for p, v in cur.params.items() if p in cur.prog.params}
        fit_inputs(cur)
        return cur, rounds


# ------------------------------------------------------------------------------------------ main loop
def parse_targets(spec, oracle):
    out = []
    for t in spec.split():
        if "=" in t:
            name, how = t.split("=", 1)
            out.append((name, os.path.abspath(how)))
        else:
            if oracle == "cpu" and t == "cpu":
                continue
            out.append((t, t))
    return out


def have_polyc_run(polyc):
    try:
        p = subprocess.run([polyc, "run", "--help"], capture_output=True, timeout=30)
        return p.returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def have_gpu():
    try:
        p = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=30)
        return p.returncode == 0 and "GPU" in p.stdout
    except (OSError, subprocess.TimeoutExpired):
        return False


def save_mismatch(out_root, seed, target, kind, msg, original, shrunk, oracle, targets_spec, shrink_note):
    base = os.path.join(out_root, "programs")
    name = "seed%d-%s-%s" % (seed, target, kind)
    d = os.path.join(base, name)
    shrunk.write(d, seed)
    with open(os.path.join(d, "original.poly"), "w") as f:
        f.write(original.text())
    orig_dir = os.path.join(d, "original")
    original.write(orig_dir, seed)
    rel = os.path.relpath(d, ROOT)
    cmd = "scripts/fuzz/fuzz.py --replay %s --targets '%s' --oracle %s" % (rel, targets_spec, oracle)
    with open(os.path.join(d, "README"), "w") as f:
        f.write("%s: %s %s (oracle: %s)\n%s\n%s\nparams: %s\nreproduce: %s\n" % (
            name, target, kind, oracle, msg, shrink_note, " ".join("%s=%d" % kv for kv in shrunk.params.items()), cmd))
    with open(os.path.join(base, "README"), "a") as f:
        f.write("%s: %s %s vs %s: %s | reproduce: %s\n" % (time.strftime("%Y-%m-%d %H:%M"), name, kind, oracle,
                                                       msg.replace("\n", " ")[:300], cmd))
    return d


# A program whose builds and runs take longer than this is named in the log (a run stopped by the time
# limit of a device call otherwise shows nothing of it).
SLOW_PROGRAM_S = 120


def fuzz(args):
    polyc = os.path.abspath(args.polyc)
    oracle = args.oracle
    if oracle == "auto":
        oracle = "run" if have_polyc_run(polyc) else "cpu"
    targets = parse_targets(args.targets, oracle)
    if not targets:
        log("fuzz-programs: no targets to compare with the oracle (%s)" % oracle)
        return 2
    gpu = have_gpu() if any(base_target(h) == "cuda" for _, h in targets) else False
    work = tempfile.mkdtemp(prefix="polyc-fuzz-")
    runner = Runner(polyc, work, targets, oracle, run_timeout=args.timeout, build_timeout=args.build_timeout,
                    gpu=gpu, quick_builds=args.quick_builds)
    checker = gp.Polyc(polyc)
    out_root = os.path.abspath(args.out)
    start = time.time()
    n_mm = 0
    found = []
    shrunk_sigs = {}
    seeds = [int(x) for x in args.seeds.split(",")] if args.seeds else [args.seed + k for k in range(args.count)]
    args.count = len(seeds)
    log("fuzz-programs: %d programs from seed %d, oracle %s, targets %s%s" % (
        args.count, seeds[0] if seeds else 0, "polyc run" if oracle == "run" else "the cpu target",
        " ".join(t for t, _ in targets), "" if gpu or not any(base_target(h) == "cuda" for _, h in targets)
        else " (cuda: built only, no GPU here)"))

    streamed = {}  # streamed target: [programs it streamed, programs polyc would not stream]
    for k, seed in enumerate(seeds):
        if args.max_seconds and time.time() - start > args.max_seconds:
            log("fuzz-programs: stopped after %.0f s (--max-seconds), %d of %d programs run" % (
                time.time() - start, k, len(seeds)))
            args.count = k
            break
        case = gp.generate(seed, checker, known_bugs=args.known_bugs, stepped=args.stepped)
        d = os.path.join(work, "p%d" % seed)
        meta = case.write(d)
        meta["tolerance"] = tolerance_types(case.prog)
        text = case.text()
        began = time.time()
        res = runner.evaluate(d, meta, text)
        if time.time() - began > SLOW_PROGRAM_S:
            log("fuzz-programs: slow: seed %d took %.0f s (%s)" % (
                seed, time.time() - began, ", ".join("%s %s" % (t, r[0]) for t, r in sorted(res.items()))))
        mm = mismatches(res, meta["tolerance"])
        for t, how in targets:
            if how in STREAMED and t in res:
                streamed.setdefault(t, [0, 0])[res[t][0] == NOT_STREAMED] += 1
        this_program = set()
        seen = set()
        for t, kind, msg in mm:
            if (t, kind) in seen:
                continue
            seen.add((t, kind))
            n_mm += 1
            log("fuzz-programs: MISMATCH seed %d %s %s: %s" % (seed, t, kind, msg.replace("\n", " ")[:400]))
            original = Work(case.prog, case.params(), case.inputs)
            note = "not shrunk"
            shrunk = original
            sig = signature(kind, msg)
            # The same failed build (another target, or a program before) is shrunk once or twice only.
            same = shrunk_sigs.get(sig if kind != "value" else (t, seed), 0)
            if not args.no_shrink and (kind == "value" or same < 2) and sig not in this_program:
                shrunk_sigs[sig if kind != "value" else (t, seed)] = same + 1
                this_program.add(sig)
                sh = Shrinker(runner, checker, t, kind, msg, os.path.join(work, "shrink%d" % seed),
                              args.shrink_budget)
                saved_timeouts = runner.build_timeout, runner.run_timeout
                if "timeout" in kind:
                    runner.build_timeout = runner.run_timeout = 15
                shrunk, rounds = sh.run(original)
                runner.build_timeout, runner.run_timeout = saved_timeouts
                note = "shrunk in %d candidate runs, %d rounds, from %d to %d lines" % (
                    sh.tries, rounds, len(original.text().splitlines()), len(shrunk.text().splitlines()))
                log("fuzz-programs:   " + note)
            saved = save_mismatch(out_root, seed, t, kind, msg, original, shrunk, oracle, args.targets, note)
            log("fuzz-programs:   saved %s" % os.path.relpath(saved, os.getcwd()))
            for line in shrunk.text().splitlines():
                log("fuzz-programs:   | " + line)
            log("fuzz-programs:   | // params: " + " ".join("%s=%d" % kv for kv in shrunk.params.items()))
            found.append((seed, t, kind))
        shutil.rmtree(d, ignore_errors=True)
        runner.forget_builds()
        if (k + 1) % args.progress == 0 or k + 1 == args.count:
            log("fuzz-programs: %d/%d programs, %d mismatches, %.0f s" % (k + 1, args.count, n_mm, time.time() - start))
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    for t, (ran, refused) in sorted(streamed.items()):
        log("fuzz-programs: %s streamed %d programs (%d not streamable)" % (t, ran, refused))
    log("fuzz-programs: %d programs, %d mismatches" % (args.count, n_mm))
    return 1 if n_mm else 0


def parallel(args):
    """--jobs N: the seeds dealt round-robin to N copies of this driver, their lines passed through as they
    come (each mismatch block is printed whole), the totals added up."""
    import threading
    seeds = [int(x) for x in args.seeds.split(",")] if args.seeds else [args.seed + k for k in range(args.count)]
    shards = [seeds[j::args.jobs] for j in range(args.jobs)]
    shards = [sh for sh in shards if sh]
    log("fuzz-programs: %d programs from seed %d in %d jobs, targets %s" % (
        len(seeds), seeds[0] if seeds else 0, len(shards), args.targets))
    passthrough = []
    skip = False
    for a in sys.argv[1:]:
        if skip:
            skip = False
            continue
        if a in ("--jobs", "--seeds", "--count", "--seed", "--progress"):
            skip = True
            continue
        if a.startswith(("--jobs=", "--seeds=", "--count=", "--seed=", "--progress=")):
            continue
        passthrough.append(a)
    lock = threading.Lock()
    totals = {"programs": 0, "mismatches": 0}
    done = [0] * len(shards)  # programs finished by each job, from its progress lines
    found = [0] * len(shards)
    start = time.time()

    def progress(j, k, mismatches):
        with lock:
            before = sum(done)
            done[j], found[j] = k, mismatches
            after = sum(done)
            if after // args.progress > before // args.progress or after == len(seeds):
                log("fuzz-programs: %d/%d programs, %d mismatches, %.0f s" % (
                    after, len(seeds), sum(found), time.time() - start))

    def one(j, shard):
        cmd = [sys.executable, os.path.abspath(__file__), "--jobs", "1", "--progress", "1",
               "--seeds", ",".join(map(str, shard))] + passthrough
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
        block = []  # a MISMATCH line and its indented lines, printed together

        def flush():
            with lock:
                for b in block:
                    log(b)
            block.clear()

        for line in p.stdout:
            line = line.rstrip("\n")
            m = re.match(r"fuzz-programs: (\d+) programs, (\d+) mismatches$", line)
            if m:
                with lock:
                    totals["programs"] += int(m.group(1))
                    totals["mismatches"] += int(m.group(2))
            elif line.startswith("fuzz-programs: MISMATCH"):
                # Printed at once: shrinking takes minutes, and a run stopped meanwhile still shows it.
                flush()
                with lock:
                    log(line)
            elif line.startswith("fuzz-programs:   "):
                block.append(line)
            elif re.match(r"fuzz-programs: (\d+)/\d+ programs, (\d+) mismatches", line):
                flush()
                m = re.match(r"fuzz-programs: (\d+)/\d+ programs, (\d+) mismatches", line)
                progress(j, int(m.group(1)), int(m.group(2)))
            elif not re.match(r"fuzz-programs: \d+ programs from seed", line):
                flush()
                block.append(line)
        flush()
        p.wait()

    threads = [threading.Thread(target=one, args=(j, sh)) for j, sh in enumerate(shards)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    log("fuzz-programs: %d programs, %d mismatches" % (totals["programs"], totals["mismatches"]))
    if totals["programs"] != len(seeds) and not args.max_seconds:
        log("fuzz-programs: error: %d programs were asked for, the jobs reported %d" % (len(seeds), totals["programs"]))
        return 2
    return 1 if totals["mismatches"] else 0


def check_only(args):
    checker = gp.Polyc(os.path.abspath(args.polyc))
    bad = 0
    start = time.time()
    retried = 0
    for k in range(args.count):
        seed = args.seed + k
        try:
            case = gp.generate(seed, checker, known_bugs=args.known_bugs, stepped=args.stepped)
        except RuntimeError as e:
            bad += 1
            log("gen-check: seed %d: %s" % (seed, e))
            continue
        retried += case.attempts - 1
        ok, err = checker.check(case.text(), case.prog.filename)
        if not ok:
            bad += 1
            log("gen-check: seed %d fails polyc check:\n%s" % (seed, err))
    log("gen-check: %d programs, %d fail polyc check (%d regenerated while generating), %.1f s" % (
        args.count, bad, retried, time.time() - start))
    return 1 if bad else 0


def huge(args):
    """Huge sizes: polyc check must answer with exit 0 or a clean error (exit 1), never crash."""
    polyc = os.path.abspath(args.polyc)
    d = tempfile.mkdtemp(prefix="polyc-fuzz-huge-")
    counts = {"accepted": 0, "error": 0, "crash": 0}
    examples = {}
    for k in range(args.count):
        seed = args.seed + k
        text = gp.generate_huge(seed)
        path = os.path.join(d, "huge%d.poly" % seed)
        with open(path, "w") as f:
            f.write(text)
        rc, out, err = run_cmd([polyc, "check", path], 60, os.environ)
        if rc == 0:
            kind = "accepted"
        elif rc == 1 and "error:" in err and "internal error" not in err.lower():
            kind = "error"
        else:
            kind = "crash"
        counts[kind] += 1
        first = (err.strip().splitlines() or [""])[0]
        key = (kind, first.split("error:")[-1].strip()[:80] if kind != "accepted" else "")
        if key not in examples:
            examples[key] = (seed, text, err)
        if kind == "crash" or args.verbose:
            log("huge: seed %d: %s (exit %s) %s" % (seed, kind, rc, first))
    for (kind, msg), (seed, text, err) in sorted(examples.items()):
        log("huge: %s %s -- e.g. seed %d:" % (kind, msg, seed))
        for line in text.splitlines()[1:]:
            log("huge:   | " + line)
    log("huge: %d programs: %d accepted, %d clean errors, %d crashes" % (
        args.count, counts["accepted"], counts["error"], counts["crash"]))
    shutil.rmtree(d, ignore_errors=True)
    return 1 if counts["crash"] else 0


def replay(args):
    polyc = os.path.abspath(args.polyc)
    d = os.path.abspath(args.replay)
    with open(os.path.join(d, "case.json")) as f:
        meta = json.load(f)
    oracle = args.oracle
    if oracle == "auto":
        oracle = "run" if have_polyc_run(polyc) else "cpu"
    targets = parse_targets(args.targets, oracle)
    gpu = have_gpu() if any(base_target(h) == "cuda" for _, h in targets) else False
    work = tempfile.mkdtemp(prefix="polyc-fuzz-replay-")
    case_dir = os.path.join(work, "case")
    shutil.copytree(d, case_dir)
    runner = Runner(polyc, work, targets, oracle, run_timeout=args.timeout, gpu=gpu)
    with open(os.path.join(case_dir, meta["program"])) as f:
        text = f.read()
    sys.stdout.write(text)
    res = runner.evaluate(case_dir, meta, text)
    mm = mismatches(res, meta.get("tolerance"))
    for t, kind, msg in mm:
        log("replay: %s %s: %s" % (t, kind, msg))
    for t, r in res.items():
        if r[0] not in ("ok", "built", NOT_STREAMED):
            log("replay: %s: %s %s" % (t, r[0], r[1]))
    log("replay: %d mismatches (oracle %s)" % (len(mm), oracle))
    shutil.rmtree(work, ignore_errors=True)
    return 1 if mm else 0


def main():
    ap = argparse.ArgumentParser(description="differential testing of polyc's targets on random programs")
    ap.add_argument("--count", type=int, default=20)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--targets", default=os.environ.get("TARGETS", "cpu opencl"),
                    help="cpu, opencl, cuda; cpu-stream, cuda-stream (--stream); cpu-mpiR, opencl-mpiR, cuda-mpiR "
                         "(--mpi on R ranks); or NAME=SCRIPT (SCRIPT FILE.poly -o EXE builds an executable)")
    ap.add_argument("--oracle", default="auto", choices=["auto", "run", "cpu"],
                    help="polyc run, or the cpu target (auto: polyc run where it exists)")
    ap.add_argument("--polyc", default=gp.DEFAULT_POLYC)
    ap.add_argument("--out", default=os.path.join(ROOT, "fuzz-out"))
    ap.add_argument("--timeout", type=int, default=60, help="seconds per run of an executable")
    ap.add_argument("--build-timeout", type=int, default=120, help="seconds per polyc build")
    ap.add_argument("--shrink-budget", type=int, default=900, help="seconds to shrink one mismatch")
    ap.add_argument("--no-shrink", action="store_true")
    ap.add_argument("--quick-builds", action="store_true",
                    help="a third less build time for long runs: a precompiled header for the cpu builds, the "
                         "OpenCL host code at -O0 (quick_build_flags)")
    ap.add_argument("--keep", action="store_true", help="keep the work folder")
    ap.add_argument("--progress", type=int, default=10, help="print progress every N programs")
    ap.add_argument("--known-bugs", action="store_true",
                    help="also generate what triggers the bugs in gen_program.KNOWN_BUGS (avoided by default)")
    ap.add_argument("--stepped", action="store_true",
                    help="time-stepped programs only, the form --stream streams (gen_program.Gen.generate_stepped)")
    ap.add_argument("--seeds", help="comma-separated seeds to run instead of --count from --seed")
    ap.add_argument("--check-only", action="store_true")
    ap.add_argument("--huge", action="store_true")
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("--jobs", type=int, default=1, help="programs built and run at once (copies of this driver)")
    ap.add_argument("--max-seconds", type=float, default=0,
                    help="start no program after this many seconds; the summary counts those run")
    ap.add_argument("--replay")
    args = ap.parse_args()
    if args.replay:
        return replay(args)
    if args.check_only:
        return check_only(args)
    if args.huge:
        return huge(args)
    if args.jobs > 1:
        return parallel(args)
    return fuzz(args)


if __name__ == "__main__":
    sys.exit(main())
