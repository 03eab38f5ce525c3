#!/usr/bin/env python3
"""Frames per second of cudabatchinfer against onnxruntime, in one run.

Runs one ONNX model at one batch size, frame size and thread count through
the element (bench/model-throughput, a GstHarness that pushes synthetic RGB
frames one by one) and through onnxruntime (CPUExecutionProvider,
intra_op_num_threads = threads, inter_op_num_threads = 1, sequential
execution, all graph optimizations, an input of the same batch), each for
--warmup untimed batches and then --batches timed ones, and prints the
frames per second of both and their ratio (element / onnxruntime; above 1
the element is faster).

The element's figure is the whole element: bytes to floats, the model,
floats back to bytes (or the tensor meta), buffers in and out. The
onnxruntime figure is session.run() on a float tensor made beforehand.
The element gets threads = --threads (its property).

With --rounds R (default 3) both run R times, alternating which goes first;
the fps reported are the medians of the rounds, the ratio the median of the
rounds' ratios (each round's pair ran back to back, so a busy spell of a
shared machine hits both). Without --model it runs the three test
models tests/models/style.onnx, superres.onnx and classifier.onnx.

  .venv/bin/python3 bench/onnxruntime-compare.py [--model FILE]... [--batch 8]
      [--width 320] [--height 240] [--threads NCPU] [--batches 10]
      [--warmup 2] [--rounds 3] [--build-dir build] [--plugin-path DIR]
      [--helper FILE]

Needs onnxruntime and numpy: run it with the Python of the project's virtual
environment .venv/, which scripts/install-deps.sh makes with the versions
pinned in scripts/requirements.txt; and a build with -Dbench=enabled.
"""
import argparse
import os
import re
import shlex
import statistics
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_MODELS = ["style", "superres", "classifier"]


def in_root(path):
    """A relative path that does not exist here is taken from the repo."""
    if os.path.isabs(path) or os.path.exists(path):
        return os.path.abspath(path)
    return os.path.join(ROOT, path)


def frames(batch, width, height):
    """Synthetic RGB frames as the element's default mapping gives them to
    the model: NCHW float32, byte / 255."""
    y, x = np.mgrid[0:height, 0:width]
    out = np.empty((batch, 3, height, width), np.float32)
    for i in range(batch):
        cx, cy, r = width // 4 + i * width // 8, height // 2, height // 6
        disc = (x - cx) ** 2 + (y - cy) ** 2 < r * r
        rgb = np.stack([40 + 180 * x // max(width - 1, 1),
                        50 + 150 * y // max(height - 1, 1),
                        ((x ^ y) & 0x3f) + 100])
        rgb[:, disc] = np.array([240, 200, 30])[:, None]
        out[i] = rgb / 255.0
    return out


def run_element(args, model, plugin_path, helper, extra_env=None,
                threads=None, precision="fp32", tolerance=0.05,
                check_location=None):
    """the element's fields; its threads property is @threads where given,
    else --threads; its precision properties @precision, @tolerance and
    @check_location (None: the warm-up's test frames)"""
    env = dict(os.environ, GST_PLUGIN_PATH=plugin_path, **(extra_env or {}))
    cmd = [helper, "--model", model, "--batch", str(args.batch),
           "--width", str(args.width), "--height", str(args.height),
           "--batches", str(args.batches), "--warmup", str(args.warmup),
           "--threads", str(args.threads if threads is None else threads),
           "--precision", precision, "--tolerance", str(tolerance)]
    if check_location:
        cmd += ["--check-location", check_location]
    for k in ("input_mean", "input_std", "channel_order"):
        if getattr(args, k, None):
            cmd += ["--" + k.replace("_", "-"), getattr(args, k)]
    p = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if p.returncode != 0:
        msg = (p.stderr.strip() or p.stdout.strip()
               or "exit status %d" % p.returncode)
        raise RuntimeError(msg)
    line = p.stdout.strip().splitlines()[-1]
    fields = dict((k, v.strip('"')) for k, v in
                  re.findall(r'([\w-]+)=("[^"]*"|\S+)', line))
    return fields


def run_onnxruntime(args, model):
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = args.threads
    opts.inter_op_num_threads = 1
    opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    sess = ort.InferenceSession(model, opts,
                                providers=["CPUExecutionProvider"])
    name = sess.get_inputs()[0].name
    x = frames(args.batch, args.width, args.height)
    for _ in range(args.warmup):
        sess.run(None, {name: x})
    start = time.perf_counter()
    for _ in range(args.batches):
        y = sess.run(None, {name: x})
    seconds = time.perf_counter() - start
    shape = "x".join(str(d) for d in y[0].shape)
    del sess
    return args.batches * args.batch / seconds, shape


def out_size(caps):
    m = re.search(r"width=\(int\)(\d+), height=\(int\)(\d+)", caps or "")
    return "%sx%s" % m.groups() if m else "-"


def compare(args, model, plugin_path, helper):
    el, rt = [], []
    info, shape = {}, "-"
    for r in range(args.rounds):
        order = ("element", "ort") if r % 2 == 0 else ("ort", "element")
        for which in order:
            if which == "element":
                info = run_element(args, model, plugin_path, helper)
                el.append(float(info["fps"]))
            else:
                try:
                    fps, shape = run_onnxruntime(args, model)
                except Exception as e:
                    raise RuntimeError("onnxruntime: %s" % e)
                rt.append(fps)
        if args.verbose:
            print("  round %d: element %.2f fps, onnxruntime %.2f fps, "
                  "ratio %.2f" % (r, el[-1], rt[-1], el[-1] / rt[-1]),
                  flush=True)
    return {
        "element": statistics.median(el), "ort": statistics.median(rt),
        "ratio": statistics.median(e / o for e, o in zip(el, rt)),
        "element-all": el, "ort-all": rt, "out-caps": info.get("out-caps"),
        "plugin": info.get("plugin"), "ort-shape": shape,
        "engine-ms": float(info.get("engine-ms-median", -1)),
    }


