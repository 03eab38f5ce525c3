#!/usr/bin/env python3
"""The ops test models on a backend, against onnxruntime's outputs.

generate.py writes, for each model of its OPS_MODELS and for gather-long.onnx,
a random input (STEM.tensor.in.bin) and what onnxruntime computes from it
(STEM.tensor.out.bin). The C suite (tests/check/infer/onnx.c) checks them on
the CPU backend; this runs them through the engine's cbi-run-tensor on the
backend asked for, CUDA where the GPU check has a GPU, and compares: NaN or
Inf first, then the max error over max |reference| (at most --tolerance).
It prints one line per model and `N passed, N failed, N skipped` (skipped:
the backend has no device here); exit status 1 when one failed, 2 when the
runner could not be started.

  check-references.py --runner build/tests/conformance/cbi-run-tensor \\
      [--backend cuda] [--tolerance 1e-4] [-k STEM]

Needs numpy and onnx (generate.py imports it for the list), not onnxruntime:
the references are in the tree.
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import generate  # noqa: E402  (the list of models and their input shapes)


class NoDevice(Exception):
    """the backend cannot run here at all"""


def check(runner, backend, stem, shape, tolerance):
    """None when the engine's output matches, else what went wrong."""
    x = os.path.join(HERE, stem + ".tensor.in.bin")
    ref = np.fromfile(os.path.join(HERE, stem + ".tensor.out.bin"),
                      dtype="<f4")
    with tempfile.TemporaryDirectory(prefix="cbi-ref-") as out:
        p = subprocess.run(
            [runner, "--backend=" + backend,
             os.path.join(HERE, stem + ".onnx"), x,
             ",".join(str(d) for d in shape), out],
            capture_output=True, text=True)
        if p.returncode == 3 and "no usable CUDA device" in p.stderr:
            raise NoDevice(p.stderr.strip())
        if p.returncode != 0:
            return "exit status %d: %s" % (
                p.returncode, (p.stderr or p.stdout).strip()[-300:])
        y = np.fromfile(os.path.join(out, "output_0.bin"), dtype="<f4")
    if y.size != ref.size:
        return "%d values, onnxruntime has %d" % (y.size, ref.size)
    if not np.all(np.isfinite(y)):
        return "NaN or Inf in the output"
    scale = float(np.max(np.abs(ref)))
    err = float(np.max(np.abs(y - ref))) / scale if scale > 0 else float(
        np.max(np.abs(y)))
    if err > tolerance:
        return "max error / max |reference| %.1e > %.0e" % (err, tolerance)
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runner", required=True,
                    help="cbi-run-tensor (tests/conformance)")
    ap.add_argument("--backend", default="cpu", choices=("cpu", "cuda"))
    ap.add_argument("--tolerance", type=float, default=1e-4)
    ap.add_argument("-k", dest="only", help="models whose name has this")
    args = ap.parse_args()
    if not os.access(args.runner, os.X_OK):
        print("no runner %s" % args.runner, file=sys.stderr)
        return 2

    passed = failed = skipped = 0
    # the ops models, and the Gather of 80 indices computed from a width
    # (past the 64 the CUDA kernel takes as a parameter)
    models = [(stem, shape) for stem, _make, _seed, shape
              in generate.OPS_MODELS] + [("gather-long", (1, 3, 2, 80))]
    for stem, shape in models:
        if args.only and args.only not in stem:
            continue
        try:
            why = check(args.runner, args.backend, stem, shape,
                        args.tolerance)
        except NoDevice as e:
            print("SKIP %s (%s): %s" % (stem, args.backend, e))
            skipped += 1
            continue
        if why is None:
            print("PASS %s (%s)" % (stem, args.backend))
            passed += 1
        else:
            print("FAIL %s (%s): %s" % (stem, args.backend, why))
            failed += 1
    print("%d passed, %d failed, %d skipped" % (passed, failed, skipped))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
