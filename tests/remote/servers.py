#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""backend=remote against real inference servers: KServe's Python model
server (PyPI `kserve`) and Triton (PyPI `nvidia-pytriton`, which bundles
tritonserver), each serving the test models through onnxruntime on
127.0.0.1, started here and stopped here.

For each server:
- the element's remote suite (build/tests/elements_cudabatchinfer-remote)
  with CBI_TEST_SERVER_URL set to it: tensors equal to the CPU backend's,
  frames padded with their timestamps kept and nothing allocated after
  warm-up, the stats, bad settings and a model file that differs;
- the issue's launch line, filesrc ! decodebin ! videoconvert !
  cudabatchinfer backend=remote ... batch=8 ! videoconvert ! fakesink,
  exits 0; the same into a file has a frame out per frame in, each within
  one step of the CPU backend's bytes;
- Triton only: a batch above its max_batch_size fails, naming both.

Each server's Python lives in a venv of its own, from
scripts/requirements-<server>.txt (their numpy pins differ), made with
Debian's /usr/bin/python3 and refilled when the pins change. PyTriton 0.7
needs numpy < 2, which has no build for CPython 3.13: there (Debian 13)
Triton is skipped, saying so. Its tritonserver's Python backend loads
Python's shared library (libpython3.X, scripts/install-deps.sh installs
it). Ends with `N passed, N failed`.
"""

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))
MODELS = os.path.join(ROOT, "tests", "models")
CLIP = os.path.join(MODELS, "bars-420.ogv")
SUITE_CHECKS = ",".join([
    "test_remote_tensors_equal_the_cpu_backends",
    "test_remote_frames_pad_keep_timestamps_and_allocate_nothing",
    "test_remote_stats_say_backend_remote_and_the_server",
    "test_remote_bad_settings_fail_paused_saying_which",
    "test_remote_model_file_that_differs_names_both",
])
# what the remote suite asks a server it did not start for
SERVED = ["style=%s/style.onnx" % MODELS,
          "classifier=%s/classifier.onnx" % MODELS,
          "nhwc=%s/nhwc-transposed.onnx" % MODELS]
TRITON_MAX_BATCH = 16


class Tally:
    def __init__(self):
        self.passed = 0
        self.failed = 0

    def check(self, name, ok, detail=""):
        print("%s %s%s" % ("PASS" if ok else "FAIL", name,
                           (": " + detail) if detail and not ok else ""),
              flush=True)
        if ok:
            self.passed += 1
        else:
            self.failed += 1


def venv_python(name):
    """The venv of scripts/requirements-<name>.txt, made or refilled where
    its copy of the pins differs."""
    venv = os.path.join(ROOT, ".venv-" + name)
    req = os.path.join(ROOT, "scripts", "requirements-%s.txt" % name)
    python = os.path.join(venv, "bin", "python3")
    stamp = os.path.join(venv, "requirements.txt")
    pins = open(req).read()
    if os.path.exists(stamp) and open(stamp).read() == pins:
        return python
    if not os.path.exists(python):
        subprocess.run(["/usr/bin/python3", "-m", "venv", venv], check=True)
    print("== installing %s into %s" % (req, venv), flush=True)
    # no byte-compiling of every module installed: a third of the time,
    # for modules most of which never load
    subprocess.run([python, "-m", "pip", "install", "--quiet",
                    "--disable-pip-version-check", "--no-compile", "-r", req],
                   check=True)
    with open(stamp, "w") as f:
        f.write(pins)
    return python


def ready(url, timeout):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            with urllib.request.urlopen(url + "/v2/health/ready",
                                        timeout=2) as r:
                if r.status == 200:
                    return True
        except OSError:
            pass
        time.sleep(0.5)
    return False


class Server:
    """A server script of tests/remote/ in its own process group (Triton's
    has children), on 127.0.0.1."""

    def __init__(self, python, script, args, log):
        self.proc = subprocess.Popen(
            [python, os.path.join(ROOT, "tests", "remote", script)] + args,
            stdout=subprocess.PIPE, stderr=log, text=True,
            start_new_session=True)
        self.url = None
        # the PORT line, after whatever else a server prints first
        for line in self.proc.stdout:
            if line.startswith("PORT "):
                self.url = "http://127.0.0.1:%d" % int(line.split()[1])
                break
            log.write(line)

    def stop(self):
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)
            self.proc.wait(timeout=30)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait()


def gst_env(build):
    env = dict(os.environ)
    env["GST_PLUGIN_PATH"] = os.path.join(build, "gst", "plugin")
    return env


def frames_out(build, element, out):
    """Runs the clip through `element` into raw RGB file @out."""
    desc = ("filesrc location=%s ! decodebin ! videoconvert ! %s ! "
            "videoconvert ! video/x-raw,format=RGB ! filesink location=%s"
            % (CLIP, element, out))
    return subprocess.run(["gst-launch-1.0", "-q"] + desc.split(),
                          env=gst_env(build), capture_output=True, text=True,
                          timeout=300)


def check_server(tally, name, url, build, work):
    # the remote suite, against this server
    env = gst_env(build)
    env.update(CBI_TEST_SERVER_URL=url, GST_CHECKS=SUITE_CHECKS,
               GST_PLUGIN_PATH_1_0=env["GST_PLUGIN_PATH"],
               GST_REGISTRY_1_0=os.path.join(work, "registry.bin"))
    suite = subprocess.run([os.path.join(build, "tests",
                                         "elements_cudabatchinfer-remote")],
                           env=env, capture_output=True, text=True,
                           timeout=600)
    summary = [line for line in suite.stdout.splitlines()
               if "Checks:" in line]
    tally.check("%s: the element's remote suite (%s)" % (
        name, summary[-1].strip() if summary else "no summary"),
        suite.returncode == 0, suite.stdout[-2000:] + suite.stderr[-2000:])

    # the launch line
    line = ("filesrc location=%s ! decodebin ! videoconvert ! cudabatchinfer "
            "backend=remote server-url=%s remote-model=style batch=8 ! "
            "videoconvert ! fakesink" % (CLIP, url))
    run = subprocess.run(["gst-launch-1.0", "-q"] + line.split(),
                         env=gst_env(build), capture_output=True, text=True,
                         timeout=300)
    tally.check("%s: gst-launch-1.0 %s" % (name, line), run.returncode == 0,
                run.stdout[-1000:] + run.stderr[-1000:])

    # a frame out per frame in, each within a step of the CPU backend's
    # (its run and the frames in made once, for every server)
    ref = os.path.join(work, "cpu.rgb")
    raw = os.path.join(work, "in.rgb")
    got = os.path.join(work, name + ".rgb")
    runs = []
    if not os.path.exists(ref):
        runs.append(frames_out(build, "cudabatchinfer backend=cpu "
                               "model=%s/style.onnx batch=8" % MODELS, ref))
        runs.append(frames_out(build, "identity", raw))
    runs.append(frames_out(build, "cudabatchinfer backend=remote "
                           "server-url=%s remote-model=style batch=8" % url,
                           got))
    ok = all(r.returncode == 0 for r in runs)
    detail = "".join(r.stderr for r in runs)[-1000:]
    if ok:
        x, y = open(ref, "rb").read(), open(got, "rb").read()
        n_in = os.path.getsize(raw)
        worst = max((abs(p - q) for p, q in zip(x, y)), default=0)
        ok = len(y) == n_in and len(x) == len(y) and worst <= 1
        detail = ("%d bytes in, %d out (cpu %d), largest difference %d"
                  % (n_in, len(y), len(x), worst))
    tally.check("%s: frames in = out, within one step of the CPU backend"
                % name, ok, detail)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--only", choices=["kserve", "triton"])
    args = ap.parse_args()
    tally = Tally()
    servers = [s for s in ("kserve", "triton") if args.only in (None, s)]
    with tempfile.TemporaryDirectory() as work:
        for name in servers:
            if name == "triton" and sys.version_info >= (3, 13):
                print("SKIP triton: PyTriton 0.7 needs numpy < 2, which has "
                      "no build for CPython %d.%d (3.8 to 3.12 only)"
                      % sys.version_info[:2], flush=True)
                continue
            try:
                python = venv_python(name)
            except (subprocess.CalledProcessError, OSError) as e:
                tally.check("%s: its venv installs" % name, False, str(e))
                continue
            script = name + "-server.py"
            extra = (["--max-batch", str(TRITON_MAX_BATCH), "--log-file",
                      os.path.join(work, "tritonserver.log")]
                     if name == "triton" else [])
            margs = [a for m in SERVED for a in ("--model", m)] + extra
            with open(os.path.join(work, name + ".log"), "w") as log:
                server = Server(python, script, margs, log)
            try:
                up = server.url is not None and ready(server.url, 180)
                tally.check("%s: starts on 127.0.0.1 and says it is ready"
                            % name, up, open(os.path.join(
                                work, name + ".log")).read()[-2000:])
                if not up:
                    continue
                check_server(tally, name, server.url, args.build, work)
                if name == "triton":
                    run = frames_out(args.build, "cudabatchinfer "
                                     "backend=remote server-url=%s "
                                     "remote-model=style batch=32"
                                     % server.url, os.devnull)
                    said = run.stderr + run.stdout
                    tally.check("triton: a batch above max_batch_size fails "
                                "naming both", run.returncode != 0
                                and "batches of %d at most" % TRITON_MAX_BATCH
                                in said and "not 32" in said, said[-1000:])
            finally:
                server.stop()
    print("%d passed, %d failed" % (tally.passed, tally.failed))
    return 1 if tally.failed else 0


if __name__ == "__main__":
    sys.exit(main())
