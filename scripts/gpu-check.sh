#!/usr/bin/env bash
# The GPU check: everything that needs an NVIDIA GPU, in one run, with one
# report folder.
#
#   bash scripts/gpu-check.sh [REPORT-DIR]      (default: gpu-report/)
#
# It runs from gpu-bundle/ when that is here (scripts/gpu-bundle.sh makes
# it on a machine with the build dependencies; it holds the binaries, the
# test models and the runtime libraries, so the GPU machine needs no
# package, no GStreamer, no meson), from build/ otherwise (carried, or
# built here when meson, ninja and the -dev packages are present).
#
# 1. machine: the GPU (nvidia-smi), the OS and its glibc;
# 2. bundle or build: which one runs, and from what commit;
# 3. runtime libraries: every binary's libraries are found (ldd); with the
#    bundle, the CUDA 13 libraries come from the python's pip wheels
#    (site-packages/nvidia/*/lib) or /usr/local/cuda, and where there are
#    none, from the bundle's fallback (cudart, cuDNN's front library and a
#    cuBLAS stub: the plugin loads, the CUDA backend finds no device);
# 4. test suite: the whole suite; the CUDA suite (elements_cudabatchinfer-
#    cuda) compares every test model on CUDA with the CPU backend (4:2:0
#    frames too: converted in the pack kernel, and in the staging copy
#    where scaled) and checks that no batch after warm-up allocates; the
#    CUDA memory suite (elements_cudabatchinfer-cudamem) runs cudaupload's
#    frames (RGBA, NV12, I420), where gst-plugins-bad's nvcodec is here,
#    and checks that every one is read on the GPU (frames-on-device, no
#    host copy) with the system memory path's results; from the bundle,
#    each binary
#    runs with the environment tests/meson.build gives the tests (no meson
#    test: its build files carry the building machine's paths);
# 5-6. node tests: the ONNX node tests on the CPU and CUDA backends (the
#    runner checks NaN and infinities before its per-op tolerance) and the
#    tests whose verdict differs; they need a python with onnx and numpy
#    ($CBI_PYTHON, else .venv/bin/python3 if there is one, else python3);
# 7. ops models CUDA: tests/models/check-references.py runs the ops test
#    models (every op of issue 10, runs of element-wise steps,
#    DepthToSpace) on CUDA against the onnxruntime outputs in the tree;
# 8. benchmark: bench/first-last-batch on CUDA: 120 frames at batch 16
#    through the style net at 1280x720, the four warm-up/padding runs, the
#    first/median and last/median ratios and throughput, and the stream's
#    throughput with 2 batches in flight against 1 (without a GPU, a few
#    frames on the CPU, to show the pipeline loads);
# 9. pytorch: the same net, frames and batches through PyTorch with
#    cudnn.benchmark (bench/pytorch-style.py, which first checks it
#    computes what onnxruntime does) and the fps ratio;
# and writes each step's output and summary.txt to REPORT-DIR, where every
# step ends with ran, skipped or failed and why. Without a GPU every step
# runs or says why it skipped; the exit status is 0 when everything that
# ran passed.
#
# Not -e: a step that fails is reported and the next one runs.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
root=$PWD
report=${1:-gpu-report}
mkdir -p "$report"
report=$(cd "$report" && pwd)  # the tests run from the bundle's folder
summary="$report/summary.txt"
: >"$summary"
start=$(date +%s)
status=0

