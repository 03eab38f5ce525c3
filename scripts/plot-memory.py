#!/usr/bin/env python3
"""Draws cudabatchinfer's memory and time per batch, one column per run.

It reads the element messages a run posts with `post-messages=true`: one
`cudabatchinfer-batch` per batch and the `cudabatchinfer-warmup` of its
dry run, as `gst-launch-1.0 -m` prints them. Each RUN is either a file of
that output ('-' for standard input):

    gst-launch-1.0 -m ... ! cudabatchinfer post-messages=true ! ... > run.txt
    .venv/bin/python3 scripts/plot-memory.py -o memory.png run.txt

or, with --launch, a launch line that the script runs itself with
`gst-launch-1.0 -m` (GST_PLUGIN_PATH as set around it):

    .venv/bin/python3 scripts/plot-memory.py -o memory.png --launch \\
        'videotestsrc num-buffers=60 ! cudabatchinfer batch=8 \\
         post-messages=true ! fakesink' ...

Top row, memory per batch in MiB: what the engine's pool has allocated
and reserved after each batch, and red bars for the bytes of fresh
allocations (blocks the pool had to get from the system during the batch,
with their count); the warm-up, where there is one, stands left of batch
0. Bottom row, each batch's time in ms: orange for a batch the engine had
to plan (a new shape), hatched for a padded one, a dotted line at the
warm-up's median batch time. Rows share their scale, so runs compare at a
glance. A log with several cudabatchinfer elements gives a column each.

Prints one line per run (batches, fresh allocations, first and last batch
time over the median); --json FILE writes the parsed messages. Exit
status 0, 1 on an error (a run without batch messages, a launch that
failed), 77 when matplotlib is missing (scripts/install-deps.sh installs it
in .venv/).
"""
import argparse
import json
import re
import shlex
import statistics
import subprocess
import sys
import textwrap

MIB = 1024 * 1024
MS = 1e6

# gst-launch-1.0 -m: Got message #37 from element "cbi0" (element): STRUCT;
MESSAGE = re.compile(
    r'^Got message #\d+ from element "([^"]+)" \(element\): '
    r'(cudabatchinfer-(?:batch|warmup)), (.*);$')
# a field of a GstStructure string: name=(type)value, a string value
# quoted or backslash-escaped
FIELD = re.compile(r'([A-Za-z][\w-]*)=\((\w+)\)'
                   r'("(?:[^"\\]|\\.)*"|(?:[^,\\]|\\.)*)')


def parse_value(kind, text):
    """A field's value as Python: ints, bools, floats, strings."""
    if text.startswith('"'):
        text = text[1:-1]
    text = re.sub(r"\\(.)", r"\1", text)
    if kind in ("int", "uint", "gint64", "guint64", "long", "ulong"):
        return int(text)
    if kind in ("double", "float"):
        return float(text)
    if kind in ("boolean", "gboolean"):
        return text.lower() in ("true", "1", "yes", "t")
    return text


def parse_messages(lines, source):
    """Runs from gst-launch -m output: one per element, in order seen."""
    runs = {}
    for line in lines:
        m = MESSAGE.match(line.strip())
        if not m:
            continue
        element, name, body = m.groups()
        fields = {f: parse_value(k, v) for f, k, v in FIELD.findall(body)}
        run = runs.setdefault(element, {"element": element, "source": source,
                                        "warmup": None, "batches": []})
        if name == "cudabatchinfer-batch":
            run["batches"].append(fields)
        elif run["warmup"] is None:
            run["warmup"] = fields  # the first; a caps change warms up again
    return list(runs.values())


def launch(line):
    """gst-launch-1.0 -m's output for a launch line; exits on a failure."""
    try:
        p = subprocess.run(["gst-launch-1.0", "-m"] + shlex.split(line),
                           capture_output=True, text=True, timeout=600)
    except FileNotFoundError:
        sys.exit("plot-memory: gst-launch-1.0 not found "
                 "(Debian: gstreamer1.0-tools)")
    if p.returncode != 0:
        tail = "\n".join((p.stdout + p.stderr).splitlines()[-15:])
        sys.exit(f"plot-memory: gst-launch-1.0 -m {line}\n"
                 f"exited {p.returncode}:\n{tail}")
    return p.stdout.splitlines()


