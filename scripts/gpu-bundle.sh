#!/usr/bin/env bash
# The GPU bundle: everything scripts/gpu-check.sh needs on a bare GPU
# machine (no network, no Debian packages, no GStreamer, no oneDNN), in one
# git-ignored folder small enough to carry with the working tree.
#
#   bash scripts/gpu-bundle.sh [BUNDLE-DIR]     (default: gpu-bundle/)
#
# 1. builds with CUDA, the tests and the benches in build-gpu/ (build/ is
#    other people's), with the test binaries looking for their models at
#    tests/models relative to the working directory: gpu-check.sh runs
#    them from the bundle, which holds a copy;
# 2. copies the build's binaries (stripped of debug info), the test models,
#    the node-test runner and its expected passes, bench/pytorch-style.py,
#    and writes tests.list and test-env.txt from `meson introspect`, so the
#    bundle runs the suite with the environment tests/meson.build gives it
#    without meson (whose build files carry this machine's paths);
# 3. takes the runtime libraries from Debian's packages (apt-get download,
#    dpkg -x), the versions installed here, which the build was made
#    against: GStreamer, its plugins the tests and benches create
#    (coreelements, coretracers for GST_TRACERS=leaks, videotestsrc), the
#    plugin scanner, GLib, ORC, oneDNN, OpenCL's loader (oneDNN links it),
#    protobuf-c, libgomp and what they link. glibc, libstdc++ and libgcc_s
#    stay out: they come with the machine (and glibc must match its loader);
#    MANIFEST.txt says which glibc the bundle needs;
# 4. gzips the libraries over 8 MiB (oneDNN: 38 MiB, 11 gzipped) and our
#    binaries over 1 MiB (their kernels carry machine code for every GPU
#    architecture, -Dgpu_archs, which gzip shrinks about 4 times), which
#    gpu-check.sh unpacks to a temporary folder;
# 5. cuda-fallback/: cudart and cuDNN's front library (small, real) and a
#    stub cuBLAS, used only where the machine has no CUDA 13 libraries of
#    its own, so the plugin still loads and the CUDA backend reports no
#    device. cuBLAS (50 MiB, cuBLASLt 500 MiB) and cuDNN's engines (over
#    1 GiB) are far past what can travel: the GPU machine's pip wheels
#    (nvidia-cublas, nvidia-cudnn-cu13) provide them.
set -euo pipefail
cd "$(dirname "$0")/.."
src=$PWD
bundle=${1:-gpu-bundle}
build="build-gpu"
start=$(date +%s)

# the test binaries resolve tests/models against their working directory
opts=(-Dcuda=enabled -Dtests=enabled -Dbench=enabled
  -Dtest_models_dir=tests/models)
if [ -f "$build/build.ninja" ]; then
  meson configure "$build" "${opts[@]}"
else
  meson setup "$build" "${opts[@]}"
fi
ninja -C "$build"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rm -rf "$bundle"
mkdir -p "$bundle"/{bin,lib/gstreamer-1.0,libexec,plugin,cuda-fallback}
bundle=$(cd "$bundle" && pwd)

# --- the build's files, and the test list with its environment ------------
# the plugin file
cp -L "$build/gst/plugin/libgstcudabatchinfer.so" "$bundle/plugin/"
meta=$(readlink -f "$build"/gst/libgstcudabatchinfer-1.0.so.0)
cp "$meta" "$bundle/lib/libgstcudabatchinfer-1.0.so.0"
cp "$build/bench/first-last-batch" "$build/bench/model-throughput" \
  "$bundle/bin/"
mkdir -p "$bundle/tests" "$bundle/bench"
cp -r tests/models "$bundle/tests/"
cp bench/pytorch-style.py "$bundle/bench/"

# tests.list: name, timeout, then the command, tab-separated, with paths
# made relative to the bundle (build outputs into bin/, source files at
# their place in the tree, copied); test-env.txt: the tests' environment
# less the variables that hold this machine's paths (gpu-check.sh sets
# those to the bundle's)
meson introspect "$build" --tests | python3 -c '
import json, os, shutil, sys
src, build, bundle = (os.path.realpath(p) for p in sys.argv[1:4])
env = {}
with open(os.path.join(bundle, "tests.list"), "w") as out:
    for t in json.load(sys.stdin):
        # checks of the build itself (the objects of the engine library) ran
        # here, where the build is; a thin archive does not travel
        if any(a.endswith(".a") for a in t["cmd"]):
            continue
        cmd = []
        for i, a in enumerate(t["cmd"]):
            p = os.path.realpath(os.path.join(t["workdir"] or build, a))
            if i == 0 and os.path.basename(a).startswith("python"):
                cmd.append("PYTHON")  # gpu-check.sh picks the python
            elif os.path.isfile(p) and p.startswith(build + os.sep):
                shutil.copy2(p, os.path.join(bundle, "bin"))
                cmd.append("bin/" + os.path.basename(p))
            elif os.path.isfile(p) and p.startswith(src + os.sep):
                rel = os.path.relpath(p, src)
                os.makedirs(os.path.join(bundle, os.path.dirname(rel)),
                            exist_ok=True)
                shutil.copy2(p, os.path.join(bundle, rel))
                cmd.append(rel)
            else:
                cmd.append(a)
        out.write("\t".join([t["name"], str(t["timeout"])] + cmd) + "\n")
        env.update(t["env"])
