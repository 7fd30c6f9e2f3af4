# Helper of the runtime's lit tests: writes the .npy inputs of runtime_demo_exe (good ones in every
# format variant, and broken ones), checks its outputs with numpy, checks exit statuses and that a
# folder is empty. numpy is the independent side: it writes what the runtime reads and reads what
# the runtime writes.
import os
import subprocess
import sys

import numpy as np


def x_values():
    return np.array([[0.5, -1.0, 2.0], [3.0, 4.25, -5.5]], dtype=np.float32)


def save_version(path, array, version):
    with open(path, "wb") as f:
        np.lib.format.write_array(f, array, version=version)


def gen(folder):
    os.makedirs(folder, exist_ok=True)
    p = lambda name: os.path.join(folder, name)
    x = x_values()
    np.save(p("x.npy"), x)
    np.save(p("s.npy"), np.float64(2.0))
    np.save(p("idx.npy"), np.array([1, 2, 3, 4, 5], dtype=np.int32))
    np.save(p("acc.npy"), np.array([10.0, 20.0, 30.0]))
    # The same x in every accepted variant.
    np.save(p("x_be.npy"), x.astype(">f4"))
    np.save(p("x_fortran.npy"), np.asfortranarray(x))
    save_version(p("x_v2.npy"), x, (2, 0))
    save_version(p("x_v3.npy"), x, (3, 0))
    # Broken or mismatched inputs.
    np.save(p("x_f64.npy"), x.astype(np.float64))
    np.save(p("x_rank1.npy"), x.reshape(6))
    np.save(p("x_3x3.npy"), np.zeros((3, 3), dtype=np.float32))
    np.save(p("s_nan.npy"), np.float64("nan"))
    np.save(p("idx_even.npy"), np.array([1, 2, 3, 4], dtype=np.int32))
    np.save(p("acc4.npy"), np.zeros(4))
    good = open(p("x.npy"), "rb").read()
    open(p("x_truncated.npy"), "wb").write(good[:-3])
    open(p("x_trailing.npy"), "wb").write(good + b"\0\0\0\0")
    open(p("x_header.npy"), "wb").write(good.replace(b"'shape': (2, 3)", b"'shape': [2, 3]"))
    open(p("x_magic.npy"), "wb").write(b"PK\x03\x04" + good[4:])
    open(p("x_i8.npy"), "wb").write(good.replace(b"'<f4'", b"'<i8'").replace(b"(2, 3)", b"(3,)  "))


def check(folder):
    p = lambda name: os.path.join(folder, name)
    x = x_values()
    errors = []

    def expect(name, want):
        got = np.load(p(name))
        if got.dtype != want.dtype or got.shape != want.shape or not np.array_equal(got, want):
            errors.append(f"{name}: got {got!r} ({got.dtype}), want {want!r} ({want.dtype})")

    expect("y.npy", (2.0 * x.astype(np.float64)).astype(np.float32))
    expect("total.npy", np.array(15, dtype=np.int32))
    expect("ramp.npy", 2.0 * np.arange(4, dtype=np.float64))
    # acc is reset before every run, so it holds one run's update whatever --repeat was.
    expect("acc_out.npy", np.array([10.0, 20.0, 30.0]) + x.astype(np.float64).sum(axis=0))
    for line in errors:
        print(line)
    print("outputs ok" if not errors else "outputs WRONG")
    return 1 if errors else 0


def status(expected, command):
    result = subprocess.run(command)
    if result.returncode != expected:
        print(f"expected exit status {expected}, got {result.returncode}", flush=True)
        return 1
    return 0


def empty(folder):
    names = sorted(os.listdir(folder))
    if names:
        print("left behind: " + " ".join(names))
        return 1
    print("folder empty")
    return 0


def main(argv):
    if argv[0] == "gen":
        gen(argv[1])
        return 0
    if argv[0] == "check":
        return check(argv[1])
    if argv[0] == "status":
        sys.stdout.flush()
        return status(int(argv[1]), argv[3:] if argv[2] == "--" else argv[2:])
    if argv[0] == "empty":
        return empty(argv[1])
    print("unknown command " + argv[0])
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
