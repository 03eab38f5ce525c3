#!/usr/bin/env python3
"""One table of the element's CPU speed on every network family against
onnxruntime and OpenVINO, in one run.

Each family of FAMILIES, as bench/export-torchvision.py wrote it through
both of PyTorch's exporters (NAME-torchscript.onnx, NAME-dynamo.onnx in
--models, default /var/tmp/cbi-torch-models; a file that is not there is a
line saying so, never a figure), runs at one batch (--batch 8) and thread
count (--threads 2) through:
- the element (bench/model-throughput: the whole element, frames in and
  out, as bench/onnxruntime-compare.py times it), in float32, and with
  --bf16 in bfloat16 too (`precision=bf16`, its checked plan);
- onnxruntime (CPUExecutionProvider, intra-op threads --threads,
  sequential, all graph optimizations);
- OpenVINO's CPU plugin (`openvino` from PyPI: `.venv/bin/pip install
  openvino`; without it those columns say "-"), the model reshaped to the
  batch, INFERENCE_NUM_THREADS --threads, one stream (the LATENCY
  hint), with INFERENCE_PRECISION_HINT f32, and with --bf16 in its
  default precision as well (bf16 where the CPU has it).
The onnxruntime and OpenVINO figures are their inference calls on a float
tensor made beforehand; the element's include packing and unpacking.

Every run is --warmup untimed batches then --batches timed ones; with
--rounds R each runtime runs R times, the order rotated every round, and
the table gives the median of each ratio over the rounds (each round's
runs back to back, so a busy spell of a shared machine hits them alike).
Printed per model: frames per second of each, element / onnxruntime,
element / OpenVINO f32, and with --bf16 element bf16 / OpenVINO default;
then the median, minimum and maximum of each ratio over the models.

  .venv/bin/python3 bench/family-table.py [--models DIR] [--batch 8]
      [--threads 2] [--batches 4] [--warmup 1] [--rounds 1] [--bf16]
      [-k SUBSTRING] [--build-dir build]

Needs a build with -Dbench=enabled, numpy and onnxruntime (the project's
.venv), and for its columns OpenVINO.
"""
import argparse
import importlib.util
import os
import shlex
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))

# name as export-torchvision.py writes it: (frame size, what it is);
# YOLOv8n's anchors fix its size: export it with --size 320
FAMILIES = {
    "resnet50": (224, "residual bottlenecks"),
    "resnext50_32x4d": (224, "grouped 3x3 convolutions"),
    "regnet_y_800mf": (224, "grouped convolutions, squeeze-excite"),
    "mobilenet_v2": (224, "depthwise, inverted residuals"),
    "mobilenet_v3_large": (224, "depthwise, squeeze-excite, hard-swish"),
    "efficientnet_b0": (224, "depthwise, squeeze-excite, swish"),
    "shufflenet_v2_x1_0": (224, "channel shuffles, depthwise"),
    "squeezenet1_1": (224, "fire modules, concatenations"),
    "convnext_tiny": (224, "depthwise 7x7, LayerNorm, GELU"),
    "vit_b_16": (224, "attention, LayerNorm, GELU"),
    "swin_t": (224, "shifted-window attention"),
    "deeplabv3_mobilenet_v3_large": (224, "atrous convolutions, resize"),
    "lraspp_mobilenet_v3_large": (224, "segmentation head, resize"),
    "fcn_resnet50": (224, "dilated ResNet-50, resize"),
    "unet": (224, "image to image, transposed convolutions"),
    "yolov8n": (320, "detector: C2f, SPPF, upsampling"),
}
EXPORTERS = ("torchscript", "dynamo")