say () { echo "$*" | tee -a "$summary"; }
steps=()
current=
step () { current=$1; shift; say ""; say "== $current${1:+: $*}"; }
# what to do about a reason CUDA gave for not running
advice () {
  case $1 in
    *"insufficient for CUDA runtime"*|*"driver version"*)
      echo "; the NVIDIA driver is older than CUDA 13 needs (R580 or later)" ;;
    *libcudnn*|*cuDNN*) echo "; cuDNN 9 for CUDA 13 is missing (pip: nvidia-cudnn-cu13)" ;;
    *libcublas*|*cuBLAS*) echo "; cuBLAS 13 is missing (pip: nvidia-cublas)" ;;
    *"no usable CUDA device"*) echo "; the driver sees no GPU this process may use" ;;
  esac
}
# the step's outcome: ran, skipped or failed, and why. Where nvidia-smi
# lists a GPU nothing may skip: a skip there is a failure, with its reason
# (a check that is green because the CUDA backend never opened proves
# nothing).
verdict () {
  local outcome=$1 why=${2:-}
  if [ "$outcome" = skipped ] && [ "$gpu" = 1 ]; then
    outcome=failed
    why="skipped on a machine with a GPU: ${why:-no reason given}$(advice "$why")"
  fi
  steps+=("$(printf '%-18s %s' "$current" "$outcome${why:+ ($why)}")")
  say "-> $outcome${why:+ ($why)}"
  if [ "$outcome" = failed ]; then status=1; fi
}
# the cases a suite skipped that matter where there is a GPU: all but
# those that need more GPUs than one
gpu_skips () { grep -h "^SKIP" "$@" 2>/dev/null | grep -v "needs two GPUs"; }
since () { awk -v a="$1" -v b="$(date +%s%N)" 'BEGIN {printf "%.1f", (b - a) / 1e9}'; }

# the bundle's binaries are x86-64; a minimal system has the loader but
# no ldd (Debian puts it in libc-dev-bin), and the loader lists the same
loader=/lib64/ld-linux-x86-64.so.2
libs_of () {
  if command -v ldd >/dev/null; then ldd "$1" 2>&1; else "$loader" --list "$1" 2>&1; fi
}

# a python for the node tests and PyTorch (its pip wheels hold the CUDA
# libraries too): CBI_PYTHON if set, the project's venv, python3
py=${CBI_PYTHON:-}
if [ -n "$py" ]; then :
elif [ -x .venv/bin/python3 ]; then py=$root/.venv/bin/python3
elif command -v python3 >/dev/null; then py=python3
fi
py_has () { [ -n "$py" ] && "$py" -c "import $1" 2>/dev/null; }

bundle=
if [ -f gpu-bundle/MANIFEST.txt ]; then bundle=$root/gpu-bundle; fi
gpu=0
glibc=        # the machine's
blocked=      # why the steps after a fatal one cannot run

