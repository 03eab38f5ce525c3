#!/usr/bin/env python3
"""Checks which GPU architectures a binary carries kernel code for.

Usage: check-gpu-archs.py BINARY --archs 75;80;...;120 --ptx 120
           --objects N

cuobjdump --list-elf lists the machine code (one cubin per kernel object
per architecture) and --list-ptx the PTX. Every one of the N kernel
objects must carry machine code for each architecture of --archs (the
meson option gpu_archs, expanded) and the PTX of --ptx, and nothing
else: a GPU whose architecture is missing fails its first launch with
cudaErrorNoKernelImageForDevice, which no test on a machine without that
GPU would see.

cuobjdump comes from the pip wheel nvidia-cuda-cuobjdump (in the
project's .venv, scripts/requirements.txt), else the CUDA toolkit, else
PATH. Exit status 77 (meson's "skipped") when there is none; 1 when an
architecture is missing or extra, naming it.
"""
import argparse
import collections
import os
import re
import shutil
import subprocess
import sys


def find_cuobjdump():
    here = os.path.dirname(os.path.abspath(sys.executable))
    prefix = os.path.dirname(here)
    candidates = []
    for root, _dirs, files in os.walk(os.path.join(prefix, "lib")):
        if "cuobjdump" in files and root.endswith(os.path.join("bin")):
            candidates.append(os.path.join(root, "cuobjdump"))
    candidates += ["/usr/local/cuda/bin/cuobjdump", shutil.which("cuobjdump")]
    for c in candidates:
        if c and os.access(c, os.X_OK):
            return c
    return None


def listed(cuobjdump, binary, kind):
    """{architecture: count} of --list-elf or --list-ptx."""
    out = subprocess.run([cuobjdump, f"--list-{kind}", binary],
                         capture_output=True, text=True)
    if out.returncode != 0 and "does not contain" not in out.stderr:
        sys.exit(f"FAIL {cuobjdump} --list-{kind} {binary}: "
                 f"{out.stderr.strip()}")
    return collections.Counter(
        re.findall(r"\.sm_([0-9]+[af]?)\.(?:cubin|ptx)$", out.stdout, re.M))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("binary")
    p.add_argument("--archs", required=True,
                   help="the architectures, separated by ;")
    p.add_argument("--ptx", required=True, help="the PTX's architecture")
    p.add_argument("--objects", type=int, required=True,
                   help="kernel objects: each carries every architecture")
    args = p.parse_args()

    cuobjdump = find_cuobjdump()
    if cuobjdump is None:
        print("SKIP: no cuobjdump (pip install nvidia-cuda-cuobjdump, or "
              "the CUDA toolkit)")
        return 77
    want = [a for a in args.archs.split(";") if a]
    elf = listed(cuobjdump, args.binary, "elf")
    ptx = listed(cuobjdump, args.binary, "ptx")
    print(f"{os.path.basename(args.binary)} ({cuobjdump}):")
    print("  machine code: " + ", ".join(
        f"sm_{a} x{n}" for a, n in sorted(elf.items(),
                                           key=lambda i: int(i[0].rstrip("af")))))
    print("  PTX: " + ", ".join(f"compute_{a} x{n}" for a, n in ptx.items()))
    failed = []
    for a in want:
        if elf[a] != args.objects:
            failed.append(f"sm_{a}: {elf[a]} of {args.objects} kernel "
                          "objects have machine code for it")
    for a in set(elf) - set(want):
        failed.append(f"sm_{a}: machine code that gpu_archs did not ask for")
    if ptx[args.ptx] != args.objects or set(ptx) != {args.ptx}:
        failed.append(f"PTX: want compute_{args.ptx} in each of the "
                      f"{args.objects} objects, have {dict(ptx)}")
    for f in failed:
        print("FAIL " + f)
    print(f"{len(want)} architectures and the PTX checked, "
          f"{len(failed)} wrong")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
