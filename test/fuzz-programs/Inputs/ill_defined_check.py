#!/usr/bin/env python3
# The fuzzer's judgement of a program that the compiler rejects as ill-defined (an element that depends on
# itself): no mismatch when every target rejects it, whatever the oracle did; a mismatch when only some
# targets do. Prints one line a case.
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "..", "scripts", "fuzz"))
import fuzz  # noqa: E402

rejected = ("build", "prog.poly:3:1: error: the equation for 'x[i]' depends on its own value at the same point "
                     "through other points of it (i = 0); no order of evaluation can compute it")
other = ("build", "polyc: error: internal error in scheduling (isl): unable to carry dependences")
ran = ("ok", {})
cases = {
    "oracle ran, every target rejected": {"oracle": ran, "cpu": rejected, "opencl": rejected},
    "oracle stopped, every target rejected": {"oracle": ("crash", "exit 3"), "cpu": rejected, "opencl": rejected},
    "one target rejected, one built": {"oracle": ran, "cpu": rejected, "opencl": ran},
    "every target failed otherwise": {"oracle": ran, "cpu": other, "opencl": other},
}
for name, results in cases.items():
    print("%s: %d mismatches" % (name, len(fuzz.mismatches(results))))
