#!/usr/bin/env bash
# Writes docs/plugins/gst_plugins_cache.json, what the documentation says of
# the element (GStreamer's plugin cache format), from the plugin built in
# build/ (or the build folder given). Run it after changing a property, a
# signal, a pad template or the element's metadata, and commit the result
# with that change: the plugin-cache suite of `meson test` fails until then.
#   bash scripts/update-plugin-cache.sh [BUILD-DIR]
#
# The cache describes the plugin with every backend built: without CUDA the
# backend enum says its cuda value is compiled out, so a build without it
# is refused here (and its plugin-cache test skips). Nothing else in it
# depends on the machine: defaults are those of a fresh element (threads=0
# is "OpenMP's choice", not the core count), numbers are written in the C
# locale, the plugin's file is named without its folder, and the scanner
# reads a registry of its own that holds this plugin alone.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
cache=docs/plugins/gst_plugins_cache.json

if [ ! -f "$build/build.ninja" ]; then
  echo "update-plugin-cache: no $build/build.ninja; run bash scripts/build.sh first" >&2
  exit 1
fi
if ! grep -q '^#define HAVE_CUDA' "$build/config.h"; then
  echo "update-plugin-cache: $build has no CUDA backend; the cache describes" \
    "the plugin with every backend (configure with -Dcuda=enabled)" >&2
  exit 1
fi
ninja -C "$build" docs/plugins/cbi-plugins-scanner \
  gst/plugin/libgstcudabatchinfer.so >/dev/null

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
env -u GST_PLUGIN_PATH -u GST_PLUGIN_PATH_1_0 -u GST_PLUGIN_SYSTEM_PATH \
  LC_ALL=C GST_PLUGIN_SYSTEM_PATH_1_0="$tmp/none" GST_PLUGIN_PATH_1_0="$tmp/none" \
  GST_REGISTRY_1_0="$tmp/registry.bin" GST_REGISTRY_FORK=no \
  "$build/docs/plugins/cbi-plugins-scanner" \
  "$build/gst/plugin/libgstcudabatchinfer.so" "$tmp/cache.json"

# The layout must be Python json.dump's (indent=4, sort_keys), as upstream
# caches are: check that the text is what Python writes for what it reads.
/usr/bin/python3 - "$tmp/cache.json" <<'PY'
import json, sys
text = open(sys.argv[1], encoding='utf-8').read()
again = json.dumps(json.loads(text), indent=4, sort_keys=True,
                   ensure_ascii=False) + '\n'
if text != again:
    sys.exit('update-plugin-cache: the scanner wrote JSON laid out otherwise '
             'than Python json.dump(indent=4, sort_keys=True)')
PY

if cmp -s "$tmp/cache.json" "$cache"; then
  echo "update-plugin-cache: $cache is up to date"
else
  cp "$tmp/cache.json" "$cache"
  echo "update-plugin-cache: wrote $cache ($(wc -c <"$cache") bytes); commit it"
fi
