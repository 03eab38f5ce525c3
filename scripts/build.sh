#!/usr/bin/env bash
# Configures (once) and builds into build/.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -f build/build.ninja ]; then
  meson setup build -Dtests=enabled >/dev/null
elif [ -x .venv/bin/python3 ] \
    && grep -q '"onnx-conformance"' build/meson-info/intro-tests.json 2>/dev/null \
    && ! grep -q "\"$(pwd -P)/.venv/bin/python3\"" build/meson-info/intro-tests.json; then
  # configured before install-deps.sh made .venv/: the ONNX node tests
  # would run with another python3; configure again to take the venv's
  meson setup --reconfigure build >/dev/null
fi
ninja -C build
