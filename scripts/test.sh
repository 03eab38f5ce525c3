#!/usr/bin/env bash
# Installs what is needed, builds, runs every test (with the GStreamer leaks
# tracer on) and ends with one summary line for the whole suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh

status=0
meson test -C build --print-errorlogs || status=$?

# One line for all the gst-check suites: the sum of their Checks lines.
log=build/meson-logs/testlog.txt
read -r checks failures errors < <(grep -hoE 'Checks: [0-9]+, Failures: [0-9]+, Errors: [0-9]+' "$log" \
  | awk -F'[:,] *' '{c+=$2; f+=$4; e+=$6} END {print c+0, f+0, e+0}')
if [ "$checks" -eq 0 ]; then
  echo "no test ran" >&2
  status=1
fi
echo "Checks: $checks, Failures: $failures, Errors: $errors"
exit $status
