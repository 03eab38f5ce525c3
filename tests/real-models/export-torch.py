#!/usr/bin/env python3
"""Exports the PyTorch models of tests/real-models/exported/ with PyTorch's
own ONNX exporters, as a user's model reaches the element, with random
weights (seeded; run.py compares the engine with onnxruntime on the same
file), small enough to commit: a CRNN text recogniser (convolutions, then
a two-layer bidirectional LSTM or GRU over the feature map's columns, a
linear head and a softmax), a classifier and a segmenter built from
torchvision's own modules (MobileNetV3-Small, LR-ASPP on MobileNetV3-Large,
both at a quarter of their width), and a detector, ultralytics' YOLOv8
built from its yaml at 1/16 of the n scale's width.

The files are committed, so CI needs no PyTorch; this script is how they
were made, to run again after a change of exporter. It needs torch (2.9.1
was used) and onnxscript, which the project's venv does not carry; in a
venv of its own, from the repository root:

    python3 -m venv /var/tmp/torch-venv
    /var/tmp/torch-venv/bin/pip install torch==2.9.1 torchvision==0.24.1 \
        onnxscript onnx onnxruntime==1.32.0 ultralytics==8.3.40
    /var/tmp/torch-venv/bin/python3 tests/real-models/export-torch.py

It writes, with both exporters where they succeed:
- crnn-lstm-torchscript.onnx, crnn-gru-torchscript.onnx: the TorchScript
  exporter (dynamo=False, opset 17), batch and width dynamic; the initial
  states are zeros expanded to the batch by a computed shape;
- crnn-lstm-dynamo.onnx, crnn-gru-dynamo.onnx (+ .onnx.data, the weights
  as external data): the dynamo exporter (torch.export, the default since
  2.9), the batch dynamic (declared from 2: torch.export specialises a
  dimension that may be 1) and the width fixed at the example's 96 (with
  the width dynamic too, torch.export fails on the GRU). A model it cannot
  export is named and skipped.
"""
import os

import torch
import torch.nn as nn
import torchvision
from torchvision.models import mobilenetv3
from torchvision.models._utils import IntermediateLayerGetter
from torchvision.models.segmentation.lraspp import LRASPP

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "exported")


