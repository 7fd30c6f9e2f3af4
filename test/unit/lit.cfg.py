# GoogleTest unit tests, run by lit so that `make check` counts them with everything else.
import os
import lit.formats

config.name = "polyc-unit"
config.test_format = lit.formats.GoogleTest(".", "Tests")
config.test_source_root = config.unit_obj_root
config.test_exec_root = config.unit_obj_root
