"""Peak resident memory of a command, and the comparison of two such measurements.

  peak_rss.py report FILE CMD ARGS...   runs CMD, writes its peak RSS in KiB to FILE (CMD's own, from
                                        wait4, not this script's) and exits with CMD's status
  peak_rss.py compare LABEL FEW MANY    prints both in MiB, then `LABEL: independent of T` when MANY
                                        is at most FEW + 10% + 8 MiB, else `LABEL: grows with T`
"""
import os
import subprocess
import sys


def report(path, command):
    process = subprocess.Popen(command)
    _, status, usage = os.wait4(process.pid, 0)
    with open(path, "w") as f:
        f.write(f"{usage.ru_maxrss}\n")  # KiB on Linux
    return os.waitstatus_to_exitcode(status)


def compare(label, few_path, many_path):
    few = int(open(few_path).read()) / 1024
    many = int(open(many_path).read()) / 1024
    print(f"{label}: peak RSS {few:.1f} MiB for few steps, {many:.1f} MiB for many")
    print(f"{label}: {'independent of T' if many <= few * 1.1 + 8 else 'grows with T'}")
    return 0


def main():
    if len(sys.argv) >= 4 and sys.argv[1] == "report":
        return report(sys.argv[2], sys.argv[3:])
    if len(sys.argv) == 5 and sys.argv[1] == "compare":
        return compare(*sys.argv[2:])
    sys.exit(__doc__)


if __name__ == "__main__":
    sys.exit(main())