def add_run_arguments(ap):
    """The options of a run of model-throughput that the scripts share:
    --batch, --width, --height, --threads (default: the CPUs we may use),
    --batches, --warmup, --rounds, and the element's --input-mean,
    --input-std and --channel-order; checked_paths () checks the counts."""
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--width", type=int, default=320)
    ap.add_argument("--height", type=int, default=240)
    ap.add_argument("--threads", type=int,
                    default=len(os.sched_getaffinity(0)))
    ap.add_argument("--batches", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    # the model's normalisation, for the accuracy check's figures
    ap.add_argument("--input-mean", help="the element's input-mean, a "
                    "GStreamer array: \"<0.5, 0.5, 0.5>\"")
    ap.add_argument("--input-std", help="the element's input-std, likewise")
    ap.add_argument("--channel-order", help="the element's channel-order")


def checked_paths(ap, args):
    """Checks the counts of @args (ap.error () on one below 1, or a negative
    --warmup); returns the plugin's folder and model-throughput's path
    from --build-dir (or --plugin-path and --helper where @args has
    them), exiting where model-throughput is not built."""
    for k in ("batch", "width", "height", "threads", "batches", "rounds"):
        if getattr(args, k) < 1:
            ap.error("--%s must be at least 1" % k)
    if args.warmup < 0:
        ap.error("--warmup must not be negative")
    build = in_root(args.build_dir)
    plugin_path = os.path.abspath(args.plugin_path) \
        if getattr(args, "plugin_path", None) \
        else os.path.join(build, "gst", "plugin")
    helper = os.path.abspath(args.helper) if getattr(args, "helper", None) \
        else os.path.join(build, "bench", "model-throughput")
    if not os.access(helper, os.X_OK):
        sys.exit("no %s: build with meson setup BUILD -Dbench=enabled, or "
                 "give --build-dir (or --helper)" % helper)
    return plugin_path, helper


def main():
    ap = argparse.ArgumentParser(
        description="cudabatchinfer against onnxruntime: frames per second")
    ap.add_argument("--model", action="append",
                    help="ONNX model (repeatable; default: the test models "
                    + ", ".join(DEFAULT_MODELS) + ")")
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--width", type=int, default=320)
    ap.add_argument("--height", type=int, default=240)
    ap.add_argument("--threads", type=int,
                    default=len(os.sched_getaffinity(0)),
                    help="threads of both (default: the CPUs we may use)")
    ap.add_argument("--batches", type=int, default=10,
                    help="timed batches of each run (10)")
    ap.add_argument("--warmup", type=int, default=2,
                    help="untimed batches before them (2)")
    ap.add_argument("--rounds", type=int, default=3,
                    help="runs of each; the median is reported (3)")
    ap.add_argument("--build-dir", default="build",
                    help="meson build dir with -Dbench=enabled (build)")
    ap.add_argument("--plugin-path",
                    help="folder of the plugin (default: BUILD/gst/plugin)")
    ap.add_argument("--helper",
                    help="default: BUILD/bench/model-throughput")
    ap.add_argument("-v", "--verbose", action="store_true",
                    help="print every round")
    args = ap.parse_args()
    plugin_path, helper = checked_paths(ap, args)
    models = args.model or [os.path.join(ROOT, "tests", "models", m + ".onnx")
                            for m in DEFAULT_MODELS]

    import onnxruntime
    print("batch %d, %dx%d frames, %d threads, %d timed batches after %d, "
          "median of %d rounds; onnxruntime %s; plugin from %s"
          % (args.batch, args.width, args.height, args.threads, args.batches,
             args.warmup, args.rounds, onnxruntime.__version__, plugin_path))
    print("command: " + " ".join(shlex.quote(a) for a in sys.argv))
    print("load average before: %.2f %.2f %.2f" % os.getloadavg())
    print()
    head = "%-16s %-14s %12s %12s %8s %14s" % (
        "model", "output", "element fps", "ort fps", "ratio",
        "engine ms/bat")
    print(head)
    print("-" * len(head))
    failed = []
    for model in models:
        name = os.path.splitext(os.path.basename(model))[0]
        try:
            r = compare(args, in_root(model), plugin_path, helper)
        except RuntimeError as e:
            failed.append((name, str(e)))
            print("%-16s %s" % (name, "failed (below)"))
            continue
        out = out_size(r["out-caps"])
        if r["ort-shape"].count("x") != 3:
            out = "tensor " + r["ort-shape"]
        print("%-16s %-14s %12.2f %12.2f %8.2f %14.2f" % (
            name, out, r["element"], r["ort"], r["ratio"],
            r["engine-ms"]))
        sys.stdout.flush()
    print("\nload average after: %.2f %.2f %.2f" % os.getloadavg())
    for name, err in failed:
        print("\n%s: %s" % (name, err))
    print("\nfps: median of the rounds; ratio: median over the rounds of "
          "element fps / onnxruntime fps\n(above 1: the element is faster); "
          "'engine ms/bat': the element's engine time per batch\n(median), "
          "the rest of its time is packing, unpacking and buffers.")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
