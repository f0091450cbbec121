#!/usr/bin/env python3
"""Executed instructions per MAC of Arm kernels, counted (not timed) under qemu-aarch64.

Runs DRIVER KERNEL M N K (tests/arm/count_kernel.cpp: packs a random problem, then calls the
kernel once between qmm_count_begin() and qmm_count_end()) under
`qemu-aarch64 -d in_asm,exec,nochain`: in_asm logs every translation block (TB) once with its
instructions, exec (unchained, so every execution is logged) each TB executed. The kernel's
count is the sum of the lengths of the TBs executed between the two markers (each begin..end
pair is one count). The log streams through a FIFO, so nothing large is written to disk.

usage: count_instructions.py --qemu QEMU [--cpu CPU] [--svl BYTES] --driver DRIVER
                             [--shape M N K] [--c-api MAX_INSTR MAX_PERCENT] [--max-per-mac X]
                             [--max-instructions N] [--fewer-than KAI_KERNEL]
                             [--lhs-packer] (KERNEL [KERNEL ...] | --all-kernels)
Prints per kernel: instructions, MACs, instructions per MAC, and the most executed mnemonics.
With --c-api, each kernel is counted twice in one run, called directly and through the public
qmm_ukernel_run; the script fails when the public call adds more than MAX_INSTR instructions or
(a GEMM) more than MAX_PERCENT % of the kernel's own count. --all-kernels counts every kernel of
the list this CPU runs (the driver's --list), a GEMV at m = 1. With --max-per-mac, it fails when a kernel
executes more than X instructions per MAC (a bound on a kernel's loop, e.g. the SME2 prefill GEMMs).
With --max-instructions N it fails when a kernel's count (the public call's, with --c-api) is over
N; with --fewer-than KAI_KERNEL (a KleidiAI kernel the driver links) when it is not below that
kernel's count, counted in the same way on the same shape (the guard that qmm beats KleidiAI).
With --lhs-packer, the kernel's LHS packer is counted instead, on the M x K activations (per value).
"""
import argparse
import collections
import os
import re
import subprocess
import sys
import tempfile

IN_RE = re.compile(r"^0x([0-9a-f]+):\s+[0-9a-f]+\s+(\S+)")
TRACE_RE = re.compile(r"^Trace \d+: 0x[0-9a-f]+ \[[0-9a-f]+/([0-9a-f]+)/[^\]]*\]\s*(\S*)")


