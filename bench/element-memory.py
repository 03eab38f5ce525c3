#!/usr/bin/env python3
"""The memory the element reserves for a model, as its `stats` say.

Runs `videotestsrc num-buffers=N ! video/x-raw,format=RGB,width=W,height=H
! cudabatchinfer model=M batch=B backend=BACKEND ! fakesink` for each
model, and prints at EOS the memory fields of the element's `stats`:
reserved-bytes (the engine's pool: weights as the backend lays them out,
activations, scratch), peak-reserved-bytes, and
fresh-allocations-after-warmup. One line per model:

  model=fcn_resnet50-torchscript.onnx reserved-mb=274.4 peak-reserved-mb=274.4 fresh-allocations-after-warmup=0

  GST_PLUGIN_PATH=build/gst /usr/bin/python3 bench/element-memory.py \\
      [--batch 8] [--size 224] [--frames 16] [--backend cpu] model.onnx ...

Needs GStreamer's Python bindings (Debian's python3-gi and gir1.2-gst);
the plugin found through GST_PLUGIN_PATH.
"""
import argparse
import os
import sys

import gi

gi.require_version("Gst", "1.0")
from gi.repository import Gst  # noqa: E402


def measure(model, args):
    """The stats structure after EOS, or exits naming the error."""
    pipeline = Gst.parse_launch(
        f"videotestsrc num-buffers={args.frames} ! video/x-raw,format=RGB,"
        f"width={args.size},height={args.size} ! cudabatchinfer name=e "
        f"model=\"{model}\" batch={args.batch} backend={args.backend} ! "
        "fakesink")
    pipeline.set_state(Gst.State.PLAYING)
    msg = pipeline.get_bus().timed_pop_filtered(
        Gst.CLOCK_TIME_NONE, Gst.MessageType.EOS | Gst.MessageType.ERROR)
    stats = pipeline.get_by_name("e").get_property("stats")
    pipeline.set_state(Gst.State.NULL)
    if msg.type == Gst.MessageType.ERROR:
        err, debug = msg.parse_error()
        sys.exit(f"{model}: {err.message} ({debug})")
    return stats


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("models", nargs="+")
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--size", type=int, default=224)
    parser.add_argument("--frames", type=int, default=16)
    parser.add_argument("--backend", default="cpu")
    args = parser.parse_args()
    Gst.init(None)
    for model in args.models:
        s = measure(model, args)
        print(f"model={os.path.basename(model)} "
              f"reserved-mb={s.get_value('reserved-bytes') / 1e6:.1f} "
              f"peak-reserved-mb={s.get_value('peak-reserved-bytes') / 1e6:.1f}"
              f" fresh-allocations-after-warmup="
              f"{s.get_value('fresh-allocations-after-warmup')}")


if __name__ == "__main__":
    main()
