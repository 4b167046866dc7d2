#!/usr/bin/env python3
"""check_state.py: everything pyhost keeps for the process is where docs/design.md says.

Usage: check_state.py NM OBJECT...

Each OBJECT is a compiled file of the library whose path ends in <layer>/<name>.c.o.
From `nm -f sysv` it lists every symbol in a writable data section (.data, .bss and
their thread-local and relocated forms; .data.rel.ro is read-only after loading and
not state) and fails on any not in KEPT below: process state lives in pyhost__process
(core.h), the bridge's registries in pyhost__bridge (bridge/registries.h), each thread's
in pyhost__thread (core.h), and a new file static holding state is a breach.  The
exceptions say why each is not state.  Exit status 0 when all holds, 1 with every
breach listed.
"""
import subprocess
import sys

KEPT = {
    ("core/state.c", "pyhost__process"): "the process's state (core.h)",
    ("core/state.c", "pyhost__thread"): "each thread's state (core.h)",
    ("bridge/registries.c", "pyhost__bridge"): "the bridge's registries (registries.h)",
    # the platform layer is below the core and cannot use its object: its test seams
    ("platform/alloc.c", "countdown"): "the fault-injection seam (alloc.h)",
    ("platform/alloc.c", "failures"): "the fault-injection seam (alloc.h)",
    ("platform/discover_posix.c", "pyhost__sys_ld_conf"): "a test seam: the ld.so.conf read",
    ("platform/proc_posix.c", "pyhost__proc_deathsig"): "a test seam: the parent-death signal",
    # written once by the compiler, never by pyhost: tables CPython's API takes as
    # non-const, and values handed to hosts as non-const pointers
    ("bridge/hosttype.c", "descr_members"): "PyMemberDef table of a type pyhost makes",
    ("bridge/hosttype.c", "descr_getset"): "PyGetSetDef table of a type pyhost makes",
    ("bridge/hosttype.c", "bound_members"): "PyMemberDef table of a type pyhost makes",
    ("bridge/hosttype.c", "bound_members_plain"): "PyMemberDef table of a type pyhost makes",
    ("bridge/hosttype.c", "bound_getset"): "PyGetSetDef table of a type pyhost makes",
    ("bridge/value.c", "constants"): "the immutable None, False and True values",
    # a byte whose address names the thread; nothing is stored in it
    ("core/msg.c", "this_thread"): "a thread's identity for its message slot",
}

WRITABLE = (".data", ".bss", ".tdata", ".tbss")


def file_of(obj):
    parts = obj.replace("\\", "/").split("/")
    if len(parts) < 2 or not parts[-1].endswith(".c.o"):
        sys.exit(f"check_state: {obj} is not <layer>/<name>.c.o")
    return parts[-2] + "/" + parts[-1][:-2]


def writable_symbols(nm, objects):
    """{object: [(symbol, section)]} from one run of nm over every object."""
    out = subprocess.run([nm, "-f", "sysv"] + objects, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    if out.returncode != 0:
        sys.exit(f"check_state: {nm} failed: {out.stderr.strip()}")
    found, current = {o: [] for o in objects}, objects[0] if len(objects) == 1 else None
    for line in out.stdout.splitlines():
        if line.startswith("Symbols from ") and line.endswith(":"):
            current = line[len("Symbols from "):-1]
            continue
        f = [x.strip() for x in line.split("|")]
        # names starting with "." or "__" are the compiler's and the sanitizers' own
        # (__odr_asan.*, __sancov_*): C reserves them, pyhost defines none
        if current is None or len(f) < 7 or not f[0] or f[0].startswith((".", "__")):
            continue
        section = f[6]
        if section.startswith(WRITABLE) and ".rel.ro" not in section:
            found.setdefault(current, []).append((f[0], section))
    return found


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    nm, objects = sys.argv[1], sys.argv[2:]
    breaches, seen = [], set()
    symbols = writable_symbols(nm, objects)
    for obj in objects:
        name = file_of(obj)
        for sym, section in symbols.get(obj, []):
            sym = sym.split(".")[0]  # a function-local static: name.N
            if (name, sym) in KEPT:
                seen.add((name, sym))
            else:
                breaches.append(f"{name}: {sym} ({section}) is state outside pyhost__process, "
                                f"pyhost__bridge and pyhost__thread")
    for (name, sym), why in sorted(KEPT.items()):
        if (name, sym) not in seen and any(file_of(o) == name for o in objects):
            breaches.append(f"{name}: {sym} ({why}) is listed as kept but gone: "
                            f"take it off the list")
    for b in breaches:
        print(b)
    if breaches:
        print(f"check_state: {len(breaches)} breach(es) in {len(objects)} files")
        return 1
    print(f"check_state: the process's state is where docs/design.md says "
          f"({len(objects)} files, {len(seen)} writable symbols, each accounted for)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
