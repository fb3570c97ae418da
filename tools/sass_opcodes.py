#!/usr/bin/env python3
"""Static SASS opcode counts of CUDA kernels, without cuobjdump or nvdisasm.

This machine has nvcc but no disassembler, and device time is scarce. An sm_90 instruction is 16
bytes and its low 12 bits are its opcode with the kind of its operands (register, immediate,
constant bank, uniform register) in bits 9-11. Counting them in a cubin's kernel sections says
how a source change moves a kernel's instructions (for instance ULDC, the constant loads into
uniform registers) before any GPU call. Names come from the opcodes seen in the tree's own
kernels and the public sm_80/sm_90 encodings; an opcode not in the table prints in hex. These are
static counts (instructions in the code, not executed): a loop's body counts once.

  python3 tools/sass_opcodes.py kernel.cubin [substring of the kernel's mangled name ...]
  python3 tools/sass_opcodes.py --compile kernels/cuda/swic_split.cu 32ELi8ENS2_8AxisSums

--compile builds the cubin first (nvcc -cubin -arch=sm_90, the build's defines and flags, the
includes from the source's own tree, so that a variant in another worktree compiles with its own).
With two cubins (--against OTHER.cubin) it prints both and the difference per opcode.
"""
import argparse
import collections
import hashlib
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

# Opcode (low 12 bits) -> mnemonic. The high nibble of the 12 bits is the operand kind: 0x2 all
# registers, 0x4 or 0x8 an immediate, 0x6 or 0xa a constant-bank operand, 0xc a uniform register.
BASE = {
    0x23: "FFMA", 0x21: "FADD", 0x20: "FMUL", 0x0b: "FSETP", 0x08: "FSEL", 0x02: "MOV", 0x24: "IMAD",
    0x25: "IMAD.WIDE", 0x10: "IADD3", 0x12: "LOP3", 0x0c: "ISETP", 0x11: "LEA", 0x19: "SHF", 0x07: "SEL",
}
FULL = {
    0x81C: "PLOP3", 0x919: "S2R", 0x9C3: "S2UR", 0xB1D: "BAR", 0x947: "BRA", 0x94D: "EXIT", 0x918: "NOP",
    0x945: "BSSY", 0x941: "BSYNC", 0x948: "WARPSYNC", 0x984: "LDS", 0x988: "STS", 0x388: "STS",
    0x981: "LDG", 0x986: "STG", 0x983: "LDL", 0x987: "STL", 0xAB9: "ULDC", 0x882: "UMOV", 0xC82: "UMOV",
    0x890: "UIADD3", 0x892: "ULOP3", 0x88C: "UISETP", 0x899: "USHF", 0x891: "ULEA", 0x308: "MUFU",
    0x5B4: "UTMALDG", 0x886: "VOTEU",
}
FP32 = {"FFMA", "FADD", "FMUL"}


def name_of(op):
    if op in FULL:
        return FULL[op]
    base = BASE.get(op & 0xFF)
    if base and (op >> 8) in (0x2, 0x4, 0x6, 0x8, 0xA, 0xC):
        return base
    return f"0x{op:03x}?"


def sections(path):
    """(name, bytes) of each section of an ELF64 file."""
    data = open(path, "rb").read()
    if data[:4] != b"\x7fELF":
        sys.exit(f"sass_opcodes: {path} is not an ELF cubin (build one with nvcc -cubin)")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    headers = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    strtab = headers[shstrndx][4]
    for h in headers:
        end = data.index(b"\0", strtab + h[0])
        yield data[strtab + h[0]:end].decode(), data[h[4]:h[4] + h[5]]


def kernel_counts(path, patterns):
    """{kernel section name: Counter of mnemonics} for the .text sections matching every pattern."""
    found = {}
    for name, body in sections(path):
        if not name.startswith(".text.") or not all(p in name for p in patterns):
            continue
        counts = collections.Counter()
        counts["(text sha1)"] = hashlib.sha1(body).hexdigest()[:12]
        for i in range(0, len(body) - 15, 16):
            word, = struct.unpack_from("<Q", body, i)
            counts[name_of(word & 0xFFF)] += 1
        # (the anonymous namespace's tag depends on the file's path: left out, so that the same
        # kernel of two trees has one name)
        found[re.sub(r"_GLOBAL__N__\w*?_cu_[0-9a-f]+", "", name[len(".text."):])] = counts
    return found


def nvcc():
    """$NVCC, else nvcc on the PATH, else CUDA's default place."""
    return os.environ.get("NVCC") or shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"


def source_root(source):
    """The tree a source belongs to (its includes are relative to it): the nearest folder above it
    that holds physics/."""
    d = os.path.dirname(os.path.abspath(source))
    while d != os.path.dirname(d) and not os.path.isdir(os.path.join(d, "physics")):
        d = os.path.dirname(d)
    return d


def compile_cubin(source, out):
    root = source_root(source)
    cmd = [nvcc(), "-DMINIMOD_HAVE_CUDA=1", f"-I{root}", "-O3", "-DNDEBUG", "-arch=sm_90", "--expt-relaxed-constexpr",
           "-std=c++17", "-cubin", source, "-o", out]
    subprocess.run(cmd, check=True)


def summary(counts):
    ops = {k: v for k, v in counts.items() if not k.startswith("(")}
    total = sum(ops.values())
    fp = sum(v for k, v in ops.items() if k in FP32)
    top = sorted(ops.items(), key=lambda kv: -kv[1])[:24]
    return f"{total} instructions, FP32 {fp}, " + ", ".join(f"{k} {v}" for k, v in top)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("input", help="a cubin, or with --compile a .cu file")
    ap.add_argument("patterns", nargs="*", help="substrings every kernel name must contain")
    ap.add_argument("--compile", action="store_true", help="compile the .cu input to a cubin first")
    ap.add_argument("--against", help="a second cubin (or .cu with --compile) to compare with")
    args = ap.parse_intermixed_args()
    with tempfile.TemporaryDirectory() as tmp:
        inputs = [args.input] + ([args.against] if args.against else [])
        cubins = []
        for n, src in enumerate(inputs):
            if args.compile:
                cubin = os.path.join(tmp, f"{n}.cubin")
                compile_cubin(src, cubin)
                src = cubin
            cubins.append(src)
        results = [kernel_counts(c, args.patterns) for c in cubins]
    if not results[0]:
        sys.exit("sass_opcodes: no kernel matches " + " ".join(args.patterns))
    for kernel, counts in results[0].items():
        print(kernel)
        print("  " + summary(counts))
        if len(results) > 1 and kernel in results[1]:
            other = results[1][kernel]
            print("  against: " + summary(other))
            if counts["(text sha1)"] == other["(text sha1)"]:
                print("  difference: none, the code is the same bit for bit")
                continue
            keys = [k for k in set(counts) | set(other) if not k.startswith("(")]
            diff = {k: counts.get(k, 0) - other.get(k, 0) for k in keys if counts.get(k, 0) != other.get(k, 0)}
            print("  difference: " + (", ".join(f"{k} {v:+d}" for k, v in sorted(diff.items(), key=lambda kv: kv[1]))
                                      or "the same counts, other code"))


if __name__ == "__main__":
    main()
