"""check_manifest.py DUMP_PYAPI SHARED_DIR FLOOR [VERSION=LIBRARY ...]

Compares pyhost's symbol list with CPython's own manifest (Misc/stable_abi.toml): every
row must be a stable-ABI function or data item of the same kind and the same `added`.
Then, with exports_by_version.tsv, every row a Python version promises must really be
exported by that version's libpython.  Exits 77 (skip) when SHARED_DIR is absent.
Every VERSION=LIBRARY (the test matrix, newest releases and debug builds included) is
read with `nm -D --defined-only` the same way, so versions newer than the table are
checked against the real library.
Works on any Python 3 (no tomllib needed: the manifest's tables are one-line headers).
"""
import os
import re
import subprocess
import sys


def parse_manifest(path):
    items, current = {}, None
    for line in open(path, encoding="utf-8"):
        m = re.match(r"^\[(function|data|const|struct|macro|typedef|feature_macro)\.([A-Za-z0-9_]+)\]", line)
        if m:
            current = {"kind": m.group(1), "added": None, "abi_only": False}
            items[m.group(2)] = current
            continue
        if current is None:
            continue
        m = re.match(r"^\s*added\s*=\s*['\"]([0-9.]+)['\"]", line)
        if m:
            current["added"] = m.group(1)
        if re.match(r"^\s*abi_only\s*=\s*true", line):
            current["abi_only"] = True
    return items


def exported_by(library):
    out = subprocess.check_output(["nm", "-D", "--defined-only", library]).decode()
    return {line.split()[-1].split("@")[0] for line in out.splitlines() if line.strip()}


def missing_exports(rows, version, exported):
    v = tuple(map(int, version.split(".")))
    return [name for name, kind, added, need in rows
            if tuple(map(int, added.split("."))) <= v and name not in exported]


def main():
    dump, shared, floor = sys.argv[1], sys.argv[2], sys.argv[3]
    libraries = [a.split("=", 1) for a in sys.argv[4:]]
    toml = os.path.join(shared, "cpython", "stable_abi.toml")
    if not os.path.exists(toml):
        print("skipped: %s is absent; to run this check, configure with "
              "-DPYHOST_SHARED_DIR=<a folder holding cpython/stable_abi.toml and "
              "cpython/exports_by_version.tsv> and run ctest -R consistency.manifest" % toml)
        return 77
    manifest = parse_manifest(toml)
    rows = [line.split() for line in subprocess.check_output([dump]).decode().splitlines()]
    problems = []
    for name, kind, added, need in rows:
        item = manifest.get(name)
        if item is None:
            problems.append("%s is not in the stable ABI manifest" % name)
            continue
        if item["kind"] != kind:
            problems.append("%s is a %s in the manifest, a %s in pyhost" % (name, item["kind"], kind))
        if item["added"] != added:
            problems.append("%s: added %s in the manifest, %s in pyhost" % (name, item["added"], added))
        if need == "REQ" and tuple(map(int, added.split("."))) > tuple(map(int, floor.split("."))):
            problems.append("%s is REQ but added in %s, after the floor %s" % (name, added, floor))

    tsv = os.path.join(shared, "cpython", "exports_by_version.tsv")
    checked = 0
    if os.path.exists(tsv):
        lines = [l.rstrip("\n").split("\t") for l in open(tsv, encoding="utf-8") if not l.startswith("#")]
        header, body = lines[0], lines[1:]
        versions = [h[3:] for h in header if h.startswith("exp")]
        exported = {r[0]: dict(zip(versions, r[5:5 + len(versions)])) for r in body}
        for name, kind, added, need in rows:
            a = tuple(map(int, added.split(".")))
            for v in versions:
                if tuple(map(int, v.split("."))) >= a and exported.get(name, {}).get(v) != "Y":
                    problems.append("%s (added %s) is not exported by libpython %s" % (name, added, v))
                checked += 1
    for version, library in libraries:
        rows_due = missing_exports(rows, version, exported_by(library))
        problems += ["%s is not exported by %s (Python %s)" % (n, library, version) for n in rows_due]
        checked += len(rows)
    for p in problems:
        print("FAIL: " + p)
    print("%d rows checked against the manifest, %d (row, version) exports checked" % (len(rows), checked))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
