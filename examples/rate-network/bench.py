#!/usr/bin/env python3
"""Time per step of the rate-network executables against the bandwidth floor (docs/performance.md, "Rate
network"): for each network, random inputs from make_network.py, each executable run with --param T=STEPS
--repeat K --json; time per step = median compute time / (STEPS - 1). The floor: a step reads every
connection's weight and presynaptic index (8 bytes) and the rates (4 bytes a neuron) and writes the new
rates, at the device's copy bandwidth (--copy-gbs, GB/s counted as bytes read + written, as
cudaMemcpy device to device measures it).

  bench.py --format fixed|csr [--neurons 40000] [--fan-ins 16,...,8192] [--orders ascending,random]
           [--steps 20] [--repeat 5] [--copy-gbs X] [--work-dir DIR] [--annarchy PYTHON [--annarchy-args ARGS]]
           EXE

--annarchy runs the peer (annarchy_peer.py, with the Python of a virtual environment that has ANNarchy,
activated for it; --annarchy-args passes it options such as '--paradigm cuda') on the same network and adds
its time per step and polyc's speedup over it.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def run(exe, args, repeat):
    result = subprocess.run([exe] + args + ["--repeat", str(repeat), "--json"], capture_output=True, text=True,
                            timeout=1800)
    if result.returncode:
        raise SystemExit(f"{exe} failed ({result.returncode}): {result.stderr[-400:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])["median_s"]


def annarchy(python, folder, steps, repeat, extra):
    """ANNarchy's milliseconds a step on the network in `folder` (annarchy_peer.py)."""
    venv = os.path.dirname(os.path.dirname(os.path.abspath(python)))
    env = {**os.environ, "VIRTUAL_ENV": venv, "PATH": os.path.dirname(os.path.abspath(python)) + ":" + os.environ["PATH"]}
    result = subprocess.run([python, os.path.join(HERE, "annarchy_peer.py"), folder, str(steps), "--repeat",
                             str(repeat)] + extra, capture_output=True, text=True, env=env, timeout=1800)
    if result.returncode:
        raise SystemExit(f"annarchy_peer.py failed: {result.stderr[-600:]}")
    line = [l for l in result.stdout.splitlines() if l.startswith("annarchy:")][-1]
    return float(line.split(": ")[-1].split()[0])


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("exe")
    parser.add_argument("--format", choices=["fixed", "csr"], required=True)
    parser.add_argument("--neurons", default="40000", help="comma-separated")
    parser.add_argument("--fan-ins", default="16,64,256,1024,4096,8192", help="comma-separated")
    parser.add_argument("--orders", default="ascending,random")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--copy-gbs", type=float, default=0.0)
    parser.add_argument("--work-dir")
    parser.add_argument("--annarchy", metavar="PYTHON")
    parser.add_argument("--annarchy-args", default="", help="for annarchy_peer.py, e.g. '--paradigm cuda'")
    args = parser.parse_args()
    peer = " ANNarchy (ms a step) | polyc's speedup |" if args.annarchy else ""
    print("| neurons | fan-in | order | format | ms a step | GB/s | of copy bandwidth |" + peer)
    print("| --- | --- | --- | --- | --- | --- | --- |" + (" --- | --- |" if args.annarchy else ""))
    for n in (int(v) for v in args.neurons.split(",")):
        for c in (int(v) for v in args.fan_ins.split(",")):
            for order in args.orders.split(","):
                with tempfile.TemporaryDirectory(dir=args.work_dir) as work:
                    shape = ["--fan-in", str(c)] if args.format == "fixed" else ["--probability", str(c / n)]
                    subprocess.run([sys.executable, os.path.join(HERE, "make_network.py"), work, "--neurons", str(n),
                                    "--order", order] + shape, check=True)
                    names = ["r0", "pre", "w", "baseline"] if args.format == "fixed" else ["r0", "row", "col", "w",
                                                                                             "baseline"]
                    inputs = []
                    for name in names:
                        inputs += ["--in", f"{name}={work}/{name}.npy"]
                    seconds = run(args.exe, inputs + ["--param", f"T={args.steps}"], args.repeat)
                    connections = os.path.getsize(f"{work}/w.npy") // 4  # about: the header is 128 bytes
                    peer_ms = annarchy(args.annarchy, work, args.steps, args.repeat, args.annarchy_args.split()) if args.annarchy else None
                per_step = seconds / max(args.steps - 1, 1)
                gbs = (connections * 8 + n * 8) / per_step / 1e9
                fraction = f"{100 * gbs / args.copy_gbs:.0f}%" if args.copy_gbs else ""
                row = f"| {n} | {c} | {order} | {args.format} | {per_step * 1e3:.4f} | {gbs:.0f} | {fraction} |"
                if peer_ms is not None:
                    row += f" {peer_ms:.4f} | {peer_ms / (per_step * 1e3):.2f}x |"
                print(row, flush=True)


if __name__ == "__main__":
    main()
