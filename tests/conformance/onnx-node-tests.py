#!/usr/bin/env python3
"""Runs the ONNX backend node tests of the supported ops through the engine.

Usage: .venv/bin/python3 tests/conformance/onnx-node-tests.py
           --runner build/tests/conformance/cbi-run-tensor
           [--expected tests/conformance/expected-pass.txt] [--update]
           [-k SUBSTRING]

.venv/ is the project's virtual environment, with the pinned onnx and
numpy of scripts/requirements.txt: scripts/install-deps.sh makes it, and
the meson test (tests/conformance/meson.build) runs this with its Python.

The node tests are the cases the PyPI `onnx` package generates in
onnx.backend.test.case.node (the same ones its cmd_tools write out as
test_*/model.onnx plus .pb files; the wheel does not ship those folders, so
they are made here, in-process). Each test's data comes from numpy seeded
with 0, so every run sees the same numbers. Only the modules of the
supported ops are imported (the other modules cost seconds and add no test
made of supported ops only), and a test is kept when every node of its
model is a supported op (SUPPORTED_OPS), whatever its name: an *_expanded
variant made of supported ops is kept, one with another op is left out.

The engine takes one float32 input, so each test model is rewritten with
the onnx Python API before it runs: the graph's first input stays the
input, and the others (weights, biases, Reshape's shape, Resize's scales,
Clip's bounds...) become initializers holding that data set's values,
float32 ones as float initializers and int64 ones as int64 initializers,
and are removed from graph.input. onnx stamps each test with its op's
latest opset; one newer than the engine's (ENGINE_MAX_OPSET) is first taken
down to it by onnx's version converter, which does so only where the op
means the same there. The rewritten model goes to a temporary folder with
the input as raw float32, cbi-run-tensor runs it on the CPU backend, and
each output must have the expected shape and match within the tolerance of
the test's ops (TOLERANCES, default rtol 1e-3, atol 1e-5; numpy.isclose).

One line per test: `PASS name`, `FAIL name: reason` (a wrong shape or
value, an error or crash while running) or `SKIP name: reason` (an input
that is not float32, or int64 past the first, an output that is not
float32 but for ArgMax's int64 indices, which the engine gives as float32,
or the engine refusing the model at load or when planning it: its message
names what it does not support), then
`N passed, N failed, N skipped`. Exit status 77 (meson's "skipped") when
numpy or onnx cannot be imported.

--expected names the tests that must pass (one per line, `#` comments);
any of them that does not pass is a regression: they are listed and the
exit status is 1. Other failures are reported and do not fail the run.
--update rewrites that file with the tests passing now (sorted), keeping
the entries -k left out of this run.
"""
import argparse
import importlib
import os
import subprocess
import sys
import tempfile
import warnings
from concurrent.futures import ThreadPoolExecutor

try:
    import numpy as np
    import onnx
    from onnx import TensorProto, numpy_helper, version_converter
except ImportError as e:  # meson's "skipped": scripts/install-deps.sh has them
    print(f"SKIP all: {e} (bash scripts/install-deps.sh installs them in"
          " .venv/; run this with .venv/bin/python3)")
    sys.exit(77)

SUPPORTED_OPS = (
    "Conv", "ConvTranspose", "BatchNormalization", "InstanceNormalization",
    "Relu", "LeakyRelu", "PRelu", "Sigmoid", "Tanh", "Clip", "HardSigmoid",
    "HardSwish", "Elu", "Add", "Sub", "Mul", "Div", "MaxPool", "AveragePool",
    "GlobalAveragePool", "Concat", "Resize", "Upsample", "Pad",
    "DepthToSpace", "Reshape", "Transpose", "Flatten", "Gemm", "MatMul",
    "Softmax", "Identity", "Constant",
    # shapes computed at plan time, and the layout ops they feed
    "Shape", "Slice", "Gather", "Expand", "Squeeze", "Unsqueeze", "Cast",
    # ops on activations, issue 10
    "Erf", "Gelu", "Sqrt", "Exp", "Log", "Neg", "Abs", "Reciprocal", "Pow",
    "Min", "Max", "ReduceMean", "ReduceSum", "ReduceMax",
    "LayerNormalization", "ArgMax", "Split", "Where",
)

# the module of onnx.backend.test.case.node that exports an op's tests,
# where it is not the op's name in lower case
OP_MODULES = {
    "BatchNormalization": "batch_normalization",
    "InstanceNormalization": "instance_normalization",
}

# the newest opset cbi_onnx_load() takes (gst/infer/cbionnx.c): onnx stamps
# each test with the opset of its op's latest version, so a test of an op
# unchanged for float since then is converted down to it first
ENGINE_MAX_OPSET = 23

# (rtol, atol) per op; a test takes the loosest of its ops. Every passing
# test passes at the default, even at rtol 1e-5 and atol 1e-7, on oneDNN's
# CPU kernels; loosen an op here only with the reason beside it.
DEFAULT_TOLERANCE = (1e-3, 1e-5)
TOLERANCES = {}

# input and output element types the runner can hand over
FLOAT, INT64 = TensorProto.FLOAT, TensorProto.INT64

