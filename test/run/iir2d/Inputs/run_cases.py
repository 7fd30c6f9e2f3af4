"""Runs IIR executables against iir2d-reference on generated inputs and prints one line per case.

run_cases.py --work DIR --reference EXE --examples DIR --shapes 1x1,97x131 --windows 1,3
             --case NAME=EXE[:VAR=VALUE,...] ... [--rtol 1e-5]
For every shape and window: generate_inputs.py writes x, a, b (seeded by the case), the reference
writes y_ref, then every case's executable writes y, and compare.py checks
max |y - y_ref| <= rtol * max |y_ref|. Prints "<case> <H>x<W> M=<m>: ok|FAIL ..." per run, then
"<n> cases ok, <m> failed"; exits 1 if any failed.
"""
import argparse
import os
import subprocess
import sys


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--work", required=True)
    parser.add_argument("--reference", required=True)
    parser.add_argument("--examples", required=True)
    parser.add_argument("--shapes", required=True)
    parser.add_argument("--windows", required=True)
    parser.add_argument("--case", action="append", required=True)
    parser.add_argument("--rtol", default="1e-5")
    args = parser.parse_args()

    cases = []
    for spec in args.case:
        name, _, rest = spec.partition("=")
        exe, _, env_text = rest.partition(":")
        env = dict(os.environ)
        for assignment in filter(None, env_text.split(",")):
            key, _, value = assignment.partition("=")
            env[key] = value
        cases.append((name, exe, env))

    iir = os.path.join(args.examples, "iir2d")
    ok = failed = 0
    for shape in args.shapes.split(","):
        height, width = shape.split("x")
        for window in args.windows.split(","):
            folder = os.path.join(args.work, f"{shape}_M{window}")
            os.makedirs(folder, exist_ok=True)
            seed = str(int(height) * 1000003 + int(width) * 101 + int(window))
            subprocess.run([sys.executable, os.path.join(iir, "generate_inputs.py"), "--height", height,
                            "--width", width, "--window", window, "--seed", seed, "--out", folder],
                           check=True, stdout=subprocess.DEVNULL)
            files = {name: os.path.join(folder, name + ".npy") for name in ("x", "a", "b", "y_ref")}
            subprocess.run([args.reference, files["x"], files["a"], files["b"], files["y_ref"]], check=True)
            for name, exe, env in cases:
                out = os.path.join(folder, f"y_{name}.npy")
                run = subprocess.run([exe, "--in", "x=" + files["x"], "--in", "a=" + files["a"],
                                      "--in", "b=" + files["b"], "--out", "y=" + out],
                                     env=env, capture_output=True, text=True)
                label = f"{name} {shape} M={window}"
                if run.returncode != 0:
                    print(f"{label}: FAIL (exit {run.returncode}) {run.stderr.strip()}")
                    failed += 1
                    continue
                check = subprocess.run([sys.executable, os.path.join(iir, "compare.py"), out, files["y_ref"],
                                        "--rtol", args.rtol], capture_output=True, text=True)
                verdict = "ok" if check.returncode == 0 else "FAIL"
                print(f"{label}: {verdict} ({check.stdout.strip()})")
                ok += check.returncode == 0
                failed += check.returncode != 0
    print(f"{ok} cases ok, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
