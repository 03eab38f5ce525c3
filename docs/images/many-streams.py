"""Draws docs/images/many-streams.png: four streams through one element.

Run from the repository root with a Python that has matplotlib:
    .venv/bin/python3 docs/images/many-streams.py
"""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch, Rectangle

COLOURS = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759"]
# frames as they arrived: stream 0 and 2 at 30 fps, 1 faster, 3 quiet
ARRIVALS = [0, 1, 2, 1, 0, 1, 2, 1, 0, 1, 2, 1, 0, 3, 1, 2]

fig, ax = plt.subplots(figsize=(11, 4.6))
ax.set_xlim(0, 11)
ax.set_ylim(0, 4.6)
ax.axis("off")


def box(x, y, w, h, text, colour="#ffffff", size=9):
    ax.add_patch(FancyBboxPatch((x, y), w, h, boxstyle="round,pad=0.04",
                                fc=colour, ec="#333333"))
    ax.text(x + w / 2, y + h / 2, text, ha="center", va="center", size=size)


def arrow(x0, y0, x1, y1, colour="#333333"):
    ax.add_patch(FancyArrowPatch((x0, y0), (x1, y1), arrowstyle="-|>",
                                 mutation_scale=10, color=colour, lw=1.2))


for k in range(4):
    y = 3.7 - k * 1.0
    box(0.1, y, 1.5, 0.5, f"camera {k}\n(30 fps, live)", "#f7f7f7", 8)
    arrow(1.65, y + 0.25, 2.55, 2.25, COLOURS[k])
    ax.text(2.0, y + 0.05 + (0.12 if k < 2 else -0.05), f"sink_{k}",
            size=8, color=COLOURS[k])
    box(9.3, y, 1.5, 0.5, f"branch {k}\n(src_{k}'s own task)", "#f7f7f7", 8)
    arrow(8.45, 2.25, 9.25, y + 0.25, COLOURS[k])
    ax.text(8.55, y + 0.05 + (0.12 if k < 2 else -0.05), f"src_{k}",
            size=8, color=COLOURS[k])

ax.add_patch(Rectangle((2.6, 0.55), 5.8, 3.6, fc="#fbfbfb", ec="#333333"))
ax.text(5.5, 3.95, "cudabatchinfer batch=16", ha="center", size=10,
        weight="bold")
ax.text(5.5, 3.55, "one batch of 16 slots, filled in arrival order "
        "from every pad", ha="center", size=8)
for i, k in enumerate(ARRIVALS):
    ax.add_patch(Rectangle((2.9 + i * 0.33, 2.6), 0.3, 0.5,
                           fc=COLOURS[k], ec="#333333"))
    ax.text(2.9 + i * 0.33 + 0.15, 2.85, str(k), ha="center", va="center",
            size=7, color="white")
box(3.4, 1.55, 4.2, 0.6, "engine: one plan of 16, warmed up\n"
    "(0 fresh allocations in every batch)", "#eef3fb", 8)
arrow(5.5, 2.55, 5.5, 2.2)
ax.text(5.5, 0.8, "each result goes to its stream's queue, with its own "
        "PTS, DTS,\nduration, offsets, flags and the batch's memory meta "
        "(stream, streams, stream-mask)", ha="center", size=7.5)
fig.tight_layout()
fig.savefig("docs/images/many-streams.png", dpi=110)