step_machine () {
  if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then
    gpu=1
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv \
      | tee -a "$summary"
  else
    say "no NVIDIA driver here (nvidia-smi): the CUDA parts will skip"
  fi
  local os
  os=$(. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME")
  glibc=$("$loader" --version 2>/dev/null | grep -oE 'version [0-9]+(\.[0-9]+)+' \
    | head -n 1 | cut -d' ' -f2)
  say "${os:-unknown OS}, $(uname -m), kernel $(uname -r), glibc ${glibc:-?}," \
    "$(nproc) CPUs, python: ${py:-none}"
  verdict ran
}

step_bundle () {
  run=$(mktemp -d "${TMPDIR:-/tmp}/gpu-check.XXXXXX")
  trap 'rm -rf "$run"' EXIT
  mkdir -p "$run/lib" "$run/bin" "$run/exe" "$run/plugin"
  sed -n 's/^\(commit\|made\|needs\): /\1: /p' "$bundle/MANIFEST.txt" \
    | tee -a "$summary"
  local need
  need=$(sed -n 's/^needs:.*glibc >= \([0-9.]*\).*/\1/p' "$bundle/MANIFEST.txt")
  if [ -n "$need" ] && [ -n "$glibc" ] && \
      [ "$(printf '%s\n' "$need" "$glibc" | sort -V | head -n 1)" != "$need" ]; then
    say "this machine's glibc $glibc is older than the bundle's $need:" \
      "the runtime libraries step will say what fails"
  fi
  # the big libraries and our binaries (kernels for every GPU
  # architecture) travel gzipped: lib/ to lib/, bin/ to exe/, plugin/ to
  # plugin/ (where the plain ones are linked)
  local gz dir f
  for dir in lib bin plugin; do
    for gz in "$bundle/$dir"/*.gz; do
      [ -e "$gz" ] || continue
      f=$(basename "$gz" .gz)
      case $dir in bin) f=$run/exe/$f ;; *) f=$run/$dir/$f ;; esac
      if ! gzip -dc "$gz" >"$f"; then
        verdict failed "cannot unpack $gz"; blocked="the bundle is broken"
        return
      fi
      chmod +x "$f"
    done
  done
  for f in "$bundle"/plugin/*.so; do
    [ -e "$f" ] && ln -s "$f" "$run/plugin/"
  done
  plugin_file=$run/plugin/libgstcudabatchinfer.so

  # the CUDA 13 libraries of the pip wheels: site-packages/nvidia/*/lib
  local roots=() r d
  if [ -n "$py" ]; then
    mapfile -t roots < <("$py" -c 'import nvidia; print(*nvidia.__path__, sep="\n")' 2>/dev/null)
  fi
  for r in "$root"/.venv/lib/python3*/site-packages/nvidia \
      /usr/local/lib/python3*/dist-packages/nvidia \
      /usr/lib/python3/dist-packages/nvidia \
      "${HOME:-/nonexistent}"/.local/lib/python3*/site-packages/nvidia; do
    [ -d "$r" ] && roots+=("$r")
  done
  cuda_dirs=
  if [ ${#roots[@]} -gt 0 ]; then
    while read -r d; do cuda_dirs=$cuda_dirs:$d; done < <(
      find "${roots[@]}" -maxdepth 3 -name 'lib*.so*' -printf '%h\n' \
        2>/dev/null | sort -u)
  fi
  libpath=$bundle/lib:$run/lib$cuda_dirs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

  # the fallback stands in only for what the machine lacks (the binaries'
  # runpath also looks in /usr/local/cuda/lib64)
  local so
  for so in $(LD_LIBRARY_PATH=$libpath libs_of "$plugin_file" \
      | awk '$3 == "not" {print $1}'); do
    if [ -e "$bundle/cuda-fallback/$so" ]; then
      ln -s "$bundle/cuda-fallback/$so" "$run/lib/$so"
    fi
  done

  # each binary through a wrapper with the bundle's libraries, so that
  # they reach no python (the node tests' runner is one of them)
  local name
  for f in "$bundle"/bin/*; do
    name=${f##*/}
    case $name in *.gz) name=${name%.gz}; f=$run/exe/$name ;; esac
    printf '#!/bin/sh\nLD_LIBRARY_PATH='\''%s'\''\nexport LD_LIBRARY_PATH\nexec '\''%s'\'' "$@"\n' \
      "$libpath" "$f" >"$run/bin/$name"
    chmod +x "$run/bin/$name"
  done
  export GST_PLUGIN_SYSTEM_PATH_1_0=$bundle/lib/gstreamer-1.0
  export GST_PLUGIN_PATH_1_0=$run/plugin
  export GST_PLUGIN_SCANNER_1_0=$bundle/libexec/gst-plugin-scanner
  export GST_PLUGIN_SCANNER=$GST_PLUGIN_SCANNER_1_0
  export GST_REGISTRY_1_0=$run/registry.bin  # fresh: nothing stale
  bin=$run/bin
  conformance=$bundle/tests/conformance/onnx-node-tests.py
  references=$bundle/tests/models/check-references.py
  style_model=$bundle/tests/models/style.onnx
  pytorch_style=$bundle/bench/pytorch-style.py
  verdict ran "from $bundle"
}

step_build () {
  if [ ! -f build/build.ninja ]; then
    if command -v meson >/dev/null && command -v ninja >/dev/null; then
      meson setup build -Dtests=enabled -Dbench=enabled >"$report/build.txt" 2>&1
    else
      say "no gpu-bundle/, no build/ and no meson here: make the bundle with"
      say "scripts/gpu-bundle.sh and carry gpu-bundle/ (see README, 'The GPU check')"
      verdict failed "nothing to run"; blocked="nothing to run"
      return
    fi
  fi
  if ! ninja -C build >>"$report/build.txt" 2>&1; then
    say "the build failed: see $report/build.txt"
    verdict failed "the build failed"; blocked="the build failed"
    return
  fi
  if grep -q "HAVE_CUDA" build/build.ninja; then say "built with the CUDA backend"
  else say "this build has no CUDA backend (nvcc or cuDNN was missing)"
  fi
  bin=$root/build/tests/conformance  # the node tests' runner
  export GST_PLUGIN_PATH=$root/build  # the bench finds the plugin there
  conformance=$root/tests/conformance/onnx-node-tests.py
  references=$root/tests/models/check-references.py
  style_model=$root/tests/models/style.onnx
  pytorch_style=$root/bench/pytorch-style.py
  verdict ran "from build/"
}

step_libs () {
  local files=() f missing
  if [ -n "$bundle" ]; then
    for f in "$bundle"/{bin,plugin,lib,lib/gstreamer-1.0,libexec,cuda-fallback}/* \
        "$run"/{lib,exe,plugin}/*; do
      case $f in *.gz|*/STUBS|*.txt) ;; *) [ -f "$f" ] && files+=("$f") ;; esac
    done
  else
    mapfile -t files < <(find build \( -name '*.so' -o -name 'elements_*' \) -type f)
  fi
  missing=$(for f in "${files[@]}"; do
      LD_LIBRARY_PATH=${libpath:-${LD_LIBRARY_PATH:-}} libs_of "$f" \
        | grep 'not found' | sed "s|^|${f##*/}: |"
    done | sort -u)
  if [ -n "$missing" ]; then
    say "missing libraries:"
    say "$missing"
    verdict failed "libraries missing"; blocked="runtime libraries missing"
    return
  fi
  say "all found (${#files[@]} files)"
  if [ -z "$bundle" ]; then verdict ran; return; fi
  # where the CUDA libraries come from
  local so where stubs=
  for so in "$bundle"/cuda-fallback/lib*; do
    so=${so##*/}
    where=$(LD_LIBRARY_PATH=$libpath libs_of "$plugin_file" \
      | awk -v s="$so" '$1 == s {print $3}')
    if [ -L "$run/lib/$so" ]; then
      if grep -qxF "$so" "$bundle/cuda-fallback/STUBS" 2>/dev/null; then
        where="the bundle's stub"; stubs="$stubs $so"
      else
        where="the bundle's copy"
      fi
    fi
    say "$so: $where"
  done
  if [ -n "$stubs" ] && [ "$gpu" = 1 ]; then
    say "no$stubs on this machine (pip: nvidia-cublas): the CUDA parts cannot run"
    verdict failed "CUDA libraries missing"
  else
    verdict ran
  fi
}

