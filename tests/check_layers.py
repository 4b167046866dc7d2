#!/usr/bin/env python3
"""check_layers.py: src/'s layers hold (docs/design.md, "Layers").

Usage: check_layers.py NM SRC_ROOT LAYERS OBJECT...

LAYERS is the folders of SRC_ROOT bottom to top, separated by commas.  Each OBJECT is a
compiled file of the library whose path ends in <layer>/<name>.c.o (CMake's object
layout).  From `nm` on the objects it builds the file-level graph (a file that takes a
symbol another file defines depends on that file) and fails on

  - an upward call: a file that uses a symbol defined in a higher folder;
  - a circle: files that reach each other, in any folder (Tarjan's strongly
    connected components of the graph);

and from the sources' #include "..." lines on

  - an upward include: a file that includes a header of a higher folder;
  - a folder whose headers, more than one, are included from the folders above it
    (each folder offers the folders above at most one internal header).

Calls through header inlines show up in the objects of the files that include them,
which is where they run.  Exit status 0 when all holds, 1 with every breach listed.
"""
import os
import re
import subprocess
import sys
from collections import defaultdict


def file_of(obj, layers):
    """'<layer>/<name>.c' for an object path ending in <layer>/<name>.c.o."""
    parts = obj.replace("\\", "/").split("/")
    if len(parts) < 2 or parts[-2] not in layers or not parts[-1].endswith(".o"):
        sys.exit(f"check_layers: {obj} is not <layer>/<name>.c.o under one of {layers}")
    return parts[-2] + "/" + parts[-1][:-2]


def read_symbols(nm, obj):
    out = subprocess.run([nm, obj], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    if out.returncode != 0:
        sys.exit(f"check_layers: {nm} {obj} failed: {out.stderr.strip()}")
    defined, used = set(), set()
    for line in out.stdout.splitlines():
        f = line.split()
        if len(f) == 2 and f[0] == "U":
            used.add(f[1])
        elif len(f) == 3 and f[1] in "TDBRCVWG":  # global definitions only
            defined.add(f[2])
    return defined, used


def circles(nodes, edges):
    """Strongly connected components with more than one file (Tarjan, iterative)."""
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]
    for root in sorted(nodes):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges[w]))))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        out.append(sorted(comp))
    return out


def includes(src_root, layers):
    """{'<layer>/<file>': ['<layer>/<header>', ...]} for every source and header, the
    quoted includes resolved to the layer folder that holds them."""
    where = {}
    for layer in layers:
        for name in os.listdir(os.path.join(src_root, layer)):
            where.setdefault(name, layer + "/" + name)
    result = {}
    for layer in layers:
        for name in sorted(os.listdir(os.path.join(src_root, layer))):
            if not name.endswith((".c", ".h")):
                continue
            with open(os.path.join(src_root, layer, name), encoding="utf-8") as f:
                text = f.read()
            result[layer + "/" + name] = [where[h] for h in
                                          re.findall(r'^\s*#\s*include\s+"([^"]+)"', text, re.M)
                                          if h in where]
    return result


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    nm, src_root, layers = sys.argv[1], sys.argv[2], sys.argv[3].split(",")
    rank = {layer: i for i, layer in enumerate(layers)}
    layer_of = lambda f: f.split("/")[0]
    files, defs = {}, {}
    for obj in sys.argv[4:]:
        f = file_of(obj, layers)
        files[f] = read_symbols(nm, obj)
        for s in files[f][0]:
            defs[s] = f
    edges, why = defaultdict(set), defaultdict(set)
    for f, (_, used) in files.items():
        for s in used:
            g = defs.get(s)
            if g and g != f:
                edges[f].add(g)
                why[(f, g)].add(s)
    breaches = []
    for f in sorted(files):
        for g in sorted(edges[f]):
            if rank[layer_of(g)] > rank[layer_of(f)]:
                breaches.append(f"upward call: {f} ({layer_of(f)}) -> {g} ({layer_of(g)}): "
                                + ", ".join(sorted(why[(f, g)])))
    for comp in circles(files, edges):
        inner = [f"{f} -> {g} ({', '.join(sorted(why[(f, g)]))})"
                 for f in comp for g in sorted(edges[f]) if g in comp]
        breaches.append("circle of files: " + " <-> ".join(comp) + "\n    " + "\n    ".join(inner))
    offered = defaultdict(set)
    for f, hs in sorted(includes(src_root, layers).items()):
        for h in hs:
            if rank[layer_of(h)] > rank[layer_of(f)]:
                breaches.append(f"upward include: {f} ({layer_of(f)}) includes {h} ({layer_of(h)})")
            elif rank[layer_of(h)] < rank[layer_of(f)]:
                offered[layer_of(h)].add(h)
    for layer in layers:
        if len(offered[layer]) > 1:
            breaches.append(f"{layer} offers the folders above more than one header: "
                            + ", ".join(sorted(offered[layer])))
    n_edges = sum(len(e) for e in edges.values())
    if breaches:
        print("\n".join(breaches))
        print(f"check_layers: {len(breaches)} breach(es) in {len(files)} files, {n_edges} "
              f"file-level dependencies, layers {' < '.join(layers)}")
        return 1
    print(f"check_layers: {len(files)} files, {n_edges} file-level dependencies, no circle, "
          f"no upward call or include; layers {' < '.join(layers)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
