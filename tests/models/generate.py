#!/usr/bin/env python3
"""Writes the tiny ONNX models the tests load, and the reference results.

From the repository root: .venv/bin/python3 tests/models/generate.py (the
project's virtual environment, which scripts/install-deps.sh makes with the
onnx, numpy and onnxruntime pinned in scripts/requirements.txt; the files
go next to this script from any working directory). Weights are random
with a fixed seed, so the files are the same on every run; the tests use
the committed files and never run this script.

- conv-relu.onnx: image -> Conv 3x3 (3->8, pads 1) -> Relu -> Conv 1x1
  (8->3, its bias from a Constant node) -> output, symbolic N, H and W.
  Weights as raw data, the first bias as float_data.
- conv-relu.in.bin / conv-relu.out.bin: one 8x6 RGB frame and the model's
  output for it as bytes, computed by onnx's reference evaluator on
  frame / 255 and mapped back with round(clip(y, 0, 1) * 255).
- conv-relu.norm.out.bin: conv-relu.onnx on the same frame taken as BGR
  with mean (0.5, 0.4, 0.3) and std (0.2, 0.25, 0.3) in the model's
  channel order, mapped back the inverse way: what the element's
  input-mean, input-std and channel-order=bgr must give.
- conv-fixed.onnx: conv-relu.onnx with a fixed 8x6 input size.
- identity-fixed.onnx: a 1x1 Conv with identity weights and a fixed 8x8
  input size: what goes in comes out, so the element's scaling of frames
  to the model's size and back can be checked by their bytes.
- slow-matmul.onnx: a fixed 32x24 image, flattened, times a 2304 x 2048
  matrix made at load (the outer product of two constant vectors, Mul,
  folded): 4.7 million multiply-adds a frame for a file of 17 KB, and a
  tensor output (N x 2048). The overload tests run it; their pace comes
  from the pushes they hold, not from its speed, which the CPU sets.
- eltwise.onnx, eltwise.in.bin, eltwise.out.bin: a Conv followed by every
  element-wise op the engine takes (LeakyRelu fused into the Conv, Sigmoid
  and Tanh on one tensor, their Add, HardSigmoid, HardSwish, Elu, Clip with
  constant bounds, Identity), then a 1x1 Conv; reference as above.
- conv-bn.onnx, conv-bn.in.bin, conv-bn.out.bin: Conv (no bias) ->
  BatchNormalization -> Relu -> Conv, as PyTorch exports them in eval mode;
  the importer folds the BatchNormalization into the first Conv.
- binary.onnx, binary.in.bin, binary.out.bin: Conv, then Mul by a
  per-channel constant given first, Sub of a scalar, Div by a [1,C,1,1]
  constant, Add of that and the Conv's output, and a 1x1 Conv.
- unet.onnx, unet.in.bin, unet.out.bin: a small U-Net: Conv, Relu,
  MaxPool 2x2, Conv, Relu, Resize x2 nearest; the pooled map Resized x2
  linear (Upsample-style constant scales); Concat of the three along the
  channels; AveragePool 3x3 (pads 1); a 1x1 Conv.
- upconv.onnx, upconv.in.bin, upconv.out.bin: Conv stride 2, Relu,
  ConvTranspose stride 2 (pads 1, output_padding 1) back to the frame size,
  then a 1x1 Conv, as in style-transfer decoders.
- pads.onnx, pads.in.bin, pads.out.bin: Pad reflect 1 then Conv 3x3
  without padding (the style-transfer pattern), Relu, Pad edge 2 and Conv
  5x5, Pad constant 0.25 and Conv 3x3; pads as int64 constants.
- style.onnx, style.in.bin, style.out.bin: a style-transfer-like net:
  reflect Pad + Conv, InstanceNormalization, Relu, a stride-2 Conv and
  InstanceNormalization, a residual block (Pad + Conv + InstanceNorm + Add),
  ConvTranspose back up, reflect Pad + Conv to 3 channels, Sigmoid.
- style.weights.npz: the style net's float weights by initializer name, for
  bench/pytorch-style.py on a GPU machine without the onnx package.
- sub-from-constant.onnx: binary.onnx with its Sub's constant first.
- bad-bn-mean-size.onnx: a BatchNormalization of 3 channels with 2 means.
- bad-pool-dilation.onnx: a MaxPool with a dilation of 0.
- bad-lstm-state-read.onnx, bad-lstm-sequence-lens.onnx: ops-lstm.onnx
  with its last step's h read by another node, and with sequence lengths.
- bad-dynquant-read.onnx: a DynamicQuantizeLinear's 8-bit output read by
  a Cast, outside onnxruntime's quantize_dynamic() chain.
- nan-weights.onnx: a Conv 3 -> 3 with one NaN weight, its output's
  channel 1 NaN (a warning at the element's warm-up).
- bf16-cancel.onnx: a 1x1 Conv 3 -> 16 adding 100 to the image, a 3x3
  Conv 16 -> 64 passing it on, a 1x1 Conv 64 -> 3 taking the 100 off
  again: float32 gives the image back, bfloat16 (8 bits of mantissa:
  steps of 0.5 between 64 and 128) rounds 100 + x to halves, errors of up
  to a quarter of the output's range (the element's accuracy check
  refuses it).
- bf16-narrow.onnx: the same shift by 100 after a 3x3 Conv and an Add
  doubling its output, in 1x1 Convs 16 -> 16 -> 3 that the CPU's narrow
  bfloat16 plan leaves float32 and its wide one does not: the check
  refuses the wide plan and takes the narrow one.
- conv-external.onnx + conv-external.bin: the same model with its first
  weights in an external data file.
- bad-*.onnx: one defect each, named by the file (bad-resize-float-sizes:
  a Resize whose sizes input is float, which the fuzzer found leaking).
- superres.onnx: a x2 super-resolution net: Conv 3x3 (3->16), Relu,
  Conv 3x3 (16->12), DepthToSpace 2 (CRD, as PyTorch's PixelShuffle
  exports it), Sigmoid: input "input" [N, 3, H, W], output [N, 3, 2H, 2W]
  in 0..1.
- classifier.onnx: a small classifier: Conv 3x3 stride 2 (3->8), Relu,
  MaxPool 2x2, Conv 3x3 (8->16), Relu, GlobalAveragePool, Flatten, Gemm
  (16->10, transB), Softmax: input "input" [N, 3, H, W], output
  "probabilities" [N, 10].
- prob-map.onnx: a detector's head in miniature: Conv 1x1 (3->1, weight
  40 on the first channel, bias -20) then Sigmoid: input "image"
  [N, 3, H, W], output [N, 1, H, W], a probability map in 0..1 that is 0
  (to float precision) where the first input channel is below -0.5 and 1
  where it is above 0.5 (taken with ImageNet mean and std: red 0 and red
  255).
- no-products.onnx: HardSigmoid of the image, [N, 3, H, W] to
  [N, 3, H, W]: no convolution or product, so no precision changes any of
  its ops.
- superres.frame.rgb, classifier.frame.rgb, style.frame.rgb: one 32x24
  RGB8 frame (gradients and a few shapes, no randomness), the raw frame
  the element receives.
- superres.ort.out.bin, classifier.ort.out.bin, style.ort.out.bin: the
  model's whole output tensor for that frame as a batch of 1 (raw float32,
  NCHW or [1, 10]), computed by onnxruntime (CPUExecutionProvider, one
  thread) on the frame mapped as the element maps it by default: RGB,
  value = byte / 255. Needs onnxruntime (in .venv/); these models and
  references draw from their own seeded generators, so adding them changed
  none of the files above.
- fold-se.onnx, fold-dq-conv.onnx, fold-qdq.onnx, fold-shape.onnx,
  fold-misc.onnx, fold-scatter.onnx, fold-mlp.onnx: models whose constant subgraphs the importer folds at
  load, leaving only ops the engine runs: a squeeze-excite style Reshape
  of two constants feeding a Mul; Conv weights stored as uint8 (and int8)
  with a DequantizeLinear of per-channel (and per-tensor) scale and zero
  point; QuantizeLinear -> DequantizeLinear pairs on float weights; a
  Shape -> Gather -> Unsqueeze -> Concat chain making the shape of a
  weight Reshape, of a Reshape on an activation and Pad's pads, and a
  Resize whose scales are folded; Range, Cast, Div, Sqrt, Neg, Pow, Sub,
  Equal, Where, ConstantOfShape, Expand, Transpose, Squeeze, Identity and
  Gather making a bias and weights; ScatterND (replacing and adding), Mod,
  Not and Where making a bias. Each with <stem>.tensor.in.bin, a
  [2, 3, 6, 8] float32 input, and <stem>.tensor.out.bin, onnxruntime's
  output for it (raw float32; fold-shape's output is [2, 2, 4, 384]).
- nhwc-transposed.onnx, nhwc-scaled.onnx: channels-last inputs (N x H x
  W x 3), transposed to channels first at once or after a Mul by a
  per-channel constant; <stem>.tensor.in.bin holds the input channels
  last, as the model takes it (and cbi_engine_run_tensor ()).
- gather-long.onnx: a Gather of 80 indices computed from the input's
  width (the width reversed), then Conv 1x1; its tensor reference is for
  a 1 x 3 x 2 x 80 input.
- bad-matmul-one-input.onnx: a MatMul of one input.
- shape-expand-huge.onnx: a [1, 1, 1, 1] constant expanded to N x 3 x
  2048 x 2048 by a shape computed from the input's batch, added to the
  image: 48 MiB made at each plan, past what one plan may compute.
- bad-nhwc-unnamed-input.onnx is not written here: libFuzzer found it (a
  channels-last input without a name), and it is kept as it was found.
- bad-fold-*.onnx: a constant subgraph that cannot fold, one defect each
  (named by the file): the tests expect the node's name and the reason.
"""
import os
from functools import partial

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

HERE = os.path.dirname(os.path.abspath(__file__))
OPSET = [helper.make_opsetid("", 17)]
rng = np.random.default_rng(1234)

W1 = (rng.standard_normal((8, 3, 3, 3)) * 0.3).astype(np.float32)
B1 = (rng.standard_normal(8) * 0.1).astype(np.float32)
W2 = (rng.standard_normal((3, 8, 1, 1)) * 0.3).astype(np.float32)
B2 = np.array([0.5, 0.4, 0.3], dtype=np.float32)


def image_input(name="image"):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT,
                                         ["N", 3, "H", "W"])


def output(name="output"):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT,
                                         ["N", 3, "H", "W"])


def model(nodes, inits, inputs=None, outputs=None):
    g = helper.make_graph(nodes, "test", inputs or [image_input()],
                          outputs or [output()], inits)
    m = helper.make_model(g, opset_imports=OPSET, producer_name="generate.py")
    m.ir_version = 8
    return m


