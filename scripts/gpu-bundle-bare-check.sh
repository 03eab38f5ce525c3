#!/usr/bin/env bash
# Runs scripts/gpu-check.sh from gpu-bundle/ in a bare Debian 12 root (no
# GStreamer, no oneDNN, no python, no ldd), as the GPU machine will run it
# but without a GPU: proof that the bundle carries all it needs.
#
#   sudo bash scripts/gpu-bundle-bare-check.sh [ROOT] [--no-cuda-libs]
#
# ROOT (default /var/tmp/bundle-root, outside the tree) is made with
# debootstrap --variant=minbase from the mirror this machine's apt uses,
# once, and reused. The working tree (tracked and untracked files that git
# does not ignore) and gpu-bundle/ are copied to ROOT/work/repo, fresh each
# time. The CUDA toolkit's libraries (/usr/local/cuda/lib64) are bound
# into the root as a python's pip wheels lay them out
# (.venv/lib/python3.12/site-packages/nvidia/cu13/lib), unless
# --no-cuda-libs: then the bundle's fallback must stand in. The report
# lands in ROOT/work/repo/gpu-report/ and its summary is printed.
set -euo pipefail
cd "$(dirname "$0")/.."
root=/var/tmp/bundle-root
cuda_libs=1
for a in "$@"; do
  case $a in
    --no-cuda-libs) cuda_libs=0 ;;
    *) root=$a ;;
  esac
done
[ -f gpu-bundle/MANIFEST.txt ] || { echo "no gpu-bundle/: run scripts/gpu-bundle.sh" >&2; exit 1; }

if [ ! -x "$root/bin/bash" ]; then
  command -v debootstrap >/dev/null || apt-get install -y debootstrap
  # the mirror this machine already uses, so the root matches its packages
  mirror=$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/*.sources 2>/dev/null \
    | head -n 1)
  if [ -z "$mirror" ]; then
    mirror=$(awk '$1 == "deb" {print $2; exit}' /etc/apt/sources.list)
  fi
  debootstrap --variant=minbase bookworm "$root" "$mirror"
fi

repo=$root/work/repo
rm -rf "$repo"
mkdir -p "$repo"
# what travels to the GPU machine: the working tree and the bundle
{ git ls-files -co --exclude-standard; find gpu-bundle -type f; } \
  | tar -cf - -T - | tar -xf - -C "$repo"

mounts=()
cleanup () {
  local i
  for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do umount "${mounts[$i]}" || true; done
}
trap cleanup EXIT
mount -t proc proc "$root/proc"; mounts+=("$root/proc")
mount --bind /dev "$root/dev"; mounts+=("$root/dev")
if [ $cuda_libs = 1 ]; then
  wheel=$repo/.venv/lib/python3.12/site-packages/nvidia/cu13/lib
  mkdir -p "$wheel"
  mount --bind -o ro /usr/local/cuda/lib64 "$wheel"; mounts+=("$wheel")
fi

rc=0
chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
  /bin/bash -c 'cd /work/repo && time bash scripts/gpu-check.sh' >/dev/null || rc=$?
cat "$repo/gpu-report/summary.txt"
echo "gpu-check.sh exit status: $rc"
exit $rc
