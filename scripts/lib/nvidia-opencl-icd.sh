# Sourced by the OpenCL GPU scripts: where NVIDIA's OpenCL library is installed but not registered (the
# lent GPU machine has no /etc/OpenCL/vendors entry for it), registers it with the ICD loader through
# OCL_ICD_VENDORS. Does nothing elsewhere.
if [[ -e /usr/local/nvidia/lib64/libnvidia-opencl.so.1 ]]; then
  mkdir -p /tmp/icd
  echo /usr/local/nvidia/lib64/libnvidia-opencl.so.1 >/tmp/icd/nvidia.icd
  export OCL_ICD_VENDORS=/tmp/icd
fi
