#!/usr/bin/env python3
"""Export minimod shot records (HDF5) to one SEG-Y file, shot after shot.

Each result's /seismograms/<field> [receiver][time] becomes one trace a receiver, IEEE floats
(format 5, big-endian), the samples bit for bit. A survey's files (out/line-0000.h5 ...) go
into one file in the order given, each shot's traces together:

    /usr/bin/python3 tools/export_segy.py out/survey/line-*.h5 -o out/line.sgy

Trace headers (SEG-Y rev 1 byte positions): FieldRecord (9) = the shot's number (root attribute
`shot`, else its place in the list), TraceNumber (13) = receiver number from 1, SourceX/Y
(73/77) and GroupX/Y (81/85) in cm (SourceGroupScalar (71) = -100: divide by 100 for m),
SourceDepth (49) and ReceiverGroupElevation (41) = -depth, in cm (ElevationScalar (69) = -100),
offset (37) in m, CoordinateUnits (89) = 1 (length), ns (115) and dt (117, microseconds).
Positions are minimod's model coordinates (m from the first model point, z depth positive down).
The binary header holds ns, dt, format 5 and revision 1; the text header names minimod, the
field and its units.

SEG-Y stores ns and dt in 16 bits: more than 65535 samples or a sample interval that is not a
whole number of microseconds (1 to 65535) cannot be written, and the error says what to change
(output.seismograms.interval, or fewer samples). Nothing is written on error; an existing output
is kept unless --overwrite.
"""
import argparse
import os
import sys

import numpy as np

try:
    import h5py
except ImportError:  # pragma: no cover
    sys.exit("export_segy.py: error: h5py is not installed (apt install python3-h5py)")
try:
    import segyio
except ImportError:  # pragma: no cover
    sys.exit("export_segy.py: error: segyio is not installed (apt install python3-segyio)")

MAX_SAMPLES = 65535
SCALAR = -100  # coordinates and depths stored in cm


class ExportError(Exception):
    pass


def read_shot(path, field, place):
    """One result's traces [receiver][time] (float32), interval (s), receiver and source
    positions (m) and shot number."""
    if not os.path.isfile(path):
        raise ExportError(f"'{path}' does not exist")
    try:
        f = h5py.File(path, "r")
    except OSError as e:
        raise ExportError(f"cannot open '{path}' as HDF5: {e}")
    with f:
        name = f"seismograms/{field}"
        if name not in f:
            have = sorted(f["seismograms"].keys()) if "seismograms" in f else []
            raise ExportError(f"'{path}' has no dataset '/{name}'"
                              + (f" (seismogram fields: {', '.join(have)})" if have else ""))
        data = np.asarray(f[name][...], dtype=np.float32)
        if data.ndim != 2:
            raise ExportError(f"'/{name}' in '{path}' has shape {data.shape}, expected [receiver][time]")
        if "dt" not in f[name].attrs:
            raise ExportError(f"'/{name}' in '{path}' has no 'dt' attribute (the sample interval)")
        dt = float(f[name].attrs["dt"])
        if "receivers/coordinates" not in f:
            raise ExportError(f"'{path}' has no dataset '/receivers/coordinates'")
        rec = np.asarray(f["receivers/coordinates"][...], dtype=float)
        if rec.shape != (data.shape[0], 3):
            raise ExportError(f"'/receivers/coordinates' in '{path}' has shape {rec.shape}, "
                              f"expected ({data.shape[0]}, 3)")
        if "source_position" not in f.attrs:
            raise ExportError(f"'{path}' has no root attribute 'source_position' "
                              "(written by minimod since 2026-12-04)")
        src = np.asarray(f.attrs["source_position"], dtype=float).reshape(3)
        shot = int(f.attrs["shot"]) if "shot" in f.attrs else place
        units = str(f[name].attrs.get("units", "arbitrary"))
    return data, dt, rec, src, shot, units


def microseconds(dt, path):
    us = dt * 1e6
    whole = round(us)
    if not 1 <= whole <= 65535 or abs(us - whole) > 1e-6 * max(us, 1.0):
        raise ExportError(
            f"'{path}': the sample interval {dt:.9g} s is not a whole number of microseconds "
            "from 1 to 65535, which SEG-Y needs; set output.seismograms.interval to one "
            "(e.g. 0.002) and run again")
    return int(whole)


def cm(x):
    return int(round(x * 100.0))


