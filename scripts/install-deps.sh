#!/usr/bin/env bash
# Installs what building, testing and the demo need on Debian 12 (bookworm)
# or Debian 13 (trixie), from a bare `debootstrap --variant=minbase` root up:
# - Debian packages (apt-get, as root or through sudo);
# - the Python tools (onnx, numpy, onnxruntime, at the versions pinned in
#   scripts/requirements.txt) in the project's virtual environment .venv/,
#   made with Debian's /usr/bin/python3 -m venv: Debian's Python refuses
#   pip installs outside one (PEP 668) and its python3-onnx is too old.
# Run it again any time: when everything is there it checks and returns
# in well under a second.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  ca-certificates git
  build-essential meson ninja-build pkg-config cmake
  libgstreamer1.0-dev libgstreamer-plugins-base1.0-dev
  gstreamer1.0-tools gstreamer1.0-plugins-base gstreamer1.0-plugins-good
  gstreamer1.0-x gstreamer1.0-libav
  # a font for demo.sh's timeoverlay (pango; "Sans Bold" is DejaVu Sans Bold)
  fonts-dejavu-core
  # Debian's dnnl-config.cmake looks for OpenCL (find_package(OpenCL))
  libdnnl-dev ocl-icd-opencl-dev
  protobuf-c-compiler libprotobuf-c-dev libonnx-dev
  # the remote backend: HTTP (libcurl) and the protocol's JSON (json-glib)
  libcurl4-openssl-dev libjson-glib-dev
  # the fuzzer's clang; its libFuzzer/ASan runtime is added below, for the
  # clang major version this distribution's `clang` is (14 on Debian 12,
  # 19 on Debian 13)
  clang
  valgrind
  # the meta library's reference (docs/libs, meson -Ddoc=enabled)
  gtk-doc-tools
  # the venv of the Python tools (tests/conformance, tests/models, bench)
  python3 python3-venv
  # Python's shared library, which the Python backend of PyTriton's
  # tritonserver loads (tests/remote/servers.py)
  libpython3-dev
)

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"

# libclang-rt-N-dev, N the major version of the clang that `clang` is: the
# installed one's, or the one the package depends on
clang_major=""
if command -v clang >/dev/null; then
  clang_major=$(clang -dumpversion 2>/dev/null | cut -d. -f1)
fi
if [ -z "$clang_major" ]; then
  deps=$(apt-cache depends clang 2>/dev/null || true)
  if [ -z "$deps" ]; then
    $sudo apt-get update -qq
    deps=$(apt-cache depends clang 2>/dev/null || true)
  fi
  clang_major=$(printf '%s\n' "$deps" | sed -n 's/^ *Depends: clang-\([0-9][0-9]*\)$/\1/p' | head -n 1)
fi
if [ -z "$clang_major" ]; then
  echo "install-deps: cannot tell which clang this distribution has (apt-cache depends clang)" >&2
  exit 1
fi
packages+=("libclang-rt-$clang_major-dev")

# gst-plugins-bad's libraries' headers: GStreamer's CUDA library (1.22 and
# later), for frames in memory:CUDAMemory where the CUDA backend is built
# (it needs cuda.h: without CUDA it is left out), and, where the
# distribution has upstream's tensor meta (1.26 and later: Debian 13), its
# headers, for the test that reads the element's GstTensorMeta back with
# upstream's API (the plugin itself needs none)
packages+=(libgstreamer-plugins-bad1.0-dev)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" \
    || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
else
  echo "install-deps: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
fi

# The venv: made by Debian's Python (never another python3 on PATH), and
# filled from scripts/requirements.txt; .venv/requirements.txt is the copy
# of the pins it was filled from, so a changed pin reinstalls.
venv=.venv
req=scripts/requirements.txt
if [ -x "$venv/bin/python3" ] && grep -qx 'home = /usr/bin' "$venv/pyvenv.cfg" \
    && cmp -s "$req" "$venv/requirements.txt" \
    && "$venv/bin/python3" -c '' 2>/dev/null; then
  echo "install-deps: $venv has the pinned Python modules"
  exit 0
fi
if ! { [ -x "$venv/bin/python3" ] && grep -qx 'home = /usr/bin' "$venv/pyvenv.cfg" \
    && "$venv/bin/python3" -c '' 2>/dev/null; }; then
  echo "install-deps: making the virtual environment $venv (/usr/bin/python3 -m venv)"
  rm -rf "$venv"
  /usr/bin/python3 -m venv "$venv"
fi
echo "install-deps: installing the pinned Python modules into $venv ($req)"
rm -f "$venv/requirements.txt"
"$venv/bin/python3" -m pip install --quiet --disable-pip-version-check \
  --only-binary=:all: -r "$req"
cp "$req" "$venv/requirements.txt"
