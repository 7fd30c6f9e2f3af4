#!/usr/bin/env python3
# One reproducer of test/fuzz-programs/regressions: builds a .poly file for a target, runs it and
# `polyc run` on the same inputs (given here as numpy expressions) and compares every output as
# scripts/fuzz/fuzz.py does. Prints "regress: ok" and exits 0 when they agree.
#
#   regress.py FILE.poly --polyc P --target cpu|opencl|cpu-stream --work DIR [--param N=3]... [--in x="np.ones(3)"]...
#              [--random SEED]
# --random SEED: the inputs not given by --in are random (normal floats, i32 in [-2, 2N)), their shapes
# from `polyc run FILE --help` at the params given.
import argparse
import os
import re
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.join(ROOT, "scripts", "fuzz"))
import fuzz  # noqa: E402
import numpy as np  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("poly")
    ap.add_argument("--polyc", required=True)
    ap.add_argument("--target", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--param", action="append", default=[])
    ap.add_argument("--in", dest="ins", action="append", default=[])
    ap.add_argument("--out", action="append", default=[], help="outputs to compare (default: all)")
    ap.add_argument("--timeout", type=int, default=60)
    ap.add_argument("--random", type=int, help="random inputs from this seed for those not given by --in")
    args = ap.parse_args()
    if os.path.exists(args.work):
        shutil.rmtree(args.work)
    case = os.path.join(args.work, "case")
    os.makedirs(os.path.join(case, "inputs"))
    shutil.copy(args.poly, case)
    with open(args.poly) as f:
        text = f.read()
    ins = {}
    for spec in args.ins:
        name, expr = spec.split("=", 1)
        np.save(os.path.join(case, "inputs", name + ".npy"), eval(expr, {"np": np}))
        ins[name] = "inputs/%s.npy" % name
    params = dict((k, int(v)) for k, v in (p.split("=") for p in args.param))
    if args.random is not None:
        rng = np.random.default_rng(args.random)
        for line in help_lines(args.polyc, args.poly):
            words = line.split()
            if words[:1] not in (["--in"], ["--in/--out"]) or words[1].split("=")[0] in ins:
                continue
            name, dtype = words[1].split("=")[0], words[3]
            shape = line[line.index("[") + 1:line.index("]")] if "[" in line else ""
            # The params by value, word by word: a param may be named like a Python keyword (`not`).
            numeric = re.sub(r"[A-Za-z_]\w*", lambda m: str(params[m.group(0)]), shape)
            dims = tuple(max(0, int(eval(d, {}))) for d in numeric.split(",") if d.strip())
            values = (rng.integers(-2, 2 * max(dims + (1,)), size=dims) if dtype == "int32"
                      else rng.standard_normal(dims))
            np.save(os.path.join(case, "inputs", name + ".npy"), np.asarray(values, dtype=dtype))
            ins[name] = "inputs/%s.npy" % name
    outs = args.out
    if not outs:
        outs = [line.split()[1].split("=")[0] for line in help_lines(args.polyc, args.poly)
                if line.startswith("--out") or line.startswith("--in/--out")]
    meta = dict(program=os.path.basename(args.poly), params=params, inputs=ins, outputs=outs)
    runner = fuzz.Runner(os.path.abspath(args.polyc), args.work, [(args.target, args.target)], "run",
                         run_timeout=args.timeout, build_timeout=args.timeout)
    res = runner.evaluate(case, meta, text)
    mm = fuzz.mismatches(res)
    for t, kind, msg in mm:
        print("regress: %s %s: %s" % (t, kind, msg.replace("\n", " ")[:600]))
    print("regress: ok" if not mm else "regress: %d mismatches" % len(mm))
    return 1 if mm else 0


def help_lines(polyc, poly):
    import subprocess
    p = subprocess.run([polyc, "run", poly, "--help"], capture_output=True, text=True)
    return [line.strip() for line in p.stdout.splitlines()]


if __name__ == "__main__":
    sys.exit(main())
