#!/usr/bin/env bash
# Installs what building, testing and the demo need on Debian 12.
set -euo pipefail

packages=(
  build-essential meson ninja-build pkg-config cmake
  libgstreamer1.0-dev libgstreamer-plugins-base1.0-dev
  gstreamer1.0-tools gstreamer1.0-plugins-base gstreamer1.0-plugins-good
  gstreamer1.0-x gstreamer1.0-libav
  libdnnl-dev
  protobuf-c-compiler libprotobuf-c-dev libonnx-dev
  clang libclang-rt-14-dev
  valgrind
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" \
    || missing+=("$p")
done
# the ONNX conformance test (tests/conformance) and the test model
# generator need the Python modules onnx and numpy, from PyPI
need_python_modules=false
python3 -c 'import onnx, numpy' 2>/dev/null || need_python_modules=true
if $need_python_modules && ! python3 -m pip --version >/dev/null 2>&1; then
  missing+=(python3-pip)
fi

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
else
  echo "install-deps: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
fi

if $need_python_modules; then
  echo "install-deps: installing the Python modules onnx and numpy"
  python3 -m pip install --quiet onnx numpy
fi
