"""polybench.py's commands (check, time) for the image kernels of test/image/*.poly, whose references
are in image_reference.py: `image.py check KERNEL.poly --exe EXE --sizes H=..,W=.. --work DIR`."""
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
sys.path.insert(0, os.path.join(here, "..", "..", "polybench", "Inputs"))
import polybench  # noqa: E402
from image_reference import KERNELS  # noqa: E402

polybench.KERNELS.update(KERNELS)

if __name__ == "__main__":
    sys.exit(polybench.main())