step_tests_build () {
  meson test -C build --print-errorlogs >"$report/tests.txt" 2>&1
  local rc=$?
  grep -E "^ *[0-9]+/[0-9]+ " "$report/tests.txt" | tee -a "$summary"
  grep -h "SKIP:" build/meson-logs/testlog.txt | tee -a "$summary"
  if [ $rc != 0 ]; then verdict failed "see tests.txt"
  elif [ "$gpu" = 1 ] && { grep -qE "^ *[0-9]+/[0-9]+ .* SKIP " \
      "$report/tests.txt" || gpu_skips build/meson-logs/testlog.txt \
      | grep -qv "^SKIP [a-z_]*_[a-z_]*: "; }; then
    verdict failed "tests skipped on a machine with a GPU: see tests.txt"
  else verdict ran
  fi
}

# Runs the test NAME (its line of the bundle's tests.list, or meson's
# test of build/) with output to OUT; CHECKS, where given, picks its cases
# (GST_CHECKS). Returns its exit status; 78 when it needs a python with
# onnx and numpy and there is none.
run_test () {
  local name=$1 checks=$2 out=$3 line cmd limit j k
  if [ -z "$bundle" ]; then
    GST_CHECKS=$checks meson test -C build --print-errorlogs "$name" \
      </dev/null >"$out" 2>&1
    return
  fi
  line=$(awk -F'\t' -v n="$name" '$1 == n' "$bundle/tests.list")
  IFS=$'\t' read -r -a cmd <<<"$line"
  limit=${cmd[1]}; cmd=("${cmd[@]:2}")
  if [ "${cmd[0]}" = PYTHON ]; then
    py_has "onnx, numpy" || return 78
    cmd[0]=$py
  fi
  # programs through their wrappers (the node tests' runner is given to
  # a python); a library of bin/ that a test reads is given as it is
  for j in "${!cmd[@]}"; do
    case ${cmd[$j]} in
      bin/*.so|bin/*.so.*)
        if [ -e "$run/exe/${cmd[$j]#bin/}" ]; then
          cmd[$j]=$run/exe/${cmd[$j]#bin/}
        else cmd[$j]=$bundle/${cmd[$j]}; fi ;;
      bin/*) cmd[$j]=$run/${cmd[$j]} ;;
    esac
  done
  (
    cd "$bundle" || exit 1
    while IFS= read -r kv; do
      k=${kv%%=*}; v=${kv#*=}; export "$k=$v"
    done <"$bundle/test-env.txt"
    export MALLOC_PERTURB_=$((RANDOM % 255 + 1))  # as meson test does
    if [ -n "$checks" ]; then export GST_CHECKS=$checks; fi
    exec timeout "$limit" "${cmd[@]}"
  ) </dev/null >"$out" 2>&1
}

# The smoke step: within a few minutes, whether CUDA works here at all:
# every kernel on the device against the CPU's math; the element's
# warm-up message naming cuda; 20 batches after the warm-up with no fresh
# allocation and the device's free memory constant; and a 3840x2160
# batch of 16 through 32 channels with algo-search=heuristic, past cuDNN's
# 2^31 elements a tensor, against batches of one; 4:2:0 frames packed on
# the device as on the CPU; cudaupload's frames read on the GPU. Test
# NAME|CASES each.
smoke_cases=(
  "kernels_launch|"
  "elements_cudabatchinfer|test_warmup_message_and_stats_name_the_backend_and_why"
  "elements_cudabatchinfer-cuda|test_cuda_batches_after_warmup_allocate_nothing,test_a_4k_batch_past_cudnns_tensor_limit_gives_every_frame,test_cuda_packs_and_unpacks_yuv420_as_the_cpu"
  "elements_cudabatchinfer-cudamem|"
)

step_smoke () {
  local spec name checks t0 rc res failed=0 why=
  if [ "$gpu" = 0 ]; then verdict skipped "no GPU"; return; fi
  mkdir -p "$report/smoke"
  for spec in "${smoke_cases[@]}"; do
    name=${spec%%|*}; checks=${spec#*|}
    t0=$(date +%s%N)
    run_test "$name" "$checks" "$report/smoke/$name.txt"
    rc=$?
    case $rc in 0) res=OK ;; 77) res=SKIP ;; 124) res=TIMEOUT ;; *) res=FAIL ;; esac
    if [ $rc = 0 ] && gpu_skips "$report/smoke/$name.txt" >/dev/null; then
      res=SKIP
    fi
    say "$(printf '%-32s %-8s %6ss %s' "$name" "$res" "$(since "$t0")" \
      "${checks:-every case}")"
    gpu_skips "$report/smoke/$name.txt" | tee -a "$summary"
    grep -h ":[FE]:" "$report/smoke/$name.txt" | tee -a "$summary"
    if [ "$res" != OK ]; then
      failed=$((failed + 1))
      why=$(gpu_skips "$report/smoke/$name.txt" | head -n 1)
    fi
  done
  if [ $failed -gt 0 ]; then
    verdict failed "$failed of ${#smoke_cases[@]}${why:+: $why}$(advice "$why")"
  else
    verdict ran
  fi
}

step_tests_bundle () {
  mkdir -p "$report/tests"
  : >"$report/tests.txt"
  local total n=0 ok=0 skip=0 fail=0 line name cmd t0 rc res k f why
  total=$(grep -c . "$bundle/tests.list")
  while IFS= read -r line; do
    IFS=$'\t' read -r -a cmd <<<"$line"
    name=${cmd[0]}
    n=$((n + 1))
    t0=$(date +%s%N)
    run_test "$name" "" "$report/tests/$name.txt"
    rc=$?
    if [ $rc = 78 ]; then
      printf '%2d/%d %-32s SKIP     no python with onnx and numpy\n' \
        $n "$total" "$name" | tee -a "$summary" "$report/tests.txt"
      skip=$((skip + 1))
      continue
    fi
    # where there is a GPU, a suite that skipped cases failed
    if [ $rc = 0 ] && [ "$gpu" = 1 ] && [[ $name != onnx-*conformance ]] \
        && gpu_skips "$report/tests/$name.txt" >/dev/null; then
      rc=77
    fi
    why=" (exit status $rc)"
    case $rc in
      0) res=OK; ok=$((ok + 1)) ;;
      77) if [ "$gpu" = 1 ]; then
          res=FAIL; fail=$((fail + 1)); why=" (skipped with a GPU here)"
        else res=SKIP; skip=$((skip + 1)); fi ;;
      124) res=TIMEOUT; fail=$((fail + 1)) ;;
      *) res="FAIL"; fail=$((fail + 1)) ;;
    esac
    printf '%2d/%d %-32s %-8s %6ss%s\n' $n "$total" "$name" "$res" \
      "$(since "$t0")" "$([ "$res" = FAIL ] && echo "$why")" \
      | tee -a "$summary" "$report/tests.txt"
  done <"$bundle/tests.list"
  # why the CUDA tests skipped (the suite's line, and cases that print one)
  for f in "$report"/tests/*.txt; do
    grep -h "^SKIP:" "$f" | tee -a "$summary"
    k=$(grep -c "^SKIP [a-z_]*:" "$f")
    if [ "$k" -gt 0 ] && [[ $f != */onnx-conformance.txt ]]; then
      say "$(basename "$f" .txt): $k cases skipped, e.g. $(grep -m1 "^SKIP [a-z_]*:" "$f")"
    fi
  done
  say "$ok ok, $skip skipped, $fail failed; each test's output in tests/"
  if [ $fail -gt 0 ]; then verdict failed "$fail of $total"
  elif [ $ok = 0 ]; then verdict skipped "no test ran"
  else verdict ran "$ok ok, $skip skipped"
  fi
}

