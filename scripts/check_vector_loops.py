#!/usr/bin/env python3
"""Checks that GCC still vectorises the CPU reference's row loops (ctest -R CpuVectorLoops).

A change that looks neutral can leave a row loop scalar without changing a result: from 5216625
to session 23 the TTI CPML's rows ran scalar and configs/tti.yaml took 111 s instead of 65
(bench/results/2026-11-27-session23-tti-layer-launches.md section 6). This recompiles each file
below with the build's own command (compile_commands.json) and GCC's vectoriser report, and
fails when a row function vectorises fewer loops than listed.

    python3 scripts/check_vector_loops.py BUILD_DIR

Exit 0: every function vectorised as listed; 1: one did not (named, with GCC's count); 77: no
GCC build to check (skipped, with the reason).
"""
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

# (source, row function, loops GCC must vectorise in it: its `omp simd` loops and those of the
# helpers it inlines)
EXPECTED = [
    ("kernels/cpu/acoustic_tti_cpu.cpp", "tti_inner_row", 1),
    ("kernels/cpu/acoustic_tti_cpu.cpp", "tti_layer_row", 1),       # by_chunks' operator loop
    ("kernels/cpu/acoustic_tti_cpu.cpp", "vti_inner_row", 1),
    ("kernels/cpu/acoustic_tti_cpu.cpp", "vti_layer_row", 1),
    ("kernels/cpu/acoustic_tti_cpu.cpp", "axis_inner_row", 1),
    ("kernels/cpu/acoustic_tti_cpu.cpp", "axis_layer_row", 1),
    ("kernels/cpu/acoustic_tti_cpu.cpp", "tti_cpml_psi_row", 5),    # psi x, y, z below and above, V
    ("kernels/cpu/acoustic_tti_cpu.cpp", "tti_rows_chunk", 1),
    ("kernels/cpu/acoustic_tti_cpu.cpp", "vti_rows_chunk", 1),
    ("kernels/cpu/acoustic_tti_cpu.cpp", "axis_rows_chunk", 1),
    ("kernels/cpu/acoustic_tti_cpu.cpp", "tti_cpml_layer_row", 4),  # 3 flux derivatives, the finish
    ("kernels/cpu/acoustic_iso_cpu.cpp", "inner_row_update_simd", 1),
    ("kernels/cpu/acoustic_iso_cpu.cpp", "pml_row", 1),
    ("kernels/cpu/acoustic_iso_cpu.cpp", "cpml_psi_row", 1),
    ("kernels/cpu/acoustic_iso_cpu.cpp", "cpml_row", 1),
]


def skip(why):
    print(f"SKIPPED: {why}")
    sys.exit(77)


def compile_command(entries, source):
    """The build's command for `source`, its output sent to a scratch file, GCC's report added."""
    for e in entries:
        if os.path.realpath(e["file"]).endswith(os.sep + source):
            args = e["arguments"] if "arguments" in e else shlex.split(e["command"])
            return e["directory"], args
    return None, None


def function_line(path, name):
    """Line of the definition of row function `name` (MM_ROW_FUNCTION or noinline)."""
    pattern = re.compile(r"^(MM_ROW_FUNCTION|__attribute__\(\(noinline\)\)) void " + re.escape(name) + r"\(")
    with open(path) as f:
        for n, line in enumerate(f, 1):
            if pattern.match(line):
                return n
    return None


def vectorised_counts(directory, args):
    """Runs the compile with GCC's report; returns {line: loops vectorised} of the file's functions."""
    kept, skip_next = [], False
    for a in args:  # the build's command less its output and dependency files
        if skip_next:
            skip_next = False
        elif a in ("-o", "-MF", "-MT"):
            skip_next = True
        elif a != "-MD":
            kept.append(a)
    counts = {}
    with tempfile.TemporaryDirectory() as tmp:
        report = os.path.join(tmp, "vec.txt")
        run = subprocess.run(kept + ["-o", os.path.join(tmp, "check.o"), f"-fopt-info-vec-all={report}"],
                             cwd=directory, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if run.returncode != 0:
            print(run.stderr[-4000:])
            sys.exit(f"the compile of {args[-1]} failed")
        with open(report) as f:
            for line in f:
                m = re.search(r":(\d+):\d+: note: vectorized (\d+) loops in function", line)
                if m:  # a function may appear more than once (clones): keep the most
                    n = int(m.group(1))
                    counts[n] = max(counts.get(n, 0), int(m.group(2)))
    return counts


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    build = sys.argv[1]
    db = os.path.join(build, "compile_commands.json")
    if not os.path.exists(db):
        skip(f"{db} not found (configure with CMAKE_EXPORT_COMPILE_COMMANDS)")
    with open(db) as f:
        entries = json.load(f)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    failures = []
    sources = sorted({s for s, _, _ in EXPECTED})
    for source in sources:
        directory, args = compile_command(entries, source)
        if args is None:
            skip(f"{source} is not in {db}")
        if source == sources[0]:
            compiler = subprocess.run([args[0], "--version"], stdout=subprocess.PIPE, text=True).stdout
            if "Free Software Foundation" not in compiler:
                skip(f"{args[0]} is not GCC (the check reads GCC's vectoriser report)")
        counts = vectorised_counts(directory, args)
        for s, name, want in EXPECTED:
            if s != source:
                continue
            line = function_line(os.path.join(root, source), name)
            if line is None:
                failures.append(f"{source}: row function {name} not found (update scripts/check_vector_loops.py)")
                continue
            got = counts.get(line, 0)
            status = "ok" if got >= want else "FAILED"
            print(f"{status:6} {source}:{line} {name}: {got} loops vectorised, {want} expected")
            if got < want:
                failures.append(f"{source}:{line} {name}: GCC vectorised {got} of its {want} loops")
    if failures:
        print("\n".join(["", "A row loop of the CPU reference went scalar:"] + failures +
                         ["GCC says why with -fopt-info-vec-missed on that file (docs/tti.md, 'Not yet')."]))
        sys.exit(1)


if __name__ == "__main__":
    main()
