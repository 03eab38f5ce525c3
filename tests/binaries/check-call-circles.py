#!/usr/bin/env python3
"""Checks that calls between the object files of a static library run one
way: no circle of calls between two or more of its objects.

Usage: check-call-circles.py LIBRARY.a

nm lists, for each object file, the symbols it defines and the ones it
uses. An object that uses a function another object defines calls it (a
variable shared, such as a debug category, is not a call). The
check finds the strongly connected components of that graph (Tarjan);
any component of two or more objects is a circle, printed with the
symbols that close it, and fails the check (exit status 1). Exit status
77 (meson's "skipped") when nm is missing.
"""
import collections
import os
import re
import shutil
import subprocess
import sys

LINE = re.compile(r"^\S+\[(?P<obj>[^\]]+)\]: (?P<sym>\S+) (?P<type>\w) ")


def read_symbols(lib):
    out = subprocess.run(["nm", "-A", "-P", lib], capture_output=True,
                         text=True, check=True).stdout
    defines, uses = {}, collections.defaultdict(set)
    objects = set()
    for line in out.splitlines():
        m = LINE.match(line)
        if not m:
            continue
        obj = os.path.basename(m["obj"])
        objects.add(obj)
        if m["type"] == "U":
            uses[obj].add(m["sym"])
        elif m["type"] in "TW":
            defines.setdefault(m["sym"], obj)
    return objects, defines, uses


def components(nodes, edges):
    index, low, stack, on_stack, found = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        # iterative Tarjan: the engine's graph is small, but recursion
        # limits are not worth a thought
        work = [(v, iter(sorted(edges[v])))]
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        while work:
            node, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(edges[w]))))
                    advanced = True
                    break
                if w in on_stack:
                    low[node] = min(low[node], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == node:
                        break
                found.append(sorted(comp))

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return found


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    if not shutil.which("nm"):
        print("SKIP: no nm on PATH")
        return 77
    objects, defines, uses = read_symbols(sys.argv[1])
    edges = collections.defaultdict(set)
    for obj, syms in uses.items():
        for sym in syms:
            target = defines.get(sym)
            if target and target != obj:
                edges[obj].add(target)
    circles = [c for c in components(objects, edges) if len(c) > 1]
    for circle in circles:
        print(f"circle of {len(circle)} objects:")
        for a in circle:
            for b in sorted(edges[a] & set(circle)):
                syms = sorted(s for s in uses[a] if defines.get(s) == b)
                more = f" (+{len(syms) - 4})" if len(syms) > 4 else ""
                print(f"  {a} -> {b}: {', '.join(syms[:4])}{more}")
    print(f"{len(objects)} objects, {sum(len(e) for e in edges.values())} "
          f"calls between them, {len(circles)} circles")
    return 1 if circles else 0


if __name__ == "__main__":
    sys.exit(main())
