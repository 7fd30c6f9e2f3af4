#!/usr/bin/env python3
# Directed companion of the random programs (issue 28): every name of gen_program.COLLIDE (identifiers
# that the code generators, the runtime, C, C++, OpenCL C and CUDA use) in every role the language allows
# (input, output, local and inout array, param, const, func, func argument, index variable, program
# file name), built for each target, run, and compared with `polyc run`. Prints one line per failing
# (name, role, target) and a summary; exit 1 when anything fails.
#
#   names.py [--targets "cpu opencl"] [--names a,b,c] [--roles array-in,param]
import argparse
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen_program as gp  # noqa: E402
import fuzz  # noqa: E402

import numpy as np  # noqa: E402

ROLES = {
    "array-in": ("param N;\nfunc f(a) = a * 2;\ninput f32 {n}[N];\noutput f32 y[N];\n"
                 "y[i] = f({n}[i]) + sum(k in 0..N) {n}[k] + {n}[i - 1];\n"),
    "array-out": ("param N;\ninput f32 x[N];\noutput f32 {n}[N];\n{n}[i] = x[i] + 0.5 * {n}[i - 1];\n"),
    "array-local": ("param N;\ninput f32 x[N];\nf32 {n}[N];\noutput f32 y[N];\n{n}[i] = x[i] * 2;\n"
                    "y[i] = {n}[i] + {n}[N - 1 - i] + sum(k in 0..N) {n}[k];\n"),
    "inout": ("param N;\ninput f32 x[N];\ninout f32 {n}[N];\ninout f32 s;\nrepeat e in 0..2 {{\n"
              "  {n}[i] += 0.25 * x[i] + 0.1 * {n}[i - 1];\n  s += sum(k in 0..N) {n}[k];\n}}\n"),
    "param": ("param {n};\ninput f32 x[{n}];\noutput f32 y[{n}];\n"
              "y[i] = x[i] * {n} + sum(k in 0..{n}) x[k] + y[i - 1] * 0.5;\n"),
    "param-2d": ("param {n}, M;\ninput f32 x[{n}, M];\noutput f32 y[{n}, M];\n"
                 "y[i, j] = x[i, j] + 0.5 * y[i - 1, j] + 0.25 * y[i, j - 1] + 0.125 * y[i - 2, j - 1];\n"),
    "const": ("param N;\nconst {n} = 3;\ninput f32 x[N, {n}];\noutput f32 y[N];\n"
              "y[i] = sum(k in 0..{n}) x[i, k] * {n} + x[i, {n} - 1];\n"),
    "const-float": ("param N;\nconst {n} = 0.5;\ninput f32 x[N];\noutput f32 y[N];\n"
                    "y[i] = x[i] * {n} + y[i - 1] * {n};\n"),
    "func": ("param N;\nfunc {n}(a) = a * 2;\ninput f32 x[N];\noutput f32 y[N];\ny[i] = {n}(x[i]);\n"),
    "func-arg": ("param N;\nfunc f({n}) = {n} * 2 + 1;\ninput f32 x[N];\noutput f32 y[N];\ny[i] = f(x[i]);\n"),
    "index": ("param N;\ninput f32 x[N, N];\noutput f32 y[N];\noutput f32 z;\n"
              "y[{n}] = sum(k in 0..N) x[{n}, k] + y[{n} - 1] * 0.5;\n"
              "z = sum({n} in 0..N) y[{n}];\n"),
    "file": ("param N;\ninput f32 x[N];\noutput f32 y[N];\ny[i] = x[i] + 0.5 * y[i - 1];\n"),
}


def allowed(name, role):
    if name in gp.KEYWORDS:
        return False
    if role == "func" and name in gp.BUILTINS:
        return False
    if role in ("func-arg",) and name in ("f",):
        return False
    if role == "index" and name in ("N", "x", "y", "z", "k"):
        return False
    if role in ("array-in", "array-local", "func-arg") and name in ("N", "f", "y", "i", "k", "x"):
        return False
    if role in ("array-out", "param", "const", "const-float", "func", "inout") and \
            name in ("N", "x", "y", "i", "k", "e", "s"):
        return False
    if role == "param-2d" and name in ("M", "x", "y", "i", "j"):
        return False
    if role == "file" and not all(c.isalnum() or c == "_" for c in name):
        return False
    return True


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--targets", default="cpu opencl")
    ap.add_argument("--names")
    ap.add_argument("--roles")
    ap.add_argument("--polyc", default=gp.DEFAULT_POLYC)
    args = ap.parse_args()
    polyc = os.path.abspath(args.polyc)
    names = args.names.split(",") if args.names else sorted(set(gp.COLLIDE))
    roles = args.roles.split(",") if args.roles else list(ROLES)
    targets = [(t, t) for t in args.targets.split()]
    work = tempfile.mkdtemp(prefix="polyc-fuzz-names-")
    runner = fuzz.Runner(polyc, work, targets, "run", run_timeout=60, build_timeout=60)
    checker = gp.Polyc(polyc)
    rng = np.random.default_rng(1)
    bad = 0
    runs = 0
    failing = {}
    for name in names:
        for role in roles:
            if not allowed(name, role):
                continue
            text = ROLES[role].format(n=name)
            fname = (name if role == "file" else "prog") + ".poly"
            ok, err = checker.check(text, fname)
            if not ok:
                print("names: %s as %s: rejected by polyc check: %s" % (name, role, err.splitlines()[0]))
                continue
            d = os.path.join(work, "c%d" % runs)
            os.makedirs(os.path.join(d, "inputs"))
            with open(os.path.join(d, fname), "w") as f:
                f.write(text)
            n = 5
            ins = {}
            if "input f32 x[N, N]" in text:
                ins["x"] = rng.uniform(-1, 1, (n, n)).astype(np.float32)
            elif "input f32 x[N, " in text:
                ins["x"] = rng.uniform(-1, 1, (n, 3)).astype(np.float32)
            elif "input f32 x[" in text:
                ins["x"] = rng.uniform(-1, 1, (n,)).astype(np.float32)
            if role == "param-2d":
                ins["x"] = rng.uniform(-1, 1, (n, 6)).astype(np.float32)
            if role == "array-in":
                ins[name] = rng.uniform(-1, 1, (n,)).astype(np.float32)
            if role == "inout":
                ins[name] = rng.uniform(-1, 1, (n,)).astype(np.float32)
                ins["s"] = np.float32(0.5)
            for k, v in ins.items():
                np.save(os.path.join(d, "inputs", k + ".npy"), v)
            outs = [o for o in ("y", "z") if ("output f32 %s" % o) in text]
            if role == "array-out":
                outs = [name]
            if role == "inout":
                outs = [name, "s"]
            params = {name: n, "M": 6} if role == "param-2d" else {name if role == "param" else "N": n}
            meta = dict(program=fname, params=params, inputs={k: "inputs/%s.npy" % k for k in ins},
                        outputs=outs)
            res = runner.evaluate(d, meta, text)
            runs += 1
            for t, kind, msg in fuzz.mismatches(res):
                bad += 1
                failing.setdefault((t, kind), []).append("%s(%s)" % (name, role))
                line = [x for x in msg.splitlines() if "error" in x] or msg.splitlines() or [""]
                print("names: %s as %s: %s %s: %s" % (name, role, t, kind, line[0][:200]))
            shutil.rmtree(d, ignore_errors=True)
    for (t, kind), items in sorted(failing.items()):
        print("names: %s %s: %d: %s" % (t, kind, len(items), " ".join(items)))
    print("names: %d programs, %d failures" % (runs, bad))
    shutil.rmtree(work, ignore_errors=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
