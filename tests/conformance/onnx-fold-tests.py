#!/usr/bin/env python3
"""Runs the ONNX backend node tests of the ops the importer folds, on
constants, through the engine: a check of the folding evaluator
(gst/infer/onnx/fold.c, foldmath.c) against ONNX's own cases.

Usage: .venv/bin/python3 tests/conformance/onnx-fold-tests.py
           --runner build/tests/conformance/cbi-run-tensor
           [--expected tests/conformance/expected-fold-pass.txt] [--update]
           [-k SUBSTRING]

The cases are those onnx-node-tests.py makes (the same module, the same
seeded data), kept when every node is an op that folds (FOLD_OPS) and the
test has one output. Each model is rewritten so that the engine folds the
whole test at load and still has something to run: every graph input
becomes an initializer holding the test's values (in their own type), the
output goes through Cast to float32 (folded too) and is added to a new
float32 input `x` of the output's shape (of [1] for a scalar), fed with
zeros: the engine's output is then exactly the folded value. The expected
output, cast to float32 the same way, must match (rtol 1e-5, atol 1e-6:
folding computes float32 as onnxruntime does).

One line per test: PASS, FAIL (a wrong value or shape, a crash) or SKIP (a
type the importer does not read, an empty output, a model the engine
refuses: its message says why), then `N passed, N failed, N skipped`. As
for onnx-node-tests.py, --expected names the tests that must pass (a
regression fails the run, exit status 1) and --update rewrites it; exit
status 77 when numpy or onnx cannot be imported.
"""
import argparse
import importlib
import importlib.util
import os
import sys
import tempfile
import warnings
from concurrent.futures import ThreadPoolExecutor

try:
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
except ImportError as e:
    print(f"SKIP all: {e} (bash scripts/install-deps.sh installs them in"
          " .venv/; run this with .venv/bin/python3)")
    sys.exit(77)

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location(
    "onnx_node_tests", os.path.join(HERE, "onnx-node-tests.py"))
nt = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(nt)

# the ops gst/infer/onnx/fold.c folds, and the module of
# onnx.backend.test.case.node that has each one's tests
FOLD_OPS = {
    "Constant": "constant", "Identity": "identity", "Cast": "cast",
    "Reshape": "reshape", "Transpose": "transpose", "Unsqueeze": "unsqueeze",
    "Squeeze": "squeeze", "Concat": "concat", "Gather": "gather",
    "Slice": "slice", "Shape": "shape", "Expand": "expand",
    "ConstantOfShape": "constantofshape", "Range": "rangeop", "Add": "add",
    "Sub": "sub", "Mul": "mul", "Div": "div", "Pow": "pow", "Sqrt": "sqrt",
    "Neg": "neg", "Equal": "equal", "Where": "where", "Mod": "mod",
    "Not": "not_", "ScatterND": "scatternd",
    "DequantizeLinear": "dequantizelinear",
    "QuantizeLinear": "quantizelinear",
}

RTOL, ATOL = 1e-5, 1e-6

HEADER = ("# ONNX backend node tests of the folded ops that pass folded at "
          "load;\n# the fold conformance test fails when one does not. "
          "Regenerate with\n# tests/conformance/onnx-fold-tests.py --runner "
          "BUILD/tests/conformance/cbi-run-tensor --update\n")


def collect(substring):
    np.random.seed(0)
    from onnx.backend.test.case import node
    for module in sorted(set(FOLD_OPS.values())):
        importlib.import_module("onnx.backend.test.case.node." + module)
    return sorted((c for c in node._NodeTestCases
                   if all(n.op_type in FOLD_OPS for n in c.model.graph.node)
                   and len(c.model.graph.output) == 1
                   and (substring is None or substring in c.name)),
                  key=lambda c: c.name)


def folded_model(model, inputs, out_shape):
    """@model with its inputs as initializers and its output added to a
    float32 input x of @out_shape."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    g = m.graph
    for vi, value in zip(list(g.input), inputs):
        g.initializer.append(numpy_helper.from_array(nt.as_array(value),
                                                     vi.name))
    del g.input[:]
    out = g.output[0].name
    g.node.append(helper.make_node("Cast", [out], ["fold_cast"],
                                   name="fold_cast", to=TensorProto.FLOAT))
    g.node.append(helper.make_node("Add", ["fold_x", "fold_cast"],
                                   ["fold_out"], name="fold_add"))
    g.input.append(helper.make_tensor_value_info("fold_x", TensorProto.FLOAT,
                                                 list(out_shape)))
    del g.output[:]
    g.output.append(helper.make_tensor_value_info(
        "fold_out", TensorProto.FLOAT, list(out_shape)))
    return m


def run_case(runner, case):
    model = nt.to_engine_opset(case.model)
    with tempfile.TemporaryDirectory(prefix="cbi-fold-") as tmp:
        for inputs, expected in case.data_sets:
            want = nt.as_array(expected[0])
            if want.size == 0:
                return "skip", "an empty output"
            if want.dtype.kind not in "fiub":
                return "skip", f"an output of type {want.dtype}"
            shape = want.shape or (1,)
            status, result = nt.run_engine(
                runner, folded_model(model, inputs, shape),
                np.zeros(shape, np.float32), tmp)
            if status != "ok":
                return status, result
            why = nt.compare("output", result[0],
                             want.astype(np.float32).reshape(shape),
                             RTOL, ATOL)
            if why:
                return "fail", why
    return "pass", None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runner", required=True)
    parser.add_argument("--expected")
    parser.add_argument("--update", action="store_true")
    parser.add_argument("-k", dest="substring")
    args = parser.parse_args()
    if args.update and not args.expected:
        parser.error("--update needs --expected")

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cases = collect(args.substring)
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        results = list(pool.map(lambda c: run_case([args.runner], c), cases))

    return nt.report(cases, results, args.expected, args.substring,
                     args.update, HEADER)


if __name__ == "__main__":
    sys.exit(main())
