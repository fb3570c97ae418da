#!/usr/bin/env python3
"""Plot three orthogonal slices through the middle of a minimod wavefield as a PNG.

Reads snapshot --index (default: the last one written) of /snapshots/<field>
[snapshot][x][y][z], or /final/<field> [x][y][z] with --final. Positions in m come
from the root attributes origin and spacing and the snapshot's first_index and stride;
z is depth, drawn downwards.

    /usr/bin/python3 tools/plot_snapshot.py out/shot.h5 -o out/snapshot.png
"""
import argparse
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

try:
    import h5py  # noqa: E402
except ImportError:  # pragma: no cover
    sys.exit("plot_snapshot.py: error: h5py is not installed (apt install python3-h5py)")


def fail(msg):
    sys.exit(f"plot_snapshot.py: error: {msg}")


def vec3(attrs, key, default):
    v = attrs.get(key)
    if v is None or np.size(v) != 3:
        return np.asarray(default, dtype=float)
    return np.asarray(v, dtype=float)


def main(argv=None):
    parser = argparse.ArgumentParser(
        description="Plot x-y, x-z and y-z slices through the middle of a minimod snapshot "
        "(/snapshots/<field>) or final wavefield (/final/<field>) as a PNG.")
    parser.add_argument("file", help="minimod result file (HDF5), e.g. out/shot.h5")
    parser.add_argument("-o", "--output",
                        help="PNG to write (default: <file without .h5>_snapshot.png)")
    parser.add_argument("--field", default="p", help="wavefield (default: p)")
    parser.add_argument("--index", type=int, default=None,
                        help="snapshot number, negative counts from the end "
                        "(default: the last snapshot written)")
    parser.add_argument("--final", action="store_true",
                        help="plot /final/<field> instead of a snapshot")
    parser.add_argument("--clip", type=float, default=99.5,
                        help="colour scale clipped at this percentile of |value| (default: 99.5)")
    parser.add_argument("--cmap", default="seismic",
                        help="matplotlib colour map, symmetric about 0 (default: seismic)")
    parser.add_argument("--dpi", type=int, default=150, help="PNG resolution (default: 150)")
    args = parser.parse_args(argv)
    if not 0 < args.clip <= 100:
        parser.error("--clip must be in (0, 100]")
    if args.final and args.index is not None:
        parser.error("--index and --final exclude each other")

    if not os.path.isfile(args.file):
        fail(f"'{args.file}' does not exist")
    try:
        f = h5py.File(args.file, "r")
    except OSError as e:
        fail(f"cannot open '{args.file}' as HDF5: {e}")
    with f:
        spacing = vec3(f.attrs, "spacing", [1, 1, 1])
        origin = vec3(f.attrs, "origin", [0, 0, 0])
        name = f"final/{args.field}" if args.final else f"snapshots/{args.field}"
        if name not in f or not isinstance(f[name], h5py.Dataset):
            other = f"snapshots/{args.field}" if args.final else f"final/{args.field}"
            hint = f"; it has '/{other}' (use {'no ' if args.final else ''}--final)" \
                if other in f else ""
            fail(f"'{args.file}' has no dataset '/{name}'{hint}")
        ds = f[name]
        stride = vec3(ds.attrs, "stride", [1, 1, 1])
        first = vec3(ds.attrs, "first_index", [0, 0, 0])
        if args.final:
            if ds.ndim != 3:
                fail(f"'/{name}' has shape {ds.shape}, expected [x][y][z]")
            vol = np.asarray(ds[...], dtype=float)
            label = "final wavefield"
        else:
            if ds.ndim != 4:
                fail(f"'/{name}' has shape {ds.shape}, expected [snapshot][x][y][z]")
            count = ds.shape[0]
            times = np.asarray(f["snapshots/time"][...], dtype=float) \
                if "snapshots/time" in f else np.full(count, np.nan)
            if args.index is None:
                written = np.flatnonzero(np.isfinite(times))
                index = int(written[-1]) if written.size else count - 1
            else:
                index = args.index + count if args.index < 0 else args.index
                if not 0 <= index < count:
                    fail(f"--index {args.index} is outside the {count} snapshots of '/{name}'")
            vol = np.asarray(ds[index], dtype=float)
            t = times[index] if index < times.size else np.nan
            label = f"snapshot {index} of {count}" + \
                (f", t = {t:.4g} s" if np.isfinite(t) else " (never written)")

    nx, ny, nz = vol.shape
    step = spacing * stride
    start = origin + first * spacing
    coord = [start[a] + step[a] * np.arange(n) for a, n in enumerate(vol.shape)]
    mid = (nx // 2, ny // 2, nz // 2)

    def extent(a, b, down):  # pixel-centred extent for axis a across, axis b vertical
        lo_a, hi_a = coord[a][0] - step[a] / 2, coord[a][-1] + step[a] / 2
        lo_b, hi_b = coord[b][0] - step[b] / 2, coord[b][-1] + step[b] / 2
        return [lo_a, hi_a, hi_b, lo_b] if down else [lo_a, hi_a, lo_b, hi_b]

    slices = [  # (image [rows = vertical axis][cols = horizontal], extent, labels, title)
        (vol[:, :, mid[2]].T, extent(0, 1, False), "x (m)", "y (m)",
         f"z = {coord[2][mid[2]]:.6g} m"),
        (vol[:, mid[1], :].T, extent(0, 2, True), "x (m)", "z (m, depth)",
         f"y = {coord[1][mid[1]]:.6g} m"),
        (vol[mid[0], :, :].T, extent(1, 2, True), "y (m)", "z (m, depth)",
         f"x = {coord[0][mid[0]]:.6g} m"),
    ]
    finite = np.abs(vol[np.isfinite(vol)])
    vmax = float(np.percentile(finite, args.clip)) if finite.size else 0.0
    if vmax <= 0:
        vmax = 1.0

    fig, axes = plt.subplots(1, 3, figsize=(15, 5), constrained_layout=True)
    for ax, (img, ext, xl, yl, title) in zip(axes, slices):
        im = ax.imshow(img, cmap=args.cmap, vmin=-vmax, vmax=vmax, extent=ext,
                       interpolation="nearest", origin="upper" if ext[2] > ext[3] else "lower")
        ax.set_aspect("equal")
        ax.set_xlabel(xl)
        ax.set_ylabel(yl)
        ax.set_title(title)
    fig.colorbar(im, ax=list(axes), shrink=0.8,
                 label=f"{args.field} (clipped at {args.clip:g}th percentile)")
    fig.suptitle(f"{os.path.basename(args.file)}: /{name}, {label}")

    out = args.output or os.path.splitext(args.file)[0] + "_snapshot.png"
    if os.path.dirname(out):
        os.makedirs(os.path.dirname(out), exist_ok=True)
    fig.savefig(out, dpi=args.dpi)
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
