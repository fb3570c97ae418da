#!/usr/bin/env python3
"""Plot the measured speed of the CUDA kernel families from a bench/results CSV (docs/kernels.md).

The CSV holds one row per measured family and tile, copied from the bench/results/*.md records:
gpu,case,shape,family,tile,gpts_per_s,pct_floor,registers,smem_bytes,commit,source_file
(case "minimod": Minimod's benchmark case with its 27-point PML inside the grid; "inner-only":
the same grid without PML). For one shape, the left panel groups two bars per family (best tile
over all rows of that case; tile and GPts/s written on the bar) with reference lines at Minimod's
fastest CUDA kernel (56 GPts/s on the same H100, issue #5) and the issue's goal (150 GPts/s); the
right panel gives the same bars as % of the bandwidth floor (where the CSV has pct_floor).

    /usr/bin/python3 tools/plot_kernels.py --csv bench/results/2026-11-22-h100-kernels.csv \\
        --out docs/images/kernel-speeds.png
"""
import argparse
import csv
import os
import textwrap
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

COLUMNS = ("gpu", "case", "shape", "family", "tile", "gpts_per_s", "pct_floor")
CASES = (("minimod", "Minimod's case (27-point PML inside)", "#4c72b0"),
         ("inner-only", "inner region alone (no PML)", "#dd8452"))
MINIMOD_FASTEST = 56.0  # GPts/s, Minimod's fastest CUDA kernel on the same H100 (issue #5)
GOAL = 150.0            # GPts/s, the goal of issue #5


def fail(msg):
    sys.exit(f"plot_kernels.py: error: {msg}")


def read_rows(path):
    """Rows of the CSV with gpts_per_s (float) and pct_floor (float or None)."""
    try:
        with open(path, newline="") as f:
            reader = csv.DictReader(f)
            missing = [c for c in COLUMNS if c not in (reader.fieldnames or [])]
            if missing:
                fail(f"'{path}' lacks the column(s) {', '.join(missing)}")
            rows = list(reader)
    except OSError as e:
        fail(f"cannot read '{path}': {e.strerror}")
    for n, r in enumerate(rows, start=2):
        try:
            r["gpts_per_s"] = float(r["gpts_per_s"])
            r["pct_floor"] = float(r["pct_floor"]) if r["pct_floor"].strip() else None
        except ValueError:
            fail(f"'{path}' line {n}: gpts_per_s '{r['gpts_per_s']}' or pct_floor "
                 f"'{r['pct_floor']}' is not a number")
    if not rows:
        fail(f"'{path}' has no data rows")
    return rows


def best_per_family(rows, case, shape):
    """{family: row} with the highest gpts_per_s of each family for this case and shape."""
    best = {}
    for r in rows:
        if r["case"] == case and r["shape"] == shape:
            if r["family"] not in best or r["gpts_per_s"] > best[r["family"]]["gpts_per_s"]:
                best[r["family"]] = r
    return best