with open(os.path.join(bundle, "test-env.txt"), "w") as out:
    for k, v in sorted(env.items()):
        if src not in v and build not in v and k != "LD_LIBRARY_PATH":
            out.write(f"{k}={v}\n")
' "$src" "$build" "$bundle"

# debug info is most of the test binaries' size; symbols stay for backtraces
ours=("$bundle"/bin/* "$bundle"/plugin/*.so* "$bundle"/lib/*.so.*)
strip --strip-debug "${ours[@]}"

# --- runtime libraries from Debian's packages -----------------------------
plugins_dir=$(pkg-config --variable=pluginsdir gstreamer-1.0)
scanner=$(pkg-config --variable=pluginscannerdir gstreamer-1.0)/gst-plugin-scanner
gst_plugins=(coreelements coretracers videotestsrc)
# the 4:2:0 suite's decoding and videoconvert, and, where this machine has
# gst-plugins-bad's nvcodec, cudaupload for the CUDA memory suite
optional_plugins=(ogg theora videoconvertscale playback typefindfunctions png
  nvcodec)
plugin_files=()
for p in "${gst_plugins[@]}"; do plugin_files+=("$plugins_dir/libgst$p.so"); done
for p in "${optional_plugins[@]}"; do
  if [ -e "$plugins_dir/libgst$p.so" ]; then
    plugin_files+=("$plugins_dir/libgst$p.so")
  else
    echo "gpu-bundle: no $p plugin here: the tests that need it skip" >&2
  fi
done
seeds=("${ours[@]}" "$scanner" "${plugin_files[@]}")

# what the machine provides: glibc (tied to its loader) and GCC's runtime
machine_libs='^(linux-vdso|ld-linux|libc|libm|libdl|libpthread|librt|libresolv|libutil|libanl|libstdc\+\+|libgcc_s)\.so'
# every library the seeds load, as "soname path" (ldd follows them all)
for f in "${seeds[@]}"; do LD_LIBRARY_PATH="$bundle/lib" ldd "$f"; done \
  >"$tmp/ldd"
if grep "not found" "$tmp/ldd" >&2; then
  echo "libraries missing here: install the build dependencies" >&2
  exit 1
fi
awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' "$tmp/ldd" | sort -u \
  >"$tmp/needed"
grep -Ev "$machine_libs" "$tmp/needed" | grep -v " $bundle/" \
  | grep -v " /usr/local/cuda" >"$tmp/debian" || true
grep " /usr/local/cuda" "$tmp/needed" >"$tmp/cuda" || true

# the package of each file (usrmerge: dpkg may know it under /usr or not)
owner () {
  local p q
  for p in "$1" "$(readlink -f "$1")"; do
    for q in "$p" "/usr${p#/usr}" "${p#/usr}"; do
      dpkg -S "$q" 2>/dev/null | awk -F: 'NR == 1 {print $1; exit}' \
        | grep . && return 0
    done
  done
  echo "no Debian package owns $1" >&2
  return 1
}
: >"$tmp/packages"
while read -r _ path; do owner "$path" >>"$tmp/packages"; done <"$tmp/debian"
for f in "$scanner" "${plugin_files[@]}"; do
  owner "$f" >>"$tmp/packages"
done
sort -u -o "$tmp/packages" "$tmp/packages"

mkdir -p "$tmp/debs" "$tmp/root"
# apt downloads as _apt, which cannot write to a root-only temporary folder
apt_opts=(-q)
[ "$(id -u)" = 0 ] && apt_opts+=(-o APT::Sandbox::User=root)
: >"$tmp/versions"
while read -r pkg; do
  ver=$(dpkg-query -W -f='${Version}' "$pkg:$(dpkg --print-architecture)" \
    2>/dev/null || dpkg-query -W -f='${Version}' "$pkg")
  # the installed version, the one built against; the archive's current
  # one if that is gone from it (a stable update: same ABI)
  if ! (cd "$tmp/debs" && apt-get download "${apt_opts[@]}" "$pkg=$ver" >/dev/null 2>&1); then
    echo "note: $pkg $ver is not in the archive, taking its current version" >&2
    (cd "$tmp/debs" && apt-get download "${apt_opts[@]}" "$pkg" >/dev/null)
  fi
done <"$tmp/packages"
for deb in "$tmp"/debs/*.deb; do
  dpkg -x "$deb" "$tmp/root"
  dpkg-deb -W --showformat='${Package} ${Version}\n' "$deb" >>"$tmp/versions"
done

# copies a file the host has at PATH from the extracted packages, under
# NAME (the soname the loader looks for)
from_debs () {
  local path=$1 dest=$2 p
  for p in "$tmp/root/usr${path#/usr}" "$tmp/root${path#/usr}"; do
    if [ -e "$p" ]; then cp -L "$p" "$dest"; return 0; fi
  done
  echo "$path is not in the downloaded packages" >&2
  return 1
}
while read -r soname path; do
  from_debs "$path" "$bundle/lib/$soname"
done <"$tmp/debian"
for p in "${gst_plugins[@]}"; do
  from_debs "$plugins_dir/libgst$p.so" "$bundle/lib/gstreamer-1.0/"
done
from_debs "$scanner" "$bundle/libexec/"

# the big ones travel gzipped (gzip is on every machine; xz is not)
find "$bundle/lib" -maxdepth 1 -type f -size +8M -exec gzip -9 {} +

# --- the CUDA fallback ------------------------------------------------------
# the CUDA libraries our files link directly (cuBLASLt comes with cuBLAS)
direct=$(for f in "${ours[@]}"; do
  readelf -d "$f" | sed -n 's/.*NEEDED.*\[\(.*\)\]/\1/p'; done | sort -u)
while read -r soname path; do
  grep -qxF "$soname" <<<"$direct" || continue
  if [ "$(stat -Lc %s "$path")" -lt $((2 << 20)) ]; then
    cp -L "$path" "$bundle/cuda-fallback/$soname"  # small: the real one
    continue
  fi
  # too big to carry: a stub with the functions our files call, each
  # failing with status 1 (CUBLAS_STATUS_NOT_INITIALIZED); it only has to
  # satisfy the loader (GStreamer opens plugins with RTLD_NOW), as the
  # backend asks cudart for a device before it calls the library. The
  # symbols keep their version node (soname), which the binaries ask for.
  syms=$(for f in "${ours[@]}"; do nm -D --undefined-only "$f"; done \
    | awk -v s="@$soname" '$2 ~ s"$" {sub(/@.*/, "", $2); print $2}' | sort -u)
  {
    echo "/* a stand-in for $soname, from scripts/gpu-bundle.sh */"
    for s in $syms; do
      case $s in
        *GetStatusString|*GetStatusName|*GetErrorString)
          echo "const char *$s (void) { return \"$soname is missing\"; }" ;;
        *) echo "int $s (void) { return 1; }" ;;
      esac
    done
  } >"$tmp/stub.c"
  { echo "$soname {"; echo "  global:"; printf '    %s;\n' $syms
    echo "  local: *;"; echo "};"; } >"$tmp/stub.map"
  gcc -shared -fPIC -O2 -o "$bundle/cuda-fallback/$soname" \
    -Wl,-soname,"$soname" -Wl,--version-script="$tmp/stub.map" "$tmp/stub.c"
  echo "$soname" >>"$bundle/cuda-fallback/STUBS"
