#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""A KServe v2 (Open Inference protocol) server over HTTP, on the Python
standard library and onnxruntime, for the remote backend's tests.

It serves ONNX files as the protocol says (health, model readiness,
metadata, inference with Triton's binary tensor data extension both ways,
and Triton's model configuration where --max-batch gives one), and it
fails on purpose where told to, deterministically: after a model's first
AFTER inference requests, each next one gets the fault.

    v2server.py --model style=tests/models/style.onnx \\
        --model broken=tests/models/style.onnx:error500:2

Faults: error500 (HTTP 500 with an error message), slow:SECONDS (the reply
late), slower:SECONDS (the k-th faulty reply k x SECONDS late), reset (the connection closed without a reply), truncate (half the
reply body, then closed), badjson (a binary reply whose JSON header is
not JSON), shape (an output of another shape than the input asks for),
json (outputs as JSON data, not binary), duplicate (each output sent
twice), die (the server exits, as a crashed one).

It listens on 127.0.0.1 only, on --port (0: a free one), and prints
`PORT <n>` on its first line once it listens.
"""

import argparse
import json
import os
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import onnxruntime as ort

JSON_LENGTH = "Inference-Header-Content-Length"


class Model:
    def __init__(self, name, path, fault, after, max_batch):
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        self.name = name
        self.session = ort.InferenceSession(path, options,
                                            providers=["CPUExecutionProvider"])
        self.fault = fault
        self.after = after
        self.max_batch = max_batch
        self.served = 0
        self.lock = threading.Lock()

    def tensors(self, items):
        out = []
        for t in items:
            shape = [d if isinstance(d, int) else -1 for d in t.shape]
            out.append({"name": t.name, "datatype": "FP32", "shape": shape})
        return out

    def metadata(self):
        return {"name": self.name, "versions": ["1"],
                "platform": "onnxruntime_onnx",
                "inputs": self.tensors(self.session.get_inputs()),
                "outputs": self.tensors(self.session.get_outputs())}

    def next_fault(self):
        """The fault of this request, or None."""
        with self.lock:
            self.served += 1
            if self.fault and self.served > self.after:
                return self.fault
        return None


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    models = {}

    def log_message(self, fmt, *args):
        pass

    def reply(self, status, body, headers=()):
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def reply_json(self, status, obj):
        self.reply(status, json.dumps(obj).encode(),
                   [("Content-Type", "application/json")])

    def model_of(self, parts):
        """The model of a /v2/models/<name>[/versions/<v>]/... path, and
        the rest of the path."""
        if len(parts) < 3 or parts[:2] != ["v2", "models"]:
            return None, None
        model = self.models.get(parts[2])
        rest = parts[3:]
        if len(rest) >= 2 and rest[0] == "versions":
            if rest[1] != "1":
                return None, None
            rest = rest[2:]
        return model, rest

    def do_GET(self):
        parts = [p for p in self.path.split("/") if p]
        if parts in (["v2", "health", "ready"], ["v2", "health", "live"]):
            return self.reply_json(200, {"ready": True})
        if parts == ["v2"]:
            return self.reply_json(200, {"name": "cbi-v2server",
                                         "version": "1",
                                         "extensions": ["binary_tensor_data"]})
        model, rest = self.model_of(parts)
        if model is None:
            return self.reply_json(404, {"error": "no model at " + self.path})
        if rest == []:
            return self.reply_json(200, model.metadata())
        if rest == ["ready"]:
            return self.reply_json(200, {"name": model.name, "ready": True})
        if rest == ["config"] and model.max_batch is not None:
            return self.reply_json(200, {"name": model.name,
                                         "max_batch_size": model.max_batch})
        return self.reply_json(404, {"error": "no such endpoint " + self.path})

    def read_request(self):
        """The request's JSON header and its inputs as arrays."""
        length = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(length)
        json_length = int(self.headers.get(JSON_LENGTH, str(length)))
        header = json.loads(body[:json_length])
        at = json_length
        inputs = {}
        for t in header["inputs"]:
            size = t.get("parameters", {}).get("binary_data_size")
            if size is None:
                data = np.asarray(t["data"], dtype=np.float32)
            else:
                data = np.frombuffer(body[at:at + size], dtype="<f4")
                at += size
            inputs[t["name"]] = data.reshape(t["shape"])
        return header, inputs

    def do_POST(self):
        parts = [p for p in self.path.split("/") if p]
        model, rest = self.model_of(parts)
        if model is None or rest != ["infer"]:
            return self.reply_json(404, {"error": "no model at " + self.path})
        try:
            header, inputs = self.read_request()
        except (ValueError, KeyError) as e:
            return self.reply_json(400, {"error": "bad request: %s" % e})
        fault = model.next_fault()
        if fault == "error500":
            return self.reply_json(500, {"error": "injected failure on "
                                         "request %d" % model.served})
        if fault == "die":
            os._exit(3)
        if fault == "reset":
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        if fault and fault.startswith("slow:"):
            time.sleep(float(fault.split(":", 1)[1]))
        if fault and fault.startswith("slower:"):
            time.sleep(float(fault.split(":", 1)[1])
                       * (model.served - model.after))
        try:
            results = model.session.run(None, inputs)
        except Exception as e:  # onnxruntime's own errors, as Triton does
            return self.reply_json(400, {"error": str(e)})
        names = [o.name for o in model.session.get_outputs()]
        asked = [o["name"] for o in header.get("outputs", [])] or names
        binary = header.get("parameters", {}).get("binary_data_output", False)
        binary = binary or any(o.get("parameters", {}).get("binary_data")
                               for o in header.get("outputs", []))
        if fault == "json":
            binary = False
        outputs, blobs = [], []
        for name in asked:
            y = np.ascontiguousarray(results[names.index(name)],
                                     dtype="<f4")
            shape = list(y.shape)
            if fault == "shape":
                shape[-1] += 1
            entry = {"name": name, "datatype": "FP32", "shape": shape}
            if binary:
                entry["parameters"] = {"binary_data_size": y.nbytes}
                blobs.append(y.tobytes())
            else:
                entry["data"] = y.ravel().tolist()
            outputs.append(entry)
            if fault == "duplicate":
                outputs.append(entry)
                blobs.append(y.tobytes())
        text = json.dumps({"model_name": model.name, "model_version": "1",
                           "outputs": outputs}).encode()
        if fault == "badjson":
            text = b"{not json" + b" " * 8
        if not binary:
            return self.reply(200, text, [("Content-Type",
                                           "application/json")])
        body = text + b"".join(blobs)
        headers = [("Content-Type", "application/octet-stream"),
                   (JSON_LENGTH, str(len(text)))]
        if fault == "truncate":
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            for k, v in headers:
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(body[:len(body) // 2])
            self.wfile.flush()
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        self.reply(200, body, headers)


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        # a client that hung up (the element's timeout) is no news
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--model", action="append", default=[], required=True,
                    help="NAME=PATH[:FAULT[:AFTER]] (AFTER: good requests "
                    "first, default 0)")
    ap.add_argument("--max-batch", action="append", default=[],
                    help="NAME=N: Triton's max_batch_size of model NAME")
    ap.add_argument("--port", type=int, default=0)
    args = ap.parse_args()
    max_batch = dict(m.split("=", 1) for m in args.max_batch)
    for spec in args.model:
        name, rest = spec.split("=", 1)
        path, fault, after = rest, None, 0
        if ":" in rest:
            path, fault = rest.split(":", 1)
            if fault.startswith(("slow:", "slower:")):
                bits = fault.split(":")
                fault = bits[0] + ":" + bits[1]
                after = int(bits[2]) if len(bits) > 2 else 0
            elif ":" in fault:
                fault, after = fault.split(":", 1)
                after = int(after)
        mb = int(max_batch[name]) if name in max_batch else None
        Handler.models[name] = Model(name, path, fault, after, mb)
    server = Server(("127.0.0.1", args.port), Handler)
    print("PORT %d" % server.server_address[1], flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
