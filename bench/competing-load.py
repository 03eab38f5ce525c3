#!/usr/bin/env python3
"""Frames per second with and without a competing busy process, in one run.

In a pipeline the element shares the cores with the decoder, converters
and encoder. This runs each model through the element as shipped (its
threads property 0: the cores the process may use, and one thread while
other processes keep them busy), through the element on a fixed team of
--threads (threads=N: the element's behaviour before it ran a batch on one
thread under load), the same team with OpenMP's default idle spinning
set explicitly (GOMP_SPINCOUNT=300000, what libgomp does when nothing sets
its wait policy, and what the element now leaves in place; it shortened
the spin to 3000 rounds before it ran the batches on one thread in one
region), the same team with no spin at all (OMP_WAIT_POLICY=passive), and through
onnxruntime (--threads intra-op threads), each first on an idle machine and
then with one busy process (a Python loop) competing for the cores, and
prints the frames per second side by side with three ratios:

- loaded element / loaded onnxruntime: at least 1 is the target (the
  element keeps at least what onnxruntime keeps under the same load);
- idle element / idle spinning element: what the element's watch of the
  cores (and --element-spin, where given) costs when nothing competes
  (the target: no more than 5 % lost, a ratio >= 0.95);
- the same, from the two median batch times (idle spinning / idle
  element): the steady cost of a batch, which a busy spell of a shared
  machine during one run moves less than it moves that run's fps.

Each figure is the median of --rounds runs; within a round the runs go
back to back, in an order that alternates, so a busy spell of a shared
machine hits all of them. The busy process ends with the run (and by
itself after 10 minutes in any case).

  .venv/bin/python3 bench/competing-load.py [--model FILE]... [--batch 8]
      [--width 320] [--height 240] [--threads NCPU] [--batches 10]
      [--warmup 2] [--rounds 3] [--build-dir build] [--element-spin ROUNDS]
      [--idle-only]

Same helper and options as bench/onnxruntime-compare.py (which it uses);
needs the project's .venv (scripts/install-deps.sh) and a build with
-Dbench=enabled.
"""
import contextlib
import importlib.util
import math
import os
import shlex
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location(
    "onnxruntime_compare", os.path.join(HERE, "onnxruntime-compare.py"))
compare = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(compare)

# the element's variants: extra environment, and its threads property
# (None: --threads)
ELEMENTS = {"element": (None, 0), "team": (None, None),
            "spinning": ({"GOMP_SPINCOUNT": "300000"}, None),
            "passive": ({"OMP_WAIT_POLICY": "passive"}, None)}
WHO = ("element", "team", "spinning", "passive", "ort")
BUSY = ("import time\n"
        "end = time.monotonic() + 600\n"
        "while time.monotonic() < end:\n"
        "    pass\n")


@contextlib.contextmanager
def competing_load(on):
    """One busy process for the duration, or nothing."""
    if not on:
        yield
        return
    p = subprocess.Popen([sys.executable, "-c", BUSY])
    try:
        yield
    finally:
        p.kill()
        p.wait()


def measure(args, model, plugin_path, helper):
    runs = {(who, load): [] for who in WHO for load in (False, True)}
    # the element's median batch time, idle: one slow batch (a busy spell
    # of a shared machine) moves a run's fps, not its median batch
    batch_ms = {who: [] for who in ELEMENTS}
    loads = (False,) if args.idle_only else (False, True)
    who_runs = ("element", "spinning") if args.idle_only else WHO
    for r in range(args.rounds):
        for load in loads:
            order = list(who_runs)
            if r % 2:
                order.reverse()
            with competing_load(load):
                for who in order:
                    if who == "ort":
                        fps, _ = compare.run_onnxruntime(args, model)
                    else:
                        env, threads = ELEMENTS[who]
                        if who == "element" and args.element_spin:
                            env = {"GOMP_SPINCOUNT": args.element_spin}
                        fields = compare.run_element(
                            args, model, plugin_path, helper, env, threads)
                        fps = float(fields["fps"])
                        if not load:
                            batch_ms[who].append(
                                float(fields["batch-ms-median"]))
                    runs[(who, load)].append(fps)
        if args.verbose:
            print("  round %d: %s" % (r, ", ".join(
                "%s%s %.1f" % (w, " loaded" if l else "", v[-1])
                for (w, l), v in runs.items() if v)), flush=True)
    f = {k: statistics.median(v) if v else math.nan for k, v in runs.items()}
    f.update({(who, "batch-ms"): statistics.median(v) if v else math.nan
              for who, v in batch_ms.items()})
    return f


def main():
    ap = compare.argparse.ArgumentParser(
        description="fps with and without a competing busy process")
    ap.add_argument("--model", action="append",
                    help="ONNX model (repeatable; default: the test models)")
    compare.add_run_arguments(ap)
    ap.add_argument("--build-dir", default="build")
    ap.add_argument("--element-spin", metavar="ROUNDS",
                    help="GOMP_SPINCOUNT for the element as shipped (elem), "
                    "to try another value than OpenMP's default")
    ap.add_argument("--idle-only", action="store_true",
                    help="only the idle runs of the element as shipped and "
                    "of the spinning team: the idle ratios, with more rounds "
                    "in the same time")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    plugin_path, helper = compare.checked_paths(ap, args)
    models = args.model or [
        os.path.join(compare.ROOT, "tests", "models", m + ".onnx")
        for m in compare.DEFAULT_MODELS]

    print("batch %d, %dx%d frames, %d threads, %d timed batches after %d, "
          "median of %d rounds, one competing busy process when loaded"
          % (args.batch, args.width, args.height, args.threads, args.batches,
             args.warmup, args.rounds))
    print("command: " + " ".join(shlex.quote(a) for a in sys.argv))
    print("load average before: %.2f %.2f %.2f" % os.getloadavg())
    print()
    cols = ("elem", "team", "spin", "pass", "ort")
    head = "%-11s " % "model" + " ".join(
        "%7s %7s" % (c, c + "+L") for c in cols) + " %10s %9s %9s" % (
        "elem/ort+L", "elem/spin", "spin/elem")
    print(head)
    print("-" * len(head))
    for model in models:
        name = os.path.splitext(os.path.basename(model))[0]
        f = measure(args, compare.in_root(model), plugin_path, helper)
        print("%-11s " % name[:11] + " ".join(
            "%7.1f %7.1f" % (f[(w, False)], f[(w, True)]) for w in WHO)
            + " %10.2f %9.2f %9.2f" % (
                f[("element", True)] / f[("ort", True)],
                f[("element", False)] / f[("spinning", False)],
                f[("spinning", "batch-ms")] / f[("element", "batch-ms")]))
        sys.stdout.flush()
    print("\nload average after: %.2f %.2f %.2f" % os.getloadavg())
    print("\nfps, median of the rounds. elem: the element as shipped "
          "(threads 0; idle OpenMP\nthreads spin %s rounds, then sleep); "
          % (args.element_spin or "OpenMP's default 300000") +
          "team: threads --threads; spin: that team\nwith libgomp's default "
          "spin (300000); pass: that team with\nOMP_WAIT_POLICY=passive (no "
          "spin); ort: onnxruntime; +L: one busy process\ncompeting.\n"
          "elem/ort+L: loaded element / loaded onnxruntime (target >= 1);"
          "\nelem/spin: idle element / idle spinning element (target >= "
          "0.95);\nspin/elem: the same ratio from their median batch times "
          "(idle), which a\nbusy spell of a shared machine during one run "
          "moves less.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
