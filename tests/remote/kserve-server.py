#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The `kserve` package's model server (KServe's own Python server: v2
REST with the binary tensor data extension) serving ONNX files through
onnxruntime, for the remote backend's checks against a real server.

    kserve-server.py --port 8000 --model style=tests/models/style.onnx

KServe's REST server binds every address; this one is bound to 127.0.0.1
only (the tests' rule), by giving uvicorn that host. It prints `PORT <n>`
when it starts; its health endpoint says when it is ready.
"""

import argparse
import socket
import sys

import numpy as np
import onnxruntime as ort
import uvicorn

import kserve
from kserve import InferOutput, InferRequest, InferResponse, Model, ModelServer


class OnnxModel(Model):
    def __init__(self, name, path):
        super().__init__(name)
        self.path = path
        self.session = None
        self.load()

    def load(self):
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        self.session = ort.InferenceSession(self.path, options,
                                            providers=["CPUExecutionProvider"])
        self.ready = True
        return self.ready

    @staticmethod
    def types(tensors):
        return [{"name": t.name, "datatype": "FP32",
                 "shape": [d if isinstance(d, int) else -1 for d in t.shape]}
                for t in tensors]

    def get_input_types(self):
        return self.types(self.session.get_inputs())

    def get_output_types(self):
        return self.types(self.session.get_outputs())

    async def predict(self, payload: InferRequest, headers=None,
                      response_headers=None) -> InferResponse:
        feeds = {i.name: i.as_numpy().astype(np.float32, copy=False)
                 for i in payload.inputs}
        names = [o.name for o in self.session.get_outputs()]
        results = self.session.run(None, feeds)
        binary = payload.use_binary_outputs or any(
            (r.parameters or {}).get("binary_data")
            for r in (payload.request_outputs or []))
        outputs = []
        for name, y in zip(names, results):
            out = InferOutput(name=name, shape=list(y.shape), datatype="FP32")
            out.set_data_from_numpy(np.ascontiguousarray(y, dtype=np.float32),
                                    binary_data=binary)
            outputs.append(out)
        return InferResponse(model_name=self.name, infer_outputs=outputs,
                             response_id=payload.id,
                             use_binary_outputs=binary,
                             requested_outputs=payload.request_outputs)


def local_only():
    """uvicorn's Config, bound to 127.0.0.1 whatever KServe asks."""
    config = uvicorn.Config

    class LocalConfig(config):
        def __init__(self, *args, **kwargs):
            kwargs["host"] = "127.0.0.1"
            super().__init__(*args, **kwargs)

    kserve.protocol.rest.server.uvicorn.Config = LocalConfig


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--model", action="append", required=True,
                    help="NAME=PATH of an ONNX file")
    ap.add_argument("--port", type=int, default=0)
    args = ap.parse_args()
    port = args.port or free_port()
    models = [OnnxModel(*spec.split("=", 1)) for spec in args.model]
    local_only()
    print("PORT %d" % port, flush=True)
    ModelServer(http_port=port, enable_grpc=False, workers=1).start(models)
    return 0


if __name__ == "__main__":
    sys.exit(main())