def launch_title(line):
    """The cudabatchinfer properties of a launch line, as a title."""
    words = shlex.split(line)
    if "cudabatchinfer" not in words:
        return line
    props = []
    for w in words[words.index("cudabatchinfer") + 1:]:
        if w == "!" or "=" not in w:
            break
        key, _, value = w.partition("=")
        if key == "model":
            value = value.rsplit("/", 1)[-1]
        if key not in ("post-messages", "name"):
            props.append(f"{key}={value}")
    return " ".join(props) or "cudabatchinfer (defaults)"


def read_runs(args):
    """The runs of every RUN, in order, titled; exits on one without data."""
    out = []
    for i, src in enumerate(args.run):
        if args.launch:
            runs, title = parse_messages(launch(src), src), launch_title(src)
        elif src == "-":
            runs, title = parse_messages(sys.stdin, src), "stdin"
        else:
            try:
                with open(src, encoding="utf-8", errors="replace") as f:
                    runs = parse_messages(f, src)
            except OSError as e:
                sys.exit(f"plot-memory: {e}")
            title = src.rsplit("/", 1)[-1]
        if i < len(args.title):
            title = args.title[i]
        runs = [r for r in runs if r["batches"]]
        if not runs:
            sys.exit(f"plot-memory: no cudabatchinfer-batch message in {src}: "
                     "set post-messages=true on the cudabatchinfer element "
                     "and run gst-launch-1.0 with -m")
        for r in runs:
            r["title"] = (title if len(runs) == 1
                          else f"{title} ({r['element']})")
            out.append(r)
    return out


def summary(run):
    """One line: batches, fresh allocations, first/last over the median."""
    b = run["batches"]
    times = [x["batch-time"] for x in b]
    med = statistics.median(times) or 1
    fresh = sum(x["fresh-allocations"] for x in b)
    mib = sum(x["fresh-bytes"] for x in b) / MIB
    w = run["warmup"]
    wtext = (f"warm-up {w['fresh-allocations']} fresh "
             f"({w['fresh-bytes'] / MIB:.2f} MiB)" if w else "no warm-up")
    return (f"{run['title']}: {len(b)} batches, {wtext}, batches "
            f"{fresh} fresh ({mib:.2f} MiB), median {med / MS:.2f} ms, "
            f"first/median {times[0] / med:.2f}, last/median "
            f"{times[-1] / med:.2f}")


def draw_memory(ax, run):
    b = run["batches"]
    x = [r["batch-index"] for r in b]
    w = run["warmup"]
    wx = [-1] if w else []
    wr = [w] if w else []
    fresh = [(i, r) for i, r in zip(wx + x, wr + b) if r["fresh-bytes"]]
    ax.bar([i for i, _ in fresh], [r["fresh-bytes"] / MIB for _, r in fresh],
           width=0.6, color="#d62728", alpha=0.8, label="fresh allocations")
    for i, r in fresh:
        ax.annotate(f"+{r['fresh-allocations']}", (i, r["fresh-bytes"] / MIB),
                    ha="center", va="bottom", fontsize=8, color="#d62728",
                    xytext=(0, 2), textcoords="offset points")
    ax.plot(wx + x, [r["reserved-bytes"] / MIB for r in wr + b], "-",
            color="#ff7f0e", linewidth=3, alpha=0.6, label="reserved")
    ax.plot(wx + x, [r["allocated-bytes"] / MIB for r in wr + b], "o-",
            color="#1f77b4", markersize=3, linewidth=1, label="allocated")
    ax.set_title(textwrap.fill(run["title"], 48), fontsize=9)


