#!/usr/bin/env python3
"""Exports the PyTorch models of tests/real-models/exported/ with PyTorch's
own ONNX exporters, as a user's model reaches the element: a CRNN text
recogniser (convolutions, then a two-layer bidirectional LSTM or GRU over
the feature map's columns, a linear head and a softmax), random weights
(seeded): run.py compares the engine with onnxruntime on the same file.

The files are committed, so CI needs no PyTorch; this script is how they
were made, to run again after a change of exporter. It needs torch (2.9.1
was used) and onnxscript, which the project's venv does not carry; in a
venv of its own, from the repository root:

    python3 -m venv /var/tmp/torch-venv
    /var/tmp/torch-venv/bin/pip install torch==2.9.1 onnxscript onnx \
        onnxruntime==1.32.0
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


def main():
    os.makedirs(OUT, exist_ok=True)
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
