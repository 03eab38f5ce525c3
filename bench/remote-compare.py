#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""backend=remote against the same server driven from Python, and the
local CPU backend, in one run.

Starts a server on 127.0.0.1 serving MODEL (Triton through PyTriton where
.venv-triton exists, which tests/remote/servers.py makes; --server picks),
then, for ROUNDS rounds, in turn:
- the element: build/bench/model-throughput --backend remote (frames in,
  frames out; max-inflight 1 and 2);
- Python: tritonclient.http (Triton's client, for any KServe v2 server),
  the same batches: uint8 RGB frames to a float32 N x 3 x H x W tensor,
  sent and read back as binary data, the output back to uint8 frames, one
  request at a time, as an application would write it;
- the local CPU backend on the same model (model-throughput --backend cpu).
Prints frames per second, per-batch times, their ratios (medians over the
rounds), and on Triton the server's own compute time per batch (its
statistics extension): the round trip less it is what the wire and the
server's HTTP cost, and the element's batch time less the round trip what
the element costs.

    .venv/bin/python3 bench/remote-compare.py --model tests/models/style.onnx \\
        --width 320 --height 240 --batch 8 --batches 20 --rounds 3
"""

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CLIENT = r'''
import json, sys, time
import numpy as np
import tritonclient.http as http

url, model, batch, width, height, batches, warmup = sys.argv[1:8]
batch, width, height = int(batch), int(width), int(height)
batches, warmup = int(batches), int(warmup)
client = http.InferenceServerClient(url.replace("http://", ""))
meta = client.get_model_metadata(model)
name = meta["inputs"][0]["name"]
outs = [o["name"] for o in meta["outputs"]]
rng = np.random.default_rng(1)
frames = rng.integers(0, 256, (4, height, width, 3), dtype=np.uint8)
times = []
for b in range(warmup + batches):
    start = time.perf_counter()
    x = np.stack([frames[(b * batch + i) % 4] for i in range(batch)])
    x = np.ascontiguousarray(x.transpose(0, 3, 1, 2), dtype=np.float32) / 255
    inp = http.InferInput(name, list(x.shape), "FP32")
    inp.set_data_from_numpy(x, binary_data=True)
    req = [http.InferRequestedOutput(o, binary_data=True) for o in outs]
    res = client.infer(model, [inp], outputs=req)
    y = res.as_numpy(outs[0])
    if y.ndim == 4 and y.shape[1] == 3:
        y = np.clip(y.transpose(0, 2, 3, 1) * 255, 0, 255).astype(np.uint8)
    if b >= warmup:
        times.append(time.perf_counter() - start)
print(json.dumps({"fps": batch * batches / sum(times),
                  "batch_ms": 1e3 * sorted(times)[len(times) // 2]}))
'''


def start_server(kind, model, name):
    venv = os.path.join(ROOT, ".venv-" + ("triton" if kind == "triton"
                                          else "kserve"))
    python = (os.path.join(venv, "bin", "python3") if kind != "v2server"
              else os.path.join(ROOT, ".venv", "bin", "python3"))
    script = {"triton": "triton-server.py", "kserve": "kserve-server.py",
              "v2server": "v2server.py"}[kind]
    args = [python, os.path.join(ROOT, "tests", "remote", script),
            "--model", "%s=%s" % (name, model)]
    if kind == "triton":
        args += ["--max-batch", "64"]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True,
                            start_new_session=True)
    for line in proc.stdout:
        if line.startswith("PORT "):
            url = "http://127.0.0.1:%d" % int(line.split()[1])
            break
    else:
        sys.exit("the %s server did not start" % kind)
    for _ in range(240):
        try:
            with urllib.request.urlopen(url + "/v2/health/ready",
                                        timeout=2) as r:
                if r.status == 200:
                    return proc, url
        except OSError:
            time.sleep(0.5)
    sys.exit("the %s server is not ready" % kind)


def throughput(args, extra):
    cmd = [os.path.join(args.build, "bench", "model-throughput"),
           "--batch", str(args.batch), "--width", str(args.width),
           "--height", str(args.height), "--batches", str(args.batches),
           "--warmup", "2"] + extra
    env = dict(os.environ, GST_PLUGIN_PATH=os.path.join(args.build, "gst",
                                                        "plugin"))
    out = subprocess.run(cmd, env=env, capture_output=True, text=True,
                         check=True).stdout
    kv = dict(p.split("=", 1) for p in out.split() if "=" in p)
    return {"fps": float(kv["fps"]),
            "batch_ms": float(kv["engine-ms-median"]),
            "rtt_ms": float(kv["rtt-ms-median"])}


def triton_compute_ms(url, name):
    """Triton's mean compute time of a batch so far (statistics
    extension), or None."""
    try:
        with urllib.request.urlopen("%s/v2/models/%s/stats" % (url, name),
                                    timeout=5) as r:
            s = json.load(r)["model_stats"][0]
    except (OSError, KeyError, IndexError, ValueError):
        return None
    c = s["inference_stats"]["compute_infer"]
    n = c["count"]
    return c["ns"] / n / 1e6 if n else None


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--model", default=os.path.join(ROOT, "tests", "models",
                                                    "style.onnx"))
    ap.add_argument("--server", choices=["triton", "kserve", "v2server"],
                    default="triton" if os.path.exists(os.path.join(
                        ROOT, ".venv-triton")) else "v2server")
    ap.add_argument("--width", type=int, default=320)
    ap.add_argument("--height", type=int, default=240)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--batches", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    args = ap.parse_args()
    client_python = os.path.join(ROOT, ".venv-triton", "bin", "python3")
    if not os.path.exists(client_python):
        sys.exit("no .venv-triton (tritonclient): run tests/remote/servers.py "
                 "--only triton once")
    name = "m"
    proc, url = start_server(args.server, args.model, name)
    rows = {k: [] for k in ("remote1", "remote2", "python", "cpu")}
    compute = []
    try:
        remote = ["--backend", "remote", "--set", "server-url=" + url,
                  "--set", "remote-model=" + name]
        for r in range(args.rounds):
            rows["remote1"].append(throughput(args, remote + [
                "--set", "max-inflight=1"]))
            rows["remote2"].append(throughput(args, remote + [
                "--set", "max-inflight=2"]))
            before = triton_compute_ms(url, name)
            out = subprocess.run([client_python, "-c", CLIENT, url, name,
                                  str(args.batch), str(args.width),
                                  str(args.height), str(args.batches), "2"],
                                 capture_output=True, text=True, check=True)
            rows["python"].append(json.loads(out.stdout))
            rows["cpu"].append(throughput(args, ["--backend", "cpu",
                                                 "--model", args.model]))
            if before is not None:
                compute.append(triton_compute_ms(url, name))
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait()

    def med(k, f):
        return statistics.median(x[f] for x in rows[k])

    print("%s, batch %d of %dx%d, %d timed batches, %d rounds, server: %s"
          % (os.path.basename(args.model), args.batch, args.width,
             args.height, args.batches, args.rounds, args.server))
    print("%-34s %9s %12s %10s" % ("", "fps", "batch ms", "rtt ms"))
    for k, label in (("remote1", "element, remote, max-inflight=1"),
                     ("remote2", "element, remote, max-inflight=2"),
                     ("python", "Python tritonclient.http"),
                     ("cpu", "element, local CPU backend")):
        print("%-34s %9.1f %12.2f %10s" % (
            label, med(k, "fps"), med(k, "batch_ms"),
            "%.2f" % med(k, "rtt_ms") if "rtt_ms" in rows[k][0] else "-"))
    ratios = [a["fps"] / b["fps"] for a, b in zip(rows["remote2"],
                                                   rows["python"])]
    ratios1 = [a["fps"] / b["fps"] for a, b in zip(rows["remote1"],
                                                    rows["python"])]
    print("element remote / Python client fps: %.2f (max-inflight=2), "
          "%.2f (max-inflight=1)" % (statistics.median(ratios),
                                     statistics.median(ratios1)))
    if compute and all(c is not None for c in compute):
        c = statistics.median(compute)
        rtt = med("remote1", "rtt_ms")
        own = med("remote1", "batch_ms") - rtt
        print("server compute %.2f ms a batch; round trip less it %.2f ms "
              "(%.0f %% of it); the element's own share %.2f ms (%.0f %%)"
              % (c, rtt - c, 100 * (rtt - c) / c, own, 100 * own / c))
    return 0


if __name__ == "__main__":
    sys.exit(main())