def count(qemu, cpu, svl, driver, kernel, shape, capi=False, lhs=False):
    with tempfile.TemporaryDirectory() as tmp:
        fifo = os.path.join(tmp, "log")
        os.mkfifo(fifo)
        cmd = [qemu, "-cpu", f"{cpu},sme-default-vector-length={svl}", "-d", "in_asm,exec,nochain", "-D", fifo,
               driver, kernel] + [str(x) for x in shape] + (["capi"] if capi else []) + (["lhs"] if lhs else [])
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        tbs = {}  # first pc -> mnemonics of the TB
        block, counting = None, False
        segments = []  # (total, mnemonics) per begin..end pair
        with open(fifo, "r", errors="replace") as log:
            for line in log:
                if line.startswith("IN:"):
                    block = None
                    continue
                m = IN_RE.match(line)
                if m:
                    if block is None:
                        block = tbs.setdefault(int(m.group(1), 16), [])
                        block.clear()
                    block.append(m.group(2))
                    continue
                block = None
                t = TRACE_RE.match(line)
                if not t:
                    continue
                sym = t.group(2)
                if sym == "qmm_count_begin":
                    counting = True
                    segments.append([0, collections.Counter()])
                elif sym == "qmm_count_end":
                    counting = False
                elif counting:
                    mns = tbs.get(int(t.group(1), 16), [])
                    segments[-1][0] += len(mns)
                    segments[-1][1].update(mns)
        out, err = proc.communicate()
        if proc.returncode != 0 or len(segments) != (2 if capi else 1) or counting:
            sys.exit(f"count_instructions: {' '.join(cmd)} failed ({proc.returncode}): {err.strip() or out.strip()}")
        return segments  # capi: the kernel, then the public call


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--qemu", required=True)
    ap.add_argument("--cpu", default="max,sme_fa64=off")
    ap.add_argument("--svl", type=int, default=64, help="streaming vector length in bytes (64 = 512 bits)")
    ap.add_argument("--driver", required=True)
    ap.add_argument("--shape", type=int, nargs=3, default=[64, 256, 512], metavar=("M", "N", "K"))
    ap.add_argument("--top", type=int, default=8, help="mnemonics listed per kernel")
    ap.add_argument("--c-api", type=float, nargs=2, metavar=("MAX_INSTR", "MAX_PERCENT"),
                    help="also count the public qmm_ukernel_run call and bound what it adds")
    ap.add_argument("--max-per-mac", type=float, help="fail when a kernel executes more instructions per MAC")
    ap.add_argument("--max-instructions", type=int,
                    help="fail when a kernel (with --c-api: the public call) executes more instructions")
    ap.add_argument("--fewer-than", metavar="KAI_KERNEL",
                    help="fail unless each kernel (with --c-api: the public call) executes fewer instructions than "
                         "this KleidiAI kernel on the same shape")
    ap.add_argument("--all-kernels", action="store_true", help="every kernel of the list this CPU runs")
    ap.add_argument("--lhs-packer", action="store_true", help="count each kernel's LHS packer instead")
    ap.add_argument("kernels", nargs="*")
    a = ap.parse_args()
    kernels = [(name, False) for name in a.kernels]
    if a.all_kernels:
        cmd = [a.qemu, "-cpu", f"{a.cpu},sme-default-vector-length={a.svl}", a.driver, "--list"]
        listed = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.split("\n")
        kernels += [(line.split()[0], line.split()[1] == "gemv") for line in listed if line.strip()]
    if not kernels:
        ap.error("name a kernel or pass --all-kernels")
    print(f"executed instructions, qemu -cpu {a.cpu} SVL {a.svl * 8} bits, m {a.shape[0]} n {a.shape[1]} k {a.shape[2]}")
    theirs = {}  # shape -> the --fewer-than kernel's count
    for kernel, gemv in kernels:
        shape = [1] + a.shape[1:] if gemv else a.shape
        m, n, k = shape
        macs = m * n * k
        if a.lhs_packer:
            total, hist = count(a.qemu, a.cpu, a.svl, a.driver, kernel, shape, lhs=True)[0]
            top = ", ".join(f"{mn} {c}" for mn, c in hist.most_common(a.top))
            print(f"{kernel}'s LHS packer: {total} instructions, {total / (m * k):.2f} per activation; {top}")
            continue
        segments = count(a.qemu, a.cpu, a.svl, a.driver, kernel, shape, capi=bool(a.c_api))
        total, hist = segments[0]
        top = ", ".join(f"{mn} {c}" for mn, c in hist.most_common(a.top))
        print(f"{kernel}: {total} instructions, {total / macs:.5f} instr/MAC ({macs / max(total, 1):.1f} MACs/instr); {top}")
        if a.max_per_mac is not None and total / macs > a.max_per_mac:
            sys.exit(f"count_instructions: {kernel} executes {total / macs:.5f} instructions per MAC, "
                     f"over the bound of {a.max_per_mac:g}")
        if a.c_api:
            public = segments[1][0]
            extra = public - total
            pct = 100.0 * extra / max(total, 1)
            print(f"{kernel} through qmm_ukernel_run: {public} instructions, {extra} more than the kernel ({pct:.2f} %)")
            if extra > a.c_api[0] or (not gemv and pct > a.c_api[1]):
                sys.exit(f"count_instructions: qmm_ukernel_run adds {extra} instructions ({pct:.2f} %), "
                         f"over the bound of {a.c_api[0]:g} ({a.c_api[1]:g} %)")
        ours = segments[1][0] if a.c_api else total
        if a.max_instructions is not None and ours > a.max_instructions:
            sys.exit(f"count_instructions: {kernel} executes {ours} instructions, over the bound of {a.max_instructions}")
        if a.fewer_than:
            if tuple(shape) not in theirs:
                theirs[tuple(shape)] = count(a.qemu, a.cpu, a.svl, a.driver, a.fewer_than, shape)[0][0]
            kai = theirs[tuple(shape)]
            print(f"{a.fewer_than}: {kai} instructions; {kernel}{' (public call)' if a.c_api else ''} {ours}: "
                  f"{kai / max(ours, 1):.3f}x fewer")
            if ours >= kai:
                sys.exit(f"count_instructions: {kernel} executes {ours} instructions, not fewer than {a.fewer_than}'s {kai}")


if __name__ == "__main__":
    main()
