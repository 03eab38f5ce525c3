#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""A real Triton Inference Server serving ONNX files: PyTriton
(`nvidia-pytriton` on PyPI) starts the tritonserver binary it bundles and
binds an onnxruntime function to each model, for the remote backend's
checks against Triton.

    triton-server.py --model style=tests/models/style.onnx --max-batch 16

Every model batches (max_batch_size, --max-batch) with Triton's dynamic
batcher left at its defaults (no delay: a request of a whole batch runs
as it comes). Triton's HTTP, gRPC and metrics endpoints are bound to
127.0.0.1 only. It prints `PORT <n>` (HTTP) once Triton serves.
"""

import argparse
import os
import socket
import sys

import numpy as np
import onnxruntime as ort
from pytriton.decorators import batch
from pytriton.model_config import ModelConfig, Tensor
from pytriton.triton import Triton, TritonConfig, TritonSecurityConfig


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def bind_onnx(triton, name, path, max_batch):
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(path, options,
                                   providers=["CPUExecutionProvider"])
    inputs = session.get_inputs()
    outputs = session.get_outputs()

    @batch
    def infer(**feeds):
        results = session.run(None, {k: v.astype(np.float32, copy=False)
                                     for k, v in feeds.items()})
        return {o.name: y for o, y in zip(outputs, results)}

    def tensors(items):
        # Triton's shapes leave the batch out
        return [Tensor(name=t.name, dtype=np.float32,
                       shape=tuple(d if isinstance(d, int) else -1
                                   for d in t.shape[1:]))
                for t in items]

    triton.bind(model_name=name, infer_func=infer, inputs=tensors(inputs),
                outputs=tensors(outputs),
                config=ModelConfig(max_batch_size=max_batch),
                strict=False)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--model", action="append", required=True,
                    help="NAME=PATH of an ONNX file")
    ap.add_argument("--max-batch", type=int, default=16)
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--log-file", default=os.devnull,
                    help="tritonserver's log (it writes it to stdout "
                    "otherwise, which carries the PORT line)")
    args = ap.parse_args()
    port = args.port or free_port()
    config = TritonConfig(http_address="127.0.0.1", http_port=port,
                          grpc_address="127.0.0.1", grpc_port=free_port(),
                          metrics_port=free_port(), allow_metrics=False,
                          log_file=args.log_file)
    # statistics open (bench/remote-compare.py reads the server's compute
    # time from them), PyTriton's other restrictions kept
    security = TritonSecurityConfig(restricted_endpoints=[
        "shared-memory", "model-repository", "trace", "logging"])
    with Triton(config=config, security_config=security) as triton:
        for spec in args.model:
            name, path = spec.split("=", 1)
            bind_onnx(triton, name, path, args.max_batch)
        triton.run()
        print("PORT %d" % port, flush=True)
        triton.serve()
    return 0


if __name__ == "__main__":
    sys.exit(main())