def draw_time(ax, run):
    b = run["batches"]
    x = [r["batch-index"] for r in b]
    ax.bar(x, [r["batch-time"] / MS for r in b], width=0.7,
           color=["#ff7f0e" if r["replanned"] else "#7f7f7f" for r in b])
    padded = [r for r in b if r["padded"]]
    ax.bar([r["batch-index"] for r in padded],
           [r["batch-time"] / MS for r in padded], width=0.7, fill=False,
           hatch="///", edgecolor="black", linewidth=0)
    for r in b:
        if r["frames"] != b[0]["frames"] or r["padded"]:
            text = (f"{r['frames']}+{r['padded']} pad" if r["padded"]
                    else f"{r['frames']} frames")
            ax.annotate(text, (r["batch-index"], r["batch-time"] / MS),
                        ha="center", va="bottom", fontsize=7, xytext=(0, 2),
                        textcoords="offset points")
    w = run["warmup"]
    if w:
        ax.axhline(w["steady-batch-time"] / MS, color="black", linestyle=":",
                   linewidth=1)
        ax.annotate(f"warm-up\n{w['warmup-time'] / MS:.0f} ms", (-1, 0.97),
                    xycoords=("data", "axes fraction"), ha="center",
                    va="top", fontsize=7)
    ax.set_xlabel("batch")


def plot(runs, path):
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    n = len(runs)
    fig, axes = plt.subplots(2, n, figsize=(3.6 * n + 0.6, 6), sharey="row",
                             sharex="col", squeeze=False)
    for col, run in enumerate(runs):
        draw_memory(axes[0][col], run)
        draw_time(axes[1][col], run)
        last = run["batches"][-1]["batch-index"]
        step = max(1, (last + 10) // 10)
        ticks = list(range(0, last + 1, step))
        labels = [str(t) for t in ticks]
        if run["warmup"]:
            ticks, labels = [-1] + ticks, ["w"] + labels
        axes[1][col].set_xticks(ticks, labels)
        axes[1][col].set_xlim(-1.6, last + 0.6)
        for ax in axes[:, col]:
            ax.grid(axis="y", alpha=0.3)
    axes[0][0].set_ylabel("pool memory, MiB")
    axes[1][0].set_ylabel("batch time, ms")
    handles = [
        Line2D([], [], color="#1f77b4", marker="o", markersize=3,
               label="allocated after the batch"),
        Line2D([], [], color="#ff7f0e", linewidth=3, alpha=0.6,
               label="reserved after the batch"),
        Patch(color="#d62728", alpha=0.8,
              label="fresh allocations (+count), MiB"),
        Patch(color="#7f7f7f", label="batch time"),
        Patch(color="#ff7f0e", label="re-planned (new shape)"),
        Patch(fill=False, hatch="///", label="padded"),
        Line2D([], [], color="black", linestyle=":",
               label="warm-up median (w: warm-up)"),
    ]
    ncol = min(n + 1, 4)
    fig.legend(handles=handles, loc="lower center", ncol=ncol, fontsize=8,
               frameon=False)
    fig.tight_layout(rect=(0, 0.01 + 0.035 * -(-len(handles) // ncol), 1, 1))
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main():
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run", nargs="+", metavar="RUN",
                    help="a file of gst-launch-1.0 -m output ('-': stdin), "
                    "or with --launch a launch line")
    ap.add_argument("-o", "--output", default="memory.png",
                    help="the PNG to write (default memory.png)")
    ap.add_argument("--launch", action="store_true",
                    help="each RUN is a launch line to run with "
                    "gst-launch-1.0 -m")
    ap.add_argument("--title", action="append", default=[],
                    help="a column's title, once per RUN in order "
                    "(default: the element's properties of a launch line, "
                    "the file name)")
    ap.add_argument("--json", metavar="FILE",
                    help="also write the parsed messages of every run")
    args = ap.parse_args()
    try:
        import matplotlib
    except ImportError:
        print("plot-memory: matplotlib is missing: "
              "bash scripts/install-deps.sh installs it in .venv/",
              file=sys.stderr)
        sys.exit(77)
    matplotlib.use("Agg")  # no display

    runs = read_runs(args)
    for run in runs:
        print(summary(run))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(runs, f, indent=1)
    plot(runs, args.output)
    print(f"plot-memory: wrote {args.output}")


if __name__ == "__main__":
    main()
