#!/usr/bin/env bash
# The fresh-machine check: the README's two commands, exactly as written,
# in a bare Debian root, as a new user runs them.
#
#   bash scripts/fresh-machine-check.sh [--suite bookworm|trixie] [--keep]
#                                       [--no-cache] [--quick]    (as root)
#
# 1. makes a minimal Debian root of --suite (bookworm, Debian 12, by
#    default; trixie is Debian 13) with debootstrap --variant=minbase
#    (installed with apt-get when missing) under $CBI_FRESH_DIR (default
#    /var/tmp/cbi-fresh-machine), from the Debian mirror of this machine's
#    apt sources (/etc/apt/sources.list and
#    /etc/apt/sources.list.d/*.sources, read at run time: the first that
#    serves this machine's own release);
# 2. git-clones this checkout's committed HEAD into it (/root/cudabatchinfer;
#    uncommitted changes are not checked);
# 3. gives the root this machine's network settings, nothing else:
#    resolv.conf, the CA certificates of /usr/local/share/ca-certificates
#    (a TLS-inspecting proxy's; ca-certificates, once install-deps.sh has
#    installed it, adds them), apt's proxy and release-validity settings
#    and the proxy and pip index variables of the environment;
# 4. mounts /proc, /sys, /dev, /dev/pts and a /dev/shm in it and runs, in
#    /root/cudabatchinfer, with no stdin and a bare environment:
#      bash scripts/demo.sh
#      bash scripts/test.sh          (whole, as the README's command runs:
#                                     with --quick, CBI_TEST_QUICK=1, the
#                                     plain suites and the ONNX node tests
#                                     only; no valgrind, ASan or fuzzer)
#    printing their output indented, then each command's exit status and
#    wall time, and last a line `N passed, N failed` (one per command);
# 5. unmounts everything (on every exit: success, failure, a signal) and
#    removes the root, unless --keep.
#
# The bare root is debootstrap's work before anything else is installed;
# it is kept as a tar in $CBI_FRESH_DIR/cache/ and unpacked fresh for each
# run (--no-cache, or a tar older than 30 days, makes it again). The output
# of each step is also in $CBI_FRESH_DIR/logs/<run>/ (kept a week). Exit
# status 0 when both commands passed.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
top=$(pwd -P)

keep=0
use_cache=1
quick=0
suite=bookworm
while [ $# -gt 0 ]; do
  case "$1" in
    --keep) keep=1 ;;
    --no-cache) use_cache=0 ;;
    --full) quick=0 ;;
    --quick) quick=1 ;;
    --suite) shift; suite=${1:-} ;;
    --suite=*) suite=${1#--suite=} ;;
    -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "fresh-machine: unknown argument $1 (--suite, --keep, --no-cache, --quick)" >&2; exit 2 ;;
  esac
  shift
done
case "$suite" in
  bookworm|trixie) ;;
  *) echo "fresh-machine: --suite must be bookworm or trixie, not '$suite'" >&2; exit 2 ;;
esac

commands=("bash scripts/demo.sh" "bash scripts/test.sh")
passed=0
failed=0
results=()

say () { echo "fresh-machine: $*"; }
now () { echo "${EPOCHREALTIME/,/.}"; }
elapsed () { awk -v a="$1" -v b="$(now)" 'BEGIN {printf "%.1f", b - a}'; }

summary () {
  local r
  for r in "${results[@]}"; do say "$r"; done
  echo "$passed passed, $failed failed"
}