# the node tests on one backend: $1 = cpu or cuda
node_tests () {
  "$py" "$conformance" --runner "$bin/cbi-run-tensor" --backend "$1" \
    >"$report/conformance-$1.txt" 2>&1
}

step_nodes_cpu () {
  if ! py_has "onnx, numpy"; then
    verdict skipped "${py:-no python3}${py:+ has no onnx and numpy}"; return
  fi
  node_tests cpu
  local rc=$?
  say "cpu: $(tail -n 1 "$report/conformance-cpu.txt")"
  if [ $rc = 0 ]; then verdict ran; else verdict failed "exit status $rc"; fi
}

step_nodes_cuda () {
  if ! py_has "onnx, numpy"; then
    verdict skipped "${py:-no python3}${py:+ has no onnx and numpy}"; return
  fi
  node_tests cuda
  say "cuda: $(tail -n 1 "$report/conformance-cuda.txt")"
  if ! grep -q "^PASS" "$report/conformance-cuda.txt"; then
    verdict skipped "none ran on CUDA:$(grep -m1 '^SKIP' \
      "$report/conformance-cuda.txt" | cut -d: -f2-)"
    return
  fi
  # the tests whose verdict differs between the backends
  verdicts () {
    awk '/^(PASS|FAIL|SKIP) / {sub(":$", "", $2); print $2, $1}' "$1" | sort
  }
  join <(verdicts "$report/conformance-cpu.txt") \
    <(verdicts "$report/conformance-cuda.txt") \
    | awk '$2 != $3 {print "  " $1 ": cpu " $2 ", cuda " $3}' \
    >"$report/conformance-diff.txt"
  say "verdicts that differ: $(wc -l <"$report/conformance-diff.txt")"
  cat "$report/conformance-diff.txt" >>"$summary"
  verdict ran
}

