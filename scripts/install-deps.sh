#!/usr/bin/env bash
# Installs, with apt-get, everything polyc's build and tests need. Idempotent: does nothing when all is present.
set -euo pipefail

packages=(
  cmake ninja-build g++ make pkg-config
  libisl-dev
  llvm-19-dev llvm-19-tools clang-19 libclang-rt-19-dev
  libgtest-dev libgmock-dev
  libopenmpi-dev openmpi-bin
  ocl-icd-opencl-dev opencl-headers pocl-opencl-icd
  python3 python3-numpy python3-pil python3-sklearn
  libzstd-dev
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
SUDO=
if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-deps: done"