def load_compare():
    """bench/onnxruntime-compare.py as a module: its element and
    onnxruntime runs"""
    spec = importlib.util.spec_from_file_location(
        "onnxruntime_compare", os.path.join(HERE, "onnxruntime-compare.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_openvino(args, model, precision_hint, x):
    """OpenVINO's frames per second on @x, compiled for @precision_hint
    (None: the plugin's default), and the precision it ran in"""
    import openvino as ov

    core = ov.Core()
    net = core.read_model(model)
    net.reshape({net.inputs[0].get_any_name(): list(x.shape)})
    config = {"INFERENCE_NUM_THREADS": args.threads,
              "PERFORMANCE_HINT": "LATENCY", "NUM_STREAMS": 1}
    if precision_hint:
        config["INFERENCE_PRECISION_HINT"] = precision_hint
    compiled = core.compile_model(net, "CPU", config)
    request = compiled.create_infer_request()
    for _ in range(args.warmup):
        request.infer({0: x})
    start = time.perf_counter()
    for _ in range(args.batches):
        request.infer({0: x})
    seconds = time.perf_counter() - start
    ran = str(compiled.get_property("INFERENCE_PRECISION_HINT"))
    return args.batches * args.batch / seconds, ran


def measure(args, cmp, path, size, plugin_path, helper, have_ov):
    """each runtime's fps per round, the order rotated every round"""
    x = cmp.frames(args.batch, size, size)
    runs = {"element": lambda: float(cmp.run_element(
        args, path, plugin_path, helper)["fps"]),
        "ort": lambda: cmp.run_onnxruntime(args, path)[0]}
    if have_ov:
        runs["ov-f32"] = lambda: run_openvino(args, path, "f32", x)[0]
    if args.bf16:
        runs["element-bf16"] = lambda: float(cmp.run_element(
            args, path, plugin_path, helper, precision="bf16",
            tolerance=args.tolerance)["fps"])
        if have_ov:
            runs["ov-default"] = lambda: run_openvino(args, path, None, x)[0]
    fps = {k: [] for k in runs}
    names = list(runs)
    for r in range(args.rounds):
        order = names[r % len(names):] + names[:r % len(names)]
        for k in order:
            fps[k].append(runs[k]())
    return fps


def ratio(fps, a, b):
    """median over the rounds of @a / @b, or None"""
    if a not in fps or b not in fps:
        return None
    return statistics.median(x / y for x, y in zip(fps[a], fps[b]))


def fmt(v, width=8, digits=2):
    return ("%*.*f" % (width, digits, v)) if v is not None else \
        "%*s" % (width, "-")


def main():
    cmp = load_compare()
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default="/var/tmp/cbi-torch-models")
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--batches", type=int, default=4)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--bf16", action="store_true",
                    help="the element in bf16 and OpenVINO in its default "
                    "precision too")
    ap.add_argument("--tolerance", type=float, default=0.1,
                    help="the element's bf16 accuracy check (0.1: random "
                    "weights make near ties; its plan is what is timed)")
    ap.add_argument("-k", dest="substring")
    ap.add_argument("--build-dir", default="build")
    args = ap.parse_args()
    # what onnxruntime-compare's functions read of @args
    args.width = args.height = 224
    for k in ("batch", "threads", "batches", "rounds"):
        if getattr(args, k) < 1:
            ap.error("--%s must be at least 1" % k)
    plugin_path, helper = cmp.checked_paths(ap, args)
    try:
        import openvino
        have_ov = True
        ov_version = openvino.__version__
    except ImportError:
        have_ov, ov_version = False, "not installed"
    import onnxruntime

    print("batch %d, %d threads, %d timed batches after %d, %d round(s); "
          "onnxruntime %s, OpenVINO %s" % (
              args.batch, args.threads, args.batches, args.warmup,
              args.rounds, onnxruntime.__version__, ov_version))
    print("command: " + " ".join(shlex.quote(a) for a in sys.argv))
    print("load average before: %.2f %.2f %.2f" % os.getloadavg())
    head = "%-42s %9s %9s %9s %8s %8s" % (
        "model", "el fps", "ort fps", "ov32 fps", "el/ort", "el/ov32")
    if args.bf16:
        head += " %9s %9s %8s" % ("elbf fps", "ovdf fps", "bf/ovdf")
    print(head)
    print("-" * len(head))
    ratios = {"el/ort": [], "el/ov32": [], "bf/ovdf": []}
    failed = 0
    for name, (size, _) in FAMILIES.items():
        for exporter in EXPORTERS:
            label = "%s-%s" % (name, exporter)
            if args.substring and args.substring not in label:
                continue
            path = os.path.join(args.models, label + ".onnx")
            if not os.path.exists(path):
                print("%-42s not exported (bench/export-torchvision.py)"
                      % label)
                continue
            args.width = args.height = size
            try:
                fps = measure(args, cmp, path, size, plugin_path, helper,
                              have_ov)
            except Exception as e:  # a runtime's refusal is a result
                failed += 1
                msg = str(e).strip().splitlines()
                print("%-42s failed: %s" % (label, msg[-1] if msg else
                                            type(e).__name__))
                continue
            med = {k: statistics.median(v) for k, v in fps.items()}
            r = {"el/ort": ratio(fps, "element", "ort"),
                 "el/ov32": ratio(fps, "element", "ov-f32"),
                 "bf/ovdf": ratio(fps, "element-bf16", "ov-default")}
            for k, v in r.items():
                if v is not None:
                    ratios[k].append(v)
            line = "%-42s %9.2f %9.2f %s %s %s" % (
                label, med["element"], med["ort"],
                fmt(med.get("ov-f32"), 9), fmt(r["el/ort"]),
                fmt(r["el/ov32"]))
            if args.bf16:
                line += " %s %s %s" % (fmt(med.get("element-bf16"), 9),
                                       fmt(med.get("ov-default"), 9),
                                       fmt(r["bf/ovdf"]))
            print(line, flush=True)
    print()
    for k, v in ratios.items():
        if v:
            print("%-8s median %.2f, min %.2f, max %.2f over %d models"
                  % (k, statistics.median(v), min(v), max(v), len(v)))
    print("load average after: %.2f %.2f %.2f" % os.getloadavg())
    print("\nratios above 1: the element is faster; el: the element in "
          "float32, elbf: in bf16;\nov32: OpenVINO with "
          "INFERENCE_PRECISION_HINT=f32, ovdf: in its default precision.")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
