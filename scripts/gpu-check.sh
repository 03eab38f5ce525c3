#!/usr/bin/env bash
# The GPU check: everything that needs an NVIDIA GPU, in one run, with one
# report folder.
#
#   bash scripts/gpu-check.sh [REPORT-DIR]      (default: gpu-report/)
#
# 1. uses build/ (carried from a machine that built it, or built here when
#    meson, ninja and the -dev packages are present; nothing is installed:
#    the GPU machine has no network);
# 2. checks the runtime libraries the build needs are there (ldd), and
#    stops with the list of what is missing otherwise;
# 3. runs the whole test suite; the CUDA suite (elements_cudabatchinfer-cuda)
#    compares every test model on CUDA with the CPU backend and checks that
#    no batch after warm-up allocates;
# 4. runs the ONNX node tests on both backends (the runner checks NaN and
#    infinities before its per-op tolerance) and lists the tests whose
#    verdict differs;
# 5. runs bench/first-last-batch on CUDA: 120 frames at batch 16 through
#    the style net at 1280x720, the four warm-up/padding runs, the
#    first/median and last/median ratios and throughput, and the stream's
#    throughput with 2 batches in flight against 1;
# 6. runs the same net, frames and batches through PyTorch with
#    cudnn.benchmark (bench/pytorch-style.py, which first checks it
#    computes what onnxruntime does) and prints the fps ratio;
# and writes each step's output and a summary to REPORT-DIR. Without a GPU
# every step runs and the CUDA parts say they were skipped; the exit status
# is 0 when everything that ran passed.
set -uo pipefail
cd "$(dirname "$0")/.."
report=${1:-gpu-report}
mkdir -p "$report"
summary="$report/summary.txt"
: >"$summary"
start=$(date +%s)

say () { echo "$*" | tee -a "$summary"; }
step () { say ""; say "== $*"; }

step "machine"
gpu=0
if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then
  gpu=1
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv \
    | tee -a "$summary"
else
  say "no nvidia-smi: no NVIDIA driver here, the CUDA parts will skip"
fi

step "build"
if [ ! -f build/build.ninja ]; then
  if command -v meson >/dev/null && command -v ninja >/dev/null; then
    meson setup build -Dtests=enabled -Dbench=enabled >"$report/build.txt" 2>&1
  else
    say "no build/ and no meson here: carry build/ from a machine that built"
    say "it (see README, 'The GPU check')"
    exit 1
  fi
fi
if ! ninja -C build >>"$report/build.txt" 2>&1; then
  say "the build failed: see $report/build.txt"
  exit 1
fi
grep -q "HAVE_CUDA" build/build.ninja && say "built with the CUDA backend" \
  || say "this build has no CUDA backend (nvcc or cuDNN was missing)"

step "runtime libraries"
missing=$(find build -name '*.so' -o -name 'elements_*' -type f \
  | xargs -r ldd 2>/dev/null | grep 'not found' | sort -u)
if [ -n "$missing" ]; then
  say "missing libraries (install Debian 12's runtime packages):"
  say "$missing"
  exit 1
fi
say "all found"

status=0
step "test suite"
meson test -C build --print-errorlogs >"$report/tests.txt" 2>&1 || status=1
grep -E "^ *[0-9]+/[0-9]+ " "$report/tests.txt" | tee -a "$summary"
grep -h "SKIP:" build/meson-logs/testlog.txt | tee -a "$summary"

step "ONNX node tests, CPU and CUDA"
conf="python3 tests/conformance/onnx-node-tests.py --runner build/tests/conformance/cbi-run-tensor"
if python3 -c 'import onnx, numpy' 2>/dev/null; then
  $conf --backend cpu >"$report/conformance-cpu.txt" 2>&1
  $conf --backend cuda >"$report/conformance-cuda.txt" 2>&1
  say "cpu:  $(tail -n 1 "$report/conformance-cpu.txt")"
  say "cuda: $(tail -n 1 "$report/conformance-cuda.txt")"
  # the tests whose verdict differs between the backends
  verdicts () {
    awk '/^(PASS|FAIL|SKIP) / {sub(":$", "", $2); print $2, $1}' "$1" | sort
  }
  join <(verdicts "$report/conformance-cpu.txt") \
    <(verdicts "$report/conformance-cuda.txt") \
    | awk '$2 != $3 {print "  " $1 ": cpu " $2 ", cuda " $3}' \
    >"$report/conformance-diff.txt"
  if grep -q "^PASS" "$report/conformance-cuda.txt"; then
    say "verdicts that differ: $(wc -l <"$report/conformance-diff.txt")"
    cat "$report/conformance-diff.txt" >>"$summary"
  else
    say "no node test ran on CUDA: $(grep -m1 '^SKIP' \
      "$report/conformance-cuda.txt" | cut -d: -f2-)"
  fi
else
  say "python3 with onnx and numpy is missing: node tests not run"
fi

step "benchmark (CUDA, style net, 1280x720, batch 16, 120 frames)"
if [ "$gpu" = 0 ]; then
  say "no GPU: benchmark not run"
elif [ -x build/bench/first-last-batch ]; then
  GST_PLUGIN_PATH=build build/bench/first-last-batch --backend cuda \
    --model tests/models/style.onnx --width 1280 --height 720 --batch 16 \
    --frames 120 >"$report/bench-cuda.txt" 2>&1 || status=1
  tail -n 11 "$report/bench-cuda.txt" | tee -a "$summary"
else
  say "bench/ was not built (-Dbench=enabled)"
fi

step "PyTorch (cudnn.benchmark) on the same net, frames and batches"
if [ "$gpu" = 0 ]; then
  say "no GPU: comparison not run"
elif python3 -c 'import torch' 2>/dev/null; then
  python3 bench/pytorch-style.py --width 1280 --height 720 --batch 16 \
    --frames 120 >"$report/bench-pytorch.txt" 2>&1 || status=1
  tail -n 3 "$report/bench-pytorch.txt" | tee -a "$summary"
  # the engine's fps of one batch at a time: packing, upload, layers,
  # download and unpacking, as PyTorch's figure counts them
  ours=$(awk '/^warm-up \+ padding/ {print $(NF-1)}' "$report/bench-cuda.txt")
  theirs=$(awk '/^fps/ {print $2}' "$report/bench-pytorch.txt")
  if [ -n "$ours" ] && [ -n "$theirs" ]; then
    say "cudabatchinfer $ours fps, PyTorch $theirs fps: ratio" \
      "$(awk -v a="$ours" -v b="$theirs" 'BEGIN {printf "%.2f", a / b}')"
  fi
else
  say "no PyTorch here: comparison not run"
fi

step "done in $(( $(date +%s) - start )) s; report in $report/"
exit $status
