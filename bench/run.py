#!/usr/bin/env python3
"""bench/run.py: runs the benchmarks of bench/ and writes the table and the plot.

Usage: run.py BUILD_DIR [--versions 3.8,3.11,3.13,3.11-system,3.15] [--runs 5] [--scale 1.0]
              [--no-callgrind] [--out DOCS_DIR]

For every Python version it runs pyhost and the directly linked baseline back to back,
--runs times, and reports the median of the per-run ratios pyhost / baseline (so a
noisy moment hits both sides of a ratio).  Instruction counts come from
`valgrind --tool=callgrind --toggle-collect=bench_loop`, which counts only the measured
loop and repeats exactly.  Writes DOCS_DIR/bench/results.md (the tables), results.tsv,
ratios.dat and DOCS_DIR/performance.png, and replaces the generated section of
DOCS_DIR/performance.md.
"""
import argparse
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ENV = {k: v for k, v in os.environ.items()
       if k not in ("PYTHONHOME", "PYTHONPATH", "PYHOST_PYTHON_LIBRARY")}
ENV["PYTHONHASHSEED"] = "0"  # the same dict probes in every run: repeatable counts

# Iteration counts at --scale 1 (the sizes).
CALLS = 1_000_000
EVALS = 100_000
UNCACHED_EVALS = 10_000
STR_REPS = 200
LIST_REPS = 20
CG_CALLS = 20_000  # under callgrind


def run(cmd, env=ENV):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    if p.returncode != 0:
        sys.exit(f"run.py: {' '.join(cmd)} failed ({p.returncode}):\n{p.stderr}")
    return p.stdout


def ns_per_op(cmd):
    out = run(cmd)
    m = re.search(r"^RESULT \S+ ([0-9.]+)$", out, re.M)
    if not m:
        sys.exit(f"run.py: no RESULT line from {' '.join(cmd)}:\n{out}")
    return float(m.group(1))


def wall(cmd):
    t0 = time.perf_counter()
    run(cmd)
    return (time.perf_counter() - t0) * 1e9


STARTS = 5  # processes per start-up sample: a shared machine's stalls only ever add time


def wall_best(cmd):
    """The fastest of STARTS runs of a whole process, in ns."""
    return min(wall(cmd) for _ in range(STARTS))


_counted = {}  # (cmd, toggle) -> (instructions, calls of libc's allocator): counts repeat exactly


def callgrind_counts(cmd, toggle=None):
    """(instructions, calls of malloc/calloc/realloc) callgrind counts in one run of cmd:
    inside functions matching toggle (--toggle-collect), or the whole process (loader
    and exit included) without one.  Each command is run once per process of run.py."""
    key = (tuple(cmd), toggle)
    if key not in _counted:
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "cg.out")
            subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"]
                           + ([f"--toggle-collect={toggle}"] if toggle else []) + cmd,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV, check=True)
            with open(out) as f:
                text = f.read()
        ir = int(re.search(r"^(?:summary|totals): (\d+)", text, re.M).group(1))
        # callgrind names a function once ("cfn=(7) malloc"), then by number ("cfn=(7)");
        # the calls= line after a cfn= counts the calls of it
        names, allocs, callee = {}, 0, None
        for m in re.finditer(r"^(c?fn)=\((\d+)\)(?: (.*))?$|^calls=(\d+)", text, re.M):
            if m.group(1):
                if m.group(3):
                    names[m.group(2)] = m.group(3)
                callee = names.get(m.group(2)) if m.group(1) == "cfn" else None
            elif callee in ("malloc", "calloc", "realloc"):
                allocs += int(m.group(4))
        _counted[key] = (ir, allocs)
    return _counted[key]


def callgrind_total(cmd, toggle=None):
    return callgrind_counts(cmd, toggle)[0]


