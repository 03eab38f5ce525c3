#!/usr/bin/env bash
# The main job: installs what is needed, builds, and runs a real pipeline
# (a video file decoded, through cudabatchinfer on its embedded model),
# printing every batch's memory statistics and writing a few output frames
# as PNG into demo-output/; then runs the video twice more with
# post-messages=true, as the element comes and with warm-up and padding
# off, and draws both runs' memory and time per batch side by side into
# demo-output/memory.png (scripts/plot-memory.py).
#
#   bash scripts/demo.sh [VIDEO-FILE]
#
# Without a file, it first encodes a 4-second test video (Theora/Ogg) to
# demo-output/input.ogv, so the pipeline decodes a real file either way.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh >/dev/null

out=demo-output
mkdir -p "$out"
rm -f "$out"/frame-*.png
video=${1:-}
if [ -z "$video" ]; then
  video=$out/input.ogv
  echo "demo: encoding a test video to $video"
  gst-launch-1.0 -q videotestsrc num-buffers=120 pattern=smpte \
    ! video/x-raw,width=640,height=360,framerate=30/1 \
    ! timeoverlay halignment=center valignment=center font-desc="Sans Bold 36" \
    ! videoconvert ! theoraenc ! oggmux ! filesink location="$video"
fi

export GST_PLUGIN_PATH=$PWD/build
pipeline="filesrc location=$video ! decodebin ! videoconvert \
  ! cudabatchinfer batch=16 ! videoconvert ! pngenc \
  ! multifilesink location=$out/frame-%03d.png"
echo "demo: gst-launch-1.0 $pipeline"
./build/examples/print-batch-meta "$pipeline"

# keep a few frames: the first, one from the middle, the last
mapfile -t frames < <(ls "$out"/frame-*.png)
n=${#frames[@]}
keep=("${frames[0]}" "${frames[$((n / 2))]}" "${frames[$((n - 1))]}")
for f in "${frames[@]}"; do
  case " ${keep[*]} " in *" $f "*) ;; *) rm -f "$f" ;; esac
done
echo "demo: $n frames processed; kept ${keep[*]}"

# the picture: what warm-up and padding save, on the same video (120
# frames at batch 16 end with a batch of 8)
launch="filesrc location=$video ! decodebin ! videoconvert \
  ! cudabatchinfer batch=16 post-messages=true"
echo "demo: drawing $out/memory.png (scripts/plot-memory.py)"
.venv/bin/python3 scripts/plot-memory.py -o "$out/memory.png" --launch \
  --title "batch=16 (warm-up, pad-mode=repeat-last)" \
  --title "batch=16 warmup=false pad-mode=none" \
  "$launch ! fakesink" "$launch warmup=false pad-mode=none ! fakesink"