# ops whose int64 output the engine gives as float32 indices (exact below
# 2^24): such a graph output is compared with the int64 reference
INDEX_OPS = ("ArgMax",)


def collect(substring):
    """The node test cases made of supported ops only, by name."""
    np.random.seed(0)
    from onnx.backend.test.case import node
    if hasattr(node, "_NodeTestCases"):
        for op in SUPPORTED_OPS:
            importlib.import_module("onnx.backend.test.case.node."
                                    + OP_MODULES.get(op, op.lower()))
        cases = node._NodeTestCases
    else:  # another onnx layout: the slow way, every module
        cases = node.collect_testcases(None)
    supported = set(SUPPORTED_OPS)
    return sorted((c for c in cases
                   if all(n.op_type in supported for n in c.model.graph.node)
                   and (substring is None or substring in c.name)),
                  key=lambda c: c.name)


def elem_type(value_info):
    t = value_info.type
    return t.tensor_type.elem_type if t.HasField("tensor_type") else None


def type_name(value_info):
    e = elem_type(value_info)
    if e is None:
        return value_info.type.WhichOneof("value")
    return TensorProto.DataType.Name(e).lower()


def why_unfit(model):
    """Why the runner cannot hand this model to the engine, or None."""
    g = model.graph
    if not g.input:
        return "no graph input (the engine takes one)"
    if elem_type(g.input[0]) != FLOAT:
        return f"input {g.input[0].name} is {type_name(g.input[0])}, not float"
    for vi in g.input[1:]:
        if elem_type(vi) not in (FLOAT, INT64):
            return f"input {vi.name} is {type_name(vi)}, not float or int64"
    index_outputs = {o for n in g.node if n.op_type in INDEX_OPS
                     for o in n.output}
    for vi in g.output:
        if elem_type(vi) != FLOAT and not (elem_type(vi) == INT64
                                           and vi.name in index_outputs):
            return f"output {vi.name} is {type_name(vi)}, not float"
    return None


def as_array(value):
    if isinstance(value, TensorProto):
        return numpy_helper.to_array(value)
    return np.asarray(value)


def opset(model):
    return max((o.version for o in model.opset_import
                if o.domain in ("", "ai.onnx")), default=0)


def to_engine_opset(model):
    """@model at ENGINE_MAX_OPSET where it has a newer opset and onnx's
    version converter can take it down (no change of meaning), else as is
    (the engine then refuses it with the opset in its message)."""
    if opset(model) <= ENGINE_MAX_OPSET:
        return model
    try:
        return version_converter.convert_version(model, ENGINE_MAX_OPSET)
    except Exception:  # no adapter down: the op changed since
        return model


def fold_inputs(model, inputs):
    """The model with graph inputs 1.. turned into initializers of @inputs."""
    folded = onnx.ModelProto()
    folded.CopyFrom(model)
    g = folded.graph
    for vi, value in zip(g.input[1:], inputs[1:]):
        dtype = np.float32 if elem_type(vi) == FLOAT else np.int64
        g.initializer.append(
            numpy_helper.from_array(as_array(value).astype(dtype), vi.name))
    del g.input[1:]
    return folded


def tolerance(model):
    ops = {n.op_type for n in model.graph.node}
    tols = [TOLERANCES.get(op, DEFAULT_TOLERANCE) for op in ops]
    tols.append(DEFAULT_TOLERANCE)
    return max(t[0] for t in tols), max(t[1] for t in tols)


def compare(name, actual, expected, rtol, atol):
    """None when @actual matches @expected, else why not."""
    if actual.shape != expected.shape:
        return f"{name}: shape {list(actual.shape)}, expected " \
               f"{list(expected.shape)}"
    # a NaN or infinity where the reference has a number fails first: no
    # tolerance covers it
    broken = ~np.isfinite(actual) & np.isfinite(expected)
    if broken.any():
        first = tuple(int(i) for i in np.argwhere(broken)[0])
        return (f"{name}: {int(broken.sum())} NaN or infinite values where "
                f"the reference is finite; at {list(first)}: "
                f"{float(actual[first])}")
    close = np.isclose(actual, expected, rtol=rtol, atol=atol, equal_nan=True)
    if close.all():
        return None
    bad = np.argwhere(~close)
    first = tuple(int(i) for i in bad[0])
    err = np.abs(actual.astype(np.float64) - expected)
    return (f"{name}: {len(bad)} of {expected.size} values off, max abs "
            f"error {np.nanmax(err):.3g} (rtol {rtol:g}, atol {atol:g}); at "
            f"{list(first)}: {float(actual[first]):.6g}, expected "
            f"{float(expected[first]):.6g}")


