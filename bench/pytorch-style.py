#!/usr/bin/env python3
"""The style test net in PyTorch on a GPU, end to end, as the element runs it.

The network of tests/models/style.onnx (reflect Pad, Conv, InstanceNorm,
stride-2 Conv, a residual block, ConvTranspose, Conv to 3 channels,
Sigmoid), with its weights from tests/models/style.weights.npz, which
tests/models/generate.py writes beside it (so no onnx package is needed).
Before timing, the script checks its network against onnxruntime's output
for tests/models/style.frame.rgb (style.ort.out.bin) and stops if they
differ: the figures are only worth comparing for the same computation.

It then pushes FRAMES frames of WIDTHxHEIGHT RGB bytes in batches of BATCH,
as the element gets them, through the whole path the element takes:
bytes in pinned host memory, to the GPU, to float NCHW / 255, the network,
back to bytes (x 255, rounded, clamped), to the host; with
torch.backends.cudnn.benchmark = True. A short last batch runs at its real
size, as PyTorch code does. It prints each batch's time, the first/median
and last/median ratios, and `fps N` (frames over the batches' time).

  python3 bench/pytorch-style.py [--width 1280] [--height 720]
      [--batch 16] [--frames 120] [--device cuda]

scripts/gpu-check.sh runs it beside bench/first-last-batch and prints the
ratio of the two.
"""
import argparse
import os
import statistics
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.join(os.path.dirname(HERE), "tests", "models")


def build(torch, weights):
    nn = torch.nn

    def conv(name, stride=1, padding=0):
        w = torch.from_numpy(weights[name])
        c = nn.Conv2d(w.shape[1], w.shape[0], w.shape[2], stride=stride,
                      padding=padding, bias=False)
        c.weight.data.copy_(w)
        return c

    def norm(name, eps):
        g = torch.from_numpy(weights[name + ".g"])
        n = nn.InstanceNorm2d(g.shape[0], eps=eps, affine=True)
        n.weight.data.copy_(g)
        n.bias.data.copy_(torch.from_numpy(weights[name + ".b"]))
        return n

    class Style(nn.Module):
        def __init__(self):
            super().__init__()
            self.pad = nn.ReflectionPad2d(1)
            self.conv1, self.norm1 = conv("w1"), norm("n1", 1e-5)
            self.down, self.norm2 = conv("w2", 2, 1), norm("n2", 1e-3)
            self.res_conv, self.res_norm = conv("wr"), norm("n3", 1e-5)
            wt = torch.from_numpy(weights["wt"])
            self.up = nn.ConvTranspose2d(wt.shape[0], wt.shape[1],
                                         wt.shape[2], stride=2, padding=1,
                                         output_padding=1, bias=False)
            self.up.weight.data.copy_(wt)
            self.out_conv = conv("wo")

        def forward(self, x):
            relu = torch.relu
            a = relu(self.norm1(self.conv1(self.pad(x))))
            b = relu(self.norm2(self.down(a)))
            r = b + self.res_norm(self.res_conv(self.pad(b)))
            u = relu(self.up(r))
            return torch.sigmoid(self.out_conv(self.pad(u)))

    return Style().eval()


def check(torch, net, device):
    frame = np.fromfile(os.path.join(MODELS, "style.frame.rgb"), np.uint8)
    ref = np.fromfile(os.path.join(MODELS, "style.ort.out.bin"), np.float32)
    x = torch.from_numpy(frame.reshape(1, 24, 32, 3)).to(device)
    with torch.no_grad():
        y = net(x.permute(0, 3, 1, 2).float() / 255.0).cpu().numpy()
    err = float(np.abs(y.ravel() - ref).max())
    if err > 1e-4:
        sys.exit("the PyTorch net differs from onnxruntime's output by %g: "
                 "not the same computation" % err)
    return err


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--width", type=int, default=1280)
    ap.add_argument("--height", type=int, default=720)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--frames", type=int, default=120)
    ap.add_argument("--device", default="cuda")
    args = ap.parse_args()
    try:
        import torch
    except ImportError:
        sys.exit("PyTorch is not installed here")
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        sys.exit("no CUDA device for PyTorch")
    torch.backends.cudnn.benchmark = True
    # plain FP32, as the element computes
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    sync = torch.cuda.synchronize if args.device.startswith("cuda") else \
        (lambda: None)

    weights = dict(np.load(os.path.join(MODELS, "style.weights.npz")))
    net = build(torch, weights).to(args.device)
    err = check(torch, net, args.device)

    rng = np.random.default_rng(1)
    frames = rng.integers(0, 256, (args.frames, args.height, args.width, 3),
                          dtype=np.uint8)
    pinned = torch.from_numpy(frames)
    if args.device.startswith("cuda"):
        pinned = pinned.pin_memory()
    out = torch.empty_like(pinned)
    times = []
    with torch.no_grad():
        for start in range(0, args.frames, args.batch):
            end = min(start + args.batch, args.frames)
            sync()
            t0 = time.perf_counter()
            x = pinned[start:end].to(args.device, non_blocking=True)
            y = net(x.permute(0, 3, 1, 2).float().div_(255.0))
            y = y.mul_(255.0).round_().clamp_(0, 255).to(torch.uint8)
            out[start:end].copy_(y.permute(0, 2, 3, 1))
            sync()
            times.append((time.perf_counter() - t0) * 1000.0)
    med = statistics.median(times)
    print("PyTorch %s, %s, batch %d, %dx%d, %d frames; matches onnxruntime "
          "within %.1g" % (torch.__version__, args.device, args.batch,
                           args.width, args.height, args.frames, err))
    for i, t in enumerate(times):
        print("batch %2d  %8.2f ms" % (i, t))
    print("first/median %.2f  last/median %.2f" % (times[0] / med,
                                                   times[-1] / med))
    print("fps %.1f" % (args.frames * 1000.0 / sum(times)))


if __name__ == "__main__":
    main()
