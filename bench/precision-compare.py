#!/usr/bin/env python3
"""The element in bf16 against itself in fp32 and against onnxruntime, in
one run.

For each model, each round runs bench/model-throughput with precision=fp32,
then with precision=bf16, then onnxruntime in float32 (the order turns
each round, so a busy spell of a shared machine hits all three), with the
options of bench/onnxruntime-compare.py. Prints per model the medians of
the rounds' frames per second, the medians of the rounds' ratios bf16 /
fp32 and bf16 / onnxruntime, the ratio of the engine's times a batch
(model-throughput's engine-ms-median: the median over the rounds of each
round's fp32 time over its bf16 time; it leaves out the pipeline around
the engine, whose share is the same in both precisions, and of the
three figures it moves least when a shared machine has a busy spell),
and the warm-up's accuracy check of bf16:
the worst output's largest error relative to its largest float32
magnitude (the element's precision-relative-error, on its test frames,
or with --check-location on the first frames of that image or clip).

  .venv/bin/python3 bench/precision-compare.py --model FILE [--model ...]
      [--width 320] [--height 240] [--batch 8] [--threads NCPU]
      [--batches 10] [--warmup 2] [--rounds 3] [--precision bf16]
      [--tolerance 0.05] [--check-location FILE]

--tolerance is the element's precision-tolerance: a model whose error
on the warm-up's test frames is past it fails (the script says so); a
larger one times it all the same. --check-location is the element's
precision-check-location: the check then runs on pictures like the
stream's (text for a text recogniser), as a user would deploy it; the
timed frames are the same either way.

A CPU without bfloat16 arithmetic (no AVX512-BF16 or AMX) refuses bf16:
the script says so and exits with status 2. Needs onnxruntime and numpy
(the project's .venv) and a build with -Dbench=enabled.
"""
import argparse
import importlib.util
import os
import shlex
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def load_compare():
    spec = importlib.util.spec_from_file_location(
        "onnxruntime_compare", os.path.join(HERE, "onnxruntime-compare.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main():
    cmp = load_compare()
    ap = argparse.ArgumentParser(
        description="cudabatchinfer bf16 against fp32 and onnxruntime")
    ap.add_argument("--model", action="append", required=True)
    cmp.add_run_arguments(ap)
    ap.add_argument("--precision", default="bf16",
                    help="the lower precision to time (bf16)")
    ap.add_argument("--tolerance", type=float, default=0.05,
                    help="the element's precision-tolerance (0.05)")
    ap.add_argument("--check-location",
                    help="the element's precision-check-location: an image "
                    "or clip to check the lower precision on")
    ap.add_argument("--build-dir", default="build")
    args = ap.parse_args()
    plugin_path, helper = cmp.checked_paths(ap, args)

    import onnxruntime
    print("batch %d, %dx%d frames, %d threads, %d timed batches after %d, "
          "median of %d rounds; onnxruntime %s"
          % (args.batch, args.width, args.height, args.threads, args.batches,
             args.warmup, args.rounds, onnxruntime.__version__))
    print("command: " + " ".join(shlex.quote(a) for a in sys.argv))
    print("load average before: %.2f %.2f %.2f" % os.getloadavg())
    print()
    low = args.precision
    head = "%-32s %9s %9s %9s %9s %9s %9s %10s" % (
        "model", "fp32 fps", low + " fps", "ort fps", low + "/fp32",
        low + "/ort", "engine", "rel error")
    print(head)
    print("-" * len(head))
    failed = []
    for model in args.model:
        name = os.path.splitext(os.path.basename(model))[0][:32]
        fp32, lowp, ort, errors = [], [], [], []
        engine = {"fp32": [], low: []}
        try:
            for r in range(args.rounds):
                order = [("fp32", fp32), (low, lowp), ("ort", ort)]
                order = order[r % 3:] + order[:r % 3]
                for which, into in order:
                    if which == "ort":
                        into.append(cmp.run_onnxruntime(
                            args, cmp.in_root(model))[0])
                        continue
                    f = cmp.run_element(args, cmp.in_root(model),
                                        plugin_path, helper,
                                        precision=which,
                                        tolerance=args.tolerance,
                                        check_location=args.check_location)
                    if which != "fp32" and f.get("precision") != which:
                        raise RuntimeError("ran in %s, not %s"
                                           % (f.get("precision"), which))
                    into.append(float(f["fps"]))
                    engine[which].append(float(f["engine-ms-median"]))
                    if which != "fp32":
                        errors.append(float(f["precision-relative-error"]))
        except RuntimeError as e:
            failed.append((name, str(e)))
            print("%-32s failed (below)" % name)
            continue
        print("%-32s %9.1f %9.1f %9.1f %9.2f %9.2f %9.2f %10.4f" % (
            name, statistics.median(fp32), statistics.median(lowp),
            statistics.median(ort),
            statistics.median(b / f for b, f in zip(lowp, fp32)),
            statistics.median(b / o for b, o in zip(lowp, ort)),
            statistics.median(f / b for f, b in zip(engine["fp32"],
                                                    engine[low])),
            max(errors)))
        sys.stdout.flush()
    print("\nload average after: %.2f %.2f %.2f" % os.getloadavg())
    for name, err in failed:
        print("\n%s: %s" % (name, err))
    print("\nratios: medians over the rounds of each round's ratio; "
          "engine: fp32's engine time a batch over %s's;\nrel error: the "
          "warm-up's accuracy check, the worst output's " % low +
          "largest error over its largest float32 magnitude (the worst "
          "round).")
    if failed and all("bfloat16" in e for _, e in failed):
        return 2
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