if [ "$(id -u)" -ne 0 ]; then
  say "needs root (debootstrap, chroot, mount): sudo bash $0"
  failed=${#commands[@]}
  results=("not run: not root")
  summary
  exit 1
fi

work=${CBI_FRESH_DIR:-/var/tmp/cbi-fresh-machine}
case "$work/" in
  "$top"/*) if ! git -C "$top" check-ignore -q "$work"; then
      say "CBI_FRESH_DIR=$work is inside the source tree and not git-ignored"
      failed=${#commands[@]}
      results=("not run: CBI_FRESH_DIR in the source tree")
      summary
      exit 2
    fi ;;
esac
run_id=$(date +%Y%m%d-%H%M%S)-$$
logs=$work/logs/$run_id
mkdir -p "$work/cache" "$logs"
# the logs of runs older than a week go
find "$work/logs" -mindepth 1 -maxdepth 1 -type d -mtime +7 \
  -exec rm -rf {} + 2>/dev/null
root=""
tmp_root=""

# -- cleanup: on every exit path ------------------------------------------

# the processes whose root is under $1 (a command still running in the
# chroot, or left behind by one)
procs_in () {
  local p r
  for p in /proc/[0-9]*; do
    r=$(readlink "$p/root" 2>/dev/null) || continue
    case "$r/" in "$1"/*) echo "${p#/proc/}" ;; esac
  done
}

# the mount points under $1, deepest first
mounts_under () {
  awk -v d="$1" '$2 == d || index($2, d "/") == 1 {print $2}' /proc/mounts \
    | awk '{print length, $0}' | sort -rn | cut -d' ' -f2-
}

release () {      # kills what runs in $1, unmounts what is mounted in it
  local dir=$1 pids m
  [ -n "$dir" ] && [ -d "$dir" ] || return 0
  pids=$(procs_in "$dir")
  if [ -n "$pids" ]; then
    # shellcheck disable=SC2086
    kill -TERM $pids 2>/dev/null
    for _ in 1 2 3 4 5 6 7 8 9 10; do
      pids=$(procs_in "$dir")
      [ -z "$pids" ] && break
      sleep 0.5
    done
    # shellcheck disable=SC2086
    [ -n "$pids" ] && kill -KILL $pids 2>/dev/null
  fi
  for m in $(mounts_under "$dir"); do
    umount "$m" 2>/dev/null || { sleep 1; umount "$m" 2>/dev/null; } \
      || umount -l "$m" 2>/dev/null || say "could not unmount $m"
  done
}

remove () {       # removes the root $1, never across a mount
  local dir=$1
  [ -n "$dir" ] && [ -d "$dir" ] || return 0
  if [ -n "$(mounts_under "$dir")" ]; then
    say "left $dir in place: something is still mounted in it"
    return 1
  fi
  rm -rf --one-file-system "$dir"
}

# on every exit: what ran in the root stopped, everything unmounted, the
# root removed; then the results, the `N passed, N failed` line last
cleanup () {
  local status=$?
  trap - EXIT INT TERM HUP
  release "$tmp_root"
  remove "$tmp_root"
  release "$root"
  if [ "$keep" = 1 ] && [ -n "$root" ] && [ -d "$root" ]; then
    say "kept the root: $root (nothing mounted; rm -rf --one-file-system it when done)"
  else
    remove "$root" || status=1
  fi
  say "done in $(elapsed "$start") s"
  summary
  exit "$status"
}
start=$(now)
trap cleanup EXIT
on_signal () {
  say "stopped by SIG$1"
  [ -n "$child" ] && kill -TERM "$child" 2>/dev/null
  failed=$(( ${#commands[@]} - passed ))
  results+=("stopped by SIG$1: $failed command(s) failed or not run")
  exit $(( 128 + $2 ))
}
child=""
trap 'on_signal INT 2' INT
trap 'on_signal TERM 15' TERM
trap 'on_signal HUP 1' HUP

# runs "$@" in the background (so that a signal is handled at once),
# output to the terminal indented and to the log $log (only to the log
# with quiet=1); returns its status
log=/dev/null
quiet=0
run_logged () {
  if [ "$quiet" = 1 ]; then
    ( "$@" >"$log" 2>&1 </dev/null ) &
  else
    ( "$@" 2>&1 </dev/null | tee "$log" | sed -u 's/^/    | /' ) &
  fi
  child=$!
  wait "$child"
  local s=$?
  child=""
  return $s
}


setup_failed () {
  say "$1 failed: see $log"
  failed=${#commands[@]}
  results+=("$1 failed: the commands were not run")
  exit 1
}

# -- the mirror, from this machine's apt sources --------------------------

# the Debian archive that serves this machine's release serves the other
# suites too
host_suite=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")
[ -n "$host_suite" ] || host_suite=$suite
mirror=$(
  {
    [ -f /etc/apt/sources.list ] && awk -v s="$host_suite" '
      $1 == "deb" { i = 2; if ($2 ~ /^\[/) { while ($i !~ /\]$/) i++; i++ }
                    if ($(i + 1) == s) { print $i; exit } }' /etc/apt/sources.list
    for f in /etc/apt/sources.list.d/*.sources; do
      [ -f "$f" ] || continue
      # deb822: paragraphs of Field: value lines
      awk -v s="$host_suite" '
        function flush() {
          if (types ~ /(^| )deb( |$)/ && (" " suites " ") ~ (" " s " ") \
              && enabled != "no" && uris != "") { split(uris, u, " "); print u[1] }
          types = suites = uris = enabled = ""
        }
        /^[ \t]*#/ { next }
        /^[ \t]*$/ { flush(); next }
        { f = tolower($1); v = $0; sub(/^[^:]*:[ \t]*/, "", v) }
        f == "types:" { types = v } f == "suites:" { suites = v }
        f == "uris:" { uris = v } f == "enabled:" { enabled = tolower(v) }
        END { flush() }' "$f"
    done
  } | head -n 1)
if [ -z "$mirror" ]; then
  say "no '$host_suite' mirror in /etc/apt/sources.list or /etc/apt/sources.list.d/*.sources"
  setup_failed "finding the mirror"
fi
arch=$(dpkg --print-architecture)
say "mirror $mirror ($suite, $arch), from this machine's apt sources"

# -- the bare root ----------------------------------------------------------