step_bench () {
  local b=$bin/first-last-batch rc
  if [ -z "$bundle" ]; then b=build/bench/first-last-batch; fi
  if [ ! -x "$b" ]; then verdict skipped "bench/ was not built (-Dbench=enabled)"; return; fi
  if [ "$gpu" = 0 ]; then
    # a few frames on the CPU instead, to show that the pipeline's
    # elements (videotestsrc, the plugin, fakesink) load here
    "$b" --backend cpu --model "$style_model" \
      --width 160 --height 120 --batch 4 --frames 24 \
      >"$report/bench-cpu-short.txt" 2>&1
    rc=$?
    if [ $rc = 0 ]; then
      verdict skipped "no GPU; a short CPU run of it passed: bench-cpu-short.txt"
    else
      verdict failed "no GPU, and its short CPU run failed: bench-cpu-short.txt"
    fi
    return
  fi
  "$b" --backend cuda --model "$style_model" \
    --width 1280 --height 720 --batch 16 --frames 120 \
    >"$report/bench-cuda.txt" 2>&1
  rc=$?
  tail -n 11 "$report/bench-cuda.txt" | tee -a "$summary"
  if [ $rc = 0 ]; then verdict ran; else verdict failed "exit status $rc"; fi
}

step_pytorch () {
  if [ "$gpu" = 0 ]; then verdict skipped "no GPU"; return; fi
  if ! py_has torch; then verdict skipped "no PyTorch in ${py:-no python3}"; return; fi
  "$py" "$pytorch_style" --width 1280 --height 720 --batch 16 \
    --frames 120 >"$report/bench-pytorch.txt" 2>&1
  local rc=$? ours theirs
  tail -n 3 "$report/bench-pytorch.txt" | tee -a "$summary"
  # the engine's fps of one batch at a time: packing, upload, layers,
  # download and unpacking, as PyTorch's figure counts them
  ours=$(awk '/^warm-up \+ padding/ {print $(NF-1)}' "$report/bench-cuda.txt" 2>/dev/null)
  theirs=$(awk '/^fps/ {print $2}' "$report/bench-pytorch.txt")
  if [ -n "$ours" ] && [ -n "$theirs" ]; then
    say "cudabatchinfer $ours fps, PyTorch $theirs fps: ratio" \
      "$(awk -v a="$ours" -v b="$theirs" 'BEGIN {printf "%.2f", a / b}')"
  fi
  if [ $rc = 0 ]; then verdict ran; else verdict failed "exit status $rc"; fi
}

