#!/usr/bin/env python3
"""Where a batch's time goes on the CPU backend, against the CPU's peak.

Runs one model through the element (bench/model-throughput) with
ONEDNN_VERBOSE=1, finds the sequence of oneDNN primitives that repeats
every batch, and prints per primitive kind (convolutions split into 1x1,
depthwise and other) its time a batch, its GFLOP and GFLOP/s, and that
figure as a share of the CPU's float32 FMA peak (bench/fma-peak, or
--peak); with --precision bf16, the element's precision property, against
the CPU's bfloat16 peak (fma-peak --isa avx512bf16). Each primitive's time is its fastest call over the timed batches,
which a busy spell of a shared machine cannot move.

The last lines give two floors for a batch: the convolutions and matrix
products at the FMA peak with the depthwise convolutions (bound by memory,
not arithmetic) and everything else as measured, and the same with the
depthwise convolutions taking no time at all. A floor above the
time a target asks for says that the target needs fewer operations (or
lower precision), not faster code. The floors cover oneDNN's primitives;
the engine's own loops (the line "the engine's own") come on top.

  python3 bench/onednn-profile.py --model FILE [--width 320] [--height 240]
      [--batch 8] [--threads 2] [--batches 20] [--peak GFLOPS]
      [--precision fp32|bf16] [--input-mean ARRAY] [--input-std ARRAY]
      [--channel-order rgb|bgr] [--build-dir build] [--log FILE] [--top N]

--log reads a saved ONEDNN_VERBOSE=1 log of model-throughput instead of
running it. Needs a build with -Dbench=enabled; only Python's standard
library.
"""
import argparse
import collections
import os
import re
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CONV_SHAPE = re.compile(
    r"(?:g(?P<g>\d+))?mb(?P<mb>\d+)_ic(?P<ic>\d+)oc(?P<oc>\d+)"
    r"(?:_id\d+od(?P<od>\d+)kd(?P<kd>\d+)\D[^_]*)?"
    r"_ih\d+oh(?P<oh>\d+)kh(?P<kh>\d+)\D[^_]*"
    r"_iw\d+ow(?P<ow>\d+)kw(?P<kw>\d+)")