def instructions(cmd, n):
    """Instructions per iteration of bench_loop (warm-up included: n + n // 10 + 1)."""
    return callgrind_total(cmd, "bench_loop*") / (n + n // 10 + 1)


def allocations(cmd_of, n):
    """Calls of libc's allocator per iteration of bench_loop: the difference between a
    run of 2n and one of n iterations, so that what a run does once (compiling the
    loop's Python, a first call's plan) cancels out.  cmd_of(k): the command for k."""
    once, twice = (callgrind_counts(cmd_of(k), "bench_loop*")[1] for k in (n, 2 * n))
    return (twice - once) / ((2 * n + 2 * n // 10 + 1) - (n + n // 10 + 1))


def instructions_in(cmd, function, n):
    """Instructions per operation inside `function`."""
    return callgrind_total(cmd, function) / n


def results(cmd):
    """Every RESULT line of one run: {name: ns per operation}."""
    return {m.group(1): float(m.group(2))
            for m in re.finditer(r"^RESULT (\S+) ([0-9.]+)$", run(cmd), re.M)}


SCALE_CALLS = 100_000  # bench_pyhost.c: calls measured after each scale set-up


def measure_scale(cfg, entry, runs, callgrind):
    """(what, size, ns per op, instructions per op or None) for the scale table."""
    prog, lib = entry.get("launcher", []) + [cfg["pyhost"]], entry["lib"]
    rows = []

    def one(mode, size, parts):
        """parts: [(result name, label, toggle function, ops per run or None for size)]"""
        outs = [results(prog + [mode, str(size), lib]) for _ in range(runs)]
        for name, label, fn, ops in parts:
            ns = statistics.median(o[name] for o in outs)
            ir = None
            if callgrind and fn:
                ir = instructions_in(prog + [mode, str(size), lib], fn, ops or size)
            rows.append((label, size, ns, ir))

    for size in (10, 1000, 10000):
        one("scale_fns", size, [
            ("scale_fns_register", "host functions in one module: registration, per function",
             "scale_register_fns", None),
            ("scale_fns_call", "host functions in one module: a call from Python (loop included)",
             "scale_call_fn", SCALE_CALLS)])
    for size in (1, 100, 1000):
        one("scale_plugins", size, [
            ("scale_plugins_load", "plugins loaded: load, per plugin", "scale_load_plugins", None),
            ("scale_plugins_call", "plugins loaded: a hook call (pyhost_plugin_call)",
             "scale_call_hook", SCALE_CALLS)])
    for size in (1, 2, 4, 8):
        one("scale_threads", size, [
            ("scale_threads_call", "host threads calling at once: wall time per call, all threads "
             "together (attached threads, prepared calls, GIL scopes of 100)", None, None),
            ("scale_threads_call_unattached", "the same, threads not attached (a thread state "
             "made and freed per scope)", None, None)])
    return rows


def scale_table(tag, rows):
    out = [f"### Scale ({tag})", "",
           "| what | size | ns per operation | instructions per operation |", "|---|---|---|---|"]
    for label, size, ns, ir in rows:
        out.append(f"| {label} | {size} | {fmt_ns(ns)} | {'' if ir is None else f'{ir:.0f}'} |")
    return "\n".join(out) + "\n"


def median_ratio(pairs):
    return statistics.median(a / b for a, b in pairs)


class Bench:
    def __init__(self, cfg, entry, runs, scale):
        self.pyhost, self.lib, self.direct = cfg["pyhost"], entry["lib"], entry["direct"]
        self.abi3 = entry.get("abi3", "")
        # the sysroot's entries run every program under sid's loader (bench/CMakeLists.txt)
        self.launcher = entry.get("launcher", [])
        self.python = self.launcher + [entry["python"]]
        self.runs, self.scale = runs, scale

    def n(self, base):
        return max(1, int(base * self.scale))

    def p(self, mode, n):
        return self.launcher + [self.pyhost, mode, str(n), self.lib]

    def d(self, mode, n, program=None):
        return ([] if program else self.launcher) + [program or self.direct, mode, str(n)]

    def a(self, mode, n):
        """The stable-ABI baseline (bench_abi3) in mode."""
        return self.launcher + [self.abi3, mode, str(n)]

    def pairs(self, a, b):
        """Runs a() and b() alternately; returns [(a, b)] per run."""
        return [(a(), b()) for _ in range(self.runs)]


def measure(cfg, entry, runs, scale, callgrind, pybind11, bulk_only=False):
    b = Bench(cfg, entry, runs, scale)
    rows = []  # (id, what, pyhost ns, baseline ns, ratio, target, note, Ir ratio)

    def add(rid, what, pairs, target, note="", ir=None, key=None):
        """key: the row's label in the plot (None: not plotted)."""
        pa = statistics.median(x for x, _ in pairs)
        pb = statistics.median(y for _, y in pairs)
        rows.append(dict(id=rid, what=what, pyhost=pa, base=pb, ratio=median_ratio(pairs),
                         target=target, note=note, ir=ir, key=key))

    def net(prog_call, prog_empty):
        return lambda: ns_per_op(prog_call) - ns_per_op(prog_empty)

    minor = int(entry["version"].split(".")[1])

    def allocs_note(pm, dm, k):
        """How often each side calls libc's allocator per operation (issue 24: none on the
        per-call path of b2, c2, c3, d2)."""
        if not cg:
            return ""
        a, d = allocations(lambda j: b.p(pm, j), k), allocations(lambda j: b.d(dm, j), k)
        return f"libc allocations per operation: pyhost {a:.3f}, direct {d:.3f}"

    def join(*notes):
        return "; ".join(x for x in notes if x)
    call_target = 1.10 if minor >= 10 else 1.25
    if bulk_only:
        bulk_rows(b, b.n(CG_CALLS) if callgrind else 0, minor, add, pybind11 and cfg["pybind11"])
        return rows

    # (a) start-up, whole processes: each sample the fastest of STARTS
    ir = None
    if callgrind:
        ir = (callgrind_total(b.p("startup", 1)), callgrind_total(b.d("startup", 1)))
    pairs = b.pairs(lambda: wall_best(b.p("startup", 1)), lambda: wall_best(b.d("startup", 1)))
    add("a", "start-up: pyhost_init+pyhost_free vs Py_InitializeEx(0)+Py_FinalizeEx", pairs, 1.05,
        f"ms per process, best of {STARTS}; instructions of the whole process", ir,
        key="a: start-up")
    pairs = b.pairs(lambda: wall_best(b.python + ["-c", "pass"]),
                    lambda: wall_best(b.d("startup", 1)))
    add("a", "start-up: `python3 -c pass` vs the same baseline", pairs, None,
        f"for reference, best of {STARTS}", key="a: python3 -c pass (vs direct)")

    n = b.n(CALLS)
    cg = b.n(CG_CALLS) if callgrind else 0
    # (b) C -> Python calls, inside a GIL scope
    ir = None
    if cg:
        ir = (instructions(b.p("call", cg), cg), instructions(b.d("call", cg), cg))
    pairs = b.pairs(lambda: ns_per_op(b.p("call", n)), lambda: ns_per_op(b.d("call", n)))
    add("b", "C->Python: pyhost_prepared_call(f) in a GIL scope vs direct vectorcall", pairs,
        call_target, "", ir, key="b: C->Python call")
    ir_b = ir
    # (b2) f(a, b): two C ints in, an int out; the fastest public route
    # (pyhost_prepared_call_int with a pyhost_arg array), and the one-line form
    ir = ir_line = None
    if cg:
        ir = (instructions(b.p("call2_args", cg), cg), instructions(b.d("call2", cg), cg))
        ir_line = (instructions(b.p("call2", cg), cg), ir[1])
    abi = "" if minor >= 12 else "before 3.12 the stable ABI has no vectorcall: an argument tuple per call"
    pairs = b.pairs(lambda: ns_per_op(b.p("call2_args", n)), lambda: ns_per_op(b.d("call2", n)))
    add("b2", "C->Python: f(a, b) two ints in, an int out: pyhost_prepared_call_int in a GIL "
        "scope vs direct vectorcall", pairs, 1.15 if minor >= 12 else None,
        join(abi, allocs_note("call2_args", "call2", cg)), ir,
        key="b2: C->Python f(a, b)")
    pairs = b.pairs(lambda: ns_per_op(b.p("call2", n)), lambda: ns_per_op(b.d("call2", n)))
    add("b2", "the same in one line: pyhost_prepared_callf(\"ii>i\")", pairs, None,
        join("for reference", allocs_note("call2", "call2", cg)), ir_line, key="b2: one line (callf)")
    # (b3) fk(i, y=2.5): a C int by position, a double by keyword, a float out, through
    # a keyword plan (pyhost_prepare_keywords: the layout fixed once, a pyhost_arg array
    # per call, pyhost_prepared_call_float), and in one line (pyhost_prepared_callf
    # "L,y=d>d": the format matched and varargs read per call) for reference
    ir = ir_line = None
    if cg:
        ir = (instructions(b.p("call_kw_plan", cg), cg), instructions(b.d("call_kw", cg), cg))
        ir_line = (instructions(b.p("call_kw", cg), cg), ir[1])
    kw_abi = "" if minor >= 12 else ("before 3.12 the stable ABI's only call with keywords "
                                     "takes a tuple and a dict")
    pairs = b.pairs(lambda: ns_per_op(b.p("call_kw_plan", n)), lambda: ns_per_op(b.d("call_kw", n)))
    add("b3", "C->Python: fk(i, y=2.5) a keyword, a float out: a keyword plan "
        "(pyhost_prepare_keywords + pyhost_prepared_call_float) in a GIL scope vs direct "
        "vectorcall with an interned name", pairs, 1.15 if minor >= 12 else None,
        join(kw_abi, allocs_note("call_kw_plan", "call_kw", cg)), ir,
        key="b3: C->Python keyword")
    pairs = b.pairs(lambda: ns_per_op(b.p("call_kw", n)), lambda: ns_per_op(b.d("call_kw", n)))
    add("b3", "the same in one line: pyhost_prepared_callf(\"L,y=d>d\")", pairs, None,
        join("for reference", allocs_note("call_kw", "call_kw", cg)), ir_line,
        key="b3: one line (callf)")
    # (b) for reference: the value form, pyhost_callv
    ir_v = None
    if cg:
        ir_v = (instructions(b.p("callv", cg), cg), ir_b[1])
    pairs = b.pairs(lambda: ns_per_op(b.p("callv", n)), lambda: ns_per_op(b.d("call", n)))
    add("b", "C->Python: pyhost_callv(f) (values) in a GIL scope vs direct vectorcall", pairs,
        None, "for reference", ir_v, key="b: pyhost_callv (values)")
    # (h) the same calls taking the GIL on every call
    ir_h = None
    if cg:
        ir_h = (instructions(b.p("call_noscope", cg), cg), ir_b[1])
    pairs_h = b.pairs(lambda: ns_per_op(b.p("call_noscope", n)), lambda: ns_per_op(b.d("call", n)))
    add("h", "C->Python, GIL taken per call (no scope) vs direct", pairs_h, None,
        "per-call GIL price = this row minus (b)", ir_h, key="h: call, GIL per call")
    # (h2) the same against a host that takes the GIL around each call as bare as it
    # gets: PyGILState_Ensure, the same vectorcall, PyGILState_Release (issue 36)
    ir = None
    if cg:
        ir = (ir_h[0], instructions(b.d("call_gil", cg), cg))
    pairs = b.pairs(lambda: ns_per_op(b.p("call_noscope", n)), lambda: ns_per_op(b.d("call_gil", n)))
    add("h2", "C->Python, GIL taken per call: pyhost_prepared_call (no scope) vs PyGILState_Ensure "
        "+ vectorcall + PyGILState_Release", pairs, 1.10, "", ir, key="h2: GIL per call vs bare")
    pairs = b.pairs(lambda: ns_per_op(b.p("call_noscope", n)) - ns_per_op(b.p("call", n)),
                    lambda: ns_per_op(b.d("gil_ensure", n)))
    add("h", "per-call GIL price of pyhost vs a bare PyGILState_Ensure+Release", pairs, None,
        "ns per call, both")

    # (c) Python -> C, net of the empty loop
    def loop_ir(prog_call, prog_empty):
        return instructions(prog_call, cg) - instructions(prog_empty, cg)
    ir = None
    if cg:
        ir = (loop_ir(b.p("hostfn", cg), b.p("loop_empty", cg)),
              loop_ir(b.d("hostfn", cg), b.d("loop_empty", cg)))
    pairs = b.pairs(net(b.p("hostfn", n), b.p("loop_empty", n)),
                    net(b.d("hostfn", n), b.d("loop_empty", n)))
    add("c", "Python->C: fast host function vs METH_FASTCALL builtin (in a function, net of the loop)", pairs,
        call_target, "", ir, key="c: Python->C call")
    # (c) for reference: the value form (pyhost_module_add_function)
    ir_v = None
    if cg:
        ir_v = (loop_ir(b.p("hostfn_values", cg), b.p("loop_empty", cg)), ir[1])
    pairs = b.pairs(net(b.p("hostfn_values", n), b.p("loop_empty", n)),
                    net(b.d("hostfn", n), b.d("loop_empty", n)))
    add("c", "Python->C: host function (values) vs METH_FASTCALL builtin (in a function, net of the loop)",
        pairs, None, "for reference", ir_v, key="c: host function (values)")

    # (c2, c3) Python -> C with arguments, looping inside a function, net of that loop:
    # g(i, 2.5) and g(i, y=2.5) -> float, the typed form vs a METH_FASTCALL|METH_KEYWORDS
    # builtin that checks and converts by hand
    for rid, mode, what in (("c2", "hostfn2", "Python->C: g(i, 2.5) -> float, typed host function "
                             "vs METH_FASTCALL builtin (in a function, net of the loop)"),
                            ("c3", "hostfn2_kw", "Python->C: g(i, y=2.5) -> float (keyword), typed "
                             "host function vs METH_FASTCALL|METH_KEYWORDS builtin (in a function, "
                             "net of the loop)")):
        ir = None
        if cg:
            ir = (loop_ir(b.p(mode, cg), b.p("loop_fn_empty", cg)),
                  loop_ir(b.d(mode, cg), b.d("loop_fn_empty", cg)))
        pairs = b.pairs(net(b.p(mode, n), b.p("loop_fn_empty", n)),
                        net(b.d(mode, n), b.d("loop_fn_empty", n)))
        add(rid, what, pairs, 1.15 if minor >= 12 else None,
            join("" if minor >= 10 else "before 3.10 the stable ABI has no METH_FASTCALL: an "
                 "argument tuple per call", allocs_note(mode, mode, cg)),
            ir, key=f"{rid}: Python->C with arguments")

    # (c4) Python -> C with a str argument: g(s) -> int, the typed form (its str read
    # in place, 3.10+) vs a METH_FASTCALL builtin reading the str's UTF-8 view itself
    ir = None
    if cg:
        ir = (loop_ir(b.p("hostfn_str", cg), b.p("loop_fn_empty", cg)),
              loop_ir(b.d("hostfn_str", cg), b.d("loop_fn_empty", cg)))
    pairs = b.pairs(net(b.p("hostfn_str", n), b.p("loop_fn_empty", n)),
                    net(b.d("hostfn_str", n), b.d("loop_fn_empty", n)))
    add("c4", "Python->C: g(s: str) -> int, typed host function vs METH_FASTCALL builtin "
        "(in a function, net of the loop)", pairs, 1.20 if minor >= 12 else None,
        join("" if minor >= 10 else "before 3.10 the stable ABI has no UTF-8 view of a str: "
             "a bytes copy per call", allocs_note("hostfn_str", "hostfn_str", cg)),
        ir, key="c4: Python->C str argument")

    # (d) pyhost_eval with the cache vs compiling every time
    ne, nu = b.n(EVALS), b.n(UNCACHED_EVALS)
    pairs = b.pairs(lambda: ns_per_op(b.p("eval_cached", ne)),
                    lambda: ns_per_op(b.p("eval_uncached", nu)))
    add("d", "pyhost_eval cached vs pyhost_eval compiling every time", pairs, 0.20,
        "target: at least 5x faster (ratio <= 0.20)", key="d: eval cached/uncached")
    pairs = b.pairs(lambda: ns_per_op(b.p("eval_scope", ne)), lambda: ns_per_op(b.d("eval_code", ne)))
    add("d", "pyhost_eval cached (scope) vs direct PyEval_EvalCode of compiled code", pairs, None,
        "includes converting the result", key="d: eval vs direct code")

    # (d2) x * 2 + 1 for a C int x, an int out: an expression with inputs vs the same
    # work by hand (the expression compiled once as `lambda x: (...)`, called with x),
    # and for reference vs PyEval_EvalCode with x set in a dict (no call: less work)
    ir = None
    if cg:
        ir = (instructions(b.p("expr_inputs", cg), cg), instructions(b.d("expr_inputs", cg), cg))
    pairs = b.pairs(lambda: ns_per_op(b.p("expr_inputs", ne)), lambda: ns_per_op(b.d("expr_inputs", ne)))
    add("d2", "expression with an input: pyhost_prepare_expression + pyhost_prepared_call_int vs "
        "the same compiled lambda called directly", pairs, 1.20 if minor >= 12 else None,
        allocs_note("expr_inputs", "expr_inputs", cg), ir,
        key="d2: expression with inputs")
    ir_eval = None
    if cg:
        ir_eval = (ir[0], instructions(b.d("expr_eval", cg), cg))
    pairs = b.pairs(lambda: ns_per_op(b.p("expr_inputs", ne)), lambda: ns_per_op(b.d("expr_eval", ne)))
    add("d2", "the same vs PyEval_EvalCode of the compiled expression with x in its dict", pairs,
        None, "for reference: no call, no frame argument", ir_eval,
        key="d2: expression vs PyEval_EvalCode")

    # (e) host-type instances, net of the loop
    ir = None
    if cg:
        ir = (loop_ir(b.p("hosttype", cg), b.p("loop_empty", cg)),
              loop_ir(b.d("hosttype", cg), b.d("loop_empty", cg)))
    pairs = b.pairs(net(b.p("hosttype", n), b.p("loop_empty", n)),
                    net(b.d("hosttype", n), b.d("loop_empty", n)))
    add("e", "create+drop a host-type instance vs a static type (in a function, net of the loop)", pairs, 1.15,
        "fast constructor, inline payload", ir, key="e: host type")
    ir_e = ir
    # (e2) T(i).get(): construct from one int argument, call one method, drop; looping
    # inside a function, net of that loop; the typed constructor and method (inline
    # payload) vs a static type parsing its argument by hand and a METH_NOARGS method
    ir = None
    if cg:
        ir = (loop_ir(b.p("hosttype2", cg), b.p("loop_fn_empty", cg)),
              loop_ir(b.d("hosttype2", cg), b.d("loop_fn_empty", cg)))
    pairs = b.pairs(net(b.p("hosttype2", n), b.p("loop_fn_empty", n)),
                    net(b.d("hosttype2", n), b.d("loop_fn_empty", n)))
    add("e2", "T(i).get(): typed constructor and method (inline payload) vs a static type "
        "(in a function, net of the loop)", pairs, 1.20 if minor >= 12 else None,
        "" if minor >= 12 else "before 3.12 the stable ABI has no vectorcall: an argument "
        "tuple per method call", ir, key="e2: T(i).get()")
    # (e) for reference: the value-form constructor and a payload pointer
    ir_v = None
    if cg:
        ir_v = (loop_ir(b.p("hosttype_values", cg), b.p("loop_empty", cg)), ir_e[1])
    pairs = b.pairs(net(b.p("hosttype_values", n), b.p("loop_empty", n)),
                    net(b.d("hosttype", n), b.d("loop_empty", n)))
    add("e", "create+drop a host-type instance (values) vs a static type (in a function, net of the loop)",
        pairs, None, "for reference", ir_v, key="e: host type (values)")

    # (f) conversions
    for mode, reps, what in (("conv_str_to_py", STR_REPS, "1 MiB str, C -> Python"),
                             ("conv_str_from_py", STR_REPS, "1 MiB str, Python -> C"),
                             ("conv_list_to_py", LIST_REPS, "100 000-int list, C -> Python"),
                             ("conv_list_from_py", LIST_REPS, "100 000-int list, Python -> C")):
        r = b.n(reps)
        ir = None
        if cg:  # a few operations: each is a million instructions or more
            k = max(1, min(r, cg // (10000 if "list" in mode else 1000)))
            ir = (instructions(b.p(mode, k), k), instructions(b.d(mode, k), k))
        pairs = b.pairs(lambda: ns_per_op(b.p(mode, r)), lambda: ns_per_op(b.d(mode, r)))
        add("f", what, pairs, 1.10, "baseline: typed C data (char buffer, int64_t array), "
            "through keep(x) / get_s() / get_l()", ir, key="f: " + what)

    # (f2, f3) round trips through the public route, results read in place
    for rid, mode, reps, what in (("f2", "str_trip", CALLS // 10, "10 000-character str C->Python->C "
                                   "(pyhost_prepared_callf \"z>s\", borrowed result)"),
                                  ("f3", "bytes_trip", STR_REPS * 10, "1 MiB bytes C->Python->C "
                                   "(pyhost_prepared_callf \"y>y\", borrowed result)")):
        r = b.n(reps)
        ir = None
        if cg:
            k = max(1, min(r, cg // 10))
            ir = (instructions(b.p(mode, k), k), instructions(b.d(mode, k), k))
        pairs = b.pairs(lambda: ns_per_op(b.p(mode, r)), lambda: ns_per_op(b.d(mode, r)))
        add(rid, what, pairs, 1.05 if minor >= 12 else None,
            "baseline: the same objects made and read in place", ir, key=f"{rid}: {mode}")

    # The same rows against the best the stable ABI of this version allows: bench_abi3,
    # the hand-written host compiled with Py_LIMITED_API at this runtime's version.
    # Where the full API has more (before 3.12: vectorcall; before 3.10: METH_FASTCALL
    # and a UTF-8 view), this is the ceiling a stable-ABI library can reach, and the
    # target is within 1.10x of it (issue 24).
    if b.abi3:
        abi_target = 1.10 if minor < 12 else None
        for rid, mode, base, net_of, what in (
                ("b2", "call2_args", "call2", None, "f(a, b) ints, pyhost_prepared_call_int"),
                ("b2", "call2", "call2", None, "f(a, b) ints, one line (pyhost_prepared_callf)"),
                ("b3", "call_kw_plan", "call_kw", None, "fk(i, y=2.5) a keyword (a keyword plan)"),
                ("b3", "call_kw", "call_kw", None, "fk(i, y=2.5) a keyword (pyhost_prepared_callf)"),
                ("c2", "hostfn2", "hostfn2", "loop_fn_empty", "g(i, 2.5) typed host function"),
                ("c3", "hostfn2_kw", "hostfn2_kw", "loop_fn_empty", "g(i, y=2.5) typed host function"),
                ("d2", "expr_inputs", "expr_inputs", None, "expression with an input"),
                ("e2", "hosttype2", "hosttype2", "loop_fn_empty", "T(i).get() typed type"),
                ("f2", "str_trip", "str_trip", None, "10 000-character str round trip"),
                ("f3", "bytes_trip", "bytes_trip", None, "1 MiB bytes round trip")):
            k = n if rid not in ("d2", "f2", "f3") else (ne if rid == "d2" else
                                                       b.n(CALLS // 10 if rid == "f2" else STR_REPS * 10))
            kc = cg if rid not in ("f2", "f3") else max(1, min(k, cg // 10))
            ir = None
            if cg:
                if net_of:
                    ir = (loop_ir(b.p(mode, kc), b.p(net_of, kc)),
                          loop_ir(b.a(base, kc), b.a(net_of, kc)))
                else:
                    ir = (instructions(b.p(mode, kc), kc), instructions(b.a(base, kc), kc))
            if net_of:
                pairs = b.pairs(net(b.p(mode, k), b.p(net_of, k)), net(b.a(base, k), b.a(net_of, k)))
            else:
                pairs = b.pairs(lambda: ns_per_op(b.p(mode, k)), lambda: ns_per_op(b.a(base, k)))
            add(rid, f"{what} vs the best the stable ABI of the same version allows (bench_abi3)",
                pairs, abi_target, "baseline: Py_LIMITED_API at this version, directly linked", ir,
                key=f"{rid}: vs best abi3" if mode != "call2" else None)

    bulk_rows(b, cg, minor, add, pybind11 and cfg["pybind11"])

    # (g) pybind11 on Debian's 3.11
    if pybind11:
        pb = cfg["pybind11"]
        ir = None
        if cg:
            ir = (instructions(b.p("call", cg), cg), instructions([pb, "call", str(cg)], cg))
        pairs = b.pairs(lambda: ns_per_op(b.p("call", n)), lambda: ns_per_op([pb, "call", str(n)]))
        add("g", "C->Python: pyhost_prepared_call (scope) vs pybind11 py::function()", pairs, None, "", ir,
            key="g: pybind11 C->Python")
        ir = None
        if cg:
            ir = (loop_ir(b.p("hostfn", cg), b.p("loop_empty", cg)),
                  loop_ir([pb, "hostfn", str(cg)], [pb, "loop_empty", str(cg)]))
        pairs = b.pairs(net(b.p("hostfn", n), b.p("loop_empty", n)),
                        net([pb, "hostfn", str(n)], [pb, "loop_empty", str(n)]))
        add("g", "Python->C: pyhost fast host function vs pybind11 m.def (net of the loop)", pairs,
            None, "", ir, key="g: pybind11 Python->C")
        ir = None
        if cg:
            ir = (instructions(b.p("call2_args", cg), cg), instructions([pb, "call2", str(cg)], cg))
        pairs = b.pairs(lambda: ns_per_op(b.p("call2_args", n)), lambda: ns_per_op([pb, "call2", str(n)]))
        add("g", "b2 vs pybind11: pyhost_prepared_call_int vs f2(i, 2).cast<int>()", pairs, None,
            "", ir, key="g: pybind11 b2")
        for rid, mode in (("c2", "hostfn2"), ("c3", "hostfn2_kw")):
            ir = None
            if cg:
                ir = (loop_ir(b.p(mode, cg), b.p("loop_fn_empty", cg)),
                      loop_ir([pb, mode, str(cg)], [pb, "loop_fn_empty", str(cg)]))
            pairs = b.pairs(net(b.p(mode, n), b.p("loop_fn_empty", n)),
                            net([pb, mode, str(n)], [pb, "loop_fn_empty", str(n)]))
            add("g", f"{rid} vs pybind11: typed host function vs m.def with py::arg (net of the loop)",
                pairs, None, "", ir, key=f"g: pybind11 {rid}")
        ir = None
        if cg:
            ir = (loop_ir(b.p("hosttype2", cg), b.p("loop_fn_empty", cg)),
                  loop_ir([pb, "hosttype2", str(cg)], [pb, "loop_fn_empty", str(cg)]))
        pairs = b.pairs(net(b.p("hosttype2", n), b.p("loop_fn_empty", n)),
                        net([pb, "hosttype2", str(n)], [pb, "loop_fn_empty", str(n)]))
        add("g", "e2 vs pybind11: typed constructor and method vs py::class_ with py::init "
            "(net of the loop)", pairs, None, "", ir, key="g: pybind11 e2")
    return rows


# (i2, i3) the isolation levels (issue 34): bench_isolation against a raw ping-pong of
# the same bytes between two C processes, and against multiprocessing on the same Python.
ISO_CALLS = 20_000
ISO_CYCLES = 20
ISO_RSS_PLUGINS = 5
POOL_PY = r"""
import multiprocessing, sys, time
def f(a, b):
    return a + b
if __name__ == "__main__":
    n = int(sys.argv[1])
    if len(sys.argv) > 2:  # a Python that runs under its own loader: so do its helpers
        multiprocessing.set_executable(sys.argv[2])
    per = max(1, n // 21)
    with multiprocessing.Pool(1) as pool:
        for i in range(n // 10 + 1):
            pool.apply(f, (i, 2))
        t = []
        for _ in range(21):
            t0 = time.perf_counter()
            for i in range(per):
                pool.apply(f, (i, 2))
            t.append((time.perf_counter() - t0) * 1e9 / per)
    print("RESULT pool_apply %.3f" % sorted(t)[10])
"""


def measure_isolation(cfg, entry, runs, scale, callgrind=False):
    """Rows i1, i2 and i3: (id, what, pyhost, baseline, unit, ratio, target, note)."""
    prog = entry.get("launcher", []) + [cfg["isolation"]]
    lib = entry["lib"]
    n = max(21, int(ISO_CALLS * scale))
    cycles = max(3, int(ISO_CYCLES * scale))
    rows = []

    def add(rid, what, pairs, unit, target, note=""):
        pa = statistics.median(x for x, _ in pairs)
        pb = statistics.median(y for _, y in pairs)
        rows.append(dict(id=rid, what=what, pyhost=pa, base=pb, unit=unit,
                         ratio=median_ratio(pairs), target=target, note=note))

    def results_of(cmd):
        return {k: float(v.split()[0]) for k, v in
                (line.split(" ", 2)[1:] for line in run(cmd).splitlines() if line.startswith("RESULT "))}

    # i1: the interpreter level against the shared level, the same call in the same run
    if callgrind:
        cg_n = max(21, int(CG_CALLS * scale) // 21 * 21)
        ir = (instructions(prog + ["interp_call", str(cg_n), lib], cg_n),
              instructions(prog + ["shared_call", str(cg_n), lib], cg_n))
        add("i1", "hook f(a, b) ints -> int (pyhost_plugin_callf \"ii>i\") at the interpreter level "
            "vs the shared level", [ir], "instr", 1.10,
            "callgrind, instructions per call; the thread state swapped in and out of the "
            "plugin's interpreter")
    pairs = [(results_of(prog + ["interp_call", str(n), lib])["interp_call"],
              results_of(prog + ["shared_call", str(n), lib])["shared_call"]) for _ in range(runs)]
    add("i1", "the same call, wall time", pairs, "ns", None, "median of 21 batches per run")

    raw = run(prog + ["proc_call", str(n), lib])  # also says how many bytes a call moves
    m = re.search(r"^RESULT proc_call_bytes (\d+) (\d+)$", raw, re.M)
    if not m:
        sys.exit(f"run.py: no byte counts from {prog[-1]} proc_call:\n{raw}")
    inb, outb = m.group(1), m.group(2)
    pairs = [(results_of(prog + ["proc_call", str(n), lib])["proc_call"],
              results_of(prog + ["pingpong", str(n), inb, outb])["pingpong"]) for _ in range(runs)]
    add("i2", f"hook f(a, b) ints -> int at the process level (pyhost_plugin_callf \"ii>i\") vs a raw "
        f"ping-pong of the same bytes ({inb} out, {outb} back) over a socketpair between two C processes",
        pairs, "ns", 1.5, "median of 21 batches per run; the floor is two context switches")
    with tempfile.TemporaryDirectory() as d:
        script = os.path.join(d, "pool_apply.py")
        with open(script, "w") as f:
            f.write(POOL_PY)
        pool_cmd = entry.get("launcher", []) + [entry["python"], script, str(max(21, n // 4))]
        if entry.get("launcher"):
            wrapper = os.path.join(d, "python")
            with open(wrapper, "w") as f:
                f.write("#!/bin/sh\nexec " + " ".join(entry["launcher"] + [entry["python"]]) + ' "$@"\n')
            os.chmod(wrapper, 0o755)
            pool_cmd.append(wrapper)
        pairs = [(results_of(prog + ["proc_call", str(n), lib])["proc_call"],
                  results_of(pool_cmd)["pool_apply"]) for _ in range(runs)]
    add("i2", "the same call vs multiprocessing Pool(1).apply(f, (a, b)) on the same Python",
        pairs, "ns", None, "what a Python user would pick; expected well under 0.3")
    pairs = [(results_of(prog + ["proc_call", str(n), lib])["proc_call"],
              results_of(prog + ["shared_call", str(n), lib])["shared_call"]) for _ in range(runs)]
    add("i2", "the same call at the process level vs at the shared level", pairs, "ns", None,
        "for reference: what crossing a process costs over an in-process call")
    pairs = [(results_of(prog + ["proc_cycle", str(cycles), lib])["proc_cycle"],
              results_of(prog + ["shared_cycle", str(cycles), lib])["shared_cycle"])
             for _ in range(runs)]
    add("i3", "load + first call + unload: process level vs shared level", pairs, "ns", None,
        "a Python starts in the worker, and ends")
    pairs = [(results_of(prog + ["interp_cycle", str(cycles), lib])["interp_cycle"],
              results_of(prog + ["shared_cycle", str(cycles), lib])["shared_cycle"])
             for _ in range(runs)]
    add("i3", "load + first call + unload: interpreter level vs shared level", pairs, "ns", None,
        "a sub-interpreter is made (its standard modules imported anew), and ended")
    k = max(2, int(ISO_RSS_PLUGINS * scale))
    interp = [results_of(prog + ["interp_rss", str(k), lib]) for _ in range(runs)]
    proc = [results_of(prog + ["proc_rss", str(k), lib]) for _ in range(runs)]
    shared = [results_of(prog + ["shared_rss", str(k), lib]) for _ in range(runs)]
    pairs = [(p["proc_rss_worker_kib"] + p["proc_rss_host_kib"], s["shared_rss_host_kib"])
             for p, s in zip(proc, shared)]
    add("i3", "RSS per loaded plugin: the worker process plus the host's growth (process level) vs "
        "the host's growth (shared level)", [(a, max(b, 1.0)) for a, b in pairs], "KiB", None,
        f"{k} plugins, each after a first call; the host's own growth per process-level plugin: "
        f"{statistics.median(p['proc_rss_host_kib'] for p in proc):.0f} KiB")
    pairs = [(i["interp_rss_host_kib"], s["shared_rss_host_kib"]) for i, s in zip(interp, shared)]
    add("i3", "RSS per loaded plugin: the host's growth (interpreter level) vs the host's growth "
        "(shared level)", [(a, max(b, 1.0)) for a, b in pairs], "KiB", None,
        f"{k} plugins, each after a first call")
    return rows


def fmt_unit(x, unit):
    if unit == "instr":
        return f"{x:.0f} instr"
    if unit == "KiB":
        return f"{x / 1024:.1f} MiB" if x >= 1024 else f"{x:.0f} KiB"
    return fmt_ns(x)


def isolation_table(parts):
    """parts: [(tag, version text, rows)] -> the markdown of rows i1, i2, i3."""
    out = []
    for tag, text, rows in parts:
        out += [f"### {tag} ({text})", "",
                "| | benchmark | pyhost | baseline | ratio (median) | target | |",
                "|---|---|---|---|---|---|---|"]
        for r in rows:
            t = "" if r["target"] is None else f"<= {r['target']:.2f}"
            k = "instructions" if r["unit"] == "instr" else "time"
            v = "" if r["target"] is None else (f"met ({k})" if r["ratio"] <= r["target"] else
                                               f"missed by {(r['ratio'] / r['target'] - 1) * 100:.0f}% ({k})")
            note = f" ({r['note']})" if r["note"] else ""
            out.append(f"| {r['id']} | {md(r['what'] + note)} | {fmt_unit(r['pyhost'], r['unit'])} | "
                       f"{fmt_unit(r['base'], r['unit'])} | {r['ratio']:.2f} | {t} | {v} |")
        out.append("")
    return "\n".join(out)


def has_numpy(b):
    p = subprocess.run(b.python + ["-c", "import numpy"], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, env=ENV)
    return p.returncode == 0


def bulk_rows(b, cg, minor, add, pb):
    """(g1-g3) bulk data (issue 37): each pyhost row against the direct host in the same
    run, and against pybind11 where pb (its program) is given.  Adds through add();
    nothing returned."""
    k = b.n(CALLS // 10)
    g1_target = 1.15 if minor >= 12 else None
    # g1's pyhost side is the fastest documented route, a prepared typed call with a
    # pyhost_arg_buffer argument; the one-line form ("m>L") is measured for reference
    # (as b2's callf row)
    cases = [("g1", "g1_small", "g1_small", k, "C->Python: 1 KiB host buffer lent, one element read "
              "(pyhost_buffer_new, pyhost_prepared_call_int with pyhost_arg_buffer, release) vs "
              "PyMemoryView_FromMemory", g1_target),
             ("g1", "g1_line_small", "g1_small", k, "the same in one line: pyhost_prepared_callf"
              "(\"m>L\")", None),
             ("g1", "g1_large", "g1_large", k if minor >= 11 else b.n(20),
              "C->Python: the same at 64 MiB" + ("" if minor >= 11 else
                                                 " (before 3.11 a copy: O(n) by design)"),
              g1_target),
             ("g1", "g1_line_large", "g1_large", k if minor >= 11 else b.n(20),
              "the same at 64 MiB in one line: pyhost_prepared_callf(\"m>L\")", None)]
    if minor >= 11:  # the guarantee's own price: what a direct host pays to give it too
        cases.append(("g1", "g1_small", "g1_exporter_small", k, "C->Python: the same 1 KiB loan "
                      "vs a direct host giving pyhost's guarantee (its own exporter type counting "
                      "the views, the memory freed after the last)", None))
    cases += [("g2", "g2_small", "g2_small", k, "Python->C: a 1 KiB bytearray read in place "
              "(callf \">w\", pyhost_view_release) vs PyObject_GetBuffer", 1.15),
             ("g2", "g2_large", "g2_large", k, "Python->C: the same, a 64 MiB bytearray", 1.15)]
    if minor >= 11 and has_numpy(b):
        cases.append(("g2", "g2_numpy", "g2_numpy", k, "Python->C: the same, a 64 MiB numpy "
                      "array", 1.15))
    g3_cases = [("g3", "g3_to_py", "conv_list_to_py", b.n(LIST_REPS), "C->Python: 100 000-int "
                 "list (pyhost_value_from_int64s) vs PyList_New + PyLong_FromLongLong", 1.5),
                ("g3", "g3_from_py", "conv_list_from_py", b.n(LIST_REPS), "Python->C: 100 000-int "
                 "list (pyhost_value_to_int64s) vs PyList_GET_ITEM + PyLong_AsLongLong", 1.5)]

    def g2_typed_row():
        # (g2_typed) the other way a plugin hands the host its buffer: it calls a host
        # function whose typed buffer parameter is read in place (pyhost.h), vs a METH_O
        # builtin with PyObject_GetBuffer; Python's loop, net of the empty one, as (c2)
        if cg:
            kc = max(1, min(k, cg // 4))
            ir = tuple(instructions(run_("g2_typed", kc), kc) - instructions(run_("loop_fn_empty", kc), kc)
                       for run_ in (b.p, b.d))
        else:
            ir = None
        pairs = b.pairs(lambda: ns_per_op(b.p("g2_typed", k)) - ns_per_op(b.p("loop_fn_empty", k)),
                        lambda: ns_per_op(b.d("g2_typed", k)) - ns_per_op(b.d("loop_fn_empty", k)))
        add("g2", "Python->C: the 64 MiB bytearray passed to g(data: buffer), a typed host function "
            "reading one byte in place, vs a METH_O builtin with PyObject_GetBuffer (in a function, "
            "net of the loop)", pairs, 1.15, "baseline: the direct host, full API", ir,
            key="g2: typed buffer parameter")

    def case_row(rid, pm, dm, reps, what, target):
        kc = max(1, min(reps, cg // (10000 if rid == "g3" or reps < k else 4))) if cg else 0
        ir = (instructions(b.p(pm, kc), kc), instructions(b.d(dm, kc), kc)) if cg else None
        pairs = b.pairs(lambda: ns_per_op(b.p(pm, reps)), lambda: ns_per_op(b.d(dm, reps)))
        ref = "exporter" in dm or "_line" in pm  # beside the main rows, not plotted
        add(rid, what, pairs, target, "for reference" if "_line" in pm else
            "baseline: the direct host, full API", ir, key=None if ref else f"{rid}: {pm}")
        if pb and pm != "g2_numpy" and not ref:  # bench_pybind11 g2_numpy aborts under callgrind (not natively)
            ir = (ir[0], instructions([pb, pm, str(kc)], kc)) if cg else None
            pairs = b.pairs(lambda: ns_per_op(b.p(pm, reps)), lambda: ns_per_op([pb, pm, str(reps)]))
            add(rid, f"{pm} vs pybind11 (py::memoryview::from_memory, py::buffer::request, "
                "std::vector casters)", pairs, None, "", ir, key=f"{rid}: pybind11 {pm}")

    for c in cases:
        case_row(*c)
    g2_typed_row()
    for c in g3_cases:
        case_row(*c)


def fmt_ns(x):
    if abs(x) >= 1e6:
        return f"{x / 1e6:.2f} ms"
    if abs(x) >= 1e3:
        return f"{x / 1e3:.1f} us"
    return f"{x:.1f} ns"


def verdict(r):
    """Judged by the instruction ratio where callgrind measured one (exact and repeatable,
    what the targets are set in), else by the median time ratio."""
    t = r["target"]
    if t is None:
        return ""
    if r["ir"] and r["ir"][1] > 0:
        ratio, by = r["ir"][0] / r["ir"][1], "instructions"
    else:
        ratio, by = r["ratio"], "time"
    return f"met ({by})" if ratio <= t else f"missed by {(ratio / t - 1) * 100:.0f}% ({by})"


def md(text):
    """Text for a cell of a markdown table: a | would end the cell."""
    return text.replace("|", "\\|")


def table(tag, version_text, rows):
    out = [f"### {tag} ({version_text})", "",
           "| | benchmark | pyhost | baseline | ratio (median) | instructions pyhost / base | target | |",
           "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        ir = ""
        if r["ir"]:
            a, c = r["ir"]
            ir = f"{a:.0f} / {c:.0f} = {a / c:.2f}" if c > 0 else f"{a:.0f} / {c:.0f}"
        t = "" if r["target"] is None else f"<= {r['target']:.2f}"
        note = f" ({r['note']})" if r["note"] else ""
        out.append(f"| {r['id']} | {md(r['what'] + note)} | {fmt_ns(r['pyhost'])} | "
                   f"{fmt_ns(r['base'])} | {r['ratio']:.2f} | {ir} | {t} | {verdict(r)} |")
    return "\n".join(out) + "\n"


def machine():
    cpu = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            m = re.search(r"^model name\s*:\s*(.+)$", f.read(), re.M)
            cpu = m.group(1) if m else cpu
    except OSError:
        pass
    cc = subprocess.run(["cc", "--version"], capture_output=True, text=True).stdout.splitlines()
    return (f"{cpu}, {os.cpu_count()} CPUs, {platform.system()} {platform.release()}, "
            f"{cc[0] if cc else 'cc'}")


def plot(out_dir, all_rows, tags):
    """ratios.dat: one line per plotted row, one column per version; gnuplot draws it."""
    labels = []
    for rows in all_rows:
        for r in rows:
            if r["key"] and r["key"] not in labels:
                labels.append(r["key"])
    dat = os.path.join(out_dir, "bench", "ratios.dat")
    with open(dat, "w") as f:
        f.write("# benchmark " + " ".join(tags) + "\n")
        for key in labels:
            vals = [next((f"{r['ratio']:.4f}" for r in rows if r["key"] == key), "NaN")
                    for rows in all_rows]
            f.write(f"\"{key}\" " + " ".join(vals) + "\n")
    if not shutil.which("gnuplot"):
        print("run.py: gnuplot not found (apt-get install gnuplot-nox): no plot", file=sys.stderr)
        return
    png = os.path.join(out_dir, "performance.png")
    cols = " , ".join(f"'{dat}' using {i + 2}:xtic(1) title '{t}'" for i, t in enumerate(tags))
    script = f"""
set terminal pngcairo size 1400,700 noenhanced font ',10'
set output '{png}'
set title 'pyhost / baseline (median of runs; lower is better; 1 = as fast as the baseline)'
set style data histogram
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set logscale y 2
set yrange [0.02:64]
set ytics (0.03125, 0.0625, 0.125, 0.25, 0.5, 1, 2, 4, 8, 16, 32, 64)
set grid ytics
set xtics rotate by -35 left
set key top left
set arrow from graph 0, first 1 to graph 1, first 1 nohead lw 2 lc rgb 'black'
set bmargin 12
set rmargin 12
plot {cols}
"""
    subprocess.run(["gnuplot"], input=script, text=True, check=True)


ARG_ROWS = ("b2", "b3", "c2", "c3", "d2", "e2", "f2", "f3")  # issue 24: the shapes real hosts call


def cell(r):
    """One row's ratio for a summary: by instructions where callgrind counted them."""
    if r["ir"] and r["ir"][1] > 0:
        a, c = r["ir"]
        text = f"{a / c:.2f}x ({a:.0f} / {c:.0f})"
    else:
        text = f"{r['ratio']:.2f}x (time)"
    v = verdict(r)
    return text + (f" **{v.split(' (')[0]}**" if v else "")


BULK_ROWS = ("g1", "g2", "g3")  # issue 37: bulk data


def row_group(r):
    """Which summary a row belongs to: "args" (issue 24's shapes and their pybind11 rows),
    "bulk" (g1-g3) or "other"."""
    if r["id"] in ARG_ROWS or (r["id"] == "g" and r["what"][:2] in ARG_ROWS):
        return "args"
    return "bulk" if r["id"] in BULK_ROWS else "other"


def summary(all_rows, tags, group):
    """The rows of one group (row_group) of every version side by side, each as
    `ratio (pyhost / baseline instructions)` and its verdict."""
    with_args = group == "args"
    order, cells = [], {}
    for tag, rows in zip(tags, all_rows):
        for r in rows:
            if row_group(r) != group:
                continue
            k = (r["id"], r["what"])
            if k not in cells:
                order.append(k)
                cells[k] = {}
            cells[k][tag] = cell(r)
    rank = {rid: i for i, rid in enumerate(ARG_ROWS)}
    order.sort(key=lambda k: (k[0] == "g", rank.get(k[0], len(rank))) if with_args else 0)
    out = ["| | benchmark | " + " | ".join(tags) + " |", "|---|---|" + "---|" * len(tags)]
    for k in order:
        out.append(f"| {k[0]} | {md(k[1])} | " + " | ".join(cells[k].get(t, "") for t in tags) + " |")
    return "\n".join(out) + "\n"


def replace_between(text, name, body):
    begin, end = f"<!-- bench/run.py: {name}begin -->", f"<!-- bench/run.py: {name}end -->"
    if begin not in text or end not in text:
        return text
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    return head + begin + "\n" + body + end + tail


def update_doc(out_dir, generated, args_table, other_table, isolation=None, bulk_table=None):
    doc = os.path.join(out_dir, "performance.md")
    if not os.path.exists(doc):
        return
    with open(doc) as f:
        text = f.read()
    if generated is not None:
        text = replace_between(text, "", generated)
        text = replace_between(text, "arguments ", args_table)
        text = replace_between(text, "no-arguments ", other_table)
    if bulk_table is not None:
        text = replace_between(text, "bulk ", bulk_table)
    if isolation is not None:
        text = replace_between(text, "isolation ", isolation)
    with open(doc, "w") as f:
        f.write(text)


def bulk_doc(a, callgrind, parts, tsv):
    """--bulk-only: bench/bulk.md, bulk.tsv and the bulk section of performance.md."""
    generated = (f"Generated by `bench/run.py BUILD --bulk-only` on "
                 f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}: {machine()}; {a.runs} "
                 f"runs per row, scale {a.scale}"
                 f"{', callgrind instruction counts per iteration' if callgrind else ''}.\n\n"
                 + "\n".join(parts))
    for name, body in (("bulk.md", generated), ("bulk.tsv", "\n".join(tsv) + "\n")):
        with open(os.path.join(a.out, "bench", name), "w") as f:
            f.write(body)
    doc = os.path.join(a.out, "performance.md")
    if os.path.exists(doc):
        with open(doc) as f:
            text = f.read()
        with open(doc, "w") as f:
            f.write(replace_between(text, "bulk ", generated))
    print(generated)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--versions", default="3.8,3.11,3.13,3.11-system,3.15")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--no-callgrind", action="store_true")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "docs"))
    ap.add_argument("--only", choices=("all", "isolation"), default="all",
                    help="isolation: only rows i1, i2 and i3 (their section of performance.md)")
    ap.add_argument("--bulk-only", action="store_true",
                    help="only the bulk-data rows g1-g3, into their own section of performance.md")
    a = ap.parse_args()
    with open(os.path.join(a.build, "bench", "bench.json")) as f:
        cfg = json.load(f)
    want = a.versions.split(",")
    entries = [e for e in cfg["entries"] if e["tag"] in [f"py{v}" for v in want] and e["direct"]]
    callgrind = not a.no_callgrind and shutil.which("valgrind")
    os.makedirs(os.path.join(a.out, "bench"), exist_ok=True)
    iso_parts = []
    for e in entries if cfg.get("isolation") and not a.bulk_only else []:
        print(f"run.py: isolation on {e['tag']} ...", file=sys.stderr, flush=True)
        text = subprocess.run(e.get("launcher", []) + [e["python"], "-c",
                               "import sys; print(sys.version.split()[0])"],
                              capture_output=True, text=True, env=ENV).stdout.strip()
        iso_parts.append((e["tag"], f"Python {text}",
                          measure_isolation(cfg, e, a.runs, a.scale, callgrind)))
    isolation = None
    if iso_parts:
        isolation = (f"Generated by `bench/run.py --only {a.only}` on "
                     f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}: {machine()}; "
                     f"{a.runs} runs per row, scale {a.scale}.\n\n" + isolation_table(iso_parts))
        with open(os.path.join(a.out, "bench", "isolation.md"), "w") as f:
            f.write(isolation)
    if a.only == "isolation":
        update_doc(a.out, None, None, None, isolation)
        print(isolation or "run.py: no isolation benchmark built")
        return
    all_rows, tags, parts, tsv = [], [], [], ["tag\tid\tbenchmark\tpyhost_ns\tbase_ns\tratio\tir_pyhost\tir_base\ttarget"]
    for e in entries:
        print(f"run.py: {e['tag']} ...", file=sys.stderr, flush=True)
        rows = measure(cfg, e, a.runs, a.scale, callgrind,
                       bool(cfg["pybind11"]) and e["tag"] == "py3.11-system", a.bulk_only)
        text = subprocess.run(e.get("launcher", []) + [e["python"], "-c",
                               "import sys; print(sys.version.split()[0])"],
                              capture_output=True, text=True, env=ENV).stdout.strip()
        all_rows.append(rows)
        tags.append(e["tag"])
        parts.append(table(e["tag"], f"Python {text}, {e['lib']}", rows))
        for r in rows:
            ia, ib = r["ir"] if r["ir"] else ("", "")
            tsv.append(f"{e['tag']}\t{r['id']}\t{r['what']}\t{r['pyhost']:.1f}\t{r['base']:.1f}\t"
                       f"{r['ratio']:.4f}\t{ia}\t{ib}\t{r['target'] or ''}")
    if a.bulk_only:
        bulk_doc(a, callgrind, parts, tsv)
        return
    if entries:  # the scale table, on the newest Python measured
        e = max(entries, key=lambda e: tuple(int(x) for x in e["version"].split(".")[:2]))
        print(f"run.py: scale on {e['tag']} ...", file=sys.stderr, flush=True)
        srows = measure_scale(cfg, e, a.runs, callgrind)
        parts.append(scale_table(e["tag"], srows))
        with open(os.path.join(a.out, "bench", "scale.tsv"), "w") as f:
            f.write("what\tsize\tns\tir\n")
            for label, size, ns, ir in srows:
                f.write(f"{label}\t{size}\t{ns:.1f}\t{'' if ir is None else f'{ir:.0f}'}\n")
    header = (f"Generated by `bench/run.sh` on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}: "
              f"{machine()}; {a.runs} runs per row, scale {a.scale}"
              f"{', callgrind instruction counts per iteration' if callgrind else ''}.\n\n")
    generated = header + "\n".join(parts) + "\n![ratios per version](performance.png)\n"
    with open(os.path.join(a.out, "bench", "results.md"), "w") as f:
        f.write(generated)
    with open(os.path.join(a.out, "bench", "results.tsv"), "w") as f:
        f.write("\n".join(tsv) + "\n")
    plot(a.out, all_rows, tags)
    args_table, other_table = summary(all_rows, tags, "args"), summary(all_rows, tags, "other")
    bulk_table = summary(all_rows, tags, "bulk")
    with open(os.path.join(a.out, "bench", "summary.md"), "w") as f:
        f.write("## With arguments\n\n" + args_table + "\n## Without arguments\n\n" + other_table +
                "\n## Bulk data\n\n" + bulk_table)
    update_doc(a.out, generated, args_table, other_table, isolation, bulk_table)
    print(generated)


if __name__ == "__main__":
    main()