# the ops test models (tests/models/ops-*.onnx) on CUDA against the
# onnxruntime outputs in the tree: every op of issue 10, the runs of
# element-wise steps, DepthToSpace
step_ops_cuda () {
  if ! py_has "onnx, numpy"; then
    verdict skipped "${py:-no python3}${py:+ has no onnx and numpy}"; return
  fi
  "$py" "$references" --runner "$bin/cbi-run-tensor" --backend cuda \
    >"$report/ops-models-cuda.txt" 2>&1
  local rc=$?
  say "cuda: $(tail -n 1 "$report/ops-models-cuda.txt")"
  if [ $rc != 0 ]; then
    verdict failed "$(grep -m1 '^FAIL' "$report/ops-models-cuda.txt")"
  elif ! grep -q "^PASS" "$report/ops-models-cuda.txt"; then
    verdict skipped "none ran on CUDA:$(grep -m1 '^SKIP' \
      "$report/ops-models-cuda.txt" | cut -d: -f2-)"
  else verdict ran
  fi
}

# a step runs unless one before it failed in a way that leaves nothing to
# run (no build, libraries missing); it then says it skipped, and why
run_step () {
  step "$1" "$2"
  if [ -n "$blocked" ]; then verdict skipped "$blocked"; else "$3"; fi
}
run_step machine "" step_machine
if [ -n "$bundle" ]; then run_step bundle "gpu-bundle/" step_bundle
else run_step build "" step_build
fi
run_step "runtime libraries" "ldd" step_libs
run_step smoke "kernels, warm-up on cuda, memory over 20 batches, a 4K batch of 16, 4:2:0, CUDA memory" \
  step_smoke
if [ -n "$bundle" ]; then run_step "test suite" "" step_tests_bundle
else run_step "test suite" "meson test" step_tests_build
fi
run_step "node tests CPU" "the ONNX node tests on the CPU backend" step_nodes_cpu
run_step "node tests CUDA" "the same on CUDA, and the verdicts that differ" \
  step_nodes_cuda
run_step "ops models CUDA" "tests/models/ops-*.onnx against onnxruntime" \
  step_ops_cuda
run_step benchmark "CUDA, style net, 1280x720, batch 16, 120 frames" step_bench
run_step pytorch "PyTorch (cudnn.benchmark) on the same net, frames and batches" \
  step_pytorch

say ""
say "== steps"
printf '%s\n' "${steps[@]}" | tee -a "$summary"
say ""
say "== done in $(( $(date +%s) - start )) s, exit status $status; report in $report/"
exit $status
