#!/usr/bin/env python3
"""Bar chart of the CUDA kernel families' speed from a bench/results CSV (docs/kernels.md figure).

    /usr/bin/python3 tools/plot_kernels.py --csv bench/results/2026-11-22-h100-kernels.csv \
        --out docs/images/kernel-speeds.png

One group of bars per case (Minimod's benchmark case with its 27-point PML inside the grid, and the
inner region alone), the best tile of each family, its tile and % of the bandwidth floor written on
the bar; reference lines at Minimod's fastest CUDA kernel (56 GPts/s, same H100) and the goal (150).
"""
import argparse
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--csv", required=True, help="bench/results/*-kernels.csv")
    ap.add_argument("--out", default="docs/images/kernel-speeds.png", help="PNG to write")
    args = ap.parse_args()
    try:
        with open(args.csv, newline="") as f:
            rows = list(csv.DictReader(f))
    except OSError as e:
        sys.exit(f"plot_kernels: cannot read '{args.csv}': {e.strerror}")
    if not rows or "gpts_per_s" not in rows[0]:
        sys.exit(f"plot_kernels: '{args.csv}' has no rows with a gpts_per_s column")
    cases = [("minimod", "Minimod's case (27-point PML inside), 1000³"), ("inner-only", "inner region alone, 1000³")]
    fig, axes = plt.subplots(1, len(cases), figsize=(14, 6), sharex=True)
    for ax, (case, title) in zip(axes, cases):
        best = {}
        for r in rows:
            if r["case"] != case:
                continue
            if r["family"] not in best or float(r["gpts_per_s"]) > float(best[r["family"]]["gpts_per_s"]):
                best[r["family"]] = r
        fams = sorted(best, key=lambda f: float(best[f]["gpts_per_s"]))
        vals = [float(best[f]["gpts_per_s"]) for f in fams]
        ax.barh(fams, vals, color="#4c72b0")
        for y, f in enumerate(fams):
            r = best[f]
            ax.text(vals[y] + 2, y, f"{r['tile']}  {vals[y]:.1f} ({r['pct_floor']}% of floor)", va="center", fontsize=9)
        ax.axvline(56, color="grey", ls="--", label="Minimod's fastest CUDA kernel (56)")
        ax.axvline(150, color="red", ls="--", label="goal (150)")
        ax.set_title(title)
        ax.set_xlabel("GPts/s")
        ax.set_xlim(0, 200)
        ax.legend(loc="lower right", fontsize=8)
    gpu = rows[0]["gpu"]
    fig.suptitle(f"Acoustic-isotropic kernel families on one {gpu} (data: {args.csv})")
    fig.tight_layout()
    fig.savefig(args.out, dpi=100)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