class CRNN(nn.Module):
    """3 x 32 x W in, W / 4 steps of 11 class scores out"""

    def __init__(self, rnn):
        super().__init__()
        self.cnn = nn.Sequential(
            nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d((2, 1)),
            nn.Conv2d(32, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d((2, 1)),
            nn.Conv2d(32, 32, (4, 1)), nn.ReLU())
        layer = nn.LSTM if rnn == "lstm" else nn.GRU
        self.rnn = layer(32, 24, num_layers=2, bidirectional=True)
        self.fc = nn.Linear(48, 11)

    def forward(self, x):
        f = self.cnn(x).squeeze(2).permute(2, 0, 1)   # [W / 4, N, 32]
        y, _ = self.rnn(f)
        return self.fc(y).permute(1, 0, 2).softmax(-1)


def export_both(model, name, x, dynamo=True):
    """@model to NAME-torchscript.onnx (opset 17) and NAME-dynamo.onnx,
    the batch dynamic"""
    torch.onnx.export(model, (x,), os.path.join(OUT, f"{name}-torchscript.onnx"),
                      dynamo=False, opset_version=17, input_names=["x"],
                      output_names=["y"],
                      dynamic_axes={"x": {0: "N"}, "y": {0: "N"}})
    if dynamo:
        torch.onnx.export(model, (x,), os.path.join(OUT, f"{name}-dynamo.onnx"),
                          dynamo=True, input_names=["x"], output_names=["y"],
                          dynamic_shapes={"x": {0: torch.export.Dim(
                              "N", min=2, max=64)}})


class SegmentationOut(nn.Module):
    """torchvision's segmenters return a dict: its "out" score map"""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(x)["out"]


def vision_models():
    torch.manual_seed(0)
    setting, last = mobilenetv3._mobilenet_v3_conf("mobilenet_v3_small",
                                                   width_mult=0.25)
    cls = mobilenetv3.MobileNetV3(setting, last, num_classes=10).eval()
    export_both(cls, "mobilenet_v3_small_x025", torch.randn(2, 3, 224, 224))

    # torchvision's lraspp_mobilenet_v3_large, its backbone at 1/4
    setting, last = mobilenetv3._mobilenet_v3_conf(
        "mobilenet_v3_large", width_mult=0.25, dilated=True)
    features = mobilenetv3.MobileNetV3(setting, last).features
    stages = [0] + [i for i, b in enumerate(features)
                    if getattr(b, "_is_cn", False)] + [len(features) - 1]
    low, high = stages[-4], stages[-1]
    backbone = IntermediateLayerGetter(
        features, return_layers={str(low): "low", str(high): "high"})
    seg = LRASPP(backbone, features[low].out_channels,
                 features[high].out_channels, num_classes=3,
                 inter_channels=32).eval()
    export_both(SegmentationOut(seg).eval(), "lraspp_mobilenet_v3_x025",
                torch.randn(2, 3, 256, 256))

    torch.manual_seed(0)
    det = yolov8_for_export("t", 4, [0.33, 0.0625, 1024])
    # and ultralytics' dry run, which makes the anchors for the export's
    # size constants
    x = torch.randn(2, 3, 320, 320)
    det(x)
    export_both(det, "yolov8t", x, dynamo=False)


def yolov8_for_export(scale, nc, scales=None):
    """ultralytics' YOLOv8 built from its yaml at @scale (one of the
    yaml's, or @scales: [depth, width, max channels]) for @nc classes,
    with what ultralytics' exporter sets: the raw head, no NMS
    (bench/export-torchvision.py builds its YOLOv8n here too)"""
    import ultralytics
    import yaml
    from ultralytics.nn.tasks import DetectionModel
    with open(os.path.join(os.path.dirname(ultralytics.__file__),
                           "cfg/models/v8/yolov8.yaml")) as f:
        cfg = yaml.safe_load(f)
    if scales:
        cfg["scales"] = {scale: scales}
    cfg["scale"] = scale
    cfg["nc"] = nc
    det = DetectionModel(cfg, ch=3, nc=nc, verbose=False).eval()
    for module in det.modules():
        if hasattr(module, "export"):
            module.export = True
        if hasattr(module, "format"):
            module.format = "onnx"
    return det


def main():
    os.makedirs(OUT, exist_ok=True)
    vision_models()
    for rnn in ("lstm", "gru"):
        torch.manual_seed(0)
        m = CRNN(rnn).eval()
        # BatchNorm's running statistics away from the identity
        with torch.no_grad():
            m.cnn[1].running_mean.uniform_(-0.5, 0.5)
            m.cnn[1].running_var.uniform_(0.5, 2.0)
        x = torch.randn(2, 3, 32, 96)
        torch.onnx.export(
            m, (x,), os.path.join(OUT, f"crnn-{rnn}-torchscript.onnx"),
            dynamo=False, opset_version=17, input_names=["x"],
            output_names=["y"],
            dynamic_axes={"x": {0: "N", 3: "W"}, "y": {0: "N", 1: "T"}})
        try:
            torch.onnx.export(
                m, (x,), os.path.join(OUT, f"crnn-{rnn}-dynamo.onnx"),
                dynamo=True, input_names=["x"], output_names=["y"],
                dynamic_shapes={"x": {0: torch.export.Dim("N", min=2,
                                                          max=64)}})
        except Exception as e:  # noqa: BLE001 (the exporter's own failure)
            print(f"crnn-{rnn}-dynamo.onnx: not exported: "
                  f"{str(e).splitlines()[0]}")
    # the LSTM of onnxruntime's own default would become its contrib op
    # DynamicQuantizeLSTM: the standard ops only
    from onnxruntime.quantization import QuantType, quantize_dynamic
    quantize_dynamic(os.path.join(OUT, "crnn-lstm-torchscript.onnx"),
                     os.path.join(OUT, "crnn-lstm-dynquant.onnx"),
                     op_types_to_quantize=["MatMul", "Conv"],
                     weight_type=QuantType.QInt8)


if __name__ == "__main__":
    main()
