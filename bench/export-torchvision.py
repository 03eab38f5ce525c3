#!/usr/bin/env python3
"""Exports torchvision networks (and ultralytics' YOLOv8n) to ONNX as users
export them, for the benchmarks (bench/onnxruntime-compare.py,
bench/precision-compare.py) and the real-model checks.

Each network of NETWORKS, built with random weights (torch.manual_seed(0),
weights=None: nothing is downloaded), goes out through both of PyTorch's
exporters: the TorchScript one (torch.onnx.export(dynamo=False,
opset_version=17)) and the dynamo one (dynamo=True, the default since
torch 2.9, which writes the weights to a .onnx.data file beside the
model). The batch dimension is dynamic; height and width are fixed at
--size (the networks' own 224). The full-width counterparts of the
thinned models that tests/real-models/exported/ commits are here too:
MobileNetV3-Small, LR-ASPP on MobileNetV3-Large (its "out" score map, 21
classes) and YOLOv8n (ultralytics' n scale, 80 classes, the raw head as
ultralytics' exporter writes it: TorchScript exporter only, as for the
tree's yolov8t; its anchors make --size part of the model, so export it
with --size 320 to time it at 320x320; needs ultralytics, the line
below). Files go to --out (default
/var/tmp/cbi-torch-models) as NAME-torchscript.onnx and NAME-dynamo.onnx;
one that is there already is kept (--force makes it again).

Needs torch, torchvision and onnxscript, which the project's venv does not
hold (they pull gigabytes of CUDA libraries): run it with a Python that
has them, e.g. `python3 -m venv /var/tmp/torch-venv` and
`/var/tmp/torch-venv/bin/pip install torch==2.9.1 torchvision==0.24.1
onnxscript` (and `ultralytics==8.3.40` for yolov8n):

  /var/tmp/torch-venv/bin/python3 bench/export-torchvision.py
      [--out DIR] [--size 224] [--force] [NAME...]

Prints one line per file: its path, or why it failed (exit status 1 when
one failed).
"""
import argparse
import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

NETWORKS = {
    # the networks of issue 25's table
    "resnet50": "resnet50",
    "shufflenet_v2_x1_0": "shufflenet_v2_x1_0",
    # squeeze-and-excitation (issue 24) and depthwise convolutions
    "mobilenet_v3_large": "mobilenet_v3_large",
    "efficientnet_b0": "efficientnet_b0",
    "regnet_y_400mf": "regnet_y_400mf",
    # grouped convolutions with a bias
    "resnext50_32x4d": "resnext50_32x4d",
    "mobilenet_v2": "mobilenet_v2",
    # the full widths of the thinned exports of tests/real-models/
    "mobilenet_v3_small": "mobilenet_v3_small",
    "lraspp_mobilenet_v3_large": "segmentation.lraspp_mobilenet_v3_large",
    "yolov8n": None,
    # the rest of issue 44's family table: a wider RegNet, fire modules,
    # depthwise 7x7 convolutions with LayerNorm and GELU (ConvNeXt),
    # transformers (ViT's attention, Swin's shifted windows), atrous
    # segmenters, and an image-to-image U-Net (UNet below)
    "regnet_y_800mf": "regnet_y_800mf",
    "squeezenet1_1": "squeezenet1_1",
    "convnext_tiny": "convnext_tiny",
    "vit_b_16": "vit_b_16",
    "swin_t": "swin_t",
    "deeplabv3_mobilenet_v3_large":
        "segmentation.deeplabv3_mobilenet_v3_large",
    "fcn_resnet50": "segmentation.fcn_resnet50",
    "unet": None,
}


def build(name):
    """network @name with random weights, in eval mode"""
    import torchvision

    if name == "yolov8n":
        return build_yolov8n()
    if name == "unet":
        return build_unet()
    module = torchvision.models
    *packages, attr = NETWORKS[name].split(".")
    for package in packages:
        module = getattr(module, package)
    if packages == ["segmentation"]:
        return SegmentationOut(getattr(module, attr)(
            weights=None, weights_backbone=None)).eval()
    return getattr(module, attr)(weights=None).eval()