class Primitive:
    """One oneDNN call of a batch: its kind, implementation, shape."""

    def __init__(self, fields):
        self.kind = fields[3]
        self.impl = fields[4]
        self.shape = fields[-2]
        # formats and attributes tell apart calls of one shape
        self.key = ",".join(fields[3:-1])
        self.ms = float(fields[-1])

    def category(self):
        if self.kind != "convolution":
            return self.kind
        m = CONV_SHAPE.match(self.shape)
        if not m:
            return "convolution"
        if m.group("g") and int(m.group("g")) > 1:
            return "convolution depthwise"
        if int(m.group("kh")) == 1 and int(m.group("kw")) == 1:
            return "convolution 1x1"
        return "convolution other"

    def flop(self):
        """Multiply-adds times two; 0 for what is not a product."""
        if self.kind in ("convolution", "deconvolution"):
            m = CONV_SHAPE.match(self.shape)
            if not m:
                return 0
            d = {k: int(v) if v else 1 for k, v in m.groupdict().items()}
            return (2 * d["mb"] * (d["ic"] // d["g"]) * d["oc"] * d["od"]
                    * d["kd"] * d["oh"] * d["ow"] * d["kh"] * d["kw"])
        if self.kind in ("matmul", "inner_product"):
            # matmul: AxK:KxB:AxB (batch dims first); inner product:
            # mbN icK ocM
            dims = [list(map(int, part.split("x")))
                    for part in self.shape.split(":")]
            if self.kind == "matmul" and len(dims) == 3:
                src, wei, dst = dims
                count = 1
                for d in dst[:-1]:
                    count *= d
                return 2 * count * src[-1] * dst[-1]
            m = re.match(r"mb(\d+)ic(\d+)\D.*oc(\d+)", self.shape)
            if m:
                mb, ic, oc = map(int, m.groups())
                return 2 * mb * ic * oc
        return 0


# oneDNN 2.x writes "onednn_verbose,exec,cpu,KIND,IMPL,...", 3.x
# "onednn_verbose,v1,primitive,exec,cpu,KIND,IMPL,..." (and its descs as
# "src:f32::blocked:..." where 2.x has "src_f32::blocked:...")
EXEC_PREFIXES = ("onednn_verbose,exec,cpu,",
                 "onednn_verbose,v1,primitive,exec,cpu,")


def parse_exec(line):
    """The Primitive of an exec line of either version's log, else None."""
    line = line.strip()
    for prefix in EXEC_PREFIXES:
        if line.startswith(prefix):
            fields = ["onednn_verbose", "exec", "cpu"] + \
                line[len(prefix):].split(",")
            try:
                return Primitive(fields)
            except (ValueError, IndexError):
                return None
    return None


def exec_lines(text):
    return [p for p in map(parse_exec, text.splitlines()) if p is not None]


def batches_of(calls, wanted):
    """The last `wanted` batches: the shortest sequence of calls that the
    log ends with `wanted` times in a row (a network can hold runs of
    identical layers, so fewer repeats could take part of a batch for a
    batch). Empty when no sequence repeats that often."""
    keys = [c.key for c in calls]
    for period in range(1, len(keys) // wanted + 1):
        last = keys[-period:]
        if all(keys[len(keys) - (r + 1) * period:len(keys) - r * period]
               == last for r in range(1, wanted)):
            return [calls[len(calls) - (r + 1) * period:
                          len(calls) - r * period] for r in range(wanted)]
    return []


def fma_peak(build_dir, threads, precision="fp32"):
    exe = os.path.join(build_dir, "bench", "fma-peak")
    if not os.path.exists(exe):
        sys.exit("%s is missing: build with -Dbench=enabled on x86_64, or "
                 "give --peak" % exe)
    isa = ["--isa", "avx512bf16"] if precision == "bf16" else []
    out = subprocess.run([exe, "--threads", str(threads)] + isa, check=True,
                         capture_output=True, text=True).stdout
    m = re.search(r"gflops-%d-threads=([0-9.]+)" % threads, out)
    if not m:
        sys.exit("fma-peak printed no figure: %s" % out)
    return float(m.group(1)), out.strip()


def run_model(args):
    exe = os.path.join(args.build_dir, "bench", "model-throughput")
    if not os.path.exists(exe):
        sys.exit("%s is missing: build with -Dbench=enabled" % exe)
    env = dict(os.environ, ONEDNN_VERBOSE="1",
               GST_PLUGIN_PATH=os.path.join(args.build_dir, "gst", "plugin"))
    cmd = [exe, "--model", args.model, "--width", str(args.width),
           "--height", str(args.height), "--batch", str(args.batch),
           "--threads", str(args.threads), "--batches", str(args.batches),
           "--backend", "cpu", "--precision", args.precision]
    for k in ("input_mean", "input_std", "channel_order"):
        if getattr(args, k):
            cmd += ["--" + k.replace("_", "-"), getattr(args, k)]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit("model-throughput failed (%d): %s" %
                 (proc.returncode, proc.stderr.strip()[-2000:]))
    return proc.stdout + proc.stderr


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", help="ONNX model (with --log: only a label)")
    ap.add_argument("--width", type=int, default=320)
    ap.add_argument("--height", type=int, default=240)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--batches", type=int, default=20)
    ap.add_argument("--peak", type=float,
                    help="GFLOP/s of the FMA peak (default: run fma-peak)")
    ap.add_argument("--precision", default="fp32", choices=["fp32", "bf16"],
                    help="the element's precision, and the peak to compare "
                    "with (fp32)")
    # the model's normalisation: the accuracy check, and so which bf16
    # plan runs, depends on it
    ap.add_argument("--input-mean", help="the element's input-mean, a "
                    "GStreamer array: \"<0.5, 0.5, 0.5>\"")
    ap.add_argument("--input-std", help="the element's input-std, likewise")
    ap.add_argument("--channel-order", help="the element's channel-order")
    ap.add_argument("--build-dir", default=os.path.join(ROOT, "build"))
    ap.add_argument("--log", help="a saved ONEDNN_VERBOSE=1 log to read")
    ap.add_argument("--top", type=int, default=10,
                    help="slowest primitives to list (10)")
    args = ap.parse_args()
    if not args.log and not args.model:
        ap.error("give --model, or --log")
    if args.batches < 2:
        ap.error("--batches must be at least 2")

    if args.log:
        with open(args.log, encoding="utf-8", errors="replace") as f:
            text = f.read()
    else:
        text = run_model(args)
    engine = re.search(r"engine-ms-median=([0-9.]+)", text)
    batch_ms = re.search(r"batch-ms-median=([0-9.]+)", text)
    runs = batches_of(exec_lines(text), args.batches)
    if not runs:
        sys.exit("no sequence of oneDNN calls repeats %d times at the end of "
                 "the log: was it made with ONEDNN_VERBOSE=1 and at least "
                 "--batches timed batches?" % args.batches)
    if args.peak:
        peak, peak_line = args.peak, "given: %.1f GFLOP/s" % args.peak
    else:
        peak, peak_line = fma_peak(args.build_dir, args.threads,
                                   args.precision)

    # fastest call of each primitive of the batch over the runs
    fastest = [min(run[i].ms for run in runs) for i in range(len(runs[0]))]
    calls = runs[0]
    cat_ms = collections.Counter()
    cat_flop = collections.Counter()
    counts = collections.Counter()
    for call, ms in zip(calls, fastest):
        c = call.category()
        cat_ms[c] += ms
        cat_flop[c] += call.flop()
        counts[c] += 1
    total = sum(fastest)

    print("model: %s  batch %d  %dx%d  threads %d  (%d batches read)" %
          (args.model or args.log, args.batch, args.width, args.height,
           args.threads, len(runs)))
    print("fma peak: %s" % peak_line)
    if engine:
        print("element: batch %s ms, engine %s ms (median, with verbose "
              "logging on)" % (batch_ms.group(1) if batch_ms else "?",
                               engine.group(1)))
    print()
    print("%-24s %6s %9s %6s %8s %8s %6s" %
          ("primitive", "calls", "ms/batch", "share", "GFLOP", "GFLOP/s",
           "peak"))
    for c, ms in sorted(cat_ms.items(), key=lambda kv: -kv[1]):
        gflop = cat_flop[c] / 1e9
        rate = gflop / (ms / 1e3) if ms > 0 and gflop else 0.0
        print("%-24s %6d %9.3f %5.1f%% %8.3f %8s %6s" %
              (c, counts[c], ms, 100 * ms / total, gflop,
               "%.1f" % rate if rate else "-",
               "%.0f%%" % (100 * rate / peak) if rate else "-"))
    print("%-24s %6d %9.3f" % ("all oneDNN", len(calls), total))
    if engine:
        # the engine's own loops (InstanceNormalization, packing of
        # tensors and the like) and the calls between primitives; medians
        # on both sides, as the engine's figure is one
        median = statistics.median(sum(c.ms for c in run) for run in runs)
        print("%-24s %6s %9.3f  (engine median %.3f less oneDNN's median "
              "batch %.3f)" % ("the engine's own", "",
                               float(engine.group(1)) - median,
                               float(engine.group(1)), median))

    print()
    print("slowest primitives (fastest call of each):")
    order = sorted(range(len(calls)), key=lambda i: -fastest[i])
    for i in order[:args.top]:
        flop = calls[i].flop()
        rate = flop / 1e9 / (fastest[i] / 1e3) if fastest[i] > 0 else 0
        print("  %3d %-22s %-26s %7.3f ms %s %s" %
              (i, calls[i].category(), calls[i].impl, fastest[i],
               "%6.1f GFLOP/s" % rate if flop else "%13s" % "-",
               calls[i].shape))

    # depthwise convolutions are bound by memory, not by multiply-adds:
    # the floor keeps their measured time, then drops it
    dw = "convolution depthwise"
    dense_gflop = sum(f for c, f in cat_flop.items() if c != dw) / 1e9
    at_peak = dense_gflop / peak * 1e3
    rest = sum(ms for c, ms in cat_ms.items() if c == dw or not cat_flop[c])
    dw_ms = cat_ms.get(dw, 0.0)
    print()
    print("floor, every other convolution and product at the FMA peak, "
          "the rest as measured: %.2f ms a batch (oneDNN now %.2f)" %
          (at_peak + rest, total))
    if dw_ms:
        print("floor, as above with the depthwise convolutions free: "
              "%.2f ms a batch" % (at_peak + rest - dw_ms))

if __name__ == "__main__":
    main()
