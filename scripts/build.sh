#!/usr/bin/env bash
# Configures (once) and builds into build/, the meta library's gtk-doc
# reference included (-Ddoc=enabled: a symbol left undocumented fails it).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -f build/build.ninja ]; then
  meson setup build -Dtests=enabled -Ddoc=enabled >/dev/null
else
  if ! grep -q '"name": "doc", "value": "enabled"' \
      build/meson-info/intro-buildoptions.json; then
    # configured before the docs had an option, or without them
    meson configure build -Ddoc=enabled >/dev/null
  fi
  if [ -x .venv/bin/python3 ] \
      && grep -q '"onnx-conformance"' build/meson-info/intro-tests.json 2>/dev/null \
      && ! grep -q "\"$(pwd -P)/.venv/bin/python3\"" build/meson-info/intro-tests.json; then
    # configured before install-deps.sh made .venv/: the ONNX node tests
    # would run with another python3; configure again to take the venv's
    meson setup --reconfigure build >/dev/null
  fi
fi
ninja -C build
