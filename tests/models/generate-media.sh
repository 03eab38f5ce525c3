#!/usr/bin/env bash
# The media files of the tests, written by GStreamer's own encoders
# (gst-plugins-base: theoraenc, oggmux; gst-plugins-good: pngenc):
#   bash tests/models/generate-media.sh
set -euo pipefail
cd "$(dirname "$0")"
# one black picture, of another size than the tests' frames
gst-launch-1.0 -q videotestsrc num-buffers=1 pattern=black \
  ! video/x-raw,width=80,height=60 ! videoconvert ! pngenc \
  ! filesink location=black.png
# six frames of colour bars in Theora, in Ogg
gst-launch-1.0 -q videotestsrc num-buffers=6 pattern=smpte \
  ! video/x-raw,width=80,height=60,framerate=30/1 ! videoconvert \
  ! theoraenc ! oggmux ! filesink location=smpte-6.ogv
# eight frames of moving colour bars and a ball in Theora 4:2:0 (what
# software decoders give: I420), in Ogg, for the 4:2:0 input tests
gst-launch-1.0 -q videotestsrc num-buffers=8 pattern=smpte horizontal-speed=3 \
  ! video/x-raw,width=64,height=48,framerate=30/1 ! videoconvert \
  ! video/x-raw,format=I420 ! theoraenc ! oggmux \
  ! filesink location=bars-420.ogv
