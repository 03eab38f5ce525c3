#!/usr/bin/env bash
# Fuzzes the ONNX importer with libFuzzer (clang, ASan, UBSan) for a bounded
# time, seeded with the test models. Any crash, leak or UB fails it.
#
#   bash scripts/fuzz.sh [SECONDS]      (default 60)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
# the build's output only where it fails, then in full: a fuzzer that does
# not build is a failure that says why
build_log=$(mktemp)
trap 'rm -f "$build_log"' EXIT
if ! { [ -f build-fuzz/build.ninja ] \
    || CC=clang meson setup build-fuzz -Dfuzzing=enabled -Dtests=disabled \
      -Dbench=disabled; } >"$build_log" 2>&1 \
    || ! ninja -C build-fuzz fuzz/onnx-import-fuzzer >>"$build_log" 2>&1; then
  echo "fuzz: the fuzzer did not build:"
  cat "$build_log"
  exit 1
fi
corpus=build-fuzz/corpus
mkdir -p "$corpus"
cp tests/models/*.onnx "$corpus"/
log=build-fuzz/fuzz.log
status=0
./build-fuzz/fuzz/onnx-import-fuzzer -max_total_time="$seconds" \
  -print_final_stats=1 -timeout=10 -rss_limit_mb=2048 \
  -artifact_prefix=build-fuzz/ "$corpus" \
  >"$log" 2>&1 || status=$?
grep -E '^stat::(number_of_executed_units|peak_rss_mb)' "$log" || true
if [ "$status" -ne 0 ]; then
  echo "fuzz: the importer failed on an input (exit $status):"
  tail -n 60 "$log"
fi
exit "$status"