def export(paths, output, field="p", overwrite=False):
    if os.path.exists(output) and not overwrite:
        raise ExportError(f"'{output}' exists (give --overwrite to replace it)")
    shots = [read_shot(p, field, place) for place, p in enumerate(paths)]
    ns, dt_us, units = None, None, shots[0][5]
    for path, (data, dt, _, _, _, _) in zip(paths, shots):
        if data.shape[1] > MAX_SAMPLES:
            raise ExportError(f"'{path}': {data.shape[1]} samples a trace, SEG-Y holds at most "
                              f"{MAX_SAMPLES}; take a longer output.seismograms.interval or split "
                              "the record")
        us = microseconds(dt, path)
        if ns is None:
            ns, dt_us = data.shape[1], us
        elif (data.shape[1], us) != (ns, dt_us):
            raise ExportError(f"'{path}': {data.shape[1]} samples every {us} us, the first file "
                              f"has {ns} every {dt_us} us; one SEG-Y file holds one sampling")
    spec = segyio.spec()
    spec.format = 5
    spec.samples = list(range(ns))
    spec.tracecount = sum(s[0].shape[0] for s in shots)
    spec.sorting = segyio.TraceSortingFormat.UNKNOWN_SORTING
    partial = output + ".partial"
    os.makedirs(os.path.dirname(os.path.abspath(output)), exist_ok=True)
    try:
        with segyio.create(partial, spec) as f:
            f.text[0] = segyio.tools.create_text_header({
                1: "minimod shot records exported by tools/export_segy.py",
                2: f"field {field} ({units}), {len(shots)} shot(s), {spec.tracecount} traces, "
                   f"{ns} samples every {dt_us} us",
                3: "coordinates: minimod model coordinates, m from the first model point",
                4: "x, y in cm (scalar -100); depths in cm as -elevation (scalar -100)",
                5: "format 5: IEEE float32, big-endian, the samples as minimod wrote them",
            })
            f.bin.update({
                segyio.BinField.Samples: ns,
                segyio.BinField.Interval: dt_us,
                segyio.BinField.Format: 5,
                segyio.BinField.SEGYRevision: 0x0100,
                segyio.BinField.TraceFlag: 1,
                segyio.BinField.MeasurementSystem: 1,
            })
            t = 0
            for data, _, rec, src, shot, _ in shots:
                for r in range(data.shape[0]):
                    g = rec[r]
                    f.header[t] = {
                        segyio.TraceField.TRACE_SEQUENCE_LINE: t + 1,
                        segyio.TraceField.TRACE_SEQUENCE_FILE: t + 1,
                        segyio.TraceField.FieldRecord: shot,
                        segyio.TraceField.TraceNumber: r + 1,
                        segyio.TraceField.TraceIdentificationCode: 1,
                        segyio.TraceField.offset: int(round(np.hypot(g[0] - src[0], g[1] - src[1]))),
                        segyio.TraceField.ReceiverGroupElevation: -cm(g[2]),
                        segyio.TraceField.SourceDepth: cm(src[2]),
                        segyio.TraceField.ElevationScalar: SCALAR,
                        segyio.TraceField.SourceGroupScalar: SCALAR,
                        segyio.TraceField.SourceX: cm(src[0]),
                        segyio.TraceField.SourceY: cm(src[1]),
                        segyio.TraceField.GroupX: cm(g[0]),
                        segyio.TraceField.GroupY: cm(g[1]),
                        segyio.TraceField.CoordinateUnits: 1,
                        segyio.TraceField.TRACE_SAMPLE_COUNT: ns,
                        segyio.TraceField.TRACE_SAMPLE_INTERVAL: dt_us,
                    }
                    f.trace[t] = data[r]
                    t += 1
        os.replace(partial, output)
    finally:
        if os.path.exists(partial):
            os.remove(partial)
    return spec.tracecount


def main(argv=None):
    parser = argparse.ArgumentParser(
        description="Export minimod results' /seismograms/<field> to one SEG-Y file (IEEE floats), "
        "shot after shot.")
    parser.add_argument("files", nargs="+", help="minimod result files (HDF5), e.g. out/line-*.h5")
    parser.add_argument("-o", "--output", required=True, help="SEG-Y file to write")
    parser.add_argument("--field", default="p", help="seismogram field (default: p)")
    parser.add_argument("--overwrite", action="store_true", help="replace an existing output")
    args = parser.parse_args(argv)
    try:
        n = export(args.files, args.output, args.field, args.overwrite)
    except ExportError as e:
        print(f"export_segy.py: error: {e}", file=sys.stderr)
        return 2
    print(f"{args.output}: {n} traces from {len(args.files)} shot(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
