#!/usr/bin/env python3
"""Plot a shot gather from a minimod result file as a PNG.

Reads /seismograms/<field> [receiver][time] (attribute dt, s) and, if present,
/receivers/coordinates [n][3] (m). Receivers run along the x axis, time runs down.

    /usr/bin/python3 tools/plot_gather.py out/shot.h5 -o out/gather.png
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
    sys.exit("plot_gather.py: error: h5py is not installed (apt install python3-h5py)")


def fail(msg):
    sys.exit(f"plot_gather.py: error: {msg}")


def receiver_axis(f, n):
    """Receiver positions for the x axis: the coordinate (x, y or z) that varies most, in m,
    when it is strictly monotonic; otherwise the receiver number."""
    if "receivers/coordinates" in f:
        coords = np.asarray(f["receivers/coordinates"][...], dtype=float)
        if coords.shape == (n, 3) and n > 1:
            axis = int(np.argmax(np.ptp(coords, axis=0)))
            pos = coords[:, axis]
            step = np.diff(pos)
            if np.all(step > 0) or np.all(step < 0):
                return pos, f"receiver {'xyz'[axis]} (m)"
    return np.arange(n, dtype=float), "receiver number"


def main(argv=None):
    parser = argparse.ArgumentParser(
        description="Plot /seismograms/<field> of a minimod HDF5 result as a shot gather PNG "
        "(receivers across, time down).")
    parser.add_argument("file", help="minimod result file (HDF5), e.g. out/shot.h5")
    parser.add_argument("-o", "--output",
                        help="PNG to write (default: <file without .h5>_gather.png)")
    parser.add_argument("--field", default="p", help="seismogram field (default: p)")
    parser.add_argument("--clip", type=float, default=99.0,
                        help="colour scale clipped at this percentile of |amplitude| "
                        "(default: 99)")
    parser.add_argument("--cmap", default="gray",
                        help="matplotlib colour map, symmetric about 0 (default: gray; "
                        "try seismic)")
    parser.add_argument("--dpi", type=int, default=150, help="PNG resolution (default: 150)")
    args = parser.parse_args(argv)
    if not 0 < args.clip <= 100:
        parser.error("--clip must be in (0, 100]")

    name = f"seismograms/{args.field}"
    if not os.path.isfile(args.file):
        fail(f"'{args.file}' does not exist")
    try:
        f = h5py.File(args.file, "r")
    except OSError as e:
        fail(f"cannot open '{args.file}' as HDF5: {e}")
    with f:
        if name not in f or not isinstance(f[name], h5py.Dataset):
            have = sorted(f["seismograms"].keys()) if "seismograms" in f else []
            fail(f"'{args.file}' has no dataset '/{name}'"
                 + (f" (seismogram fields: {', '.join(have)})" if have else ""))
        data = np.asarray(f[name][...], dtype=float)
        if data.ndim != 2:
            fail(f"'/{name}' in '{args.file}' has shape {data.shape}, expected [receiver][time]")
        dt = f[name].attrs.get("dt", f.attrs.get("dt"))
        pos, pos_label = receiver_axis(f, data.shape[0])

    n_rec, n_t = data.shape
    if dt is not None and float(dt) > 0:
        t_end, t_label = (n_t - 1) * float(dt), "time (s)"
    else:
        t_end, t_label = n_t - 1, "sample"
    finite = np.abs(data[np.isfinite(data)])
    vmax = float(np.percentile(finite, args.clip)) if finite.size else 0.0
    if vmax <= 0:
        vmax = 1.0

    # Half-cell extents so each receiver and sample sits at its pixel centre.
    dx = (pos[-1] - pos[0]) / (n_rec - 1) if n_rec > 1 else 1.0
    dtt = t_end / (n_t - 1) if n_t > 1 else 1.0
    extent = [pos[0] - dx / 2, pos[-1] + dx / 2, t_end + dtt / 2, -dtt / 2]

    fig, ax = plt.subplots(figsize=(8, 6))
    im = ax.imshow(data.T, aspect="auto", cmap=args.cmap, vmin=-vmax, vmax=vmax,
                   extent=extent, interpolation="nearest")
    ax.set_xlabel(pos_label)
    ax.set_ylabel(t_label)
    ax.set_title(f"{os.path.basename(args.file)}: /{name} ({n_rec} receivers x {n_t} samples)")
    fig.colorbar(im, ax=ax, label=f"{args.field} (clipped at {args.clip:g}th percentile)")
    fig.tight_layout()

    out = args.output or os.path.splitext(args.file)[0] + "_gather.png"
    if os.path.dirname(out):
        os.makedirs(os.path.dirname(out), exist_ok=True)
    fig.savefig(out, dpi=args.dpi)
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