def conv_relu_nodes():
    return [
        helper.make_node("Conv", ["image", "w1", "b1"], ["c1"], name="conv1",
                         kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("Constant", [], ["b2"], name="bias2",
                         value=numpy_helper.from_array(B2, "b2")),
        helper.make_node("Conv", ["r1", "w2", "b2"], ["output"], name="conv2"),
    ]


def no_products_model():
    """HardSigmoid of the image: no op a lower precision changes"""
    return model([helper.make_node("HardSigmoid", ["image"], ["output"],
                                   name="squash")], [])


def bad_pool_model():
    """conv-relu with its Relu swapped for a MaxPool of dilation 0"""
    nodes = conv_relu_nodes()
    nodes[1] = helper.make_node("MaxPool", ["c1"], ["r1"], name="pool",
                                kernel_shape=[3, 3], pads=[1, 1, 1, 1],
                                dilations=[0, 1])
    return model(nodes, conv_relu_inits())


def conv_relu_inits():
    b1 = helper.make_tensor("b1", TensorProto.FLOAT, [8], B1.tolist())
    return [numpy_helper.from_array(W1, "w1"), b1,
            numpy_helper.from_array(W2, "w2")]


def save(m, name, check=True):
    if check:
        onnx.checker.check_model(m)
    onnx.save(m, os.path.join(HERE, name))


def write_reference(m, stem):
    frame = rng.integers(0, 256, size=(6, 8, 3), dtype=np.uint8)
    x = (frame.astype(np.float32) / 255.0).transpose(2, 0, 1)[None]
    (y,) = ReferenceEvaluator(m).run(None, {"image": x})
    out = np.round(np.clip(y[0].transpose(1, 2, 0), 0, 1) * 255)
    frame.tofile(os.path.join(HERE, stem + ".in.bin"))
    out.astype(np.uint8).tofile(os.path.join(HERE, stem + ".out.bin"))


NORM_MEAN = np.array([0.5, 0.4, 0.3], np.float32)
NORM_STD = np.array([0.2, 0.25, 0.3], np.float32)


def write_normalized_reference(m, stem):
    frame = np.fromfile(os.path.join(HERE, stem + ".in.bin"),
                        dtype=np.uint8).reshape(6, 8, 3)
    bgr = frame[..., ::-1].astype(np.float32) / 255.0
    x = ((bgr - NORM_MEAN) / NORM_STD).transpose(2, 0, 1)[None]
    (y,) = ReferenceEvaluator(m).run(None, {"image": x})
    back = (y[0].transpose(1, 2, 0) * NORM_STD + NORM_MEAN)[..., ::-1]
    out = np.round(np.clip(back, 0, 1) * 255)
    out.astype(np.uint8).tofile(os.path.join(HERE, stem + ".norm.out.bin"))


def eltwise_model():
    w = (rng.standard_normal((8, 3, 3, 3)) * 0.5).astype(np.float32)
    wo = (rng.standard_normal((3, 8, 1, 1)) * 0.2).astype(np.float32)
    bo = np.array([0.5, 0.5, 0.5], dtype=np.float32)
    nodes = [
        helper.make_node("Conv", ["image", "w"], ["c"], name="conv",
                         pads=[1, 1, 1, 1]),
        helper.make_node("LeakyRelu", ["c"], ["l"], name="leaky", alpha=0.1),
        helper.make_node("Sigmoid", ["l"], ["s"], name="sigmoid"),
        helper.make_node("Tanh", ["l"], ["t"], name="tanh"),
        helper.make_node("Add", ["s", "t"], ["a"], name="add"),
        helper.make_node("HardSigmoid", ["a"], ["h"], name="hardsigmoid",
                         alpha=0.3, beta=0.4),
        helper.make_node("HardSwish", ["h"], ["hs"], name="hardswish"),
        helper.make_node("Elu", ["hs"], ["e"], name="elu", alpha=0.7),
        helper.make_node("Clip", ["e", "lo", "hi"], ["k"], name="clip"),
        helper.make_node("Identity", ["k"], ["i"], name="identity"),
        helper.make_node("Conv", ["i", "wo", "bo"], ["output"], name="out"),
    ]
    inits = [numpy_helper.from_array(w, "w"),
             numpy_helper.from_array(np.array(0.05, np.float32), "lo"),
             numpy_helper.from_array(np.array(0.45, np.float32), "hi"),
             numpy_helper.from_array(wo, "wo"),
             numpy_helper.from_array(bo, "bo")]
    return model(nodes, inits)


def conv_bn_model():
    w = (rng.standard_normal((8, 3, 3, 3)) * 0.5).astype(np.float32)
    gamma = rng.uniform(0.5, 1.5, 8).astype(np.float32)
    beta = (rng.standard_normal(8) * 0.1).astype(np.float32)
    mean = (rng.standard_normal(8) * 0.1).astype(np.float32)
    var = rng.uniform(0.5, 2.0, 8).astype(np.float32)
    wo = (rng.standard_normal((3, 8, 1, 1)) * 0.2).astype(np.float32)
    bo = np.array([0.5, 0.5, 0.5], dtype=np.float32)
    nodes = [
        helper.make_node("Conv", ["image", "w"], ["c"], name="conv",
                         pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization",
                         ["c", "gamma", "beta", "mean", "var"], ["n"],
                         name="bn", epsilon=1e-3),
        helper.make_node("Relu", ["n"], ["r"], name="relu"),
        helper.make_node("Conv", ["r", "wo", "bo"], ["output"], name="out"),
    ]
    inits = [numpy_helper.from_array(a, n) for a, n in (
        (w, "w"), (gamma, "gamma"), (beta, "beta"), (mean, "mean"),
        (var, "var"), (wo, "wo"), (bo, "bo"))]
    return model(nodes, inits), inits


def binary_model(constant_first_sub=False):
    w = (rng.standard_normal((4, 3, 3, 3)) * 0.5).astype(np.float32)
    k = rng.uniform(0.5, 1.5, (4, 1, 1)).astype(np.float32)
    d = rng.uniform(1.0, 2.0, (1, 4, 1, 1)).astype(np.float32)
    wo = (rng.standard_normal((3, 4, 1, 1)) * 0.3).astype(np.float32)
    bo = np.array([0.5, 0.5, 0.5], dtype=np.float32)
    sub = ["tenth", "m"] if constant_first_sub else ["m", "tenth"]
    nodes = [
        helper.make_node("Conv", ["image", "w"], ["c"], name="conv",
                         pads=[1, 1, 1, 1]),
        helper.make_node("Mul", ["k", "c"], ["m"], name="mul"),
        helper.make_node("Sub", sub, ["s"], name="sub"),
        helper.make_node("Div", ["s", "d"], ["q"], name="div"),
        helper.make_node("Add", ["q", "c"], ["a"], name="add"),
        helper.make_node("Conv", ["a", "wo", "bo"], ["output"], name="out"),
    ]
    inits = [numpy_helper.from_array(a, n) for a, n in (
        (w, "w"), (k, "k"), (np.array(0.1, np.float32), "tenth"), (d, "d"),
        (wo, "wo"), (bo, "bo"))]
    return model(nodes, inits)


def unet_model():
    w1 = (rng.standard_normal((8, 3, 3, 3)) * 0.5).astype(np.float32)
    w2 = (rng.standard_normal((8, 8, 3, 3)) * 0.2).astype(np.float32)
    wo = (rng.standard_normal((3, 24, 1, 1)) * 0.15).astype(np.float32)
    bo = np.array([0.5, 0.5, 0.5], dtype=np.float32)
    x2 = np.array([1, 1, 2, 2], dtype=np.float32)
    nodes = [
        helper.make_node("Conv", ["image", "w1"], ["c1"], name="enc",
                         pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"], name="enc_relu"),
        helper.make_node("MaxPool", ["r1"], ["p"], name="down",
                         kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p", "w2"], ["c2"], name="mid",
                         pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c2"], ["r2"], name="mid_relu"),
        helper.make_node("Resize", ["r2", "", "x2"], ["u1"], name="up_nearest",
                         mode="nearest"),
        helper.make_node("Resize", ["p", "", "x2"], ["u2"], name="up_linear",
                         mode="linear"),
        helper.make_node("Concat", ["r1", "u1", "u2"], ["cat"], name="cat",
                         axis=1),
        helper.make_node("AveragePool", ["cat"], ["smooth"], name="smooth",
                         kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Conv", ["smooth", "wo", "bo"], ["output"],
                         name="out"),
    ]
    inits = [numpy_helper.from_array(a, n) for a, n in (
        (w1, "w1"), (w2, "w2"), (wo, "wo"), (bo, "bo"), (x2, "x2"))]
    return model(nodes, inits)


def upconv_model():
    w1 = (rng.standard_normal((8, 3, 3, 3)) * 0.5).astype(np.float32)
    b1 = (rng.standard_normal(8) * 0.1).astype(np.float32)
    wt = (rng.standard_normal((8, 6, 3, 3)) * 0.3).astype(np.float32)
    bt = (rng.standard_normal(6) * 0.1).astype(np.float32)
    wo = (rng.standard_normal((3, 6, 1, 1)) * 0.3).astype(np.float32)
    bo = np.array([0.5, 0.5, 0.5], dtype=np.float32)
    nodes = [
        helper.make_node("Conv", ["image", "w1", "b1"], ["c"], name="down",
                         pads=[1, 1, 1, 1], strides=[2, 2]),
        helper.make_node("Relu", ["c"], ["r"], name="relu"),
        helper.make_node("ConvTranspose", ["r", "wt", "bt"], ["u"],
                         name="up", strides=[2, 2], pads=[1, 1, 1, 1],
                         output_padding=[1, 1]),
        helper.make_node("Conv", ["u", "wo", "bo"], ["output"], name="out"),
    ]
    inits = [numpy_helper.from_array(a, n) for a, n in (
        (w1, "w1"), (b1, "b1"), (wt, "wt"), (bt, "bt"), (wo, "wo"),
        (bo, "bo"))]
    return model(nodes, inits)


def pads_model():
    def p(n):
        return numpy_helper.from_array(
            np.array([0, 0, n, n, 0, 0, n, n], dtype=np.int64), "p%d" % n)
    w1 = (rng.standard_normal((6, 3, 3, 3)) * 0.5).astype(np.float32)
    w2 = (rng.standard_normal((6, 6, 5, 5)) * 0.1).astype(np.float32)
    w3 = (rng.standard_normal((3, 6, 3, 3)) * 0.1).astype(np.float32)
    b3 = np.array([0.5, 0.5, 0.5], dtype=np.float32)
    nodes = [
        helper.make_node("Pad", ["image", "p1"], ["a"], name="reflect",
                         mode="reflect"),
        helper.make_node("Conv", ["a", "w1"], ["b"], name="conv1"),
        helper.make_node("Relu", ["b"], ["c"], name="relu"),
        helper.make_node("Pad", ["c", "p2"], ["d"], name="edge", mode="edge"),
        helper.make_node("Conv", ["d", "w2"], ["e"], name="conv2"),
        helper.make_node("Pad", ["e", "p1", "quarter"], ["f"], name="const"),
        helper.make_node("Conv", ["f", "w3", "b3"], ["output"], name="conv3"),
    ]
    inits = [p(1), p(2), numpy_helper.from_array(
        np.array(0.25, np.float32), "quarter")] + [
        numpy_helper.from_array(a, n) for a, n in (
            (w1, "w1"), (w2, "w2"), (w3, "w3"), (b3, "b3"))]
    return model(nodes, inits)


def style_model():
    def p(n):
        return numpy_helper.from_array(
            np.array([0, 0, n, n, 0, 0, n, n], dtype=np.int64), "p%d" % n)

    def inorm(c, name):
        g = rng.uniform(0.5, 1.5, c).astype(np.float32)
        b = (rng.standard_normal(c) * 0.1).astype(np.float32)
        return [numpy_helper.from_array(g, name + ".g"),
                numpy_helper.from_array(b, name + ".b")]

    w1 = (rng.standard_normal((8, 3, 3, 3)) * 0.5).astype(np.float32)
    w2 = (rng.standard_normal((8, 8, 3, 3)) * 0.2).astype(np.float32)
    wr = (rng.standard_normal((8, 8, 3, 3)) * 0.2).astype(np.float32)
    wt = (rng.standard_normal((8, 8, 3, 3)) * 0.2).astype(np.float32)
    wo = (rng.standard_normal((3, 8, 3, 3)) * 0.2).astype(np.float32)
    nodes = [
        helper.make_node("Pad", ["image", "p1"], ["a0"], mode="reflect",
                         name="pad1"),
        helper.make_node("Conv", ["a0", "w1"], ["a1"], name="conv1"),
        helper.make_node("InstanceNormalization", ["a1", "n1.g", "n1.b"],
                         ["a2"], name="norm1"),
        helper.make_node("Relu", ["a2"], ["a3"], name="relu1"),
        helper.make_node("Conv", ["a3", "w2"], ["b1"], name="down",
                         strides=[2, 2], pads=[1, 1, 1, 1]),
        helper.make_node("InstanceNormalization", ["b1", "n2.g", "n2.b"],
                         ["b2"], name="norm2", epsilon=1e-3),
        helper.make_node("Relu", ["b2"], ["b3"], name="relu2"),
        helper.make_node("Pad", ["b3", "p1"], ["r0"], mode="reflect",
                         name="res_pad"),
        helper.make_node("Conv", ["r0", "wr"], ["r1"], name="res_conv"),
        helper.make_node("InstanceNormalization", ["r1", "n3.g", "n3.b"],
                         ["r2"], name="res_norm"),
        helper.make_node("Add", ["b3", "r2"], ["r3"], name="residual"),
        helper.make_node("ConvTranspose", ["r3", "wt"], ["u1"], name="up",
                         strides=[2, 2], pads=[1, 1, 1, 1],
                         output_padding=[1, 1]),
        helper.make_node("Relu", ["u1"], ["u2"], name="relu3"),
        helper.make_node("Pad", ["u2", "p1"], ["o0"], mode="reflect",
                         name="out_pad"),
        helper.make_node("Conv", ["o0", "wo"], ["o1"], name="out_conv"),
        helper.make_node("Sigmoid", ["o1"], ["output"], name="squash"),
    ]
    inits = [p(1)] + inorm(8, "n1") + inorm(8, "n2") + inorm(8, "n3") + [
        numpy_helper.from_array(a, n) for a, n in (
            (w1, "w1"), (w2, "w2"), (wr, "wr"), (wt, "wt"), (wo, "wo"))]
    return model(nodes, inits)



def frame_pattern(width=32, height=24):
    """A fixed RGB8 frame that looks like a picture: gradients, a sky-like
    band, a disc, a rectangle and a diagonal line; no randomness."""
    y, x = np.mgrid[0:height, 0:width].astype(np.float32)
    u, v = x / (width - 1), y / (height - 1)
    img = np.stack([0.15 + 0.7 * u, 0.2 + 0.6 * v,
                    0.8 - 0.5 * (u + v) / 2], axis=-1)
    img[v < 0.25] = img[v < 0.25] * 0.5 + np.array([0.3, 0.4, 0.5]) * 0.5
    disc = (x - width * 0.3) ** 2 + (y - height * 0.55) ** 2 < (height / 5) ** 2
    img[disc] = [0.95, 0.85, 0.1]
    rect = ((x >= width * 0.6) & (x < width * 0.85) &
            (y >= height * 0.4) & (y < height * 0.8))
    img[rect] = [0.1, 0.3, 0.8]
    img[np.abs(x - y * width / height) < 0.75] = [1.0, 1.0, 1.0]
    img[:, :, 0] += 0.05 * np.sin(x * 0.9) * np.cos(y * 0.7)
    return np.round(np.clip(img, 0, 1) * 255).astype(np.uint8)


def superres_model():
    g = np.random.default_rng(2017)
    w1 = (g.standard_normal((16, 3, 3, 3)) * 0.3).astype(np.float32)
    b1 = (g.standard_normal(16) * 0.1).astype(np.float32)
    w2 = (g.standard_normal((12, 16, 3, 3)) * 0.1).astype(np.float32)
    b2 = (g.standard_normal(12) * 0.1).astype(np.float32)
    nodes = [
        helper.make_node("Conv", ["input", "w1", "b1"], ["c1"], name="conv1",
                         kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], name="conv2",
                         kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("DepthToSpace", ["c2"], ["d"], name="shuffle",
                         blocksize=2, mode="CRD"),
        helper.make_node("Sigmoid", ["d"], ["output"], name="squash"),
    ]
    inits = [numpy_helper.from_array(a, n) for a, n in (
        (w1, "w1"), (b1, "b1"), (w2, "w2"), (b2, "b2"))]
    return model(nodes, inits, inputs=[image_input("input")], outputs=[
        helper.make_tensor_value_info("output", TensorProto.FLOAT,
                                      ["N", 3, "H2", "W2"])])


def classifier_model():
    g = np.random.default_rng(2018)
    w1 = (g.standard_normal((8, 3, 3, 3)) * 0.5).astype(np.float32)
    b1 = (g.standard_normal(8) * 0.1).astype(np.float32)
    w2 = (g.standard_normal((16, 8, 3, 3)) * 0.2).astype(np.float32)
    b2 = (g.standard_normal(16) * 0.1).astype(np.float32)
    wf = (g.standard_normal((10, 16)) * 0.6).astype(np.float32)
    bf = (g.standard_normal(10) * 0.1).astype(np.float32)
    nodes = [
        helper.make_node("Conv", ["input", "w1", "b1"], ["c1"], name="conv1",
                         kernel_shape=[3, 3], strides=[2, 2],
                         pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("MaxPool", ["r1"], ["p1"], name="pool",
                         kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p1", "w2", "b2"], ["c2"], name="conv2",
                         kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
        helper.make_node("GlobalAveragePool", ["r2"], ["gap"], name="gap"),
        helper.make_node("Flatten", ["gap"], ["flat"], name="flatten",
                         axis=1),
        helper.make_node("Gemm", ["flat", "wf", "bf"], ["logits"], name="fc",
                         transB=1),
        helper.make_node("Softmax", ["logits"], ["probabilities"],
                         name="softmax", axis=1),
    ]
    inits = [numpy_helper.from_array(a, n) for a, n in (
        (w1, "w1"), (b1, "b1"), (w2, "w2"), (b2, "b2"), (wf, "wf"),
        (bf, "bf"))]
    return model(nodes, inits, inputs=[image_input("input")], outputs=[
        helper.make_tensor_value_info("probabilities", TensorProto.FLOAT,
                                      ["N", 10])])


def prob_map_model():
    w = np.zeros((1, 3, 1, 1), np.float32)
    w[0, 0, 0, 0] = 40.0
    b = np.array([-20.0], np.float32)
    nodes = [
        helper.make_node("Conv", ["image", "w", "b"], ["logits"],
                         name="head"),
        helper.make_node("Sigmoid", ["logits"], ["output"], name="prob"),
    ]
    out = helper.make_tensor_value_info("output", TensorProto.FLOAT,
                                        ["N", 1, "H", "W"])
    return model(nodes, [numpy_helper.from_array(w, "w"),
                         numpy_helper.from_array(b, "b")], outputs=[out])


def fixed_batch_model():
    """a model exported for one frame: its Reshape to a constant [1, -1]
    fixes N to 1, so it can only run at batch=1"""
    w = np.full((2, 3, 1, 1), 0.5, np.float32)
    nodes = [
        helper.make_node("Conv", ["image", "w"], ["features"], name="head"),
        helper.make_node("Reshape", ["features", "flat"], ["output"],
                         name="flatten_one"),
    ]
    out = helper.make_tensor_value_info("output", TensorProto.FLOAT,
                                        [1, "F"])
    return model(nodes, [numpy_helper.from_array(w, "w"),
                         numpy_helper.from_array(
                             np.array([1, -1], np.int64), "flat")],
                 outputs=[out])


def write_ort_reference(stem):
    import onnxruntime as ort

    frame = frame_pattern()
    frame.tofile(os.path.join(HERE, stem + ".frame.rgb"))
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    sess = ort.InferenceSession(os.path.join(HERE, stem + ".onnx"), opts,
                                providers=["CPUExecutionProvider"])
    x = (frame.astype(np.float32) / 255.0).transpose(2, 0, 1)[None]
    (y,) = sess.run(None, {sess.get_inputs()[0].name: x})
    np.ascontiguousarray(y, dtype=np.float32).tofile(
        os.path.join(HERE, stem + ".ort.out.bin"))


def identity_fixed_model():
    eye = np.eye(3, dtype=np.float32).reshape(3, 3, 1, 1)
    return model([helper.make_node("Conv", ["image", "eye"], ["output"],
                                   name="identity", kernel_shape=[1, 1])],
                 [numpy_helper.from_array(eye, "eye")], inputs=[
        helper.make_tensor_value_info("image", TensorProto.FLOAT,
                                      ["N", 3, 8, 8])])


def slow_matmul_model():
    g = np.random.default_rng(2304)
    col = (g.standard_normal((2304, 1)) * 0.05).astype(np.float32)
    row = (g.standard_normal((1, 2048)) * 0.05).astype(np.float32)
    nodes = [
        helper.make_node("Flatten", ["image"], ["flat"], name="flatten",
                         axis=1),
        helper.make_node("Mul", ["col", "row"], ["w"], name="weights"),
        helper.make_node("MatMul", ["flat", "w"], ["scores"], name="matmul"),
    ]
    return model(nodes, [numpy_helper.from_array(col, "col"),
                         numpy_helper.from_array(row, "row")], inputs=[
        helper.make_tensor_value_info("image", TensorProto.FLOAT,
                                      ["N", 3, 24, 32])], outputs=[
        helper.make_tensor_value_info("scores", TensorProto.FLOAT,
                                      ["N", 2048])])


def main():
    good = model(conv_relu_nodes(), conv_relu_inits())
    save(good, "conv-relu.onnx")
    write_reference(good, "conv-relu")
    write_normalized_reference(good, "conv-relu")
    fixed = model(conv_relu_nodes(), conv_relu_inits(), inputs=[
        helper.make_tensor_value_info("image", TensorProto.FLOAT,
                                      ["N", 3, 6, 8])])
    save(fixed, "conv-fixed.onnx")
    save(identity_fixed_model(), "identity-fixed.onnx")
    save(slow_matmul_model(), "slow-matmul.onnx")
    zoo = eltwise_model()
    save(zoo, "eltwise.onnx")
    write_reference(zoo, "eltwise")
    binary = binary_model()
    save(binary, "binary.onnx")
    write_reference(binary, "binary")
    # 0.1 - x, once refused; its weights come from the shared generator, so
    # it stays, for the models after it to keep theirs
    save(binary_model(constant_first_sub=True), "sub-from-constant.onnx")
    unet = unet_model()
    save(unet, "unet.onnx")
    write_reference(unet, "unet")
    upconv = upconv_model()
    save(upconv, "upconv.onnx")
    write_reference(upconv, "upconv")
    pads = pads_model()
    save(pads, "pads.onnx")
    write_reference(pads, "pads")
    style = style_model()
    save(style, "style.onnx")
    write_reference(style, "style")
    # the same weights for bench/pytorch-style.py, on machines without onnx
    np.savez(os.path.join(HERE, "style.weights.npz"), **{
        t.name: numpy_helper.to_array(t) for t in style.graph.initializer
        if t.data_type == TensorProto.FLOAT})
    bn, bn_inits = conv_bn_model()
    save(bn, "conv-bn.onnx")
    write_reference(bn, "conv-bn")
    alone = [helper.make_node("BatchNormalization",
                              ["image", "g3", "b3", "m3", "v3"], ["output"],
                              name="bn")]
    ones = np.ones(3, np.float32)
    save(model(alone, [numpy_helper.from_array(ones[:2] if n == "m3" else
                                               ones, n)
                       for n in ("g3", "b3", "m3", "v3")]),
         "bad-bn-mean-size.onnx")

    # external data: w1 in conv-external.bin, after 16 bytes of padding
    ext = model(conv_relu_nodes(), conv_relu_inits())
    w1 = ext.graph.initializer[0]
    with open(os.path.join(HERE, "conv-external.bin"), "wb") as f:
        f.write(b"\0" * 16 + w1.raw_data)
    w1.ClearField("raw_data")
    w1.data_location = TensorProto.EXTERNAL
    for k, v in (("location", "conv-external.bin"), ("offset", "16"),
                 ("length", str(W1.nbytes))):
        w1.external_data.add(key=k, value=v)
    save(ext, "conv-external.onnx", check=False)

    def bad_external(name, location, length=W1.nbytes, offset=16):
        m = model(conv_relu_nodes(), conv_relu_inits())
        t = m.graph.initializer[0]
        t.ClearField("raw_data")
        t.data_location = TensorProto.EXTERNAL
        for k, v in (("location", location), ("offset", str(offset)),
                     ("length", str(length))):
            t.external_data.add(key=k, value=v)
        save(m, name, check=False)

    bad_external("bad-external-outside.onnx", "../models/conv-external.bin")
    bad_external("bad-external-absolute.onnx", "/etc/hostname")
    bad_external("bad-external-past-end.onnx", "conv-external.bin",
                 offset=64)

    data = open(os.path.join(HERE, "conv-relu.onnx"), "rb").read()
    open(os.path.join(HERE, "bad-truncated.onnx"), "wb").write(
        data[: len(data) // 2])
    open(os.path.join(HERE, "bad-not-onnx.onnx"), "wb").write(
        b"\xff\xff\xff\xff not a protobuf")

    nodes = conv_relu_nodes()
    nodes[1] = helper.make_node("Softplus", ["c1"], ["r1"], name="squash")
    save(model(nodes, conv_relu_inits()), "bad-unsupported-op.onnx")

    save(model(conv_relu_nodes(), conv_relu_inits()[1:]),
         "bad-missing-initializer.onnx", check=False)

    # relu_a reads b, which relu_b makes from a: a cycle
    nodes = [
        helper.make_node("Conv", ["image", "w1", "b1"], ["c1"], name="conv1",
                         kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["b"], ["a"], name="relu_a"),
        helper.make_node("Relu", ["a"], ["b"], name="relu_b"),
        helper.make_node("Conv", ["b", "w2", "b2"], ["output"], name="conv2"),
    ]
    save(model(nodes, conv_relu_inits()[:2] + [
        numpy_helper.from_array(W2, "w2"), numpy_helper.from_array(B2, "b2")]),
        "bad-cycle.onnx", check=False)
    # a MatMul of one input (libFuzzer's find: it read a tensor at -1)
    save(model([helper.make_node("MatMul", ["image"], ["output"],
                                 name="matmul")], []),
         "bad-matmul-one-input.onnx", check=False)

    inits = conv_relu_inits()
    inits[0] = TensorProto(name="w1", data_type=TensorProto.FLOAT,
                           dims=[1 << 40, 1 << 40, 3, 3], raw_data=b"")
    save(model(conv_relu_nodes(), inits), "bad-dims-overflow.onnx",
         check=False)

    inits = conv_relu_inits()
    inits[0].raw_data = inits[0].raw_data[:-4]
    save(model(conv_relu_nodes(), inits), "bad-data-size.onnx", check=False)

    inits = conv_relu_inits()
    inits[1] = helper.make_tensor("b1", TensorProto.INT64, [8], list(range(8)))
    save(model(conv_relu_nodes(), inits), "bad-int64-bias.onnx", check=False)

    save(bad_pool_model(), "bad-pool-dilation.onnx", check=False)

    # a Conv 3 -> 3 with one NaN weight: channel 1 of every output is NaN
    # (the element's warm-up names the output in a warning)
    w_nan = np.full((3, 3, 1, 1), 0.25, np.float32)
    w_nan[1, 2, 0, 0] = np.nan
    save(model([helper.make_node("Conv", ["image", "w"], ["output"],
                                 name="conv")], [f32("w", w_nan)]),
         "nan-weights.onnx")
    save(bf16_cancel_model(), "bf16-cancel.onnx")
    save(bf16_narrow_model(), "bf16-narrow.onnx")
    save(fp16_overflow_model(), "fp16-overflow.onnx")
    save(half_shapes_model(np.random.default_rng(17)), "half-shapes.onnx")
    save(bf16_products_model(np.random.default_rng(18)), "bf16-products.onnx")
    # NaN wherever the input is not 0, flattened (no image): what the
    # warm-up's NaN scan counts tells which frames it ran
    save(model([helper.make_node("Neg", ["image"], ["neg"], name="neg"),
                helper.make_node("Sqrt", ["neg"], ["root"], name="sqrt"),
                helper.make_node("Flatten", ["root"], ["output"],
                                 name="flatten")], [],
               outputs=[helper.make_tensor_value_info(
                   "output", TensorProto.FLOAT, ["N", "HW3"])]),
         "nan-unless-black.onnx")
    # a Resize whose sizes are floats (found by the fuzzer: the refusal
    # leaked the strings of the node's mode)
    save(model([helper.make_node("Resize", ["image", "", "", "sizes"],
                                 ["output"], name="resize")],
               [f32("sizes", [1, 3, 12, 16])]),
         "bad-resize-float-sizes.onnx", check=False)

    # two Transposes in a row, the second's perm out of range (found by
    # the fuzzer: fusing them read past the first's perm)
    save(model([helper.make_node("Transpose", ["image"], ["t"], name="first",
                                 perm=[0, 2, 3, 1]),
                helper.make_node("Transpose", ["t"], ["output"],
                                 name="second", perm=[0, 268435455, 1, 2])],
               []), "bad-transpose-perm.onnx", check=False)

    # recurrent layers in forms the engine refuses: the last step's h read
    # by another node, and sequence lengths per sequence
    lstm = ops_lstm_model(np.random.default_rng(61))
    lstm.graph.node.append(helper.make_node("Identity", ["y_h"], ["last_h"],
                                            name="last_h"))
    lstm.graph.output.append(helper.make_tensor_value_info(
        "last_h", TensorProto.FLOAT, [2, "N", 5]))
    save(lstm, "bad-lstm-state-read.onnx")
    lstm = ops_lstm_model(np.random.default_rng(61))
    for n in lstm.graph.node:
        if n.op_type == "LSTM":
            n.input[4] = "lengths"
    lstm.graph.initializer.append(
        helper.make_tensor("lengths", TensorProto.INT32, [2], [8, 5]))
    save(lstm, "bad-lstm-sequence-lens.onnx", check=False)

    # a dynamically quantized activation read as it is, not by
    # MatMulInteger or ConvInteger
    nodes = conv_relu_nodes() + [
        helper.make_node("DynamicQuantizeLinear", ["r1"], ["q", "s", "z"],
                         name="quantize"),
        helper.make_node("Cast", ["q"], ["output"], name="cast",
                         to=TensorProto.FLOAT)]
    save(model([n for n in nodes if n.output[0] != "output"
                or n.op_type == "Cast"], conv_relu_inits()),
         "bad-dynquant-read.onnx", check=False)

    # real-frame references from onnxruntime, for the element tests
    save(superres_model(), "superres.onnx")
    save(classifier_model(), "classifier.onnx")
    save(prob_map_model(), "prob-map.onnx")
    save(fixed_batch_model(), "reshape-fixed-batch.onnx")
    for stem in ("superres", "classifier", "style"):
        write_ort_reference(stem)

    # folded at load; their own seeded generators, as above
    fold_models()
    # shapes computed at plan time
    shape_models()
    # ops on activations, issue 10
    ops_models()


FOLD_SHAPE = (2, 3, 6, 8)


def i64(name, values):
    return numpy_helper.from_array(np.array(values, dtype=np.int64), name)


def f32(name, values):
    return numpy_helper.from_array(np.asarray(values, dtype=np.float32), name)


def pass_on(out_channels, in_channels, size=1, value=1.0):
    """Conv weights that give each output channel k its input channel
    k % in_channels (at the centre tap of a @size x @size kernel), times
    @value"""
    w = np.zeros((out_channels, in_channels, size, size), np.float32)
    for k in range(out_channels):
        w[k, k % in_channels, size // 2, size // 2] = value
    return w


def bf16_cancel_model():
    """image + 100 in 16 channels, a 3x3 Conv to 64 channels that passes
    them on (its centre tap), then back to 3 channels - 100: the two
    convolutions after the image's are heavy enough for the CPU backend to
    run them in bfloat16"""
    return model([
        helper.make_node("Conv", ["image", "w_up", "b_up"], ["shifted"],
                         name="up"),
        helper.make_node("Conv", ["shifted", "w_mid"], ["wide"], name="mid",
                         pads=[1, 1, 1, 1]),
        helper.make_node("Conv", ["wide", "w_down", "b_down"], ["output"],
                         name="down"),
    ], [f32("w_up", pass_on(16, 3)), f32("b_up", np.full(16, 100.0)),
        f32("w_mid", pass_on(64, 16, 3)), f32("w_down", pass_on(3, 64)),
        f32("b_down", np.full(3, -100.0))])


def bf16_narrow_model():
    """the image to 16 channels (1x1), a 3x3 Conv 16 -> 16 passing them on
    (its centre tap), an Add doubling them, then a 1x1 Conv 16 -> 16
    halving them and adding 100 and a 1x1 Conv 16 -> 3 taking the 100 off:
    the CPU backend's wide bfloat16 plan runs the last two in it and keeps
    100 + x between them in bfloat16 (steps of 0.5: the check refuses
    it), its narrow plan the 3x3 alone (the last two sum too few products
    a value), which the check accepts"""
    return model([
        helper.make_node("Conv", ["image", "w_up"], ["up"], name="up"),
        helper.make_node("Conv", ["up", "w_mid"], ["mid"], name="mid",
                         pads=[1, 1, 1, 1]),
        helper.make_node("Add", ["mid", "mid"], ["twice"], name="twice"),
        helper.make_node("Conv", ["twice", "w_shift", "b_shift"],
                         ["shifted"], name="shift"),
        helper.make_node("Conv", ["shifted", "w_down", "b_down"], ["output"],
                         name="down"),
    ], [f32("w_up", pass_on(16, 3)), f32("w_mid", pass_on(16, 16, 3)),
        f32("w_shift", pass_on(16, 16, value=0.5)),
        f32("b_shift", np.full(16, 100.0)), f32("w_down", pass_on(3, 16)),
        f32("b_down", np.full(3, -100.0))])


def fp16_overflow_model():
    """image to 16 channels of about 1 (a 1x1 Conv with a bias of 1, then
    Relu), then a 3x3 Conv of weights about 500 to 16 channels: 144 taps
    give values past 72000 away from the borders, past fp16's largest
    (65504) but far inside bfloat16's range; the output has 16 channels,
    no image, so the check reads the values themselves"""
    g = np.random.default_rng(16)
    lift = g.uniform(0.0, 0.01, (16, 3, 1, 1)).astype(np.float32)
    heavy = (500.0 * g.uniform(1.0, 1.01, (16, 16, 3, 3))).astype(np.float32)
    return model([
        helper.make_node("Conv", ["image", "w_lift", "b_lift"], ["lifted"],
                         name="lift"),
        helper.make_node("Relu", ["lifted"], ["ones"], name="relu"),
        helper.make_node("Conv", ["ones", "w_heavy"], ["output"],
                         name="heavy", pads=[1, 1, 1, 1]),
    ], [f32("w_lift", lift), f32("b_lift", np.full(16, 1.0)),
        f32("w_heavy", heavy)],
        outputs=[helper.make_tensor_value_info(
            "output", TensorProto.FLOAT, ["N", 16, "H", "W"])])


def bf16_products_model(g):
    """matrix products heavy enough for bfloat16 at batch 8, on a fixed
    48x64 input: the image's rows through two MatMuls (to 256 columns and
    back, about the identity), and a Gemm (transB) of the whole frame to
    64 scores"""
    a = (g.standard_normal((64, 256)) / 8.0).astype(np.float32)
    b = (a.T / 4.0).astype(np.float32)
    w = (g.standard_normal((64, 3 * 48 * 64)) / 96.0).astype(np.float32)
    image = helper.make_tensor_value_info("image", TensorProto.FLOAT,
                                          ["N", 3, 48, 64])
    return model([
        helper.make_node("MatMul", ["image", "a"], ["wide"], name="widen"),
        helper.make_node("MatMul", ["wide", "b"], ["output"], name="narrow"),
        helper.make_node("Flatten", ["image"], ["flat"], name="flatten"),
        helper.make_node("Gemm", ["flat", "w", "bias"], ["scores"],
                         name="head", transB=1),
    ], [f32("a", a), f32("b", b), f32("w", w),
        f32("bias", g.standard_normal(64) * 0.1)],
        inputs=[image],
        outputs=[helper.make_tensor_value_info(
                     "output", TensorProto.FLOAT, ["N", 3, 48, 64]),
                 helper.make_tensor_value_info(
                     "scores", TensorProto.FLOAT, ["N", 64])])


def half_shapes_model(g):
    """the convolutions a GPU runs in 16 bits, in the shapes that take
    their own steps: after the image's (float32), a strided 3x3 of 64
    channels padded on the bottom and right only, a strided ConvTranspose
    whose output padding is cropped, a grouped 3x3 with a Relu, then back
    to 3 channels (float32)"""
    def w(*shape):
        fan = np.prod(shape[1:])
        return (g.standard_normal(shape) / np.sqrt(fan)).astype(np.float32)
    return model([
        helper.make_node("Conv", ["image", "w_in", "b_in"], ["c0"],
                         name="stem", pads=[1, 1, 1, 1]),
        helper.make_node("Conv", ["c0", "w_down"], ["c1"], name="down",
                         strides=[2, 2], pads=[0, 0, 1, 1]),
        helper.make_node("ConvTranspose", ["c1", "w_up", "b_up"], ["c2"],
                         name="up", strides=[2, 2], pads=[1, 1, 1, 1],
                         output_padding=[1, 1]),
        helper.make_node("Conv", ["c2", "w_group", "b_group"], ["c3"],
                         name="grouped", pads=[1, 1, 1, 1], group=2),
        helper.make_node("Relu", ["c3"], ["r3"], name="relu"),
        helper.make_node("Conv", ["r3", "w_out"], ["output"], name="out"),
    ], [f32("w_in", w(64, 3, 3, 3)), f32("b_in", g.standard_normal(64) * 0.1),
        f32("w_down", w(64, 64, 3, 3)), f32("w_up", w(64, 64, 3, 3)),
        f32("b_up", g.standard_normal(64) * 0.1),
        f32("w_group", w(64, 32, 3, 3)),
        f32("b_group", g.standard_normal(64) * 0.1),
        f32("w_out", w(3, 64, 1, 1))])


def fold_se_model(g):
    """Conv -> Mul by a Reshape of two constants (as exporters write a
    squeeze-excite scale) -> 1x1 Conv"""
    w = (g.standard_normal((8, 3, 3, 3)) * 0.5).astype(np.float32)
    s = g.uniform(0.5, 1.5, 8).astype(np.float32)
    wo = (g.standard_normal((3, 8, 1, 1)) * 0.3).astype(np.float32)
    nodes = [
        helper.make_node("Conv", ["image", "w"], ["c"], name="conv",
                         pads=[1, 1, 1, 1]),
        helper.make_node("Reshape", ["s", "s_shape"], ["s4"], name="se_shape"),
        helper.make_node("Mul", ["c", "s4"], ["m"], name="se_scale"),
        helper.make_node("Conv", ["m", "wo"], ["output"], name="out"),
    ]
    return model(nodes, [f32("w", w), f32("s", s), i64("s_shape", [1, 8, 1, 1]),
                         f32("wo", wo)])


def fold_dq_conv_model(g):
    """Conv weights as uint8 + DequantizeLinear with a per-channel scale and
    zero point, then int8 weights with a per-tensor one"""
    wq = g.integers(0, 256, (8, 3, 3, 3), dtype=np.uint8)
    scale = g.uniform(0.002, 0.006, 8).astype(np.float32)
    zero = g.integers(100, 156, 8, dtype=np.uint8)
    b = (g.standard_normal(8) * 0.1).astype(np.float32)
    w2q = g.integers(-128, 128, (3, 8, 1, 1), dtype=np.int8)
    nodes = [
        helper.make_node("DequantizeLinear", ["wq", "scale", "zero"], ["w"],
                         name="dq1", axis=0),
        helper.make_node("Conv", ["image", "w", "b"], ["c"], name="conv",
                         pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"], name="relu"),
        helper.make_node("DequantizeLinear", ["w2q", "scale2", "zero2"],
                         ["w2"], name="dq2"),
        helper.make_node("Conv", ["r", "w2"], ["output"], name="out"),
    ]
    inits = [numpy_helper.from_array(wq, "wq"), f32("scale", scale),
             numpy_helper.from_array(zero, "zero"), f32("b", b),
             numpy_helper.from_array(w2q, "w2q"), f32("scale2", 0.004),
             numpy_helper.from_array(np.array(3, np.int8), "zero2")]
    return model(nodes, inits)


def fold_qdq_model(g):
    """QuantizeLinear -> DequantizeLinear pairs on float weights, as QDQ
    exporters write them: int8 per channel, uint8 per tensor"""
    w = (g.standard_normal((8, 3, 3, 3)) * 0.5).astype(np.float32)
    ws = (np.abs(w).reshape(8, -1).max(1) / 127).astype(np.float32)
    wo = (g.standard_normal((3, 8, 1, 1)) * 0.3).astype(np.float32)
    nodes = [
        helper.make_node("QuantizeLinear", ["w", "ws", "wz"], ["wq"],
                         name="q1", axis=0),
        helper.make_node("DequantizeLinear", ["wq", "ws", "wz"], ["wd"],
                         name="dq1", axis=0),
        helper.make_node("Conv", ["image", "wd"], ["c"], name="conv",
                         pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"], name="relu"),
        helper.make_node("QuantizeLinear", ["wo", "os", "oz"], ["woq"],
                         name="q2"),
        helper.make_node("DequantizeLinear", ["woq", "os", "oz"], ["wod"],
                         name="dq2"),
        helper.make_node("Conv", ["r", "wod"], ["output"], name="out"),
    ]
    inits = [f32("w", w), f32("ws", ws),
             numpy_helper.from_array(np.zeros(8, np.int8), "wz"),
             f32("wo", wo), f32("os", 0.01),
             numpy_helper.from_array(np.array(128, np.uint8), "oz")]
    return model(nodes, inits)


def fold_shape_model(g):
    """Shape -> Gather -> Unsqueeze -> Concat -> Reshape on constants: the
    weights' shape, the shape of a Reshape on an activation, Pad's pads and
    Resize's scales are all computed by folded nodes"""
    t = (g.standard_normal((4, 6, 3, 3)) * 0.3).astype(np.float32)
    nodes = [
        helper.make_node("Shape", ["t"], ["s"], name="shape"),
        helper.make_node("Gather", ["s", "zero"], ["s0"], name="gather0",
                         axis=0),
        helper.make_node("Mul", ["s0", "two"], ["s0x2"], name="double"),
        helper.make_node("Unsqueeze", ["s0x2", "axes0"], ["u"],
                         name="unsqueeze"),
        helper.make_node("Slice", ["s", "from2", "to4"], ["hw"],
                         name="slice"),
        helper.make_node("Concat", ["u", "three", "hw"], ["wshape"],
                         name="concat", axis=0),
        helper.make_node("Reshape", ["t", "wshape"], ["w"], name="reshape_w"),
        helper.make_node("Conv", ["image", "w"], ["c"], name="conv",
                         pads=[1, 1, 1, 1]),
        helper.make_node("Concat", ["zero4", "one1", "two1", "zero2",
                                    "one1", "two1"], ["pads"],
                         name="pads", axis=0),
        helper.make_node("Pad", ["c", "pads"], ["p"], name="pad",
                         mode="edge"),
        helper.make_node("Mul", ["ones2", "twof"], ["twos"], name="twos"),
        helper.make_node("Concat", ["ones2", "twos"], ["scales"],
                         name="scales", axis=0),
        helper.make_node("Resize", ["p", "", "scales"], ["up"],
                         name="resize", mode="nearest"),
        helper.make_node("Gather", ["s", "one1"], ["s1"], name="gather1",
                         axis=0),
        helper.make_node("Div", ["s1", "three"], ["two_"], name="div"),
        helper.make_node("Concat", ["zero1", "two_", "four", "minus1"],
                         ["oshape"], name="oshape", axis=0),
        helper.make_node("Reshape", ["up", "oshape"], ["output"],
                         name="reshape_out"),
    ]
    inits = [f32("t", t), i64("zero", 0), i64("two", 2), i64("axes0", [0]),
             i64("from2", [2]), i64("to4", [4]), i64("three", [3]),
             i64("zero4", [0, 0]), i64("one1", [1]), i64("two1", [2]),
             i64("zero2", [0, 0]), i64("zero1", [0]), i64("four", [4]),
             i64("minus1", [-1]), f32("ones2", [1.0, 1.0]),
             f32("twof", 2.0)]
    out = helper.make_tensor_value_info("output", TensorProto.FLOAT,
                                        ["N", 2, 4, "HW"])
    return model(nodes, inits, outputs=[out])


def fold_misc_model(g):
    """The other folded ops making a bias and weights: Range, Cast, Div,
    Sqrt, Neg, Pow, Sub, Equal, Where, ConstantOfShape, Expand, Transpose,
    Squeeze, Identity, Gather with negative indices"""
    wt = (g.standard_normal((3, 3, 3, 8)) * 0.4).astype(np.float32)
    w2 = (g.standard_normal((1, 3, 8, 1, 1)) * 0.3).astype(np.float32)
    half = numpy_helper.from_array(np.array([0.5], np.float32), "half")
    nodes = [
        helper.make_node("Range", ["r0", "r8", "r1"], ["r"], name="range"),
        helper.make_node("Cast", ["r"], ["rf"], name="cast",
                         to=TensorProto.FLOAT),
        helper.make_node("Div", ["rf", "eight"], ["rd"], name="div"),
        helper.make_node("Sqrt", ["rd"], ["rs"], name="sqrt"),
        helper.make_node("Neg", ["rs"], ["rn"], name="neg"),
        helper.make_node("Pow", ["rd", "two"], ["rp"], name="pow"),
        helper.make_node("Sub", ["rn", "rp"], ["bias0"], name="sub"),
        helper.make_node("Equal", ["r", "three"], ["is3"], name="equal"),
        helper.make_node("ConstantOfShape", ["eight_shape"], ["halves"],
                         name="fill", value=half),
        helper.make_node("Where", ["is3", "halves", "bias0"], ["bias"],
                         name="where"),
        helper.make_node("Transpose", ["wt"], ["w"], name="transpose",
                         perm=[3, 0, 1, 2]),
        helper.make_node("Identity", ["w"], ["wi"], name="identity"),
        helper.make_node("Conv", ["image", "wi", "bias"], ["c"], name="conv",
                         pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r_"], name="relu"),
        helper.make_node("Squeeze", ["w2", "axes0"], ["w2s"], name="squeeze"),
        helper.make_node("Gather", ["w2s", "rev"], ["w2g"], name="gather",
                         axis=0),
        helper.make_node("Expand", ["tenth", "three_shape"], ["b2"],
                         name="expand"),
        helper.make_node("Conv", ["r_", "w2g", "b2"], ["output"], name="out"),
    ]
    inits = [i64("r0", 0), i64("r8", 8), i64("r1", 1), f32("eight", 8.0),
             f32("two", 2.0), i64("three", 3), i64("eight_shape", [8]),
             f32("wt", wt), f32("w2", w2), i64("axes0", [0]),
             i64("rev", [-1, -2, -3]), f32("tenth", [0.1]),
             i64("three_shape", [3])]
    return model(nodes, inits)


def write_tensor_reference(m, stem, g, shape=FOLD_SHAPE):
    """onnxruntime's output for a random input of @shape (the model's
    layout: cbi_engine_run_tensor () takes a channels-last model's
    tensor channels last too)"""
    import onnxruntime as ort

    x = g.standard_normal(shape).astype(np.float32)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    sess = ort.InferenceSession(m.SerializeToString(), opts,
                                providers=["CPUExecutionProvider"])
    (y,) = sess.run(None, {"image": x})
    x.tofile(os.path.join(HERE, stem + ".tensor.in.bin"))
    np.ascontiguousarray(y, dtype=np.float32).tofile(
        os.path.join(HERE, stem + ".tensor.out.bin"))


def bad_fold_models():
    """one defect each in a folded subgraph feeding conv-relu's first
    bias"""
    def with_bias(extra_nodes, extra_inits, name):
        nodes = extra_nodes + conv_relu_nodes()
        inits = [t for t in conv_relu_inits() if t.name != "b1"]
        save(model(nodes, inits + extra_inits), name, check=False)

    # Concat of [2, 4] and [3, 3] along axis 0: the second dimension
    # differs
    with_bias([helper.make_node("Concat", ["a", "b"], ["b1"], name="cat",
                                axis=0)],
              [f32("a", np.zeros((2, 4))), f32("b", np.zeros((3, 3)))],
              "bad-fold-concat-shapes.onnx")
    # Add of [8] and [3]: no broadcast
    with_bias([helper.make_node("Add", ["a", "b"], ["b1"], name="add")],
              [f32("a", np.zeros(8)), f32("b", np.zeros(3))],
              "bad-fold-add-shapes.onnx")
    # Range whose limit - start overflows int64
    with_bias([helper.make_node("Range", ["lo", "hi", "one"], ["r"],
                                name="range"),
               helper.make_node("Cast", ["r"], ["b1"], name="cast",
                                to=TensorProto.FLOAT)],
              [i64("lo", -(1 << 63) + 5), i64("hi", (1 << 63) - 5),
               i64("one", 1)],
              "bad-fold-range-overflow.onnx")
    # ConstantOfShape of 2^40 x 2^40 values
    with_bias([helper.make_node("ConstantOfShape", ["shape"], ["b1"],
                                name="fill")],
              [i64("shape", [1 << 40, 1 << 40])],
              "bad-fold-constant-of-shape-overflow.onnx")
    # Gather of index 8 from 8 values
    with_bias([helper.make_node("Gather", ["a", "idx"], ["b1"],
                                name="gather")],
              [f32("a", np.zeros(8)), i64("idx", [1, 8])],
              "bad-fold-gather-index.onnx")
    # DequantizeLinear with 3 scales for 8 channels
    with_bias([helper.make_node("DequantizeLinear", ["q", "s"], ["b1"],
                                name="dq", axis=0)],
              [numpy_helper.from_array(np.zeros(8, np.uint8), "q"),
               f32("s", np.ones(3))],
              "bad-fold-dequantize-scale.onnx")


def fold_scatter_model(g):
    """A Conv's bias from the dynamo exporter's folded ops: ScatterND
    (replacing, and adding with a reduction) into zeros, and a mask from
    Mod, Equal and Not choosing it per channel with Where"""
    w = (g.standard_normal((4, 3, 3, 3)) * 0.4).astype(np.float32)
    nodes = [
        helper.make_node("ScatterND", ["zeros", "idx", "upd"], ["s1"],
                         name="scatter"),
        helper.make_node("ScatterND", ["s1", "idx2", "upd2"], ["s2"],
                         name="scatter_add", reduction="add"),
        helper.make_node("Range", ["r0", "r4", "r1"], ["ramp"], name="ramp"),
        helper.make_node("Mod", ["ramp", "two"], ["odd"], name="mod"),
        helper.make_node("Equal", ["odd", "zero"], ["even"], name="even"),
        helper.make_node("Not", ["even"], ["is_odd"], name="not"),
        helper.make_node("Where", ["is_odd", "s2", "minus"], ["b"],
                         name="where"),
        helper.make_node("Conv", ["image", "w", "b"], ["output"], name="conv",
                         pads=[1, 1, 1, 1]),
    ]
    inits = [f32("zeros", np.zeros(4)), i64("idx", [[1], [3], [0]]),
             f32("upd", [0.5, -0.25, 0.125]), i64("idx2", [[3], [3]]),
             f32("upd2", [0.25, 0.5]), i64("r0", 0), i64("r4", 4),
             i64("r1", 1), i64("two", 2), i64("zero", 0),
             f32("minus", g.standard_normal(4) * 0.1), f32("w", w)]
    out = helper.make_tensor_value_info("output", TensorProto.FLOAT,
                                        ["N", 4, "H", "W"])
    return helper.make_model(
        helper.make_graph(nodes, "test", [image_input()], [out], inits),
        opset_imports=[helper.make_opsetid("", 18)],
        producer_name="generate.py", ir_version=8)


def fold_mlp_model(g):
    """A Conv's bias from a small MLP over a constant table, as Swin V2's
    continuous position bias computes one: MatMul, Relu, MatMul (batched,
    its batch broadcast), Sigmoid, LeakyRelu, Tanh, Reshape"""
    w = (g.standard_normal((4, 3, 3, 3)) * 0.4).astype(np.float32)
    node = helper.make_node
    nodes = [
        node("MatMul", ["table", "w1"], ["h1"], name="fc1"),
        node("Relu", ["h1"], ["r1"], name="relu"),
        node("MatMul", ["r1", "w2"], ["h2"], name="fc2"),
        node("Sigmoid", ["h2"], ["s2"], name="sigmoid"),
        node("LeakyRelu", ["s2"], ["l2"], name="leaky", alpha=0.2),
        node("Tanh", ["l2"], ["t2"], name="tanh"),
        node("Reshape", ["t2", "flat"], ["b"], name="flat"),
        node("Conv", ["image", "w", "b"], ["output"], name="conv",
             pads=[1, 1, 1, 1]),
    ]
    inits = [f32("table", g.standard_normal((2, 2, 3))),
             f32("w1", g.standard_normal((3, 5))),
             f32("w2", g.standard_normal((1, 5, 1))),
             i64("flat", [4]), f32("w", w)]
    return model(nodes, inits)


def fold_models():
    for stem, make, seed in (("fold-se", fold_se_model, 31),
                             ("fold-dq-conv", fold_dq_conv_model, 32),
                             ("fold-qdq", fold_qdq_model, 33),
                             ("fold-shape", fold_shape_model, 34),
                             ("fold-misc", fold_misc_model, 35),
                             ("fold-scatter", fold_scatter_model, 36),
                             ("fold-mlp", fold_mlp_model, 37)):
        g = np.random.default_rng(seed)
        m = make(g)
        save(m, stem + ".onnx")
        write_tensor_reference(m, stem, g)
    bad_fold_models()


# input shapes the shape-ops models are checked at: one model, two plans
SHAPE_SIZES = {"a": (2, 3, 6, 8), "b": (3, 3, 5, 7)}


def shape_ops_model(g):
    """shapes computed from an activation's shape at plan time, and the
    layout ops they feed: flatten as PyTorch exports it (Shape, Gather,
    Unsqueeze, Concat, Reshape), a Slice with negative steps and indices,
    Gather of one channel and of a list, Unsqueeze and Squeeze, an Expand
    to a computed shape, a Resize to sizes computed from the input's, a
    Pad by pads computed from it"""
    w = (g.standard_normal((4, 3, 3, 3)) * 0.5).astype(np.float32)
    nodes = [
        helper.make_node("Conv", ["image", "w"], ["x"], name="conv",
                         pads=[1, 1, 1, 1]),
        helper.make_node("Shape", ["x"], ["s"], name="shape"),
        helper.make_node("Gather", ["s", "zero"], ["n"], name="batch",
                         axis=0),
        helper.make_node("Cast", ["n"], ["n64"], name="cast",
                         to=TensorProto.INT64),
        helper.make_node("Unsqueeze", ["n64", "axes0"], ["n1"],
                         name="batch_1d"),
        helper.make_node("Concat", ["n1", "minus1"], ["flat_shape"],
                         name="flat_shape", axis=0),
        helper.make_node("Reshape", ["x", "flat_shape"], ["flat"],
                         name="flatten"),
        helper.make_node("Slice", ["x", "starts", "ends", "axes13",
                                   "steps"], ["sliced"], name="slice"),
        helper.make_node("Gather", ["x", "two"], ["ch2"], name="channel",
                         axis=1),
        helper.make_node("Gather", ["x", "list"], ["chs"], name="channels",
                         axis=1),
        helper.make_node("Unsqueeze", ["ch2", "axes14"], ["u"],
                         name="unsqueeze"),
        helper.make_node("Squeeze", ["u", "axes4"], ["sq"], name="squeeze"),
        helper.make_node("Slice", ["s", "zero1", "one1"], ["s_n"],
                         name="shape_n"),
        helper.make_node("Slice", ["s", "two1", "four1"], ["s_hw"],
                         name="shape_hw"),
        helper.make_node("Concat", ["s_n", "three1", "s_hw"],
                         ["expand_shape"], name="expand_shape", axis=0),
        helper.make_node("Expand", ["sq", "expand_shape"], ["expanded"],
                         name="expand"),
        helper.make_node("Slice", ["s", "zero1", "two1"], ["s_nc"],
                         name="shape_nc"),
        helper.make_node("Mul", ["s_hw", "two"], ["s_hw2"], name="double"),
        helper.make_node("Concat", ["s_nc", "s_hw2"], ["sizes"],
                         name="sizes", axis=0),
        helper.make_node("Resize", ["x", "", "", "sizes"], ["up"],
                         name="resize", mode="nearest"),
        helper.make_node("Div", ["s_hw", "s_hw"], ["ones_hw"], name="ones"),
        helper.make_node("Concat", ["zero2", "ones_hw", "zero2", "s_n"],
                         ["pads"], name="pads", axis=0),
        helper.make_node("Slice", ["pads", "zero1", "seven1"], ["pads7"],
                         name="pads7"),
        helper.make_node("Concat", ["pads7", "one1"], ["pads8"],
                         name="pads8", axis=0),
        helper.make_node("Pad", ["x", "pads8"], ["padded"], name="pad",
                         mode="edge"),
    ]
    inits = [f32("w", w), i64("zero", 0), i64("axes0", [0]),
             i64("minus1", [-1]), i64("starts", [-1, 1]),
             i64("ends", [-(1 << 63), 1 << 62]), i64("axes13", [1, -1]),
             i64("steps", [-2, 2]), i64("two", 2), i64("list", [3, 0, 3]),
             i64("axes14", [1, 4]), i64("axes4", [-1]), i64("zero1", [0]),
             i64("one1", [1]), i64("two1", [2]), i64("four1", [4]),
             i64("three1", [3]), i64("zero2", [0, 0]), i64("seven1", [7])]
    ranks = {"flat": 2, "sliced": 4, "chs": 4, "expanded": 4, "up": 4,
             "padded": 4}
    return model(nodes, inits, outputs=[
        helper.make_tensor_value_info(o, TensorProto.FLOAT,
                                      ["d%d" % d for d in range(r)])
        for o, r in ranks.items()])


def shape_models():
    import onnxruntime as ort

    g = np.random.default_rng(41)
    m = shape_ops_model(g)
    save(m, "shape-ops.onnx")
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    sess = ort.InferenceSession(m.SerializeToString(), opts,
                                providers=["CPUExecutionProvider"])
    # a shape value as a Mul's operand: a constant of each plan
    save(model([
        helper.make_node("Shape", ["image"], ["s"], name="shape"),
        helper.make_node("Cast", ["s"], ["sf"], name="cast",
                         to=TensorProto.FLOAT),
        helper.make_node("Mul", ["image", "sf"], ["output"], name="mul"),
    ], []), "shape-operand.onnx")
    save(no_products_model(), "no-products.onnx")
    # Resize to 9x7 whatever the input: refused by each plan it does not
    # divide
    save(model([
        helper.make_node("Shape", ["image"], ["s"], name="shape"),
        helper.make_node("Slice", ["s", "zero1", "two1"], ["nc"],
                         name="nc"),
        helper.make_node("Concat", ["nc", "hw"], ["sizes"], name="sizes",
                         axis=0),
        helper.make_node("Resize", ["image", "", "", "sizes"], ["output"],
                         name="resize", mode="nearest"),
    ], [i64("zero1", [0]), i64("two1", [2]), i64("hw", [7, 9])]),
        "shape-fixed-sizes.onnx")
    # a constant expanded to the batch x 3 x 2048 x 2048 (48 MiB of
    # float32) at each plan, added to the image: past what a plan may
    # compute, refused at once (a fuzzer input of 1 KB once took seconds
    # per plan)
    save(model([
        helper.make_node("Shape", ["image"], ["s"], name="shape"),
        helper.make_node("Slice", ["s", "zero1", "one1"], ["n"], name="n"),
        helper.make_node("Concat", ["n", "chw"], ["big"], name="big",
                         axis=0),
        helper.make_node("Expand", ["token", "big"], ["grid"],
                         name="expand"),
        helper.make_node("Add", ["image", "grid"], ["output"], name="add"),
    ], [i64("zero1", [0]), i64("one1", [1]), i64("chw", [3, 2048, 2048]),
        f32("token", np.ones((1, 1, 1, 1), np.float32))]),
        "shape-expand-huge.onnx")
    for key, shape in SHAPE_SIZES.items():
        x = g.standard_normal(shape).astype(np.float32)
        ys = sess.run(None, {"image": x})
        x.tofile(os.path.join(HERE, "shape-ops.%s.in.bin" % key))
        np.concatenate([y.ravel() for y in ys]).astype(np.float32).tofile(
            os.path.join(HERE, "shape-ops.%s.out.bin" % key))
        print(key, [y.shape for y in ys])


def ops_unary_model(g):
    """every element-wise op of issue 10, an Erf fused into the Conv before
    it and one alone, Min and Max with broadcast constants (one first), Pow
    of a per-channel exponent with a Sigmoid fused"""
    w = (g.standard_normal((8, 3, 3, 3)) * 0.5).astype(np.float32)
    b = (g.standard_normal(8) * 0.1).astype(np.float32)
    lo = g.uniform(0.1, 0.3, (8, 1, 1)).astype(np.float32)
    wo = (g.standard_normal((3, 8, 1, 1)) * 0.3).astype(np.float32)
    nodes = [
        helper.make_node("Conv", ["image", "w", "b"], ["c"], name="conv",
                         pads=[1, 1, 1, 1]),
        helper.make_node("Erf", ["c"], ["e"], name="erf_fused"),
        helper.make_node("Abs", ["e"], ["a"], name="abs"),
        helper.make_node("Sqrt", ["a"], ["s"], name="sqrt"),
        helper.make_node("Add", ["s", "half"], ["p"], name="add"),
        helper.make_node("Log", ["p"], ["lg"], name="log"),
        helper.make_node("Exp", ["lg"], ["ex"], name="exp"),
        helper.make_node("Neg", ["ex"], ["ng"], name="neg"),
        helper.make_node("Reciprocal", ["ng"], ["r"], name="reciprocal"),
        helper.make_node("Pow", ["r", "two"], ["sq"], name="square"),
        helper.make_node("Pow", ["sq", "exponent"], ["pw"], name="pow"),
        helper.make_node("Sub", ["pw", "one"], ["m"], name="sub"),
        helper.make_node("Gelu", ["m"], ["ge"], name="gelu"),
        helper.make_node("Gelu", ["ge"], ["gt"], name="gelu_tanh",
                         approximate="tanh"),
        helper.make_node("Erf", ["gt"], ["er"], name="erf"),
        helper.make_node("Max", ["er", "lo"], ["mx"], name="max"),
        helper.make_node("Min", ["hi", "mx"], ["mn"], name="min"),
        helper.make_node("Pow", ["mn", "exponents"], ["pc"],
                         name="pow_per_channel"),
        helper.make_node("Sigmoid", ["pc"], ["sg"], name="sigmoid"),
        helper.make_node("Conv", ["sg", "wo"], ["output"], name="out"),
    ]
    exponents = g.uniform(0.5, 2.0, (8, 1, 1)).astype(np.float32)
    inits = [f32("w", w), f32("b", b), f32("half", 0.5), f32("two", 2.0),
             f32("exponent", 0.75), f32("one", [1.0]), f32("lo", lo),
             f32("hi", 0.6), f32("wo", wo), f32("exponents", exponents)]
    m = model(nodes, inits)
    m.opset_import[0].version = 20
    return m


def ops_pads_model(g):
    """auto_pad SAME_UPPER (stride 2, odd sizes), SAME_LOWER (an even
    kernel), VALID, and ceil_mode pooling: pads from the input size"""
    w1 = (g.standard_normal((8, 3, 3, 3)) * 0.4).astype(np.float32)
    w2 = (g.standard_normal((8, 8, 2, 2)) * 0.3).astype(np.float32)
    w3 = (g.standard_normal((3, 8, 1, 1)) * 0.3).astype(np.float32)
    nodes = [
        helper.make_node("Conv", ["image", "w1"], ["c1"], name="same_upper",
                         kernel_shape=[3, 3], strides=[2, 2],
                         auto_pad="SAME_UPPER"),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu"),
        helper.make_node("Conv", ["r1", "w2"], ["c2"], name="same_lower",
                         auto_pad="SAME_LOWER"),
        helper.make_node("MaxPool", ["c2"], ["p1"], name="max_ceil",
                         kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1),
        helper.make_node("MaxPool", ["c2"], ["p2"], name="max_same",
                         kernel_shape=[3, 3], strides=[2, 2],
                         auto_pad="SAME_UPPER"),
        helper.make_node("Add", ["p1", "p2"], ["s"], name="add"),
        helper.make_node("AveragePool", ["s"], ["p3"], name="avg_ceil",
                         kernel_shape=[2, 2], strides=[2, 2], pads=[0, 1, 0, 0],
                         ceil_mode=1),
        helper.make_node("Conv", ["p3", "w3"], ["output"], name="valid",
                         auto_pad="VALID"),
    ]
    out = helper.make_tensor_value_info("output", TensorProto.FLOAT,
                                        ["N", 3, "H", "W"])
    return model(nodes, [f32("w1", w1), f32("w2", w2), f32("w3", w3)],
                 outputs=[out])


def ops_bn_model(g):
    """a BatchNormalization after ConvTranspose -> Add, as in a DBNet
    head: a per-channel scale and shift; then a ConvTranspose that stays
    one (stride 1) with a per-channel Mul and Add after it, and a pixel
    shuffle (Conv, DepthToSpace DCR) with a Mul by one value (the constant
    first, as Paddle2ONNX writes it), a per-channel Add and an Add of one
    value after it: the importer folds every one of them into the
    convolution before it"""
    wt = (g.standard_normal((3, 4, 2, 2)) * 0.4).astype(np.float32)
    bias = (g.standard_normal((4, 1, 1)) * 0.1).astype(np.float32)
    gamma = g.uniform(0.5, 1.5, 4).astype(np.float32)
    beta = (g.standard_normal(4) * 0.1).astype(np.float32)
    mean = (g.standard_normal(4) * 0.1).astype(np.float32)
    var = g.uniform(0.5, 2.0, 4).astype(np.float32)
    wg = (g.standard_normal((4, 4, 3, 3)) * 0.3).astype(np.float32)
    scale2 = g.uniform(0.5, 1.5, (1, 4, 1, 1)).astype(np.float32)
    shift2 = (g.standard_normal((4, 1, 1)) * 0.1).astype(np.float32)
    wp = (g.standard_normal((12, 4, 1, 1)) * 0.3).astype(np.float32)
    shift3 = (g.standard_normal((3, 1, 1)) * 0.1).astype(np.float32)
    nodes = [
        helper.make_node("ConvTranspose", ["image", "wt"], ["t"],
                         name="up", strides=[2, 2]),
        helper.make_node("Add", ["t", "bias"], ["a"], name="add"),
        helper.make_node("BatchNormalization",
                         ["a", "gamma", "beta", "mean", "var"], ["n"],
                         name="bn", epsilon=1e-3),
        helper.make_node("Relu", ["n"], ["r"], name="relu"),
        helper.make_node("ConvTranspose", ["r", "wg"], ["t2"],
                         name="transposed", pads=[1, 1, 1, 1]),
        helper.make_node("Mul", ["t2", "scale2"], ["m2"], name="scale2"),
        helper.make_node("Add", ["m2", "shift2"], ["a2"], name="shift2"),
        helper.make_node("Relu", ["a2"], ["r2"], name="relu2"),
        helper.make_node("Conv", ["r2", "wp"], ["p"], name="phases"),
        helper.make_node("DepthToSpace", ["p"], ["s"], name="shuffle",
                         blocksize=2, mode="DCR"),
        helper.make_node("Mul", ["k3", "s"], ["ks"], name="scale3"),
        helper.make_node("Add", ["ks", "shift3"], ["a3"], name="shift3"),
        helper.make_node("Add", ["a3", "one_shift"], ["output"],
                         name="shift_all"),
    ]
    inits = [f32("wt", wt), f32("bias", bias), f32("gamma", gamma),
             f32("beta", beta), f32("mean", mean), f32("var", var),
             f32("wg", wg), f32("scale2", scale2), f32("shift2", shift2),
             f32("wp", wp), f32("shift3", shift3),
             f32("k3", np.array([1.7], np.float32)),
             f32("one_shift", np.array(-0.3, np.float32))]
    return model(nodes, inits)


def ops_residual_scale_model(g):
    """x + x * s, s a squeeze-and-excitation's scale (its mean by
    GlobalAveragePool, then by ReduceMean), as PP-OCRv4's residual SE
    layers write it: in one order, in the other (s first, the
    product first), and once with the product read twice and once with s
    a constant (both stay as they are)"""
    w1 = (g.standard_normal((8, 3, 3, 3)) * 0.4).astype(np.float32)
    we1 = (g.standard_normal((8, 8, 1, 1)) * 0.4).astype(np.float32)
    be1 = (g.standard_normal(8) * 0.1).astype(np.float32)
    w2 = (g.standard_normal((8, 8, 1, 1)) * 0.4).astype(np.float32)
    we2 = (g.standard_normal((8, 8, 1, 1)) * 0.4).astype(np.float32)
    wo = (g.standard_normal((3, 8, 1, 1)) * 0.3).astype(np.float32)
    nodes = [
        helper.make_node("Conv", ["image", "w1"], ["x"], name="c1",
                         pads=[1, 1, 1, 1]),
        helper.make_node("GlobalAveragePool", ["x"], ["p1"], name="gap1"),
        helper.make_node("Conv", ["p1", "we1", "be1"], ["e1"], name="se1"),
        helper.make_node("HardSigmoid", ["e1"], ["s1"], name="hs1",
                         alpha=0.2, beta=0.5),
        helper.make_node("Mul", ["x", "s1"], ["xs1"], name="mul1"),
        helper.make_node("Add", ["x", "xs1"], ["y1"], name="add1"),
        helper.make_node("Conv", ["y1", "w2"], ["x2"], name="c2"),
        # the dynamo exporter's squeeze: a ReduceMean of each plane
        helper.make_node("ReduceMean", ["x2"], ["p2"], name="mean2",
                         axes=[-2, -1]),
        helper.make_node("Conv", ["p2", "we2"], ["e2"], name="se2"),
        helper.make_node("Sigmoid", ["e2"], ["s2"], name="sig2"),
        helper.make_node("Mul", ["s2", "x2"], ["xs2"], name="mul2"),
        helper.make_node("Add", ["xs2", "x2"], ["y2"], name="add2"),
        helper.make_node("Mul", ["y2", "p2"], ["xs3"], name="mul3"),
        helper.make_node("Add", ["y2", "xs3"], ["y3"], name="add3"),
        helper.make_node("Add", ["y3", "xs3"], ["y4"], name="add4"),
        helper.make_node("Mul", ["k5", "y4"], ["xs5"], name="mul5"),
        helper.make_node("Add", ["y4", "xs5"], ["y5"], name="add5"),
        helper.make_node("Conv", ["y5", "wo"], ["output"], name="out"),
    ]
    inits = [f32("w1", w1), f32("we1", we1), f32("be1", be1),
             f32("w2", w2), f32("we2", we2), f32("wo", wo),
             f32("k5", g.uniform(0.5, 1.5, (1, 8, 1, 1)))]
    return model(nodes, inits)


def ops_layer_norm_model(g):
    """a LayerNorm over the width as exporters decompose it: ReduceMean, Sub,
    Pow 2, ReduceMean, Add eps, Sqrt, Div, Mul, Add; then ReduceSum and
    ReduceMax over the channels (an axes attribute, keepdims 0), as
    opset 13 writes them"""
    w = (g.standard_normal((4, 3, 3, 3)) * 0.5).astype(np.float32)
    gamma = g.uniform(0.5, 1.5, 8).astype(np.float32)
    beta = (g.standard_normal(8) * 0.1).astype(np.float32)
    nodes = [
        helper.make_node("Conv", ["image", "w"], ["c"], name="conv",
                         pads=[1, 1, 1, 1]),
        helper.make_node("ReduceMean", ["c"], ["mean"], name="mean",
                         axes=[-1]),
        helper.make_node("Sub", ["c", "mean"], ["d"], name="centre"),
        helper.make_node("Pow", ["d", "two"], ["d2"], name="square"),
        helper.make_node("ReduceMean", ["d2"], ["var"], name="variance",
                         axes=[-1]),
        helper.make_node("Add", ["var", "eps"], ["ve"], name="eps"),
        helper.make_node("Sqrt", ["ve"], ["sd"], name="sqrt"),
        helper.make_node("Div", ["d", "sd"], ["z"], name="normalise"),
        helper.make_node("Mul", ["z", "gamma"], ["zg"], name="gamma"),
        helper.make_node("Add", ["zg", "beta"], ["ln"], name="beta"),
        helper.make_node("LayerNormalization", ["c", "scale2", "bias2"],
                         ["ln2"], name="layer_norm", axis=-2, epsilon=1e-3),
        helper.make_node("Add", ["ln", "ln2"], ["both"], name="both"),
        helper.make_node("ReduceMax", ["both"], ["mx"], name="max",
                         axes=[2, 3]),
        helper.make_node("Mul", ["both", "mx"], ["p"], name="scale"),
        helper.make_node("ReduceSum", ["p", "axes1"], ["output"],
                         name="sum", keepdims=0),
    ]
    scale2 = g.uniform(0.5, 1.5, (6, 8)).astype(np.float32)
    bias2 = (g.standard_normal((6, 8)) * 0.1).astype(np.float32)
    inits = [f32("w", w), f32("two", 2.0), f32("eps", 1e-5),
             f32("gamma", gamma), f32("beta", beta), i64("axes1", [1]),
             f32("scale2", scale2), f32("bias2", bias2)]
    out = helper.make_tensor_value_info("output", TensorProto.FLOAT,
                                        ["N", "H", "W"])
    m = model(nodes, inits, outputs=[out])
    return m


def ops_split_argmax_model(g):
    """Split by sizes (an int64 input) and in equal parts (num_outputs),
    the parts recombined, then ArgMax along the width: indices as floats"""
    w = (g.standard_normal((8, 3, 3, 3)) * 0.5).astype(np.float32)
    nodes = [
        helper.make_node("Conv", ["image", "w"], ["c"], name="conv",
                         pads=[1, 1, 1, 1]),
        helper.make_node("Split", ["c", "sizes"], ["a", "b"], name="split",
                         axis=1),
        helper.make_node("Split", ["b"], ["b1", "b2", "b3"], name="thirds",
                         axis=-3, num_outputs=3),
        helper.make_node("Add", ["b1", "b2"], ["s"], name="add"),
        helper.make_node("Mul", ["s", "b3"], ["m"], name="mul"),
        helper.make_node("Concat", ["a", "m"], ["r"], name="concat", axis=1),
        helper.make_node("ArgMax", ["r"], ["output"], name="argmax", axis=3,
                         keepdims=0),
    ]
    out = helper.make_tensor_value_info("output", TensorProto.INT64,
                                        ["N", 4, "H"])
    m = model(nodes, [f32("w", w), i64("sizes", [2, 6])], outputs=[out])
    m.opset_import[0].version = 18
    return m


def ops_where_model(g):
    """Where on constant conditions: per channel with the activation as X,
    per column with it as Y (the condition negated), and of two
    activations"""
    w = (g.standard_normal((8, 3, 3, 3)) * 0.5).astype(np.float32)
    wo = (g.standard_normal((3, 8, 1, 1)) * 0.3).astype(np.float32)
    by_channel = numpy_helper.from_array(
        (g.uniform(size=(8, 1, 1)) > 0.5), "by_channel")
    by_column = numpy_helper.from_array(g.uniform(size=(1, 8)) > 0.5,
                                        "by_column")
    nodes = [
        helper.make_node("Conv", ["image", "w"], ["c"], name="conv",
                         pads=[1, 1, 1, 1]),
        helper.make_node("Where", ["by_channel", "c", "minus"], ["a"],
                         name="where_x"),
        helper.make_node("Where", ["by_column", "half", "a"], ["b"],
                         name="where_y"),
        helper.make_node("Relu", ["c"], ["r"], name="relu"),
        helper.make_node("Where", ["by_column", "b", "r"], ["m"],
                         name="where_both"),
        helper.make_node("Conv", ["m", "wo"], ["output"], name="out"),
    ]
    return model(nodes, [f32("w", w), f32("wo", wo), by_channel, by_column,
                         f32("minus", -1.0), f32("half", [0.5])])


ODD_SHAPE = (2, 3, 7, 9)


def ops_hard_swish_model(g):
    """HardSwish as PaddlePaddle writes it, x * Clip (x + 3, 0, 6) / 6,
    after a Conv (fused into one HardSwish), then with the Mul's operands
    the other way round and a product by 1/6 (fused too), then once where
    the Add's result has a second reader (left as it is)"""
    w1 = (g.standard_normal((4, 3, 3, 3)) * 0.5).astype(np.float32)
    w2 = (g.standard_normal((4, 4, 1, 1)) * 0.5).astype(np.float32)
    nodes = [
        helper.make_node("Conv", ["image", "w1"], ["c1"], name="conv1",
                         pads=[1, 1, 1, 1]),
        helper.make_node("Add", ["c1", "three"], ["a1"], name="add1"),
        helper.make_node("Clip", ["a1", "zero", "six"], ["k1"], name="clip1"),
        helper.make_node("Mul", ["c1", "k1"], ["m1"], name="mul1"),
        helper.make_node("Div", ["m1", "six"], ["h1"], name="div1"),
        helper.make_node("Conv", ["h1", "w2"], ["c2"], name="conv2"),
        helper.make_node("Add", ["c2", "three"], ["a2"], name="add2"),
        helper.make_node("Clip", ["a2", "zero", "six"], ["k2"], name="clip2"),
        helper.make_node("Mul", ["k2", "c2"], ["m2"], name="mul2"),
        helper.make_node("Mul", ["m2", "sixth"], ["h2"], name="sixth2"),
        helper.make_node("Add", ["h2", "three"], ["a3"], name="add3"),
        helper.make_node("Clip", ["a3", "zero", "six"], ["k3"], name="clip3"),
        helper.make_node("Mul", ["h2", "k3"], ["m3"], name="mul3"),
        helper.make_node("Div", ["m3", "six"], ["d3"], name="div3"),
        helper.make_node("Add", ["d3", "a3"], ["output"], name="reuse3"),
    ]
    inits = [f32("w1", w1), f32("w2", w2), f32("three", 3.0),
             f32("zero", 0.0), f32("six", 6.0),
             f32("sixth", np.float32(1.0 / 6.0))]
    out = helper.make_tensor_value_info("output", TensorProto.FLOAT,
                                        ["N", 4, "H", "W"])
    return model(nodes, inits, outputs=[out])


def ops_affine_model(g):
    """products and sums by one constant value: after a Conv, a Mul and an
    Add merged into one alpha x + beta; after a Relu, a Mul whose result
    has two readers, so the Add after it stays its own; then an Add of two
    activations, which stays a binary op"""
    w = (g.standard_normal((4, 3, 3, 3)) * 0.5).astype(np.float32)
    nodes = [
        helper.make_node("Conv", ["image", "w"], ["c"], name="conv",
                         pads=[1, 1, 1, 1]),
        helper.make_node("Mul", ["c", "scale"], ["m"], name="scale"),
        helper.make_node("Add", ["m", "shift"], ["a"], name="shift"),
        helper.make_node("Relu", ["a"], ["r"], name="relu"),
        helper.make_node("Mul", ["r", "half"], ["m2"], name="half"),
        helper.make_node("Add", ["m2", "one"], ["a2"], name="one"),
        helper.make_node("Add", ["a2", "m2"], ["output"], name="both"),
    ]
    inits = [f32("w", w), f32("scale", [1.5]), f32("shift", -0.25),
             f32("half", 0.5), f32("one", [[[[1.0]]]])]
    out = helper.make_tensor_value_info("output", TensorProto.FLOAT,
                                        ["N", 4, "H", "W"])
    return model(nodes, inits, outputs=[out])


def ops_eltwise_runs_model(g):
    """runs of element-wise ops merged into one node each: after a Conv,
    alpha x + beta, HardSwish, alpha x + beta (other values: oneDNN 2.6's
    jit post-ops give the second the first's), Relu and Sigmoid (five
    steps, the most); then Tanh, Abs, Neg; after an Add of two activations,
    alpha x + beta, Clip, alpha x + beta; an Elu read twice ends a run; a
    Relu and a product after an InstanceNormalization (which takes a lone
    Relu only); an Erf joins no run"""
    w1 = (g.standard_normal((8, 3, 3, 3)) * 0.5).astype(np.float32)
    w2 = (g.standard_normal((8, 3, 1, 1)) * 0.5).astype(np.float32)
    wo = (g.standard_normal((4, 8, 1, 1)) * 0.4).astype(np.float32)
    nodes = [
        helper.make_node("Conv", ["image", "w2"], ["c2"], name="conv2"),
        helper.make_node("Conv", ["image", "w1"], ["c1"], name="conv1",
                         pads=[1, 1, 1, 1]),
        helper.make_node("Mul", ["c1", "s1"], ["m1"], name="scale1"),
        helper.make_node("Add", ["m1", "b1"], ["a1"], name="shift1"),
        helper.make_node("HardSwish", ["a1"], ["h1"], name="hard_swish"),
        helper.make_node("Mul", ["h1", "s2"], ["m2"], name="scale2"),
        helper.make_node("Add", ["m2", "b2"], ["a2"], name="shift2"),
        helper.make_node("Relu", ["a2"], ["r1"], name="relu"),
        helper.make_node("Sigmoid", ["r1"], ["sg"], name="sigmoid"),
        helper.make_node("Tanh", ["sg"], ["th"], name="tanh"),
        helper.make_node("Abs", ["th"], ["ab"], name="abs"),
        helper.make_node("Neg", ["ab"], ["ng"], name="neg"),
        helper.make_node("Add", ["ng", "c2"], ["sum"], name="sum"),
        helper.make_node("Mul", ["sum", "s3"], ["m3"], name="scale3"),
        helper.make_node("Add", ["m3", "b3"], ["a3"], name="shift3"),
        helper.make_node("Clip", ["a3", "lo", "hi"], ["cl"], name="clip"),
        helper.make_node("Mul", ["cl", "s4"], ["m4"], name="scale4"),
        helper.make_node("Elu", ["m4"], ["el"], name="elu", alpha=0.5),
        helper.make_node("Sigmoid", ["el"], ["s2g"], name="sigmoid2"),
        helper.make_node("Add", ["s2g", "el"], ["both"], name="both"),
        helper.make_node("InstanceNormalization", ["both", "gamma", "beta"],
                         ["norm"], name="norm"),
        helper.make_node("Relu", ["norm"], ["r2"], name="relu2"),
        helper.make_node("Mul", ["r2", "s5"], ["m5"], name="scale5"),
        helper.make_node("Erf", ["m5"], ["er"], name="erf"),
        helper.make_node("Mul", ["er", "s6"], ["m6"], name="scale6"),
        helper.make_node("Conv", ["m6", "wo"], ["output"], name="out"),
    ]
    gamma = g.uniform(0.5, 1.5, 8).astype(np.float32)
    beta = (g.standard_normal(8) * 0.1).astype(np.float32)
    inits = [f32("w1", w1), f32("w2", w2), f32("wo", wo),
             f32("s1", 1.5), f32("b1", -0.25), f32("s2", 0.75),
             f32("b2", 0.1), f32("s3", 2.0), f32("b3", 0.5), f32("lo", 0.0),
             f32("hi", 1.0), f32("s4", 0.5), f32("s5", 0.5), f32("s6", 3.0),
             f32("gamma", gamma), f32("beta", beta)]
    out = helper.make_tensor_value_info("output", TensorProto.FLOAT,
                                        ["N", 4, "H", "W"])
    return model(nodes, inits, outputs=[out])


def ops_depth_to_space_model(g):
    """DepthToSpace of a Conv's output in both modes (DCR, then CRD), each
    read by a Conv: on the CPU, where the Conv leaves its output channels
    last, the DepthToSpace reads and writes that layout"""
    w1 = (g.standard_normal((16, 3, 3, 3)) * 0.4).astype(np.float32)
    w2 = (g.standard_normal((16, 4, 1, 1)) * 0.4).astype(np.float32)
    w3 = (g.standard_normal((3, 4, 3, 3)) * 0.3).astype(np.float32)
    nodes = [
        helper.make_node("Conv", ["image", "w1"], ["c1"], name="conv1",
                         pads=[1, 1, 1, 1]),
        helper.make_node("DepthToSpace", ["c1"], ["d1"], name="dcr",
                         blocksize=2, mode="DCR"),
        helper.make_node("Conv", ["d1", "w2"], ["c2"], name="conv2"),
        helper.make_node("DepthToSpace", ["c2"], ["d2"], name="crd",
                         blocksize=2, mode="CRD"),
        helper.make_node("Conv", ["d2", "w3"], ["output"], name="conv3",
                         pads=[1, 1, 1, 1]),
    ]
    inits = [f32("w1", w1), f32("w2", w2), f32("w3", w3)]
    out = helper.make_tensor_value_info("output", TensorProto.FLOAT,
                                        ["N", 3, "H", "W"])
    return model(nodes, inits, outputs=[out])


def ops_channels_last_model(g):
    """InstanceNormalization and Pad on what a Conv gives, 16 channels then
    8: on the CPU, where the Conv leaves its output channels last, both
    read and write that layout (reflect pads of 1 and 2, edge pads of 1),
    and the Conv after reads it without a reorder"""
    w1 = (g.standard_normal((16, 3, 3, 3)) * 0.4).astype(np.float32)
    w2 = (g.standard_normal((8, 16, 3, 3)) * 0.2).astype(np.float32)
    w3 = (g.standard_normal((3, 8, 3, 3)) * 0.3).astype(np.float32)
    nodes = [
        helper.make_node("Conv", ["image", "w1"], ["c1"], name="conv1",
                         pads=[1, 1, 1, 1]),
        helper.make_node("InstanceNormalization", ["c1", "s1", "b1"], ["n1"],
                         name="norm16", epsilon=1e-5),
        helper.make_node("Relu", ["n1"], ["r1"], name="relu"),
        helper.make_node("Pad", ["r1", "p1"], ["q1"], name="reflect",
                         mode="reflect"),
        helper.make_node("Conv", ["q1", "w2"], ["c2"], name="conv2"),
        helper.make_node("InstanceNormalization", ["c2", "s2", "b2"], ["n2"],
                         name="norm8", epsilon=1e-5),
        helper.make_node("Pad", ["n2", "p2"], ["q2"], name="edge",
                         mode="edge"),
        helper.make_node("Conv", ["q2", "w3"], ["output"], name="conv3"),
    ]
    inits = [f32("w1", w1), f32("w2", w2), f32("w3", w3),
             f32("s1", g.uniform(0.5, 1.5, 16)),
             f32("b1", g.standard_normal(16) * 0.1),
             f32("s2", g.uniform(0.5, 1.5, 8)),
             f32("b2", g.standard_normal(8) * 0.1),
             i64("p1", [0, 0, 1, 2, 0, 0, 1, 2]),
             i64("p2", [0, 0, 1, 1, 0, 0, 1, 1])]
    out = helper.make_tensor_value_info("output", TensorProto.FLOAT,
                                        ["N", 3, "H", "W"])
    return model(nodes, inits, outputs=[out])


def ops_shuffle_transpose_model(g):
    """DepthToSpace of a Conv's output, then a Transpose of height and
    width as the output: on the CPU the shuffle leaves 3 channels last and
    the Transpose is the plan's last reorder, which must not be taken for
    a plain copy of the output (on square frames the shapes agree)"""
    w = (g.standard_normal((12, 3, 3, 3)) * 0.4).astype(np.float32)
    nodes = [
        helper.make_node("Conv", ["image", "w"], ["c"], name="conv",
                         pads=[1, 1, 1, 1]),
        helper.make_node("DepthToSpace", ["c"], ["d"], name="crd",
                         blocksize=2, mode="CRD"),
        helper.make_node("Transpose", ["d"], ["output"], name="swap_hw",
                         perm=[0, 1, 3, 2]),
    ]
    out = helper.make_tensor_value_info("output", TensorProto.FLOAT,
                                        ["N", 3, "W", "H"])
    return model(nodes, [f32("w", w)], outputs=[out])


def ops_wide_conv_model(g):
    """Conv 3x3 (3->32, bias), Relu, Conv 3x3 (32->3), Sigmoid: frames
    in, frames out, and 32 channels between. At 3840x2160 a batch of 16
    of those is 4.2e9 elements, past the 2^31 cuDNN takes in one tensor:
    the CUDA backend then convolves it a few frames at a time"""
    w1 = (g.standard_normal((32, 3, 3, 3)) * 0.4).astype(np.float32)
    w2 = (g.standard_normal((3, 32, 3, 3)) * 0.1).astype(np.float32)
    nodes = [
        helper.make_node("Conv", ["image", "w1", "b1"], ["c1"], name="widen",
                         pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu"),
        helper.make_node("Conv", ["r1", "w2"], ["c2"], name="narrow",
                         pads=[1, 1, 1, 1]),
        helper.make_node("Sigmoid", ["c2"], ["output"], name="squash"),
    ]
    inits = [f32("w1", w1), f32("b1", g.standard_normal(32) * 0.1),
             f32("w2", w2)]
    return model(nodes, inits)


def ops_broadcast_model(g):
    """Binary ops whose first operand broadcasts, as exporters write them:
    squeeze-and-excitation (GlobalAveragePool, Conv 1x1, Sigmoid, then
    s [N, C, 1, 1] * x [N, C, H, W], the smaller first), a Sub of the same
    operands (not commutative), an Add where both broadcast ([N, C, 1, 1]
    + [N, 1, H, W]), a Div of a per-channel constant by an activation and
    a Sub from a scalar constant (1 - x); then a grouped convolution (2
    groups) with a bias, and two BatchNormalizations without node names
    whose folded constants must not share a name"""
    w = (g.standard_normal((4, 3, 3, 3)) * 0.4).astype(np.float32)
    w2 = (g.standard_normal((4, 4, 1, 1)) * 0.5).astype(np.float32)
    k = g.uniform(0.5, 1.5, (1, 4, 1, 1)).astype(np.float32)
    wg = (g.standard_normal((4, 2, 3, 3)) * 0.3).astype(np.float32)
    wo = (g.standard_normal((3, 4, 1, 1)) * 0.4).astype(np.float32)

    def bn(x, y, stem):
        return helper.make_node("BatchNormalization",
                                [x, stem + "s", stem + "b", stem + "m",
                                 stem + "v"], [y])

    nodes = [
        helper.make_node("Conv", ["image", "w", "b"], ["c"], name="conv",
                         pads=[1, 1, 1, 1]),
        helper.make_node("GlobalAveragePool", ["c"], ["gp"], name="squeeze"),
        helper.make_node("Conv", ["gp", "w2", "b2"], ["f"], name="excite"),
        helper.make_node("Sigmoid", ["f"], ["s"], name="gate"),
        helper.make_node("Mul", ["s", "c"], ["se"], name="scale"),
        helper.make_node("Sub", ["s", "se"], ["d"], name="sub_bcast"),
        helper.make_node("ReduceMean", ["d"], ["r"], name="mean",
                         axes=[1], keepdims=1),
        helper.make_node("Add", ["s", "r"], ["e"], name="both_bcast"),
        helper.make_node("Sigmoid", ["e"], ["sg"], name="squash"),
        helper.make_node("Div", ["k", "sg"], ["q"], name="div_const"),
        helper.make_node("Sub", ["one", "q"], ["z"], name="one_minus"),
        helper.make_node("Conv", ["z", "wg", "bg"], ["gc"], name="grouped",
                         pads=[1, 1, 1, 1], group=2),
        helper.make_node("Relu", ["gc"], ["gr"]),
        bn("gr", "n1", "bn1"),
        helper.make_node("Relu", ["n1"], ["nr"]),
        bn("nr", "n2", "bn2"),
        helper.make_node("Conv", ["n2", "wo"], ["output"], name="out"),
    ]
    inits = [f32("w", w), f32("b", g.standard_normal(4) * 0.1),
             f32("w2", w2), f32("b2", g.standard_normal(4) * 0.1),
             f32("k", k), f32("one", 1.0), f32("wg", wg),
             f32("bg", g.standard_normal(4) * 0.2), f32("wo", wo)]
    for stem in ("bn1", "bn2"):
        inits += [f32(stem + "s", g.uniform(0.5, 1.5, 4)),
                  f32(stem + "b", g.standard_normal(4) * 0.1),
                  f32(stem + "m", g.standard_normal(4) * 0.1),
                  f32(stem + "v", g.uniform(0.5, 1.5, 4))]
    return model(nodes, inits)


def ops_plan_values_model(g):
    """Float values computed from shapes, as ViTs and detector heads write
    them: a class token expanded to the batch by a computed shape and
    concatenated before the patches (Conv 2x2 stride 2, Reshape,
    Transpose), then a Range over a dimension of the feature map (its
    width, as many as the tokens' values: the channels would be a constant
    at load), cast to float and added to every row"""
    w = (g.standard_normal((4, 3, 2, 2)) * 0.4).astype(np.float32)
    cls = g.standard_normal((1, 1, 4)).astype(np.float32)
    nodes = [
        helper.make_node("Conv", ["image", "w"], ["c"], name="patches",
                         strides=[2, 2]),
        helper.make_node("Reshape", ["c", "flat"], ["r"], name="flatten"),
        helper.make_node("Transpose", ["r"], ["tokens"], name="tokens",
                         perm=[0, 2, 1]),
        helper.make_node("Shape", ["image"], ["s"], name="shape"),
        helper.make_node("Gather", ["s", "zero"], ["n"], name="batch",
                         axis=0),
        helper.make_node("Unsqueeze", ["n", "axes0"], ["n1"], name="batch1"),
        helper.make_node("Concat", ["n1", "one_four"], ["cls_shape"],
                         name="cls_shape", axis=0),
        helper.make_node("Expand", ["cls", "cls_shape"], ["cls_n"],
                         name="cls_token"),
        helper.make_node("Concat", ["cls_n", "tokens"], ["seq"], name="seq",
                         axis=1),
        helper.make_node("Shape", ["c"], ["cs"], name="map_shape"),
        helper.make_node("Gather", ["cs", "three"], ["width"],
                         name="width", axis=0),
        helper.make_node("Range", ["start", "width", "step"], ["ramp"],
                         name="ramp"),
        helper.make_node("Cast", ["ramp"], ["grid"], name="grid",
                         to=TensorProto.FLOAT),
        helper.make_node("Add", ["seq", "grid"], ["output"], name="add_grid"),
    ]
    inits = [f32("w", w), f32("cls", cls), i64("flat", [0, 4, -1]),
             i64("zero", 0), i64("axes0", [0]), i64("one_four", [1, 4]),
             i64("three", 3), i64("start", 0), i64("step", 1)]
    out = helper.make_tensor_value_info("output", TensorProto.FLOAT,
                                        ["N", "T", 4])
    return model(nodes, inits, outputs=[out])


def ops_residual_model(g):
    """Residual connections as ResNets have them, each Add after a Conv:
    an identity block (h read by conv1, then by the Add after conv2, Relu),
    a projection block (the Add's other operand a shortcut Conv planned
    after the main branch's: the Add follows the shortcut, LeakyRelu
    0.1), and an Add whose other operand is read again later (so it
    cannot take the sum in place); 16 channels throughout (so that the CPU
    backend gives its convolutions channel blocks of 16 on AVX-512)"""
    def w(co, ci, k):
        return (g.standard_normal((co, ci, k, k)) * 0.3).astype(np.float32)

    def b(c):
        return g.uniform(-0.2, 0.2, c).astype(np.float32)

    conv = helper.make_node
    nodes = [
        conv("Conv", ["image", "w0", "b0"], ["c0"], name="stem",
             pads=[1, 1, 1, 1]),
        conv("Relu", ["c0"], ["h"], name="stem_relu"),
        conv("Conv", ["h", "w1", "b1"], ["c1"], name="conv1",
             pads=[1, 1, 1, 1]),
        conv("Relu", ["c1"], ["r1"], name="relu1"),
        conv("Conv", ["r1", "w2", "b2"], ["c2"], name="conv2",
             pads=[1, 1, 1, 1]),
        conv("Add", ["c2", "h"], ["a1"], name="identity_add"),
        conv("Relu", ["a1"], ["y1"], name="identity_relu"),
        conv("Conv", ["y1", "w3", "b3"], ["c3"], name="main"),
        conv("Conv", ["y1", "w4", "b4"], ["c4"], name="shortcut"),
        conv("Add", ["c3", "c4"], ["a2"], name="projection_add"),
        conv("LeakyRelu", ["a2"], ["y2"], name="projection_relu",
             alpha=0.1),
        conv("Conv", ["y2", "w5", "b5"], ["c5"], name="conv5",
             pads=[1, 1, 1, 1]),
        conv("Add", ["c5", "y2"], ["a3"], name="kept_add"),
        conv("Mul", ["a3", "y2"], ["output"], name="reads_y2_again"),
    ]
    c = 16
    inits = [f32("w0", w(c, 3, 3)), f32("b0", b(c)),
             f32("w1", w(c, c, 3) * 0.5), f32("b1", b(c)),
             f32("w2", w(c, c, 3) * 0.5), f32("b2", b(c)),
             f32("w3", w(c, c, 1)), f32("b3", b(c)),
             f32("w4", w(c, c, 1)), f32("b4", b(c)),
             f32("w5", w(c, c, 3) * 0.5), f32("b5", b(c))]
    out = helper.make_tensor_value_info("output", TensorProto.FLOAT,
                                        ["N", c, "H", "W"])
    return model(nodes, inits, outputs=[out])


def ops_channel_shuffle_model(g):
    """ShuffleNetV2's unit as PyTorch's exporters write it, on 8 channels:
    a Conv's channels-last output cut in two by a Slice (TorchScript's
    chunk) and by a Split (dynamo's), one half through Conv 1x1 + Relu,
    joined again by Concat, then the channel shuffle (Reshape to 2 groups,
    Transpose, Reshape back) and a Conv 1x1 to 3"""
    def w(co, ci, k):
        return (g.standard_normal((co, ci, k, k)) * 0.4).astype(np.float32)

    node = helper.make_node
    nodes = [
        node("Conv", ["image", "w0"], ["c0"], name="stem", pads=[1, 1, 1, 1]),
        node("Relu", ["c0"], ["x"], name="stem_relu"),
        node("Slice", ["x", "zero", "four", "one"], ["x1"], name="chunk_a"),
        node("Slice", ["x", "four", "eight", "one"], ["x2"], name="chunk_b"),
        node("Conv", ["x2", "w1"], ["b1"], name="branch"),
        node("Relu", ["b1"], ["r1"], name="branch_relu"),
        node("Concat", ["x1", "r1"], ["cat"], name="join", axis=1),
        node("Reshape", ["cat", "groups"], ["g5"], name="to_groups"),
        node("Transpose", ["g5"], ["t5"], name="shuffle",
             perm=[0, 2, 1, 3, 4]),
        node("Reshape", ["t5", "flat"], ["s"], name="back"),
        node("Split", ["s", "halves"], ["y1", "y2"], name="split", axis=1),
        node("Conv", ["y2", "w2"], ["b2"], name="branch2"),
        node("Concat", ["y1", "b2"], ["cat2"], name="join2", axis=1),
        node("Conv", ["cat2", "w3"], ["output"], name="head"),
    ]
    inits = [f32("w0", w(8, 3, 3)), f32("w1", w(4, 4, 1)),
             f32("w2", w(4, 4, 1)), f32("w3", w(3, 8, 1)),
             i64("zero", [0]), i64("four", [4]), i64("eight", [8]),
             i64("one", [1]), i64("groups", [0, 2, 4, 6, -1]),
             i64("flat", [0, 8, 6, -1]), i64("halves", [4, 4])]
    # Reshape's 0 copies the input's N; the height is the reference's 6
    return model(nodes, inits)


def ops_swish_model(g):
    """SiLU as PyTorch exports it, x * Sigmoid (x), after a Conv (one Swish
    fused into it), with the Mul's operands the other way round after a
    second Conv, and once where the Sigmoid has a second reader (left as
    it is: Sigmoid, Mul, and an Add of the Sigmoid)"""
    def w(co, ci):
        return (g.standard_normal((co, ci, 3, 3)) * 0.4).astype(np.float32)
    node = helper.make_node
    nodes = [
        node("Conv", ["image", "w1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
        node("Sigmoid", ["c1"], ["s1"], name="sigmoid1"),
        node("Mul", ["c1", "s1"], ["m1"], name="silu1"),
        node("Conv", ["m1", "w2"], ["c2"], name="conv2", pads=[1, 1, 1, 1]),
        node("Sigmoid", ["c2"], ["s2"], name="sigmoid2"),
        node("Mul", ["s2", "c2"], ["m2"], name="silu2"),
        node("Conv", ["m2", "w3"], ["c3"], name="conv3", pads=[1, 1, 1, 1]),
        node("Sigmoid", ["c3"], ["s3"], name="sigmoid3"),
        node("Mul", ["c3", "s3"], ["m3"], name="silu3"),
        node("Add", ["m3", "s3"], ["output"], name="add"),
    ]
    return model(nodes, [f32("w1", w(4, 3)), f32("w2", w(4, 4)),
                         f32("w3", w(3, 4))])


def ops_chain_postops_model(g):
    """runs of element-wise ops of different algorithms, which the CPU
    backend gives the producer as post-ops: after a Conv, HardSwish then
    alpha x + beta (PP-LCNetV3); after a second Conv, Relu, Sigmoid, Tanh;
    after an Add of the two, Relu then Neg (alpha x); then a last
    Conv"""
    def w(co, ci, k):
        return (g.standard_normal((co, ci, k, k)) * 0.4).astype(np.float32)
    node = helper.make_node
    nodes = [
        node("Conv", ["image", "w1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
        node("HardSwish", ["c1"], ["h1"], name="hard_swish"),
        node("Mul", ["h1", "s1"], ["m1"], name="scale1"),
        node("Add", ["m1", "b1"], ["a1"], name="shift1"),
        node("Conv", ["a1", "w2"], ["c2"], name="conv2"),
        node("Relu", ["c2"], ["r2"], name="relu2"),
        node("Sigmoid", ["r2"], ["g2"], name="sigmoid2"),
        node("Tanh", ["g2"], ["t2"], name="tanh2"),
        node("Add", ["a1", "t2"], ["sum"], name="sum"),
        node("Relu", ["sum"], ["r3"], name="relu3"),
        node("Neg", ["r3"], ["n3"], name="neg3"),
        node("Conv", ["n3", "w3"], ["output"], name="conv3"),
    ]
    return model(nodes, [f32("w1", w(8, 3, 3)), f32("w2", w(8, 8, 1)),
                         f32("w3", w(3, 8, 1)), f32("s1", 0.8),
                         f32("b1", 0.1)])


def recurrent_weights(g, dirs, gates, hidden, inputs):
    """W, R and B of an ONNX recurrent layer, small enough that no gate
    saturates"""
    def r(*shape):
        return (g.standard_normal(shape) * 0.3).astype(np.float32)
    return (r(dirs, gates * hidden, inputs), r(dirs, gates * hidden, hidden),
            r(dirs, 2 * gates * hidden))


def batch_state_nodes(name, init, dirs, hidden):
    """initial_h or initial_c as exporters write them for any batch: a
    constant [dirs, 1, hidden] expanded to [dirs, N, hidden] by a shape
    computed from the image's (a constant of each plan)"""
    node = helper.make_node
    return [
        node("Shape", ["image"], [name + "_s"], name=name + "_shape"),
        node("Slice", [name + "_s", "zero", "one"], [name + "_n"],
             name=name + "_batch"),
        node("Concat", [name + "_d", name + "_n", name + "_h"],
             [name + "_shape_v"], name=name + "_concat", axis=0),
        node("Expand", [init, name + "_shape_v"], [name],
             name=name + "_expand"),
    ], [i64(name + "_d", [dirs]), i64(name + "_h", [hidden])]


def crnn_stem_nodes():
    """Conv 3 -> 4, then the feature map's columns as a sequence, as
    CRNN text recognisers feed their recurrent layers: [N, 4 x H, W],
    transposed to [W, N, 4 x H]"""
    node = helper.make_node
    return [
        node("Conv", ["image", "w0"], ["c0"], name="stem", pads=[1, 1, 1, 1]),
        node("Reshape", ["c0", "columns"], ["cols"], name="columns"),
        node("Transpose", ["cols"], ["seq"], name="sequence", perm=[2, 0, 1]),
    ]


def ops_lstm_model(g):
    """A bidirectional LSTM over the columns of a feature map (CRNN), with
    biases and initial states computed for the batch, its Y back to
    [N, W, 2 x hidden] (Transpose, Reshape)"""
    node = helper.make_node
    w, r, b = recurrent_weights(g, 2, 4, 5, 24)
    nodes = crnn_stem_nodes()
    h_nodes, h_inits = batch_state_nodes("h0", "h0_1", 2, 5)
    c_nodes, c_inits = batch_state_nodes("cs0", "cs0_1", 2, 5)
    nodes += h_nodes + c_nodes + [
        node("LSTM", ["seq", "W", "R", "B", "", "h0", "cs0"],
             ["y", "y_h", "y_c"], name="lstm", hidden_size=5,
             direction="bidirectional"),
        node("Transpose", ["y"], ["yt"], name="batch_first",
             perm=[2, 0, 1, 3]),
        node("Reshape", ["yt", "rows"], ["output"], name="rows"),
    ]
    inits = [f32("w0", (g.standard_normal((4, 3, 3, 3)) * 0.4)),
             i64("columns", [0, 24, -1]), f32("W", w), f32("R", r),
             f32("B", b), f32("h0_1", g.standard_normal((2, 1, 5)) * 0.5),
             f32("cs0_1", g.standard_normal((2, 1, 5)) * 0.5),
             i64("zero", [0]), i64("one", [1]), i64("rows", [0, 0, 10])]
    out = helper.make_tensor_value_info("output", TensorProto.FLOAT,
                                        ["N", "W", 10])
    return model(nodes, inits + h_inits + c_inits, outputs=[out])


def ops_gru_rnn_model(g):
    """Recurrent layers of every other form, one after the other: a GRU
    walking backwards with its reset gate before the recurrent product
    (linear_before_reset 0) and an initial h, a bidirectional GRU with it
    after (PyTorch's and Keras's form) and no bias, a forward RNN"""
    node = helper.make_node
    w1, r1, b1 = recurrent_weights(g, 1, 3, 6, 24)
    w2, r2, _ = recurrent_weights(g, 2, 3, 4, 6)
    w3, r3, b3 = recurrent_weights(g, 1, 1, 3, 8)
    nodes = crnn_stem_nodes()
    h_nodes, h_inits = batch_state_nodes("h0", "h0_1", 1, 6)
    nodes += h_nodes + [
        node("GRU", ["seq", "W1", "R1", "B1", "", "h0"], ["y1"],
             name="gru_reverse", hidden_size=6, direction="reverse"),
        node("Squeeze", ["y1", "one"], ["s1"], name="one_direction"),
        node("GRU", ["s1", "W2", "R2"], ["y2", "y2_h"], name="gru_both",
             hidden_size=4, direction="bidirectional", linear_before_reset=1),
        node("Transpose", ["y2"], ["t2"], name="directions_last",
             perm=[0, 2, 1, 3]),
        node("Reshape", ["t2", "both"], ["s2"], name="both"),
        node("RNN", ["s2", "W3", "R3", "B3"], ["y3"], name="rnn",
             hidden_size=3),
        node("Transpose", ["y3"], ["t3"], name="batch_first",
             perm=[2, 0, 1, 3]),
        node("Reshape", ["t3", "rows"], ["output"], name="rows"),
    ]
    inits = [f32("w0", (g.standard_normal((4, 3, 3, 3)) * 0.4)),
             i64("columns", [0, 24, -1]), f32("W1", w1), f32("R1", r1),
             f32("B1", b1), f32("W2", w2), f32("R2", r2), f32("W3", w3),
             f32("R3", r3), f32("B3", b3),
             f32("h0_1", g.standard_normal((1, 1, 6)) * 0.5),
             i64("zero", [0]), i64("one", [1]), i64("both", [0, 0, 8]),
             i64("rows", [0, 0, 3])]
    out = helper.make_tensor_value_info("output", TensorProto.FLOAT,
                                        ["N", "W", 3])
    return model(nodes, inits + h_inits, outputs=[out])


def ops_lstm_wide_model(g):
    """A forward LSTM of 86 units (344 gate columns: the CPU's recurrent
    product in blocks of 64, then 16, then one) for an odd batch (9: the
    product's rows in pairs, the last alone), wide enough that a step's
    product is shared out among threads (9 x 86 x 344 multiply-adds), in
    column blocks of 256 and 88"""
    node = helper.make_node
    w, r, b = recurrent_weights(g, 1, 4, 86, 24)
    nodes = crnn_stem_nodes() + [
        node("LSTM", ["seq", "W", "R", "B"], ["y"], name="lstm",
             hidden_size=86),
        node("Squeeze", ["y", "one"], ["s"], name="one_direction"),
        node("Transpose", ["s"], ["output"], name="batch_first",
             perm=[1, 0, 2]),
    ]
    inits = [f32("w0", (g.standard_normal((4, 3, 3, 3)) * 0.4)),
             i64("columns", [0, 24, -1]), f32("W", w), f32("R", r * 0.3),
             f32("B", b), i64("one", [1])]
    out = helper.make_tensor_value_info("output", TensorProto.FLOAT,
                                        ["N", "W", 86])
    return model(nodes, inits, outputs=[out])


# the ops models: stem, maker, seed, input shape (their references are
# STEM.tensor.in.bin and STEM.tensor.out.bin; check-references.py reads
# this list)
def ops_se_blocks_model(g):
    """Squeeze-and-excitation in a network of 16 channels, whose
    convolutions write channel blocks of 16 on AVX-512: the scale,
    GlobalAveragePool -> Conv 1x1 -> Sigmoid, an [N, C, 1, 1] activation,
    times the block's output; then a per-channel constant [1, C, 1, 1]
    times that, and a Conv 1x1 (the binary ops' second operands broadcast
    to a first in channel blocks)"""
    c = 16

    def w(co, ci, k):
        return (g.standard_normal((co, ci, k, k)) * 0.3).astype(np.float32)

    node = helper.make_node
    nodes = [
        node("Conv", ["image", "w0", "b0"], ["c0"], name="stem",
             pads=[1, 1, 1, 1]),
        node("Relu", ["c0"], ["h"], name="stem_relu"),
        node("GlobalAveragePool", ["h"], ["gp"], name="squeeze"),
        node("Conv", ["gp", "w1", "b1"], ["f"], name="excite"),
        node("Sigmoid", ["f"], ["s"], name="gate"),
        node("Mul", ["h", "s"], ["se"], name="scale"),
        node("Mul", ["se", "k"], ["sk"], name="per_channel"),
        node("Conv", ["sk", "w2", "b2"], ["output"], name="project"),
    ]
    inits = [f32("w0", w(c, 3, 3)), f32("b0", g.uniform(-0.2, 0.2, c)),
             f32("w1", w(c, c, 1)), f32("b1", g.uniform(-0.2, 0.2, c)),
             f32("k", g.uniform(0.5, 1.5, (1, c, 1, 1))),
             f32("w2", w(c, c, 1)), f32("b2", g.uniform(-0.2, 0.2, c))]
    out = helper.make_tensor_value_info("output", TensorProto.FLOAT,
                                        ["N", c, "H", "W"])
    return model(nodes, inits, outputs=[out])


def ops_gelu_formula_model(g):
    """The exact GELU as PyTorch's TorchScript exporter writes it, x *
    (1 + erf (x / sqrt 2)) * 0.5 after a Conv (Div by sqrt 2, Erf, Add 1,
    Mul by x, Mul by 0.5), and as HuggingFace's code does, (x * 0.5) * (1
    + erf (x * 1 / sqrt 2)) with the constants first, after a second Conv;
    then a formula that is no GELU (Add 2) after a third, which stays as
    it is: 3 Convs, 2 Gelus, and Div, Erf, Add, Mul, Mul"""
    def w(co, ci, k):
        return (g.standard_normal((co, ci, k, k)) * 0.5).astype(np.float32)

    node = helper.make_node
    nodes = [
        node("Conv", ["image", "w0", "b0"], ["c0"], name="conv0",
             pads=[1, 1, 1, 1]),
        node("Div", ["c0", "sqrt2"], ["d0"], name="div0"),
        node("Erf", ["d0"], ["e0"], name="erf0"),
        node("Add", ["e0", "one"], ["a0"], name="add0"),
        node("Mul", ["c0", "a0"], ["m0"], name="mul0"),
        node("Mul", ["m0", "half"], ["g0"], name="half0"),
        node("Conv", ["g0", "w1", "b1"], ["c1"], name="conv1",
             pads=[1, 1, 1, 1]),
        node("Mul", ["inv_sqrt2", "c1"], ["d1"], name="scale1"),
        node("Mul", ["c1", "half"], ["h1"], name="half1"),
        node("Erf", ["d1"], ["e1"], name="erf1"),
        node("Add", ["one", "e1"], ["a1"], name="add1"),
        node("Mul", ["a1", "h1"], ["g1"], name="mul1"),
        node("Conv", ["g1", "w2", "b2"], ["c2"], name="conv2",
             pads=[1, 1, 1, 1]),
        node("Div", ["c2", "sqrt2"], ["d2"], name="div2"),
        node("Erf", ["d2"], ["e2"], name="erf2"),
        node("Add", ["e2", "two"], ["a2"], name="add2"),
        node("Mul", ["c2", "a2"], ["m2"], name="mul2"),
        node("Mul", ["m2", "half"], ["output"], name="half2"),
    ]
    inits = [f32("w0", w(4, 3, 3)), f32("b0", g.uniform(-0.2, 0.2, 4)),
             f32("w1", w(4, 4, 3)), f32("b1", g.uniform(-0.2, 0.2, 4)),
             f32("w2", w(3, 4, 3)), f32("b2", g.uniform(-0.2, 0.2, 3)),
             f32("sqrt2", np.float32(np.sqrt(2.0))),
             f32("inv_sqrt2", np.float32(1.0 / np.sqrt(2.0))),
             f32("one", 1.0), f32("two", 2.0), f32("half", 0.5)]
    return model(nodes, inits)


def ops_leading_broadcast_model(g):
    """Adds of constants that broadcast along the leading dimensions only,
    which oneDNN's binary runs in its reference code: a position table
    [1, 4, 48] added to every frame (ViT's), and an attention mask [1, 2,
    1, 6, 8] added to every window of every frame (Swin's), between
    Reshapes of a Conv's output; then a Mul by a scale [1, 1, 48] (one
    value per position for all channels) and Sigmoid"""
    node = helper.make_node
    nodes = [
        node("Conv", ["image", "w", "b"], ["c"], name="conv",
             pads=[1, 1, 1, 1]),
        node("Reshape", ["c", "tokens"], ["t"], name="to_tokens"),
        node("Add", ["t", "position"], ["p"], name="add_position"),
        node("Reshape", ["p", "windows"], ["w5"], name="to_windows"),
        node("Add", ["w5", "mask"], ["m"], name="add_mask"),
        node("Reshape", ["m", "tokens"], ["t2"], name="back_to_tokens"),
        node("Mul", ["t2", "scale"], ["s"], name="scale_positions"),
        node("Sigmoid", ["s"], ["sg"], name="gate"),
        node("Reshape", ["sg", "image_shape"], ["output"], name="to_image"),
    ]
    inits = [f32("w", (g.standard_normal((4, 3, 3, 3)) * 0.4)),
             f32("b", g.uniform(-0.2, 0.2, 4)),
             i64("tokens", [-1, 4, 48]),
             f32("position", g.standard_normal((1, 4, 48)) * 0.5),
             i64("windows", [-1, 2, 2, 6, 8]),
             f32("mask", g.standard_normal((1, 2, 1, 6, 8)) * 0.5),
             f32("scale", g.uniform(0.5, 1.5, (1, 1, 48))),
             i64("image_shape", [-1, 4, 6, 8])]
    out = helper.make_tensor_value_info("output", TensorProto.FLOAT,
                                        ["N", 4, 6, 8])
    return model(nodes, inits, outputs=[out])


def ops_linear_bias_model(g):
    """Linear layers as exporters write them past two dimensions: the
    image's rows, [N, 18, 8], through MatMul [8, 16], Add of a bias [16],
    Relu, MatMul [16, 8] and Add of a bias [1, 1, 8] written first; the
    Adds are the products' biases on the CPU"""
    node = helper.make_node
    nodes = [
        node("Reshape", ["image", "rows"], ["r"], name="to_rows"),
        node("MatMul", ["r", "w1"], ["h"], name="fc1"),
        node("Add", ["h", "b1"], ["hb"], name="bias1"),
        node("Relu", ["hb"], ["a"], name="relu"),
        node("MatMul", ["a", "w2"], ["o"], name="fc2"),
        node("Add", ["b2", "o"], ["ob"], name="bias2"),
        node("Reshape", ["ob", "image_shape"], ["output"], name="to_image"),
    ]
    inits = [i64("rows", [-1, 18, 8]),
             f32("w1", g.standard_normal((8, 16)) * 0.4),
             f32("b1", g.uniform(-0.3, 0.3, 16)),
             f32("w2", g.standard_normal((16, 8)) * 0.3),
             f32("b2", g.uniform(-0.3, 0.3, (1, 1, 8))),
             i64("image_shape", [-1, 3, 6, 8])]
    return model(nodes, inits)


def ops_full_reduce_model(g):
    """A reduction of every axis to a scalar (ReduceMax, keepdims=0, as
    torch.max () without a dim exports), the Conv's output divided by it"""
    node = helper.make_node
    nodes = [
        node("Conv", ["image", "w", "b"], ["c"], name="conv",
             pads=[1, 1, 1, 1]),
        node("ReduceMax", ["c"], ["m"], name="max_of_all", keepdims=0),
        node("Div", ["c", "m"], ["output"], name="scale_by_max"),
    ]
    inits = [f32("w", g.uniform(0.1, 0.5, (3, 3, 3, 3))),
             f32("b", g.uniform(0.5, 1.0, 3))]
    return model(nodes, inits)


def ops_bias_chain_model(g):
    """A MatMul whose bias Add is followed by Relu and a product by 2 (one
    merged run), with a Conv, Relu and product by 3 (another run) planned
    between the MatMul and its Add: each run applies once; the branches
    are summed"""
    node = helper.make_node
    nodes = [
        node("Reshape", ["image", "rows"], ["r"], name="to_rows"),
        node("MatMul", ["r", "w"], ["m"], name="fc"),
        node("Conv", ["image", "cw", "cb"], ["c"], name="conv",
             pads=[1, 1, 1, 1]),
        node("Relu", ["c"], ["cr"], name="conv_relu"),
        node("Mul", ["cr", "three"], ["c3"], name="times_three"),
        node("Reshape", ["c3", "rows"], ["cs"], name="conv_rows"),
        node("Add", ["m", "b"], ["mb"], name="bias"),
        node("Relu", ["mb"], ["mr"], name="fc_relu"),
        node("Mul", ["mr", "two"], ["m2"], name="times_two"),
        node("Add", ["m2", "cs"], ["sum"], name="branches"),
        node("Reshape", ["sum", "image_shape"], ["output"], name="to_image"),
    ]
    inits = [i64("rows", [-1, 18, 8]),
             f32("w", g.standard_normal((8, 8)) * 0.4),
             f32("b", g.uniform(-0.3, 0.3, 8)),
             f32("cw", g.standard_normal((3, 3, 3, 3)) * 0.3),
             f32("cb", g.uniform(-0.2, 0.2, 3)),
             f32("two", 2.0), f32("three", 3.0),
             i64("image_shape", [-1, 3, 6, 8])]
    return model(nodes, inits)


def ops_concat_convs_model(g):
    """Channel Concats read by convolutions, as SqueezeNet's fire modules,
    an ASPP head and YOLOv8's C2f write them: a fire module (Conv 1x1 and
    Conv 3x3 of the stem, each with Relu, Concat) whose MaxPool moves
    before the Concat, one per part; the Conv 1x1 after it (8 of 16
    channels, then Relu) becomes two Convs and an Add; a Concat of that
    and a Slice of the stem's channels (constant starts and ends) read by
    a Conv 3x3 (12 to 8 channels): two Convs and an Add; the same input
    twice into a Conv that widens (16 to 24): kept; the stem and that
    into two Convs (40 to 8 channels each), each two Convs and an Add,
    summed. 19 nodes as written, 25 once taken apart"""
    def w(co, ci, k):
        return (g.standard_normal((co, ci, k, k)) * 0.3).astype(np.float32)

    def b(c):
        return g.uniform(-0.2, 0.2, c)

    node = helper.make_node
    nodes = [
        node("Conv", ["image", "w0", "b0"], ["c0"], name="stem",
             pads=[1, 1, 1, 1]),
        node("Relu", ["c0"], ["s"], name="stem_relu"),
        node("Conv", ["s", "w1", "b1"], ["c1"], name="expand1x1"),
        node("Relu", ["c1"], ["e1"], name="expand1x1_relu"),
        node("Conv", ["s", "w2", "b2"], ["c2"], name="expand3x3",
             pads=[1, 1, 1, 1]),
        node("Relu", ["c2"], ["e2"], name="expand3x3_relu"),
        node("Concat", ["e1", "e2"], ["f"], name="fire", axis=1),
        node("MaxPool", ["f"], ["p"], name="pool", kernel_shape=[3, 3],
             pads=[1, 1, 1, 1], strides=[1, 1]),
        node("Conv", ["p", "w3", "b3"], ["c3"], name="squeeze"),
        node("Relu", ["c3"], ["r"], name="squeeze_relu"),
        node("Slice", ["s", "starts", "ends", "axes"], ["part"],
             name="part"),
        node("Concat", ["r", "part"], ["j"], name="join", axis=1),
        node("Conv", ["j", "w4", "b4"], ["u"], name="mix", pads=[1, 1, 1, 1]),
        node("Concat", ["u", "u"], ["uu"], name="twice", axis=1),
        node("Conv", ["uu", "w5", "b5"], ["v"], name="widen"),
        node("Concat", ["v", "s"], ["vs"], name="both", axis=1),
        node("Conv", ["vs", "w6", "b6"], ["ha"], name="head_a"),
        node("Conv", ["vs", "w7"], ["hb"], name="head_b"),
        node("Add", ["ha", "hb"], ["output"], name="heads"),
    ]
    inits = [f32("w0", w(16, 3, 3)), f32("b0", b(16)),
             f32("w1", w(8, 16, 1)), f32("b1", b(8)),
             f32("w2", w(8, 16, 3)), f32("b2", b(8)),
             f32("w3", w(8, 16, 1)), f32("b3", b(8)),
             i64("starts", [4]), i64("ends", [8]), i64("axes", [1]),
             f32("w4", w(8, 12, 3)), f32("b4", b(8)),
             f32("w5", w(24, 16, 1)), f32("b5", b(24)),
             f32("w6", w(8, 40, 1)), f32("b6", b(8)),
             f32("w7", w(8, 40, 1))]
    out = helper.make_tensor_value_info("output", TensorProto.FLOAT,
                                        ["N", 8, "H", "W"])
    return model(nodes, inits, outputs=[out])


def conv_filters(g, co, ci, k):
    """Random filters co x ci x k x k, scaled by the fan-in"""
    return (g.standard_normal((co, ci, k, k)) *
            (1.0 / np.sqrt(ci * k * k))).astype(np.float32)


def bias_values(g, c):
    """Random biases, c of them"""
    return g.uniform(-0.2, 0.2, c)


def ops_winograd_model(g):
    """3x3 convolutions of stride 1 on either side of the CPU's Winograd
    thresholds (cpu/conv.c: 32 channels in and out, 1568 output positions
    a batch, scratch and weights within the activations' bytes, which a
    batch of 2 at 112x112 has): the stem (3 to 32, the image's: direct),
    32 to 32 with Relu, 32 to 32 with a residual Add of the stem's output
    and Relu after it (Winograd, the Add its sum post-op), 32 to 16 and 16
    to 16 (too few channels: direct), then a MaxPool 4x4 of stride 4 (a
    smaller output to compare) and a Conv 1x1 to 16 (a 4x4 Conv of stride
    4 there gives wrong bfloat16 results in oneDNN 3.7's AMX kernel, which
    the element's warm-up check would catch: docs/precision.md): every
    convolution's channels are
    multiples of 16, so on AVX-512 they all write channel blocks, which
    Winograd's kernel reads and writes as they are"""
    w, b = partial(conv_filters, g), partial(bias_values, g)

    node = helper.make_node
    nodes = [
        node("Conv", ["image", "w0", "b0"], ["c0"], name="stem",
             pads=[1, 1, 1, 1]),
        node("Relu", ["c0"], ["s"], name="stem_relu"),
        node("Conv", ["s", "w1", "b1"], ["c1"], name="wide_a",
             pads=[1, 1, 1, 1]),
        node("Relu", ["c1"], ["r1"], name="wide_a_relu"),
        node("Conv", ["r1", "w2", "b2"], ["c2"], name="wide_b",
             pads=[1, 1, 1, 1]),
        node("Add", ["c2", "s"], ["sum"], name="residual"),
        node("Relu", ["sum"], ["r2"], name="residual_relu"),
        node("Conv", ["r2", "w3", "b3"], ["c3"], name="narrow_a",
             pads=[1, 1, 1, 1]),
        node("Relu", ["c3"], ["r3"], name="narrow_a_relu"),
        node("Conv", ["r3", "w4", "b4"], ["c4"], name="narrow_b",
             pads=[1, 1, 1, 1]),
        node("MaxPool", ["c4"], ["p4"], name="shrink", kernel_shape=[4, 4],
             strides=[4, 4]),
        node("Conv", ["p4", "w5", "b5"], ["output"], name="head"),
    ]
    inits = [f32("w0", w(32, 3, 3)), f32("b0", b(32)),
             f32("w1", w(32, 32, 3)), f32("b1", b(32)),
             f32("w2", w(32, 32, 3)), f32("b2", b(32)),
             f32("w3", w(16, 32, 3)), f32("b3", b(16)),
             f32("w4", w(16, 16, 3)), f32("b4", b(16)),
             f32("w5", w(16, 16, 1)), f32("b5", b(16))]
    out = helper.make_tensor_value_info("output", TensorProto.FLOAT,
                                        ["N", 16, "H", "W"])
    return model(nodes, inits, outputs=[out])


def ops_narrow_groups_model(g):
    """ResNeXt's grouped convolutions of few channels a group, which the
    CPU merges in bfloat16 on a matrix unit (cpu/conv.c: runs of groups
    of 32 input channels, block-diagonal weights): the stem, Conv 1x1 3
    to 64 and Relu; Conv 3x3 64 to 64 in 16 groups (4 channels each) and
    Relu; Conv 3x3 64 to 128 in 8 groups (8 in, 16 out each) and Relu;
    Conv 3x3 128 to 128 in 4 groups (32 each: as they are) and Relu; then
    Conv 1x1 to 8"""
    w, b = partial(conv_filters, g), partial(bias_values, g)

    node = helper.make_node
    nodes = [node("Conv", ["image", "w0", "b0"], ["c0"], name="stem"),
             node("Relu", ["c0"], ["r0"], name="stem_relu")]
    inits = [f32("w0", w(64, 3, 1)), f32("b0", b(64))]
    for i, (ci, co, groups) in enumerate(((64, 64, 16), (64, 128, 8),
                                          (128, 128, 4)), start=1):
        nodes += [node("Conv", [f"r{i - 1}", f"w{i}", f"b{i}"], [f"c{i}"],
                       name=f"grouped_{i}", pads=[1, 1, 1, 1], group=groups),
                  node("Relu", [f"c{i}"], [f"r{i}"], name=f"grouped_{i}_relu")]
        inits += [f32(f"w{i}", w(co, ci // groups, 3)), f32(f"b{i}", b(co))]
    nodes.append(node("Conv", ["r3", "w4", "b4"], ["output"], name="head"))
    inits += [f32("w4", w(8, 128, 1)), f32("b4", b(8))]
    out = helper.make_tensor_value_info("output", TensorProto.FLOAT,
                                        ["N", 8, "H", "W"])
    return model(nodes, inits, outputs=[out])


def ops_channels_last_block_model(g):
    """ConvNeXt's block as PyTorch writes it: Conv 3x3 3 to 16 (the stem)
    and Relu; a depthwise Conv 3x3; Transpose to channels last (0, 2, 3,
    1); LayerNormalization over the channels; MatMul 16 to 32, Add bias,
    Relu, MatMul 32 to 16; Transpose back (0, 3, 1, 2); Mul by a
    per-channel scale; Add the stem's output; Conv 1x1 to 8. On the CPU
    both Transposes are views where the layout their input has is the one
    they give (backends.c)"""
    w = partial(conv_filters, g)

    node = helper.make_node
    nodes = [
        node("Conv", ["image", "w0", "b0"], ["c0"], name="stem",
             pads=[1, 1, 1, 1]),
        node("Relu", ["c0"], ["s"], name="stem_relu"),
        node("Conv", ["s", "wd", "bd"], ["d"], name="depthwise",
             pads=[1, 1, 1, 1], group=16),
        node("Transpose", ["d"], ["dl"], name="to_channels_last",
             perm=[0, 2, 3, 1]),
        node("LayerNormalization", ["dl", "gamma", "beta"], ["ln"],
             name="norm", axis=-1, epsilon=1e-6),
        node("MatMul", ["ln", "w1"], ["m1"], name="expand"),
        node("Add", ["m1", "b1"], ["a1"], name="expand_bias"),
        node("Relu", ["a1"], ["r1"], name="expand_relu"),
        node("MatMul", ["r1", "w2"], ["m2"], name="project"),
        node("Transpose", ["m2"], ["back"], name="to_channels_first",
             perm=[0, 3, 1, 2]),
        node("Mul", ["back", "layer_scale"], ["scaled"], name="layer_scale"),
        node("Add", ["scaled", "s"], ["sum"], name="residual"),
        node("Conv", ["sum", "wh", "bh"], ["output"], name="head"),
    ]
    inits = [f32("w0", w(16, 3, 3)), f32("b0", g.uniform(-0.2, 0.2, 16)),
             f32("wd", w(16, 1, 3)), f32("bd", g.uniform(-0.2, 0.2, 16)),
             f32("gamma", g.uniform(0.5, 1.5, 16)),
             f32("beta", g.standard_normal(16) * 0.1),
             f32("w1", g.standard_normal((16, 32)) * 0.25),
             f32("b1", g.uniform(-0.2, 0.2, 32)),
             f32("w2", g.standard_normal((32, 16)) * 0.18),
             f32("layer_scale", g.uniform(0.5, 1.5, (16, 1, 1))),
             f32("wh", w(8, 16, 1)), f32("bh", g.uniform(-0.2, 0.2, 8))]
    out = helper.make_tensor_value_info("output", TensorProto.FLOAT,
                                        ["N", 8, "H", "W"])
    return model(nodes, inits, outputs=[out])


def ops_chunk_concat_model(g):
    """YOLOv8's C2f as TorchScript writes it: Conv 1x1 3 to 16, times a
    constant 1, and SiLU, its output chunked in two along the channels by
    Slices whose bounds are computed from its Shape (a Gather of the
    channels, Add 1, Div 2, Cast to float, times that constant 1, which
    translation has moved into the graph by then, Cast back; and Shape
    with start 1 and end 2 for the second's end), a
    Conv 3x3 8 to 8 and SiLU on the second chunk plus that chunk, then
    Concat of the two chunks and that sum, read by Conv 1x1 24 to 16: the
    channels are fixed by the first Conv's filters, so the bounds fold at
    load and the Concat is taken apart (graph/concat.c)"""
    w = partial(conv_filters, g)

    node = helper.make_node
    nodes = [
        node("Conv", ["image", "w0", "b0"], ["c0s"], name="cv1"),
        node("Mul", ["c0s", "unit"], ["c0"], name="cv1_unit"),
        node("Sigmoid", ["c0"], ["g0"], name="cv1_gate"),
        node("Mul", ["c0", "g0"], ["a0"], name="cv1_silu"),
        node("Shape", ["a0"], ["s"], name="shape"),
        node("Gather", ["s", "axis1"], ["ch"], name="channels", axis=0),
        node("Add", ["ch", "one"], ["ch1"], name="round_up"),
        node("Div", ["ch1", "two"], ["half"], name="half"),
        node("Cast", ["half"], ["half_f"], name="half_float",
             to=TensorProto.FLOAT),
        node("Mul", ["half_f", "unit"], ["end0_f"], name="end0_float"),
        node("Cast", ["end0_f"], ["end0"], name="end0",
             to=TensorProto.INT64),
        node("Shape", ["a0"], ["ch_only"], name="channels_only", start=1,
             end=2),
        node("Slice", ["a0", "zero1", "end0", "axis1"], ["y0"],
             name="chunk0"),
        node("Slice", ["a0", "end0", "ch_only", "axis1"], ["y1"],
             name="chunk1"),
        node("Conv", ["y1", "w1", "b1"], ["c1"], name="m_cv",
             pads=[1, 1, 1, 1]),
        node("Sigmoid", ["c1"], ["g1"], name="m_gate"),
        node("Mul", ["c1", "g1"], ["a1"], name="m_silu"),
        node("Add", ["y1", "a1"], ["m"], name="m_shortcut"),
        node("Concat", ["y0", "y1", "m"], ["cat"], name="cat", axis=1),
        node("Conv", ["cat", "w2", "b2"], ["output"], name="cv2"),
    ]
    inits = [f32("w0", w(16, 3, 1)), f32("b0", g.uniform(-0.2, 0.2, 16)),
             f32("w1", w(8, 8, 3)), f32("b1", g.uniform(-0.2, 0.2, 8)),
             f32("w2", w(16, 24, 1)), f32("b2", g.uniform(-0.2, 0.2, 16)),
             f32("unit", np.ones(1)), i64("one", 1), i64("two", 2),
             i64("zero1", [0]), i64("axis1", [1])]
    out = helper.make_tensor_value_info("output", TensorProto.FLOAT,
                                        ["N", 16, "H", "W"])
    return model(nodes, inits, outputs=[out])


def ops_dead_taps_model(g):
    """An ASPP head's dilated 3x3 convolutions on a map smaller than their
    rate, as DeepLabV3 has them at 224x224: Conv 1x1 3 to 8 and Relu, then
    Conv 3x3 of dilation 8 (on a 6x8 map every tap but the centre reads
    padding: a 1x1 convolution on the CPU) and Conv 3x3 of dilation 6
    (the rows' off-centre taps only read padding: 1x3), both 8 to 8 with
    their padding the rate, summed, then Conv 1x1 to 16"""
    w = partial(conv_filters, g)

    node = helper.make_node
    nodes = [
        node("Conv", ["image", "w0", "b0"], ["c0"], name="stem"),
        node("Relu", ["c0"], ["s"], name="stem_relu"),
        node("Conv", ["s", "w1", "b1"], ["r8"], name="rate8",
             dilations=[8, 8], pads=[8, 8, 8, 8]),
        node("Conv", ["s", "w2", "b2"], ["r6"], name="rate6",
             dilations=[6, 6], pads=[6, 6, 6, 6]),
        node("Add", ["r8", "r6"], ["sum"], name="sum"),
        node("Conv", ["sum", "w3", "b3"], ["output"], name="head"),
    ]
    inits = [f32("w0", w(8, 3, 1)), f32("b0", g.uniform(-0.2, 0.2, 8)),
             f32("w1", w(8, 8, 3)), f32("b1", g.uniform(-0.2, 0.2, 8)),
             f32("w2", w(8, 8, 3)), f32("b2", g.uniform(-0.2, 0.2, 8)),
             f32("w3", w(16, 8, 1)), f32("b3", g.uniform(-0.2, 0.2, 16))]
    out = helper.make_tensor_value_info("output", TensorProto.FLOAT,
                                        ["N", 16, "H", "W"])
    return model(nodes, inits, outputs=[out])


def ops_upsample_output_model(g):
    """A segmentation's head: Conv 1x1 to 5 channels, Relu, then bilinear
    Resize with half-pixel centres by 2.5 along both axes (6x8 to 15x20:
    the taps' weights not a fixed pattern) as the graph's output, which
    the CPU backend resamples row-major by its own loop"""
    node = helper.make_node
    nodes = [
        node("Conv", ["image", "w0", "b0"], ["c0"], name="scores"),
        node("Relu", ["c0"], ["r"], name="scores_relu"),
        node("Resize", ["r", "", "scales"], ["output"], name="up",
             mode="linear"),
    ]
    inits = [f32("w0", (g.standard_normal((5, 3, 1, 1)) * 0.5)),
             f32("b0", g.uniform(-0.2, 0.2, 5)),
             f32("scales", [1.0, 1.0, 2.5, 2.5])]
    out = helper.make_tensor_value_info("output", TensorProto.FLOAT,
                                        ["N", 5, "H2", "W2"])
    return model(nodes, inits, outputs=[out])


def ops_attention_model(g):
    """One head of self-attention over the image's 48 positions, as a
    transformer's exporters write it: Reshape to N x 3 x 48, Transpose to
    tokens, three MatMuls by [3, 8] weights (Q, K, V), Transpose of K,
    Q K^T, Softmax along the last axis, by V, a MatMul by [8, 3] and back
    to N x 3 x 6 x 8 (Transpose, Reshape)"""
    node = helper.make_node
    nodes = [
        node("Reshape", ["image", "flat"], ["x"], name="flatten"),
        node("Transpose", ["x"], ["t"], name="tokens", perm=[0, 2, 1]),
        node("MatMul", ["t", "wq"], ["q"], name="query"),
        node("MatMul", ["t", "wk"], ["k"], name="key"),
        node("MatMul", ["t", "wv"], ["v"], name="value"),
        node("Transpose", ["k"], ["kt"], name="key_t", perm=[0, 2, 1]),
        node("MatMul", ["q", "kt"], ["scores"], name="scores"),
        node("Softmax", ["scores"], ["weights"], name="softmax", axis=-1),
        node("MatMul", ["weights", "v"], ["o"], name="attend"),
        node("MatMul", ["o", "wo"], ["y"], name="project"),
        node("Transpose", ["y"], ["yt"], name="channels", perm=[0, 2, 1]),
        node("Reshape", ["yt", "image_shape"], ["output"], name="unflatten"),
    ]
    inits = [i64("flat", [0, 3, 48]), i64("image_shape", [0, 3, 6, 8]),
             f32("wq", g.standard_normal((3, 8)) * 0.8),
             f32("wk", g.standard_normal((3, 8)) * 0.8),
             f32("wv", g.standard_normal((3, 8)) * 0.8),
             f32("wo", g.standard_normal((8, 3)) * 0.5)]
    return model(nodes, inits)


def ops_qkv_attention_model(g):
    """Two heads of self-attention from one product, as torchvision's
    Swin and ViT export it: the image's 48 positions times a [3, 24]
    matrix, Reshape to N x 48 x 3 x 2 x 4, Transpose to 3 x N x 2 x 48 x 4;
    the query a Gather of index 0 times 1 / sqrt (its last dimension),
    computed from its shape as the TorchScript exporter writes it, the
    key a Slice of [1, 2) along the first axis and a Squeeze, Transposed,
    times a constant 0.5, the values a Gather of index 2, read last
    (after the scores and their Softmax); by V, Transpose and Reshape to
    (N 48) x 8, a Gemm by [8, 3] and back to N x 3 x 6 x 8"""
    node = helper.make_node
    nodes = [
        node("Reshape", ["image", "flat"], ["x"], name="flatten"),
        node("Transpose", ["x"], ["t"], name="tokens", perm=[0, 2, 1]),
        node("MatMul", ["t", "wqkv"], ["qkv"], name="qkv"),
        node("Reshape", ["qkv", "heads_shape"], ["qkv5"], name="heads"),
        node("Transpose", ["qkv5"], ["parts"], name="parts",
             perm=[2, 0, 3, 1, 4]),
        node("Gather", ["parts", "zero"], ["q"], name="query", axis=0),
        node("Shape", ["q"], ["q_shape"], name="query_shape"),
        node("Gather", ["q_shape", "three"], ["depth"], name="depth", axis=0),
        node("Cast", ["depth"], ["depth_f"], name="depth_f",
             to=TensorProto.FLOAT),
        node("Sqrt", ["depth_f"], ["root"], name="root"),
        node("Div", ["one_f", "root"], ["scale"], name="inverse_root"),
        node("Mul", ["q", "scale"], ["qs"], name="scale"),
        node("Slice", ["parts", "one", "two", "axis0"], ["k1"], name="key"),
        node("Squeeze", ["k1", "axis0"], ["k"], name="key_squeeze"),
        node("Gather", ["parts", "two_scalar"], ["v"], name="value", axis=0),
        node("Transpose", ["k"], ["kt"], name="key_t", perm=[0, 1, 3, 2]),
        node("Mul", ["kt", "half"], ["kts"], name="key_scale"),
        node("MatMul", ["qs", "kts"], ["scores"], name="scores"),
        node("Softmax", ["scores"], ["weights"], name="softmax", axis=-1),
        node("MatMul", ["weights", "v"], ["o"], name="attend"),
        node("Transpose", ["o"], ["ot"], name="merge", perm=[0, 2, 1, 3]),
        node("Reshape", ["ot", "merged_shape"], ["om"], name="merged"),
        node("Gemm", ["om", "wo"], ["y2"], name="project"),
        node("Reshape", ["y2", "rows_shape"], ["y"], name="rows"),
        node("Transpose", ["y"], ["yt"], name="channels", perm=[0, 2, 1]),
        node("Reshape", ["yt", "image_shape"], ["output"], name="unflatten"),
    ]
    inits = [i64("flat", [0, 3, 48]), i64("heads_shape", [0, 48, 3, 2, 4]),
             i64("merged_shape", [-1, 8]), i64("rows_shape", [-1, 48, 3]),
             i64("image_shape", [0, 3, 6, 8]),
             i64("zero", 0), i64("two_scalar", 2), i64("one", [1]),
             i64("two", [2]), i64("axis0", [0]), i64("three", 3),
             f32("one_f", 1.0), f32("half", 0.5),
             f32("wqkv", g.standard_normal((3, 24)) * 0.8),
             f32("wo", g.standard_normal((8, 3)) * 0.5)]
    return model(nodes, inits)


def ops_class_head_model(g):
    """A segmentation's head as FCN has it, on 16 and 32 channels: Conv
    3x3 of stride 2 (16), Relu, Conv 3x3 of stride 2 (32), Relu, Conv 3x3
    (32), Relu, then the classes, Conv 1x1 to 5 (not a multiple of 16,
    a small share of the products, at a quarter of the image's positions
    or fewer), and a linear Resize back to the image's size: the CPU
    backend keeps channel blocks of 16 for it on AVX-512 (cpu/plan.c)"""
    w, b = partial(conv_filters, g), partial(bias_values, g)
    node = helper.make_node
    nodes = [
        node("Conv", ["image", "w0", "b0"], ["c0"], name="stem",
             pads=[1, 1, 1, 1], strides=[2, 2]),
        node("Relu", ["c0"], ["r0"], name="stem_relu"),
        node("Conv", ["r0", "w1", "b1"], ["c1"], name="down",
             pads=[1, 1, 1, 1], strides=[2, 2]),
        node("Relu", ["c1"], ["r1"], name="down_relu"),
        node("Conv", ["r1", "w2", "b2"], ["c2"], name="body",
             pads=[1, 1, 1, 1]),
        node("Relu", ["c2"], ["r2"], name="body_relu"),
        node("Conv", ["r2", "w3", "b3"], ["classes"], name="classes"),
        node("Resize", ["classes", "", "scales"], ["output"], name="up",
             mode="linear"),
    ]
    inits = [f32("w0", w(16, 3, 3)), f32("b0", b(16)),
             f32("w1", w(32, 16, 3)), f32("b1", b(32)),
             f32("w2", w(32, 32, 3)), f32("b2", b(32)),
             f32("w3", w(5, 32, 1)), f32("b3", b(5)),
             f32("scales", [1.0, 1.0, 3.0, 4.0])]
    out = helper.make_tensor_value_info("output", TensorProto.FLOAT,
                                        ["N", 5, "H", "W"])
    return model(nodes, inits, outputs=[out])


def ops_image_head_model(g):
    """An image-to-image network's end: Conv 3x3 (16), Relu, Conv 3x3
    (16), Relu, Conv 1x1 to 3 at the image's size: the CPU backend leaves
    its layout to oneDNN (cpu/plan.c)"""
    w, b = partial(conv_filters, g), partial(bias_values, g)
    node = helper.make_node
    nodes = [
        node("Conv", ["image", "w0", "b0"], ["c0"], name="stem",
             pads=[1, 1, 1, 1]),
        node("Relu", ["c0"], ["r0"], name="stem_relu"),
        node("Conv", ["r0", "w1", "b1"], ["c1"], name="body",
             pads=[1, 1, 1, 1]),
        node("Relu", ["c1"], ["r1"], name="body_relu"),
        node("Conv", ["r1", "w2", "b2"], ["output"], name="to_image"),
    ]
    inits = [f32("w0", w(16, 3, 3)), f32("b0", b(16)),
             f32("w1", w(16, 16, 3)), f32("b1", b(16)),
             f32("w2", w(3, 16, 1)), f32("b2", b(3))]
    return model(nodes, inits)


OPS_MODELS = (
    ("ops-unary", ops_unary_model, 41, FOLD_SHAPE),
    ("ops-pads", ops_pads_model, 42, ODD_SHAPE),
    ("ops-bn", ops_bn_model, 43, FOLD_SHAPE),
    ("ops-layer-norm", ops_layer_norm_model, 44, FOLD_SHAPE),
    ("ops-split-argmax", ops_split_argmax_model, 45, FOLD_SHAPE),
    ("ops-where", ops_where_model, 46, FOLD_SHAPE),
    ("ops-hard-swish", ops_hard_swish_model, 47, FOLD_SHAPE),
    ("ops-affine", ops_affine_model, 48, FOLD_SHAPE),
    ("ops-eltwise-runs", ops_eltwise_runs_model, 49, FOLD_SHAPE),
    ("ops-depth-to-space", ops_depth_to_space_model, 50, FOLD_SHAPE),
    ("ops-channels-last", ops_channels_last_model, 51, FOLD_SHAPE),
    ("ops-shuffle-transpose", ops_shuffle_transpose_model, 52, FOLD_SHAPE),
    ("ops-wide-conv", ops_wide_conv_model, 53, FOLD_SHAPE),
    ("ops-broadcast", ops_broadcast_model, 54, FOLD_SHAPE),
    ("ops-plan-values", ops_plan_values_model, 55, FOLD_SHAPE),
    ("ops-residual", ops_residual_model, 59, FOLD_SHAPE),
    ("ops-channel-shuffle", ops_channel_shuffle_model, 60, FOLD_SHAPE),
    ("ops-lstm", ops_lstm_model, 61, FOLD_SHAPE),
    ("ops-gru-rnn", ops_gru_rnn_model, 62, FOLD_SHAPE),
    ("ops-lstm-wide", ops_lstm_wide_model, 66, (9, 3, 6, 8)),
    ("ops-swish", ops_swish_model, 63, FOLD_SHAPE),
    ("ops-residual-scale", ops_residual_scale_model, 64, FOLD_SHAPE),
    ("ops-chain-postops", ops_chain_postops_model, 65, FOLD_SHAPE),
    ("ops-se-blocks", ops_se_blocks_model, 67, FOLD_SHAPE),
    ("ops-gelu-formula", ops_gelu_formula_model, 68, FOLD_SHAPE),
    ("ops-leading-broadcast", ops_leading_broadcast_model, 69, FOLD_SHAPE),
    ("ops-linear-bias", ops_linear_bias_model, 70, FOLD_SHAPE),
    ("ops-full-reduce", ops_full_reduce_model, 71, FOLD_SHAPE),
    ("ops-bias-chain", ops_bias_chain_model, 72, FOLD_SHAPE),
    ("ops-concat-convs", ops_concat_convs_model, 73, FOLD_SHAPE),
    ("ops-winograd", ops_winograd_model, 74, (2, 3, 112, 112)),
    ("ops-upsample-output", ops_upsample_output_model, 75, FOLD_SHAPE),
    ("ops-attention", ops_attention_model, 76, FOLD_SHAPE),
    ("ops-qkv-attention", ops_qkv_attention_model, 77, FOLD_SHAPE),
    ("ops-narrow-groups", ops_narrow_groups_model, 78, FOLD_SHAPE),
    ("ops-channels-last-block", ops_channels_last_block_model, 79,
     FOLD_SHAPE),
    ("ops-chunk-concat", ops_chunk_concat_model, 80, FOLD_SHAPE),
    ("ops-dead-taps", ops_dead_taps_model, 81, FOLD_SHAPE),
    ("ops-class-head", ops_class_head_model, 82, FOLD_SHAPE),
    ("ops-image-head", ops_image_head_model, 83, FOLD_SHAPE),
)


def nhwc_model(g, scaled):
    """A channels-last input, N x H x W x 3 with H and W dynamic, as Keras
    exports: transposed to channels first at once (the engine's own
    Transpose and this one cancel), or (@scaled) after a Mul by a
    per-channel constant along the last axis; then Conv 3x3 and Sigmoid"""
    w = (g.standard_normal((3, 3, 3, 3)) * 0.4).astype(np.float32)
    nodes = [helper.make_node("Transpose", ["x"], ["nchw"], name="to_nchw",
                              perm=[0, 3, 1, 2]),
             helper.make_node("Conv", ["nchw", "w"], ["c"], name="conv",
                              pads=[1, 1, 1, 1]),
             helper.make_node("Sigmoid", ["c"], ["output"], name="squash")]
    inits = [f32("w", w)]
    if scaled:
        nodes.insert(0, helper.make_node("Mul", ["image", "s"], ["x"],
                                         name="scale"))
        inits.append(f32("s", g.uniform(0.5, 1.5, 3)))
    else:
        nodes[0].input[0] = "image"
    nhwc_in = helper.make_tensor_value_info("image", TensorProto.FLOAT,
                                            ["N", "H", "W", 3])
    return model(nodes, inits, inputs=[nhwc_in])


def gather_long_model(g):
    """A Gather of indices computed from the input's width (as PyTorch's
    dynamo exporter writes as_strided): the width reversed, W - 1 - Range
    (0, W), any number of them; then Conv 1x1"""
    w = (g.standard_normal((3, 3, 1, 1)) * 0.5).astype(np.float32)
    nodes = [
        helper.make_node("Shape", ["image"], ["s"], name="shape"),
        helper.make_node("Gather", ["s", "three"], ["width"], name="width",
                         axis=0),
        helper.make_node("Range", ["zero", "width", "one"], ["ramp"],
                         name="ramp"),
        helper.make_node("Sub", ["width", "one"], ["last"], name="last"),
        helper.make_node("Sub", ["last", "ramp"], ["rev"], name="rev"),
        helper.make_node("Gather", ["image", "rev"], ["flip"], name="flip",
                         axis=3),
        helper.make_node("Conv", ["flip", "w"], ["output"], name="mix"),
    ]
    inits = [i64("three", 3), i64("zero", 0), i64("one", 1), f32("w", w)]
    return model(nodes, inits)


# channels-last models: stem, scaled, seed
NHWC_MODELS = (("nhwc-transposed", False, 56), ("nhwc-scaled", True, 57))


def ops_models():
    for stem, make, seed, shape in OPS_MODELS:
        g = np.random.default_rng(seed)
        m = make(g)
        save(m, stem + ".onnx")
        write_tensor_reference(m, stem, g, shape)
    for stem, scaled, seed in NHWC_MODELS:
        g = np.random.default_rng(seed)
        m = nhwc_model(g, scaled)
        save(m, stem + ".onnx")
        write_tensor_reference(m, stem, g, (2, 6, 8, 3))
    # 80 indices: past the 64 a view holds itself
    g = np.random.default_rng(58)
    m = gather_long_model(g)
    save(m, "gather-long.onnx")
    write_tensor_reference(m, "gather-long", g, (1, 3, 2, 80))


if __name__ == "__main__":
    main()
