#!/usr/bin/env python3
"""tools/sass_opcodes.py on probe kernels of known content: the FFMAs of an unrolled chain of
dependent fused multiply-adds, a block barrier and shared-memory loads are counted under their
names; a file against itself is the same bit for bit; one more FMA in the chain is FFMA +1.
Exits 77 (skipped) without nvcc."""
import os
import re
import shutil
import subprocess
import sys
import tempfile

TOOL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools", "sass_opcodes.py")
PROBE = r"""
__global__ void probe_chain(float* x, float a, float b) {
  float v = x[threadIdx.x];
#pragma unroll
  for (int n = 0; n < CHAIN; ++n) v = fmaf(v, a, b + n);
  x[threadIdx.x] = v;
}
__global__ void probe_shared(float* x) {
  __shared__ float s[256];
  s[threadIdx.x] = x[threadIdx.x];
  __syncthreads();
  x[threadIdx.x] = s[(threadIdx.x + 1) % 256] + s[(threadIdx.x + 7) % 256];
}
"""


def run(*args):
    return subprocess.run([sys.executable, TOOL, *args], check=True, capture_output=True, text=True).stdout


def counts(line):
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"(\w[\w.?]*) (\d+)", line)}


def main():
    sys.path.insert(0, os.path.dirname(TOOL))
    import sass_opcodes  # noqa: E402 (the tool's own choice of nvcc)
    if shutil.which(sass_opcodes.nvcc()) is None:
        print("skipped: no nvcc")
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        paths = {}
        for chain in (16, 17):
            paths[chain] = os.path.join(tmp, f"probe{chain}.cu")
            with open(paths[chain], "w") as f:
                f.write(f"#define CHAIN {chain}\n" + PROBE)
        out = run("--compile", paths[16], "probe_chain")
        chain = counts(out.splitlines()[1])
        assert chain.get("FFMA", 0) >= 16, out
        assert chain.get("BAR", 0) == 0, out
        shared = counts(run("--compile", paths[16], "probe_shared").splitlines()[1])
        assert shared.get("BAR", 0) >= 1 and shared.get("LDS", 0) >= 2 and shared.get("STS", 0) >= 1, shared
        same = run("--compile", paths[16], "--against", paths[16], "probe")
        assert same.count("the same bit for bit") == 2, same
        longer = run("--compile", paths[17], "--against", paths[16], "probe_chain")
        assert "FFMA +1" in longer, longer
    print("sass_opcodes: FFMA, BAR, LDS and STS counted; same code and one more FFMA told apart")
    return 0


if __name__ == "__main__":
    sys.exit(main())
