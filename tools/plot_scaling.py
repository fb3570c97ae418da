#!/usr/bin/env python3
"""Plot the weak-scaling CSV written by bench/weak_scaling.sh as a PNG.

Left: efficiency (step_ms with 1 rank / step_ms with N ranks, in %) against ranks, one line per split
axis, with the project goal (97%) and 100% dashed. Right: time per step and exposed halo-exchange time
per step against ranks (solid and dashed, one colour per axis). Empty cells (keys an older build did
not print) are left out of the lines.

    /usr/bin/python3 tools/plot_scaling.py bench/results/weak-scaling-*/weak_scaling.csv
"""
import argparse
import csv
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

GOAL = 97.0  # % weak-scaling efficiency the project aims for
NEEDED = ("axis", "ranks", "step_ms", "exchange_exposed_ms", "efficiency")


def fail(msg):
    sys.exit(f"plot_scaling.py: error: {msg}")


def number(text):
    try:
        return float(text)
    except (TypeError, ValueError):
        return np.nan


def read_series(path):
    """{axis: (ranks, efficiency %, step_ms, exposed_ms)} as arrays sorted by ranks."""
    if not os.path.isfile(path):
        fail(f"'{path}' does not exist")
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        missing = [c for c in NEEDED if c not in (reader.fieldnames or [])]
        if missing:
            fail(f"'{path}' has no column(s) {', '.join(missing)}: is it a weak_scaling.sh CSV?")
        rows = list(reader)
    if not rows:
        fail(f"'{path}' has a header but no runs")
    series = {}
    for line, r in enumerate(rows, start=2):
        ranks = number(r["ranks"])
        if not ranks >= 1:
            fail(f"'{path}' line {line}: ranks '{r['ranks']}' is not a positive number")
        series.setdefault(r["axis"], []).append(
            (ranks, 100 * number(r["efficiency"]), number(r["step_ms"]),
             number(r["exchange_exposed_ms"])))
    return {axis: tuple(np.array(c) for c in zip(*sorted(points)))
            for axis, points in series.items()}


def plot_line(ax, x, y, **kw):
    keep = np.isfinite(y)  # dropped, not NaN gaps: a gap would hide a point between two missing
    if keep.any():
        kw.setdefault("marker", "o")
        ax.plot(x[keep], y[keep], **kw)


def main(argv=None):
    parser = argparse.ArgumentParser(
        description="Plot weak-scaling efficiency and per-step times from bench/weak_scaling.sh's "
        "weak_scaling.csv as a PNG.")
    parser.add_argument("csv", help="weak_scaling.csv written by bench/weak_scaling.sh")
    parser.add_argument("-o", "--out",
                        help="PNG to write (default: weak_scaling.png beside the CSV)")
    parser.add_argument("--dpi", type=int, default=150, help="PNG resolution (default: 150)")
    args = parser.parse_args(argv)

    series = read_series(args.csv)
    all_ranks = sorted({int(r) for s in series.values() for r in s[0]})

    fig, (eff_ax, time_ax) = plt.subplots(1, 2, figsize=(12, 6))
    # The exposed exchange is a few % of a step: its own scale on the right keeps it readable.
    exch_ax = time_ax.twinx()
    for i, (axis, (ranks, eff, step, exposed)) in enumerate(sorted(series.items())):
        colour = f"C{i}"
        plot_line(eff_ax, ranks, eff, color=colour, label=f"split along {axis}")
        plot_line(time_ax, ranks, step, color=colour, label=f"{axis}: step")
        plot_line(exch_ax, ranks, exposed, color=colour, linestyle="--", marker="s",
                  label=f"{axis}: exposed exchange (right)")
    eff_ax.axhline(100, color="gray", linestyle="--", linewidth=1, label="100%")
    eff_ax.axhline(GOAL, color="red", linestyle="--", linewidth=1, label=f"goal {GOAL:g}%")
    effs = np.concatenate([s[1] for s in series.values()])
    effs = effs[np.isfinite(effs)]
    if not effs.size:
        print(f"plot_scaling.py: warning: '{args.csv}' has no efficiency values "
              "(no 1-rank run, or a build that prints no step_ms)", file=sys.stderr)
    # Keep the goal line in view even when every run is far above or below it.
    eff_ax.set_ylim(min(effs.min(initial=GOAL), GOAL) - 3, max(effs.max(initial=100), 100) + 2)
    eff_ax.set_ylabel("weak-scaling efficiency (%)")
    eff_ax.set_title("efficiency = step time (1 rank) / step time (N ranks)")
    time_ax.set_ylim(bottom=0)
    exch_ax.set_ylim(bottom=0)
    time_ax.set_ylabel("step time, ms (solid; slowest rank)")
    exch_ax.set_ylabel("exposed halo exchange, ms per step (dashed)")
    time_ax.set_title("time per step and exposed halo exchange")
    for ax in (eff_ax, time_ax):
        ax.set_xlabel("ranks (GPUs)")
        ax.set_xticks(all_ranks)
        ax.set_xlim(all_ranks[0] - 0.3, all_ranks[-1] + 0.3)
        ax.grid(True, alpha=0.3)
    eff_ax.legend(fontsize="small")
    lines = time_ax.get_legend_handles_labels()
    more = exch_ax.get_legend_handles_labels()
    # Below the panel: the lines fan out from the left and leave no free corner.
    if lines[0] + more[0]:
        time_ax.legend(lines[0] + more[0], lines[1] + more[1], fontsize="small", ncol=2,
                       loc="upper center", bbox_to_anchor=(0.5, -0.13))
    fig.suptitle(f"minimod weak scaling: {os.path.basename(os.path.dirname(os.path.abspath(args.csv)))}")
    fig.tight_layout()

    out = args.out or os.path.join(os.path.dirname(args.csv), "weak_scaling.png")
    if os.path.dirname(out):
        os.makedirs(os.path.dirname(out), exist_ok=True)
    fig.savefig(out, dpi=args.dpi)
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