done <"$tmp/cuda"

# our binaries carry every GPU architecture's kernels: gzipped too
find "$bundle/bin" "$bundle/plugin" "$bundle/lib" -maxdepth 1 -type f \
  ! -name '*.gz' -size +1M -exec gzip -9 {} +

# --- the manifest -------------------------------------------------------------
# the newest glibc symbol version any file asks for (the gzipped ones too)
mkdir "$tmp/unzipped"
for gz in "$bundle"/{bin,plugin,lib}/*.gz; do
  [ -e "$gz" ] || continue
  gzip -dc "$gz" >"$tmp/unzipped/$(basename "$gz" .gz)"
done
glibc=$(find "$bundle"/{bin,libexec,plugin,lib,cuda-fallback} "$tmp/unzipped" \
    -type f ! -name '*.gz' ! -name STUBS -exec objdump -T {} + 2>/dev/null \
  | grep -oE 'GLIBC_[0-9.]+' | sort -uV \
  | tail -n 1)
{
  echo "cudabatchinfer GPU bundle, made by scripts/gpu-bundle.sh"
  echo "commit: $(git rev-parse HEAD)$(git diff --quiet HEAD || echo ' (with uncommitted changes)')"
  echo "made: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(. /etc/os-release; echo "$PRETTY_NAME")"
  echo "meson options: ${opts[*]}"
  echo "needs: x86-64 Linux with glibc >= ${glibc#GLIBC_}, libstdc++ and libgcc_s"
  echo "cuda-fallback:" "$(cd "$bundle/cuda-fallback" && echo lib*)" \
    "(stubs: $(paste -sd' ' "$bundle/cuda-fallback/STUBS" 2>/dev/null || echo none))"
  echo
  echo "Debian packages the libraries come from:"
  sort "$tmp/versions" | sed 's/^/  /'
  echo
  echo "contents (du -k):"
  (cd "$bundle" && du -sk -- * | sed 's/^/  /')
  echo "  total: $(du -sk "$bundle" | cut -f1) KiB"
} >"$bundle/MANIFEST.txt"

cat "$bundle/MANIFEST.txt"
echo "bundle: $bundle ($(du -sh "$bundle" | cut -f1)), in $(( $(date +%s) - start )) s"
