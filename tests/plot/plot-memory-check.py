#!/usr/bin/env python3
"""Checks scripts/plot-memory.py on real runs of the element.

    plot-memory-check.py --script scripts/plot-memory.py --model MODEL.onnx

Runs 20 frames of 64x48 through `cudabatchinfer batch=8 model=MODEL
post-messages=true` twice, with the defaults (warm-up, pad-mode=repeat-last)
and with warmup=false pad-mode=none, through plot-memory.py --launch, and
checks that it wrote a PNG and that the messages it parsed (--json) are
three batches per run, each with every field of a cudabatchinfer-batch
message, the last one of 4 frames: padded to 8 with 0 fresh allocations
after the warm-up, run at 4 and re-planned with fresh allocations without
padding, and the first batch re-planned without a warm-up. Then that a
saved `gst-launch-1.0 -m` log reads the same as the launch, and that a run
without post-messages=true fails naming it.

The plugin comes from GST_PLUGIN_PATH_1_0 or GST_PLUGIN_PATH (meson's test
environment sets it). One line per check; exit status 0 when all pass, 1
when one fails, 77 (meson's "skipped") when matplotlib is missing.
"""
import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile

try:
    import matplotlib  # noqa: F401
except ImportError as e:  # scripts/install-deps.sh installs it in .venv/
    print(f"SKIP: {e}: bash scripts/install-deps.sh installs matplotlib")
    sys.exit(77)

FIELDS = {
    "batch-index", "batch-size", "frames", "padded", "warmed-up",
    "replanned", "allocated-bytes", "reserved-bytes", "peak-allocated-bytes",
    "peak-reserved-bytes", "fresh-allocations", "fresh-bytes",
    "workspace-bytes", "device-free-bytes", "device-total-bytes",
    "batch-time", "backend", "device-id", "device-fresh-bytes",
}


def launch_line(model, props):
    return ("videotestsrc num-buffers=20 ! video/x-raw,width=64,height=48 "
            f"! cudabatchinfer batch=8 model={model} {props} ! fakesink")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--script", required=True)
    ap.add_argument("--model", required=True)
    args = ap.parse_args()
    results = []

    def check(what, ok, detail=""):
        results.append(ok)
        print(f"{'PASS' if ok else 'FAIL'}: {what}" + (f" ({detail})"
                                                         if detail else ""))

    with tempfile.TemporaryDirectory() as tmp:
        png = os.path.join(tmp, "memory.png")
        js = os.path.join(tmp, "runs.json")
        lines = [launch_line(args.model, "post-messages=true"),
                 launch_line(args.model,
                             "post-messages=true warmup=false pad-mode=none")]
        p = subprocess.run([sys.executable, args.script, "-o", png, "--json",
                            js, "--launch"] + lines,
                           capture_output=True, text=True)
        print(p.stdout + p.stderr, end="")
        check("plot-memory.py --launch exits 0", p.returncode == 0,
              f"exit {p.returncode}")
        head = b""
        if os.path.exists(png):
            with open(png, "rb") as f:
                head = f.read(8)
        check("it writes a PNG", head == b"\x89PNG\r\n\x1a\n",
              f"{len(head)} bytes read")
        runs = json.load(open(js)) if os.path.exists(js) else []
        check("two runs parsed", len(runs) == 2, f"{len(runs)}")
        if len(runs) != 2:
            sys.exit(1)
        padded, plain = runs
        for name, run in (("defaults", padded), ("no warm-up, no padding",
                                                  plain)):
            b = run["batches"]
            check(f"{name}: 3 batches, numbered 0..2", [x["batch-index"]
                  for x in b] == [0, 1, 2], f"{len(b)} batches")
            missing = set().union(*(FIELDS - set(x) for x in b))
            check(f"{name}: every batch has every field", not missing,
                  ", ".join(sorted(missing)))
            check(f"{name}: the last batch has 4 real frames",
                  b[-1]["frames"] == 4, f"{b[-1]['frames']}")
        b = padded["batches"]
        check("defaults: a warm-up message with fresh allocations",
              bool(padded["warmup"])
              and padded["warmup"]["fresh-allocations"] > 0)
        check("defaults: the last batch is padded to 8",
              (b[-1]["batch-size"], b[-1]["padded"]) == (8, 4))
        check("defaults: no batch allocates after the warm-up",
              all(x["fresh-allocations"] == 0 for x in b),
              str([x["fresh-allocations"] for x in b]))
        b = plain["batches"]
        check("warmup=false: no warm-up message", plain["warmup"] is None)
        check("warmup=false: the first batch plans and allocates",
              b[0]["replanned"] and b[0]["fresh-allocations"] > 0)
        check("pad-mode=none: the last batch runs at 4, planned, allocating",
              b[-1]["batch-size"] == 4 and b[-1]["replanned"]
              and b[-1]["fresh-allocations"] > 0)

        # the same run saved by gst-launch-1.0 -m and read from the file
        log = os.path.join(tmp, "run.txt")
        with open(log, "w") as f:
            subprocess.run(["gst-launch-1.0", "-m"] + shlex.split(lines[0]),
                           stdout=f, stderr=subprocess.DEVNULL, check=True)
        js2 = os.path.join(tmp, "file.json")
        p = subprocess.run([sys.executable, args.script, "-o",
                            os.path.join(tmp, "file.png"), "--json", js2,
                            "--title", "from a file", log],
                           capture_output=True, text=True)
        from_file = json.load(open(js2)) if p.returncode == 0 else []
        check("a saved gst-launch -m log reads as the launch did",
              len(from_file) == 1 and from_file[0]["title"] == "from a file"
              and [(x["batch-index"], x["frames"], x["padded"])
                   for x in from_file[0]["batches"]]
              == [(x["batch-index"], x["frames"], x["padded"])
                  for x in padded["batches"]], p.stderr.strip())

        p = subprocess.run([sys.executable, args.script, "-o",
                            os.path.join(tmp, "none.png"), "--launch",
                            launch_line(args.model, "")],
                           capture_output=True, text=True)
        check("without post-messages=true: exit 1 naming it",
              p.returncode == 1 and "post-messages=true" in p.stderr,
              f"exit {p.returncode}: {p.stderr.strip()}")

    failed = results.count(False)
    print(f"plot-memory checks: {len(results) - failed} of {len(results)} "
          "passed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