def run_engine(runner, model, x, tmp):
    """Runs @model on @x: (status, outputs or message)."""
    model_path = os.path.join(tmp, "model.onnx")
    input_path = os.path.join(tmp, "input.bin")
    onnx.save(model, model_path)
    x.astype("<f4").tofile(input_path)
    # no plugin registry to scan or leaks tracer for a process that makes
    # no GStreamer objects; two OpenMP threads each (multi-threaded kernels
    # are still run) as the tests run side by side
    env = dict(os.environ, GST_REGISTRY_DISABLE="yes")
    env.pop("GST_TRACERS", None)
    env.setdefault("OMP_NUM_THREADS", "2")
    try:
        proc = subprocess.run(
            [*runner, model_path, input_path,
             ",".join(str(d) for d in x.shape), tmp],
            capture_output=True, text=True, timeout=60, env=env)
    except subprocess.TimeoutExpired:
        return "fail", "timed out after 60 s"
    message = proc.stderr.strip().replace("\n", " | ")
    if len(message) > 400:  # a sanitizer's report: rerun the test with -k
        message = message[:400] + "..."
    if proc.returncode == 3:
        return "skip", message
    if proc.returncode < 0:
        return "fail", f"killed by signal {-proc.returncode}: {message}"
    if proc.returncode != 0:
        return "fail", message or f"exit status {proc.returncode}"
    outputs = []
    for line in proc.stdout.splitlines():
        words = line.split()
        if not words or words[0] != "output":
            continue
        dims = [int(d) for d in words[2].split(",")] if len(words) > 2 else []
        data = np.fromfile(os.path.join(tmp, f"output_{words[1]}.bin"), "<f4")
        outputs.append(data.reshape(dims))
    return "ok", outputs


def run_case(runner, case):
    """(status, reason) of one test: pass, fail or skip."""
    reason = why_unfit(case.model)
    if reason:
        return "skip", reason
    model = to_engine_opset(case.model)
    rtol, atol = tolerance(model)
    names = [vi.name for vi in model.graph.output]
    with tempfile.TemporaryDirectory(prefix="cbi-conformance-") as tmp:
        for inputs, expected in case.data_sets:
            status, result = run_engine(
                runner, fold_inputs(model, inputs),
                as_array(inputs[0]).astype(np.float32), tmp)
            if status != "ok":
                return status, result
            if len(result) != len(expected):
                return "fail", f"{len(result)} outputs, expected " \
                               f"{len(expected)}"
            for name, actual, want in zip(names, result, expected):
                why = compare(name, actual, as_array(want), rtol, atol)
                if why:
                    return "fail", why
    return "pass", None


def read_expected(path):
    if not path or not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as f:
        return [line.split("#")[0].strip() for line in f
                if line.split("#")[0].strip()]


HEADER = ("# ONNX backend node tests that pass through the engine; the "
          "conformance\n# test fails when one of them does not. Regenerate "
          "with\n# tests/conformance/onnx-node-tests.py --runner "
          "BUILD/tests/conformance/cbi-run-tensor --update\n")


def write_expected(path, names, header=HEADER):
    with open(path, "w", encoding="utf-8") as f:
        f.write(header)
        for name in sorted(names):
            f.write(name + "\n")


def report(cases, results, expected_path, substring, update,
           header=HEADER):
    """Prints one line per test and the counts; returns the exit status:
    1 when a test listed in @expected_path does not pass (unless @update,
    which rewrites the list with the tests passing now)."""
    counts = {"pass": 0, "fail": 0, "skip": 0}
    passed = set()
    for case, (status, reason) in zip(cases, results):
        counts[status] += 1
        if status == "pass":
            passed.add(case.name)
            print(f"PASS {case.name}")
        else:
            print(f"{status.upper()} {case.name}: {reason}")

    expected = read_expected(expected_path)
    selected = [e for e in expected if substring is None or substring in e]
    regressions = [e for e in selected if e not in passed]
    if update:
        kept = set(expected) - set(selected)
        write_expected(expected_path, kept | passed, header)
        regressions = []
    collected = {c.name for c in cases}
    for name in regressions:
        why = "does not pass" if name in collected else \
            "is no node test of the supported ops"
        print(f"REGRESSION {name}: listed in {expected_path}, {why}")
    print(f"{counts['pass']} passed, {counts['fail']} failed, "
          f"{counts['skip']} skipped")
    return 1 if regressions else 0


def main():
    parser = argparse.ArgumentParser(
        description="Run the ONNX backend node tests through the engine.")
    parser.add_argument("--runner", required=True,
                        help="the cbi-run-tensor executable")
    parser.add_argument("--expected", help="the list of tests that must pass")
    parser.add_argument("--backend", choices=("cpu", "cuda"), default="cpu",
                        help="the engine backend the runner uses")
    parser.add_argument("--update", action="store_true",
                        help="rewrite --expected with the tests passing now")
    parser.add_argument("-k", dest="substring",
                        help="only the tests whose name contains SUBSTRING")
    args = parser.parse_args()
    if args.update and not args.expected:
        parser.error("--update needs --expected")

    with warnings.catch_warnings():  # the cases' own numpy overflows
        warnings.simplefilter("ignore")
        cases = collect(args.substring)
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        runner = [args.runner, f"--backend={args.backend}"]
        results = list(pool.map(lambda c: run_case(runner, c), cases))

    return report(cases, results, args.expected, args.substring,
                  args.update)


if __name__ == "__main__":
    sys.exit(main())
