#!/usr/bin/env python3
"""tools/export_segy.py against segyio's reader: a two-shot survey run by minimod (argv[1]),
exported into one SEG-Y file, reads back with every sample bit for bit and the geometry in the
trace headers; what SEG-Y cannot hold (a sample interval of no whole microseconds, more than
65535 samples), a missing field and an existing output are refused with one message and nothing
written. Exit 77 (skipped) without h5py or segyio."""
import os
import subprocess
import sys
import tempfile

try:
    import h5py
    import numpy as np
    import segyio
except ImportError as e:
    print(f"skipped: {e} (apt install python3-h5py python3-segyio)")
    sys.exit(77)

HERE = os.path.dirname(os.path.abspath(__file__))
TOOL = os.path.join(HERE, "..", "..", "tools", "export_segy.py")
CONFIG = """propagator: acoustic_iso
grid: {shape: [24, 20, 22], spacing: [10, 10, 10]}
model:
  vp: {constant: 2000}
time: {duration: 0.1}
source: {wavelet: ricker, frequency: 15}
shots:
  - {points: [[50.5, 95, 30], [170, 80.25, 60]]}
receivers:
  - {line: {start: [0, 95, 10], end: [230, 95, 10], count: 9}}
boundary: {pml: {width: 6}}
execution: {backend: cpu}
output: {file: line.h5, seismograms: {interval: 0.002}}
"""
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print(f"FAILED: {what}")


def export(work, *args):
    r = subprocess.run([sys.executable, TOOL, *args], cwd=work, capture_output=True, text=True)
    return r.returncode, r.stdout, r.stderr


def expect_refused(work, args, needle, out):
    before = sorted(os.listdir(work))
    code, _, err = export(work, *args)
    lines = [l for l in err.splitlines() if l.startswith("export_segy.py: error: ")]
    check(code == 2, f"{args}: exit status {code}, expected 2")
    check(len(lines) == 1 and needle in lines[0], f"{args}: one error naming '{needle}', got: {err!r}")
    check(sorted(os.listdir(work)) == before, f"{args}: files left behind")
    check(not os.path.exists(os.path.join(work, out + ".partial")), f"{args}: partial file left")


def main():
    binary = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory() as work:
        with open(os.path.join(work, "line.yaml"), "w") as f:
            f.write(CONFIG)
        env = dict(os.environ, OMP_NUM_THREADS="1")
        r = subprocess.run([binary, "--quiet", "--config", "line.yaml"], cwd=work, env=env,
                           capture_output=True, text=True)
        if r.returncode != 0:
            print(r.stdout, r.stderr)
            sys.exit("minimod failed")
        shots = ["line-0000.h5", "line-0001.h5"]
        code, out, err = export(work, *shots, "-o", "line.sgy")
        check(code == 0, f"export failed: {err}")
        traces, sources, receivers = [], [], []
        for s in shots:
            with h5py.File(os.path.join(work, s), "r") as f:
                traces.append(f["seismograms/p"][...])
                sources.append(np.asarray(f.attrs["source_position"]))
                receivers.append(f["receivers/coordinates"][...])
        expected = np.concatenate(traces)
        check(np.abs(expected).max() > 0, "the survey recorded nothing")
        with segyio.open(os.path.join(work, "line.sgy"), ignore_geometry=True) as f:
            check(f.tracecount == 18, f"{f.tracecount} traces, expected 18")
            got = f.trace.raw[:]
            check(got.dtype == np.float32 and np.array_equal(got, expected), "samples differ")
            check(f.bin[segyio.BinField.Format] == 5, "format is not IEEE float")
            check(f.bin[segyio.BinField.Samples] == expected.shape[1], "binary header ns")
            check(f.bin[segyio.BinField.Interval] == 2000, "binary header dt (us)")
            for t in range(18):
                s, r = divmod(t, 9)
                h = f.header[t]
                scale = -1.0 / h[segyio.TraceField.SourceGroupScalar]
                check(h[segyio.TraceField.FieldRecord] == s, f"trace {t}: shot number")
                check(h[segyio.TraceField.TraceNumber] == r + 1, f"trace {t}: receiver number")
                check(abs(h[segyio.TraceField.SourceX] * scale - sources[s][0]) < 1e-9, f"trace {t}: SourceX")
                check(abs(h[segyio.TraceField.SourceY] * scale - sources[s][1]) < 1e-9, f"trace {t}: SourceY")
                check(abs(h[segyio.TraceField.GroupX] * scale - receivers[s][r][0]) < 1e-9, f"trace {t}: GroupX")
                check(abs(h[segyio.TraceField.GroupY] * scale - receivers[s][r][1]) < 1e-9, f"trace {t}: GroupY")
                zscale = -1.0 / h[segyio.TraceField.ElevationScalar]
                check(abs(h[segyio.TraceField.SourceDepth] * zscale - sources[s][2]) < 1e-9, f"trace {t}: depth")
                check(abs(-h[segyio.TraceField.ReceiverGroupElevation] * zscale - receivers[s][r][2]) < 1e-9,
                      f"trace {t}: receiver depth")
                check(h[segyio.TraceField.TRACE_SAMPLE_INTERVAL] == 2000, f"trace {t}: dt")
        check(sources[0][0] == 50.5 and sources[1][1] == 80.25, "the shots' positions")

        # An existing output is kept; --overwrite replaces it.
        with open(os.path.join(work, "old.sgy"), "wb") as f:
            f.write(b"precious")
        expect_refused(work, [shots[0], "-o", "old.sgy"], "exists", "old.sgy")
        check(open(os.path.join(work, "old.sgy"), "rb").read() == b"precious", "old output changed")
        code, _, err = export(work, shots[0], "-o", "old.sgy", "--overwrite")
        check(code == 0 and os.path.getsize(os.path.join(work, "old.sgy")) > 3600, f"--overwrite: {err}")

        expect_refused(work, [shots[0], "-o", "q.sgy", "--field", "q"], "/seismograms/q", "q.sgy")
        expect_refused(work, [shots[0], "missing.h5", "-o", "m.sgy"], "missing.h5", "m.sgy")

        # A sample interval of no whole microseconds (every step, dt 1.35.. ms), then too many samples.
        r = subprocess.run([binary, "--quiet", "--config", "line.yaml", "--set", "output.seismograms.interval=0",
                            "--set", "output.file=every.h5"], cwd=work, env=env, capture_output=True, text=True)
        check(r.returncode == 0, f"minimod: {r.stderr}")
        expect_refused(work, ["every-0000.h5", "-o", "e.sgy"], "output.seismograms.interval", "e.sgy")
        with h5py.File(os.path.join(work, "long.h5"), "w") as f:
            d = f.create_dataset("seismograms/p", data=np.zeros((2, 65536), np.float32))
            d.attrs["dt"] = 0.001
            f.create_dataset("receivers/coordinates", data=np.zeros((2, 3)))
            f.attrs["source_position"] = np.zeros(3)
        expect_refused(work, ["long.h5", "-o", "l.sgy"], "65536 samples", "l.sgy")
    if failures:
        print(f"{len(failures)} check(s) failed")
        return 1
    print("export_segy: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