if ! command -v debootstrap >/dev/null; then
  log=$logs/install-debootstrap.log
  say "\$ apt-get install debootstrap (not on this machine)"
  t=$(now)
  run_logged bash -c 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -qq --no-install-recommends debootstrap \
    debian-archive-keyring gpgv' || setup_failed "installing debootstrap"
  say "installed debootstrap in $(elapsed "$t") s"
fi

key=$(printf '%s %s %s' "$mirror" "$suite" "$arch" | md5sum | cut -c1-12)
tarball=$work/cache/minbase-$suite-$arch-$key.tar
root=$(mktemp -d "$work/root.XXXXXX")
chmod 755 "$root"
t=$(now)
if [ "$use_cache" = 1 ] && [ -n "$(find "$tarball" -mtime -30 2>/dev/null)" ]; then
  log=$logs/unpack.log
  say "\$ tar -xpf $tarball -C $root    (the bare minbase root, cached)"
  run_logged tar --numeric-owner -xpf "$tarball" -C "$root" \
    || setup_failed "unpacking the cached root"
else
  log=$logs/debootstrap.log
  say "\$ debootstrap --variant=minbase $suite $root $mirror    (output: $log)"
  quiet=1 run_logged debootstrap --variant=minbase "$suite" "$root" "$mirror" \
    || setup_failed "debootstrap"
  release "$root"
  # the cache: the root as debootstrap left it, before anything else
  if tar --numeric-owner -cpf "$tarball.tmp.$$" -C "$root" .; then
    mv "$tarball.tmp.$$" "$tarball"
  else
    rm -f "$tarball.tmp.$$"
  fi
fi
say "bare root ready in $(elapsed "$t") s"

# -- the checkout -------------------------------------------------------------

head=$(git -C "$top" rev-parse HEAD)
[ -n "$(git -C "$top" status --porcelain --untracked-files=no)" ] \
  && say "note: this checkout has uncommitted changes; the check runs HEAD only"
log=$logs/clone.log
src=/root/cudabatchinfer
say "\$ git clone $top $root$src    (HEAD $head)"
t=$(now)
# shellcheck disable=SC2016
run_logged bash -c 'git clone -q --no-hardlinks "$1" "$2" \
  && { [ "$(git -C "$2" rev-parse HEAD)" = "$3" ] \
       || git -C "$2" checkout -q --detach "$3"; }' _ "$top" "$root$src" "$head" \
  || setup_failed "git clone"
say "cloned in $(elapsed "$t") s"

# -- this machine's network settings --------------------------------------------

cp -L /etc/resolv.conf "$root/etc/resolv.conf"
if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
  mkdir -p "$root/usr/local/share/ca-certificates"
  cp /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/"
fi
apt-config dump 2>/dev/null \
  | grep -E '^Acquire::((https?|ftp)::Proxy|Check-Valid-Until|Check-Date) ' \
  > "$root/etc/apt/apt.conf.d/99host-network" || true
envs=(HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
  TERM=dumb CBI_TEST_QUICK=$quick)
for v in http_proxy https_proxy no_proxy HTTP_PROXY HTTPS_PROXY NO_PROXY \
    PIP_INDEX_URL PIP_EXTRA_INDEX_URL PIP_TRUSTED_HOST; do
  [ -n "${!v:-}" ] && envs+=("$v=${!v}")
done

# -- mounts --------------------------------------------------------------------------

# the binds private, so that the mounts on them never reach this machine's
# /dev (where / is a shared mount)
mount_all () {
  mkdir -p "$root/proc" "$root/sys" "$root/dev" \
    && mount -t proc proc "$root/proc" \
    && mount -t sysfs sysfs "$root/sys" \
    && mount --bind /dev "$root/dev" && mount --make-private "$root/dev" \
    && mount --bind /dev/pts "$root/dev/pts" \
    && mount --make-private "$root/dev/pts" \
    && mount -t tmpfs -o mode=1777,nosuid,nodev shm "$root/dev/shm"
}
log=$logs/mount.log
mount_all >"$log" 2>&1 || setup_failed "mounting /proc, /sys and /dev in the root"

# -- the README's two commands -------------------------------------------------------

for c in "${commands[@]}"; do
  name=${c##*/}
  log=$logs/${name%.sh}.log
  say "\$ $c    (in $src, chroot $root ($suite), CBI_TEST_QUICK=$quick)"
  t=$(now)
  run_logged chroot "$root" /usr/bin/env -i "${envs[@]}" \
    /bin/bash -c "cd $src && $c"
  s=$?
  took=$(elapsed "$t")
  if [ "$s" -eq 0 ]; then
    passed=$((passed + 1))
    results+=("$c: exit 0, $took s")
  else
    failed=$((failed + 1))
    results+=("$c: exit $s, $took s (log: $log)")
  fi
  say "$c: exit $s, $took s"
done

[ "$failed" -eq 0 ]
