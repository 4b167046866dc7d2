#!/usr/bin/env python3
"""bench/run_cpp.py: the C++ layer (include/pyhost.hpp) against the C route it wraps and
against the direct host.

Usage: run_cpp.py BUILD_DIR [--versions 3.8,3.11,3.13,3.15] [--calls 20000] [--out FILE]
                  [--pybind11] [--rows cpp-b3,cpp-e2]

For each Python version it counts, under callgrind, the instructions per operation of
  - the typed rows (cpp-b2 ... cpp-f2): bench_cpp's cpp_* mode, the C typed route of the
    same row (bench_pyhost's mode of run.py's row: cpp-b3 against b3's keyword plan),
    and the directly linked host (bench_direct_<tag>, the full API),
    each net of its Python loop where Python drives the row; and the calls of libc's
    allocator per operation of the C++ and the C mode (Python's own included: a 10 000-
    character str is malloc'ed by Python on both sides);
  - the fast forms, for reference (cpp-b, cpp-c, cpp-e): C and C++ modes of bench_cpp.
It prints the ratios; --out writes the Markdown tables (docs/bench/cpp.md).  BUILD_DIR is
a build configured with -DPYHOST_BUILD_BENCH=ON (its bench/bench.json names the
programs and the Pythons).  --pybind11 adds the same operations written with pybind11
(bench_pybind11, on Debian's 3.11, which it is built for) next to the C++ layer on the
same Python.  The exit status is 1 when a typed row's C++ / C ratio is above 1.05 or the
C++ layer calls the allocator more often per call than the C route.
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run import allocations, instructions  # noqa: E402  (callgrind --toggle-collect=bench_loop*)

LOOP = "loop_fn_empty"  # the Python loop alone, in every program
# (id, direction, operation, program of the C typed route, its mode, C++ mode,
#  direct host's mode or None, netted of the Python loop, operations per run / calls)
TYPED = [
    ("cpp-b2", "C->Python", "`f2(i, 2)` -> int: `f.call<int64_t>(i, 2)` / `pyhost_prepared_call_int`",
     "pyhost", "call2_args", "cpp_call2", "call2", False, 1),
    ("cpp-b3", "C->Python", "`fk(i, y=2.5)` -> float, a keyword: `f.call<double>(i, \"y\"_kw = 2.5)` / "
     "keyword plan (`pyhost_prepare_keywords` + `pyhost_prepared_call_float`)", "pyhost", "call_kw_plan",
     "cpp_call_kw", "call_kw", False, 1),
    ("cpp-c2", "Python->C", "`g(i, 2.5)` -> float: `def(\"g\", lambda, pyh::arg(\"i\"), pyh::arg(\"y\"))` / "
     "typed host function", "pyhost", "hostfn2", "cpp_hostfn2", "hostfn2", True, 1),
    ("cpp-c3", "Python->C", "`g(i, y=2.5)` -> float, a keyword: the same", "pyhost", "hostfn2_kw",
     "cpp_hostfn2_kw", "hostfn2_kw", True, 1),
    ("cpp-e2", "Python->C", "`T(i).get()`: `init<int64_t>(pyh::arg(\"i\"))`, `get` / typed constructor "
     "and method, inline payload", "pyhost", "hosttype2", "cpp_hosttype2", "hosttype2", True, 1),
    ("cpp-f2", "C->Python->C", "10 000-character str round trip: `call<std::string_view>(view)` / "
     "`pyhost_prepared_callf(\"z>s\")`, borrowed result (C++: `pyhost_prepared_call_str`)", "pyhost", "str_trip",
     "cpp_str_trip", "str_trip", False, 10),
]
FAST = [  # (id, direction, operation, C mode, C++ mode): both in bench_cpp
    ("cpp-b", "C->Python", "`f(i, 2)` -> int: prepared call, typed result", "c_call", "cpp_call"),
    ("cpp-c", "Python->C", "`g(i, 2.5)` -> float: fast host function (no names)", "c_hostfn", "cpp_hostfn"),
    ("cpp-e", "Python->C", "`T(i).get()`: fast host type, inline payload", "c_hosttype", "cpp_hosttype"),
]
PYBIND11 = [  # (id, pybind11's mode, the C++ layer's mode, netted of the loop)
    ("cpp-b2", "call2", "cpp_call2", False),
    ("cpp-c2", "hostfn2", "cpp_hostfn2", True),
    ("cpp-c3", "hostfn2_kw", "cpp_hostfn2_kw", True),
    ("cpp-e2", "hosttype2", "cpp_hosttype2", True),
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--versions", default="3.8,3.11,3.13,3.15")
    ap.add_argument("--calls", type=int, default=20000)
    ap.add_argument("--out")
    ap.add_argument("--pybind11", action="store_true")
    ap.add_argument("--rows", help="only these rows (comma-separated ids, e.g. cpp-b3,cpp-e2): a partial "
                    "table, for a change that touches those rows")
    a = ap.parse_args()
    rows = set(a.rows.split(",")) if a.rows else None
    cfg = json.load(open(os.path.join(a.build, "bench", "bench.json")))
    if not cfg.get("cpp"):
        sys.exit("run_cpp.py: bench_cpp was not built (no C++ compiler?)")
    entries = {e["version"]: e for e in cfg["entries"] if "-system" not in e["tag"] and not e["tag"].endswith("d")}

    def cmd(e, prog, mode, k):
        return e.get("launcher", []) + [prog, mode, str(k)] + ([e["lib"]] if prog != e.get("direct") else [])

    def per_op(e, prog, mode, k, net):
        ir = instructions(cmd(e, prog, mode, k), k)
        return ir - instructions(cmd(e, prog, LOOP, k), k) if net else ir

    typed = ["| row | direction | operation | Python | C typed route (instr/op) | C++ layer (instr/op) | "
             "C++ / C | direct host (instr/op) | C++ / direct | mallocs/op C++, C |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    fast = ["| row | direction | operation | Python | C route (instr/op) | C++ layer (instr/op) | C++ / C |",
            "|---|---|---|---|---|---|---|"]
    worst, most_allocs = 0.0, 0.0
    for ver in a.versions.split(","):
        e = entries.get(ver)
        if not e:
            sys.exit(f"run_cpp.py: no Python {ver} in {a.build}")
        for rid, direction, op, cprog, cmode, cppmode, dmode, net, div in TYPED:
            if rows is not None and rid not in rows:
                continue
            k = max(1, a.calls // div)
            c = per_op(e, cfg[cprog], cmode, k, net)
            cpp = per_op(e, cfg["cpp"], cppmode, k, net)
            allocs = allocations(lambda j: cmd(e, cfg["cpp"], cppmode, j), k)
            c_allocs = allocations(lambda j: cmd(e, cfg[cprog], cmode, j), k)
            d = per_op(e, e["direct"], dmode, k, net) if dmode and e.get("direct") else None
            worst, most_allocs = max(worst, cpp / c), max(most_allocs, allocs - c_allocs)
            ds = f"{d:.0f} | {cpp / d:.3f}x" if d else "— | —"
            typed.append(f"| {rid} | {direction} | {op} | {ver} | {c:.0f} | {cpp:.0f} | {cpp / c:.3f}x | {ds} | "
                         f"{allocs:.3f}, {c_allocs:.3f} |")
            print(typed[-1], flush=True)
        for rid, direction, op, cmode, cppmode in FAST:
            if rows is not None and rid not in rows:
                continue
            c = per_op(e, cfg["cpp"], cmode, a.calls, False)
            cpp = per_op(e, cfg["cpp"], cppmode, a.calls, False)
            fast.append(f"| {rid} | {direction} | {op} | {ver} | {c:.0f} | {cpp:.0f} | {cpp / c:.3f}x |")
            print(fast[-1], flush=True)
    text = ("The typed routes: the C++ layer, the C typed route of the same row and the direct host "
            "(net of the Python loop for the Python->C rows):\n\n" + "\n".join(typed) +
            f"\n\nWorst C++ / C ratio: {worst:.3f}x (target: at most 1.05x); most calls of libc's "
            f"allocator per operation the C++ side makes beyond the C side's: {most_allocs:.3f} "
            "(target: 0).\n\n"
            "The fast forms (callables registered without names), for reference:\n\n" + "\n".join(fast) + "\n")
    if a.pybind11:
        if not cfg.get("pybind11"):
            sys.exit("run_cpp.py: bench_pybind11 was not built (pybind11-dev and Debian's 3.11 needed)")
        e = next(e for e in cfg["entries"] if e["tag"] == "py3.11-system")
        pb = ["| row | operation | pybind11 (instr/op) | pyhost C++ layer (instr/op) | pyhost / pybind11 |",
              "|---|---|---|---|---|"]
        ops = {r[0]: r[2].split(":")[0] for r in TYPED}
        for rid, pbmode, cppmode, net in PYBIND11:
            ours = per_op(e, cfg["cpp"], cppmode, a.calls, net)
            theirs = instructions([cfg["pybind11"], pbmode, str(a.calls)], a.calls)
            if net:
                theirs -= instructions([cfg["pybind11"], LOOP, str(a.calls)], a.calls)
            pb.append(f"| {rid} | {ops[rid]} | {theirs:.0f} | {ours:.0f} | {ours / theirs:.2f}x |")
            print(pb[-1], flush=True)
        text += ("\nOn Debian's Python 3.11, the same operations written with pybind11 (net of the loop "
                 "likewise):\n\n" + "\n".join(pb) + "\n")
    if a.out:
        with open(a.out, "w") as f:
            f.write("<!-- generated by bench/run_cpp.py; regenerate with "
                    "bench/run_cpp.py BUILD_DIR --pybind11 --out docs/bench/cpp.md -->\n" + text)
    print(f"worst ratio {worst:.3f}x, most allocations per operation beyond C's {most_allocs:.3f}")
    return 0 if worst <= 1.05 and most_allocs < 0.01 else 1


if __name__ == "__main__":
    sys.exit(main())