def SegmentationOut(model):
    """torchvision's segmenters return a dict: its "out" score map"""
    import torch

    class Out(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = model

        def forward(self, x):
            return self.model(x)["out"]

    return Out()


def build_unet(base=32, levels=4):
    """Ronneberger et al.'s U-Net as image-to-image nets are written (two
    3x3 convolutions with BatchNorm and ReLU a level, max-pooling down,
    transposed convolutions up, skip connections concatenated), @base
    channels doubling at each of @levels, 3 channels in and out (a
    sigmoid: an image)"""
    import torch
    from torch import nn

    def block(cin, cout):
        return nn.Sequential(
            nn.Conv2d(cin, cout, 3, padding=1, bias=False),
            nn.BatchNorm2d(cout), nn.ReLU(inplace=True),
            nn.Conv2d(cout, cout, 3, padding=1, bias=False),
            nn.BatchNorm2d(cout), nn.ReLU(inplace=True))

    class UNet(nn.Module):
        def __init__(self):
            super().__init__()
            widths = [base << i for i in range(levels + 1)]
            self.down = nn.ModuleList(
                [block(3, widths[0])] + [block(widths[i], widths[i + 1])
                                         for i in range(levels)])
            self.up = nn.ModuleList(
                [nn.ConvTranspose2d(widths[i + 1], widths[i], 2, stride=2)
                 for i in reversed(range(levels))])
            self.merge = nn.ModuleList(
                [block(widths[i] * 2, widths[i])
                 for i in reversed(range(levels))])
            self.head = nn.Conv2d(widths[0], 3, 1)

        def forward(self, x):
            skips = []
            for i, down in enumerate(self.down):
                x = down(x if i == 0 else nn.functional.max_pool2d(x, 2))
                skips.append(x)
            for up, merge, skip in zip(self.up, self.merge,
                                       reversed(skips[:-1])):
                x = merge(torch.cat([up(x), skip], 1))
            return torch.sigmoid(self.head(x))

    return UNet().eval()


def build_yolov8n():
    """ultralytics' YOLOv8n (80 classes) as tests/real-models/export-torch.py
    builds its thinned one: set up as ultralytics' ONNX exporter sets it"""
    spec = importlib.util.spec_from_file_location(
        "export_torch", os.path.join(os.path.dirname(HERE), "tests",
                                     "real-models", "export-torch.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.yolov8_for_export("n", 80)


def export(name, exporter, out, size, force):
    import torch

    path = os.path.join(out, "%s-%s.onnx" % (name, exporter))
    if os.path.exists(path) and not force:
        return path
    torch.manual_seed(0)
    model = build(name)
    x = torch.randn(2, 3, size, size)
    if name == "yolov8n":
        if exporter != "torchscript":
            return None
        model(x)  # ultralytics' dry run: the anchors for @size
    if exporter == "torchscript":
        torch.onnx.export(model, (x,), path, dynamo=False, opset_version=17,
                          input_names=["input"], output_names=["output"],
                          dynamic_axes={"input": {0: "batch"},
                                        "output": {0: "batch"}})
    else:
        # min 2: with 1 allowed, torch.export specialises ShuffleNet's
        # channel shuffle to a batch of one; the graph takes any batch
        batch = torch.export.Dim("batch", min=2, max=1024)
        program = torch.onnx.export(model, (x,), dynamo=True,
                                    input_names=["input"],
                                    output_names=["output"],
                                    dynamic_shapes=({0: batch},),
                                    external_data=True)
        program.save(path, external_data=True)
    return path


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("names", nargs="*", help="networks (default: all)")
    ap.add_argument("--out", default="/var/tmp/cbi-torch-models")
    ap.add_argument("--size", type=int, default=224)
    ap.add_argument("--force", action="store_true")
    args = ap.parse_args()
    names = args.names or list(NETWORKS)
    unknown = [n for n in names if n not in NETWORKS]
    if unknown:
        sys.exit("unknown network(s): %s (known: %s)"
                 % (", ".join(unknown), ", ".join(NETWORKS)))
    os.makedirs(args.out, exist_ok=True)
    failed = 0
    for name in names:
        for exporter in ("torchscript", "dynamo"):
            try:
                path = export(name, exporter, args.out, args.size, args.force)
                if path:
                    print(path, flush=True)
            except Exception as e:  # an exporter's failure is a result
                failed += 1
                first = str(e).strip().splitlines()[0] if str(e) else ""
                print("FAILED %s (%s): %s: %s" % (name, exporter,
                                                  type(e).__name__, first),
                      flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