def main(argv=None):
    parser = argparse.ArgumentParser(
        description="Grouped bar chart of the kernel families' GPts/s (best tile per family) "
        "from a bench/results CSV.")
    parser.add_argument("--csv", required=True,
                        help="CSV of measured rows, e.g. bench/results/2026-11-22-h100-kernels.csv")
    parser.add_argument("--out", default="docs/images/kernel-speeds.png",
                        help="PNG to write (default: docs/images/kernel-speeds.png)")
    parser.add_argument("--shape", default="1000x1000x1000",
                        help="grid shape to plot (default: 1000x1000x1000)")
    parser.add_argument("--dpi", type=int, default=100,
                        help="PNG resolution; the figure is 14x7 in (default: 100)")
    args = parser.parse_args(argv)

    rows = read_rows(args.csv)
    gpus = sorted({r["gpu"] for r in rows})
    if len(gpus) != 1:
        fail(f"'{args.csv}' mixes GPUs ({', '.join(gpus)}); give one CSV per GPU")
    best = {case: best_per_family(rows, case, args.shape) for case, _, _ in CASES}
    cases = [c for c in CASES if best[c[0]]]
    if not cases:
        shapes = sorted({r["shape"] for r in rows})
        fail(f"'{args.csv}' has no row for shape {args.shape} (shapes: {', '.join(shapes)})")

    # Families ordered by their best speed on the first case present, fastest at the top.
    first = best[cases[0][0]]
    families = sorted({f for c, _, _ in cases for f in best[c]},
                      key=lambda f: (first[f]["gpts_per_s"] if f in first else 0.0))
    have_pct = any(r["pct_floor"] is not None for c, _, _ in cases for r in best[c].values())

    fig, axes = plt.subplots(1, 2 if have_pct else 1, figsize=(14, 7), sharey=True,
                             gridspec_kw={"width_ratios": [2.6, 1]} if have_pct else None,
                             squeeze=False)
    ax, ax_pct = axes[0][0], (axes[0][1] if have_pct else None)
    y = np.arange(len(families), dtype=float)
    h = 0.8 / len(cases)
    xmax = max(GOAL, max(r["gpts_per_s"] for c, _, _ in cases for r in best[c].values())) * 1.12
    for k, (case, label, colour) in enumerate(cases):
        yk = y + (len(cases) - 1 - 2 * k) * h / 2  # first case above, second below
        for yi, fam in zip(yk, families):
            r = best[case].get(fam)
            if r is None:
                ax.text(1.5, yi, "not measured", va="center", fontsize=9, color="grey",
                        style="italic")
                continue
            v = r["gpts_per_s"]
            ax.barh(yi, v, height=h * 0.95, color=colour,
                    label=label if fam == next(f for f in families if f in best[case]) else None)
            ax.text(1.5, yi, r["tile"], va="center", ha="left", fontsize=9, color="white",
                    fontweight="bold")
            ax.text(v + 1, yi, f"{v:.1f}", va="center", ha="left", fontsize=9)
            if ax_pct is not None and r["pct_floor"] is not None:
                ax_pct.barh(yi, r["pct_floor"], height=h * 0.95, color=colour)
                ax_pct.text(r["pct_floor"] + 1, yi, f"{r['pct_floor']:.0f}%", va="center",
                            fontsize=9)
    ax.axvline(MINIMOD_FASTEST, color="black", ls="--", lw=1.2,
               label=f"Minimod's fastest CUDA kernel, same H100 ({MINIMOD_FASTEST:.0f})")
    ax.axvline(GOAL, color="red", ls="--", lw=1.2, label=f"goal of issue #5 ({GOAL:.0f})")
    ax.set_yticks(y)
    ax.set_yticklabels(families, fontsize=11)
    ax.set_xlim(0, xmax)
    ax.set_xlabel("GPts/s (best tile of each family; tile written on the bar)")
    ax.set_title(f"speed at {args.shape.replace('x', '×')}")
    ax.grid(axis="x", alpha=0.3)
    ax.legend(loc="lower right", fontsize=9)
    if ax_pct is not None:
        ax_pct.axvline(100, color="grey", lw=1)
        ax_pct.set_xlim(0, 110)
        ax_pct.set_xlabel("% of floor (copy bandwidth / compulsory B per point)")
        ax_pct.set_title("same bars, % of floor")
        ax_pct.grid(axis="x", alpha=0.3)

    sources = sorted({r.get("source_file", "") for c, _, _ in cases for r in best[c].values()} - {""})
    # The source list wrapped to the figure's width (it grows with every session's records).
    source_lines = textwrap.wrap("from bench/results/: " + ", ".join(sources), width=150) if sources else []
    fig.suptitle("\n".join([f"Acoustic-isotropic CUDA kernel families on one {gpus[0]} — data: {args.csv}"]
                           + source_lines), fontsize=11)
    fig.tight_layout()
    if os.path.dirname(args.out):
        os.makedirs(os.path.dirname(args.out), exist_ok=True)
    fig.savefig(args.out, dpi=args.dpi)
    print(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
