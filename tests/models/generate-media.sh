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
