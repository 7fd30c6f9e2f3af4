# lit configuration for polyc: every stage's tests (dsl, analysis, schedule, allocate, codegen, run)
# plus the GoogleTest unit tests under test/unit.
import os
import subprocess

import lit.formats

config.name = "polyc"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".poly", ".test"]
config.excludes = ["Inputs", "fuzz", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py.in"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.polyc_obj_root, "test")

config.substitutions.append(("%polyc", config.polyc_path))
config.substitutions.append(("%python", config.python_path))
config.substitutions.append(("%examples", os.path.join(config.polyc_src_root, "examples")))
config.substitutions.append(("%srcroot", config.polyc_src_root))
config.substitutions.append(("%runtime_include", os.path.join(config.polyc_src_root, "runtime", "include")))
config.substitutions.append(("%runtime_lib", config.polyc_runtime_lib))
config.substitutions.append(("%runtime_demo_exe", config.runtime_demo_exe))
config.substitutions.append(("%iir2d_reference", config.iir2d_reference))
config.substitutions.append(("FileCheck", os.path.join(config.llvm_tools_dir, "FileCheck")))
config.substitutions.append(("not ", os.path.join(config.llvm_tools_dir, "not") + " "))
config.substitutions.append(("%clang", os.path.join(config.llvm_tools_dir, "clang")))
# CUDA's PTX assembler (tests that check PTX polyc's OpenCL library gives NVIDIA's driver; REQUIRES: cuda).
config.substitutions.append(
    ("%ptxas", "/usr/local/cuda/bin/ptxas" if os.path.exists("/usr/local/cuda/bin/ptxas") else "ptxas"))

config.environment["PATH"] = os.pathsep.join(
    [os.path.dirname(config.polyc_path), config.llvm_tools_dir, config.environment.get("PATH", "")])
config.environment["OMP_NUM_THREADS"] = os.environ.get("OMP_NUM_THREADS", "2")
for name in ("OCL_ICD_VENDORS", "POCL_DEVICES", "CXX", "HOME"):
    if name in os.environ:
        config.environment[name] = os.environ[name]

for feature in config.available_features_list:
    config.available_features.add(feature)
# GCC as the host compiler (polyc build works around GCC bugs: compiler/driver/BuildCommand.cpp).
try:
    version = subprocess.run((os.environ.get("CXX") or "c++").split() + ["--version"], capture_output=True,
                             text=True).stdout
    if "Free Software Foundation" in version:
        config.available_features.add("gcc")
except OSError:
    pass
# The datasets scikit-learn ships (the MLP example's iris; scripts/install-deps.sh installs it).
if subprocess.run([config.python_path, "-c", "import sklearn"], capture_output=True).returncode == 0:
    config.available_features.add("sklearn")
