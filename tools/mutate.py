#!/usr/bin/env python3
"""mutate.py: pyhost's own mutation check (docs/reliability.md, "Mutation check").

A mutant is one realistic one-line bug planted in src/, include/ or cli/: a dropped
check, a boundary moved by one, a reference dropped or not dropped, two sources of a
value swapped, a flipped condition, a changed constant, a counter not moved.  Each is
planted in a copy of the sources (BUILD/src: the files git knows, copied on the first
run or with --fresh, so the worktree is never touched and can be edited and committed
meanwhile; the copies are new files, so a fresh copy rebuilds all of BUILD/obj), built
in BUILD/obj (Debug, incrementally: whatever the mutated file touches; -Werror off, so
a bug that only warns is still run) and run against the tests a developer runs for that
file, on three Pythons (3.6, 3.13 and the debug build 3.15d, where the refcount.*
checks run); it is killed when one of them fails or times out.  Before the first
mutant, every selected test runs once on the unmutated copy: one that fails there
(a known defect whose fix has not landed) says nothing about a mutant, so it is left
out of every run and named in BUILD/baseline-failures.txt and in the report.

  tools/mutate.py list [--seed 39] [--count 60]   sample the catalogue into tools/mutants.jsonl
  tools/mutate.py run  [--build build-mut] [--only ID,ID] [--timeout 900] [--fresh]
                       [--pythons py3.15d] [--baseline before|after]
                                                  run the mutants (in turns over the folders, so
                                                  a run stopped early has tried each; a stopped
                                                  run goes on where it was), results in
                                                  BUILD/mutants-results.jsonl
                                                  (--fresh: copy the sources again first;
                                                  else the files that changed are copied)
                                                  --pythons: the Pythons each mutant's tests
                                                  run on; --baseline=after: instead of every
                                                  selected test first, only the tests that
                                                  killed a mutant run unmutated, at the end
  tools/mutate.py show ID                         the mutant as a diff
  tools/mutate.py score [--build build-mut]       the score, survivors and equivalents

The sample is reproducible: the seed picks the same sites from the same sources, and
the list is a file in the repository, so a run reproduces what the docs report.
tools/mutants-equivalent.txt names the mutants shown equivalent (ID and why); they
are left out of the score.
"""
import argparse
import json
import os
import random
import re
import signal
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC = ROOT  # where mutants are planted: the copy in BUILD/src once cmd_run set it up
CATALOGUE = os.path.join(ROOT, 'tools', 'mutants.jsonl')
EQUIVALENT = os.path.join(ROOT, 'tools', 'mutants-equivalent.txt')
PYTHONS = ['py3.6', 'py3.13', 'py3.15d']  # run --pythons: fewer, for a quicker run

# Where the sample comes from, and how many mutants each folder gets.
FOLDERS = {
    'src/platform': 6, 'src/loader': 7, 'src/core': 6, 'src/discovery': 8,
    'src/runtime': 9, 'src/bridge': 14, 'src/deps': 4, 'include': 6, 'cli': 4,
}
# Code that does not build or run on Linux: no mutant there could be killed here.
NOT_ON_LINUX = re.compile(r'_win32\.c$|dl_none\.c$|\.rc$|\.manifest$|\.map$')

# The tests a developer runs for a file: areas (the first part of a test's name),
# matched on the first pattern that fits the path.
TESTS = [
    (r'src/platform/(alloc|strbuf|wide)\.', 'unit|badinput|python|errors|faults|fuzz'),
    (r'src/platform/(fs_|discover_posix|dl_posix|names)', 'unit|badinput|damaged|discover|discovertools|discoverpy|isolated|fuzz'),
    (r'src/platform/sync', 'unit|python|threads|stale'),
    (r'src/platform/', 'unit|badinput|python|damaged|fuzz'),
    (r'src/loader/(libcheck|verdict|elf)', 'unit|badinput|damaged|libcheck|discover|fuzz'),
    (r'src/loader/', 'unit|badinput|python|faults|consistency|damaged'),
    (r'src/core/config', 'unit|badinput|python|errors|discover|main'),
    (r'src/core/', 'unit|badinput|python|errors|stale|threads|faults|main'),
    (r'src/discovery/', 'unit|badinput|discover|discovertools|discoverpy|isolated|damaged|fuzz'),
    (r'src/deps/', 'deps|plugins|cli|unit'),
    (r'src/runtime/(main|textenc)', 'main|python|unit|badinput'),
    (r'src/runtime/', 'python|threads|errors|hostile|faults|main|stale|lifetimes|refcount|isolated|isolation|unit'),
    (r'src/bridge/(plugin)', 'plugins|errors|lifetimes|faq|refcount|stale'),
    (r'src/bridge/(signature|typedargs|scalar)', 'typed|callf|fasttype|fastpath|refcount|cpp'),
    (r'src/bridge/(callf|prepared|exprfn)', 'callf|fastpath|python|refcount|threads|cpp'),
    (r'src/bridge/(hostfn|fastargs|callback|run)', 'bridge|fastpath|typed|hostile|lifetimes|refcount|errors|cpp'),
    (r'src/bridge/(hosttype|heapobj)', 'bridge|fasttype|typed|refcount|lifetimes|cpp'),
    (r'src/bridge/', 'python|bridge|fastpath|errors|hostile|refcount|faults|fuzz|cpp'),
    (r'include/pyhost\.hpp', 'cpp'),
    (r'include/', 'python|fastpath|callf|typed|unit'),
    (r'cli/', 'cli'),
]


def tests_for(path):
    for pattern, areas in TESTS:
        if re.match(pattern, path):
            return areas
    raise SystemExit('no tests mapped for %s' % path)


# ---- the operators: (name, what it plants, function(line) -> [mutated lines]) ----

CODE = re.compile(r'^(?!\s*(//|/\*|\*|#))|^#\s*define \w+ \(?[\w ]*\d')  # code, or a constant's #define


def strings_masked(line):
    """line with string and char literals and a trailing comment blanked (same length)."""
    out, i, quote = [], 0, None
    while i < len(line):
        c = line[i]
        if quote:
            out.append(' ' if c != quote else c)
            if c == '\\':
                out.append(' ')
                i += 1
            elif c == quote:
                quote = None
        elif c in '"\'':
            quote = c
            out.append(c)
        elif line.startswith('//', i) or line.startswith('/*', i):
            out.append(' ' * (len(line) - i))
            break
        else:
            out.append(c)
        i += 1
    return ''.join(out)


def each_match(pattern, line, masked, replace):
    """One mutated line per match of pattern in the masked line."""
    out = []
    for m in re.finditer(pattern, masked):
        new = replace(m)
        if new is not None:
            out.append(line[:m.start()] + new + line[m.end():])
    return out


def op_drop_check(line, masked):
    # a one-line early exit: `if (cond) return x;` -> `if (0) return x;`
    m = re.match(r'^(\s*(?:\} else )?if \()(.*)(\) (?:return|goto|break|continue)\b.*;)\s*$', masked)
    if not m or 'PYHOST__ASSERT' in line:
        return []
    return [line[:m.end(1)] + '0' + line[m.start(3):]]


def op_boundary(line, masked):
    if not re.search(r'\b(if|while|for|return)\b|\?', masked):
        return []
    swap = {'<': '<=', '<=': '<', '>': '>=', '>=': '>'}
    return each_match(r'(?<=\s)(<=|>=|<|>)(?=\s)', line, masked, lambda m: swap[m.group(1)])


def op_negate(line, masked):
    if not re.search(r'\b(if|while|return)\b|\?', masked):
        return []
    return each_match(r'(==|!=)', line, masked, lambda m: '!=' if m.group(1) == '==' else '==')


def op_and_or(line, masked):
    return each_match(r'(&&|\|\|)', line, masked, lambda m: '||' if m.group(1) == '&&' else '&&')


def op_drop_call(line, masked, names):
    """The statement calling one of names (at the end of the line, alone or after an
    `if (...)` or `else`) made empty."""
    m = re.search(r'(?:%s)\([^;]*\);\s*$' % names, masked)
    if not m or not re.match(r'^\s*((\} )?else |if \(.*\) )?$', masked[:m.start()]):
        return []
    return [line[:m.start()] + ';']


def op_ref_leak(line, masked):
    # a reference not dropped
    return op_drop_call(line, masked, r'PY\.Py_DecRef|PY\.Py_XDecRef|pyhost__drop(?:_as)?')


def op_ref_steal(line, masked):
    # a reference not taken (so dropped once too often later)
    return op_drop_call(line, masked, r'PY\.Py_IncRef')


def op_constant(line, masked):
    if re.match(r'^\s*(case |enum |#\s*(?!define))', masked):
        return []
    def bump(m):
        n = int(m.group(1))
        return str(n + 1) if n in (0, 1) else str(n - 1)
    return each_match(r'(?<![\w.])(\d+)(?![\w.])', line, masked, bump)


def op_swap(line, masked):
    # two sources of one value swapped: `c ? a : b` -> `c ? b : a`
    m = re.search(r'\?\s*([^?:;,()]+?)\s*:\s*([^?:;,()]+?)(\s*[;,)])', masked)
    if not m or m.group(1).strip() == m.group(2).strip():
        return []
    a, b = line[m.start(1):m.end(1)], line[m.start(2):m.end(2)]
    return [line[:m.start(1)] + b + line[m.end(1):m.start(2)] + a + line[m.end(2):]]


def op_counter(line, masked):
    # a counter not moved: `x++;` `--x;` `x += n;` statements dropped
    m = re.match(r'^(\s*)(\+\+|--)?[\w.>\-\[\]]+(\+\+|--)?( [+-]= [^;]+)?;\s*$', masked)
    if not m or not (m.group(2) or m.group(3) or m.group(4)):
        return []
    return [m.group(1) + ';' + line[len(line.rstrip()):]]


def op_status(line, masked):
    # a wrong status on an error path
    other = {'PYHOST_MISUSE': 'PYHOST_ERROR', 'PYHOST_TYPE': 'PYHOST_RANGE', 'PYHOST_RANGE': 'PYHOST_TYPE',
             'PYHOST_PYEXC': 'PYHOST_ERROR', 'PYHOST_NOMEM': 'PYHOST_ERROR', 'PYHOST_NOTFOUND': 'PYHOST_NOLIB',
             'PYHOST_OK': 'PYHOST_ERROR', 'PYHOST_NOLIB': 'PYHOST_NOTFOUND', 'PYHOST_DAMAGED': 'PYHOST_NOLIB'}
    if not re.search(r'\breturn\b|set_error', masked):
        return []
    return each_match(r'\b(PYHOST_[A-Z]+)\b', line, masked, lambda m: other.get(m.group(1)))


OPERATORS = [
    ('drop-check', op_drop_check), ('boundary', op_boundary), ('negate', op_negate),
    ('and-or', op_and_or), ('ref-leak', op_ref_leak), ('ref-steal', op_ref_steal),
    ('constant', op_constant), ('swap', op_swap), ('counter', op_counter), ('status', op_status),
]


def linux_lines(lines):
    """Indexes of lines built on Linux: outside the branches of #if _WIN32, __APPLE__..."""
    other = re.compile(r'_WIN32|__APPLE__|__MINGW|_MSC_VER')
    keep, stack = [], []  # per open #if: [skipping this branch, a platform's #if]
    for i, line in enumerate(lines):
        s = line.strip()
        platform = bool(other.search(s))
        negated = bool(re.match(r'#\s*ifndef\b', s) or re.search(r'!\s*defined', s))
        if re.match(r'#\s*if', s):
            stack.append([platform and not negated, platform])
        elif re.match(r'#\s*elif\b', s) and stack:
            stack[-1] = [platform and not negated, platform or stack[-1][1]]
        elif re.match(r'#\s*else\b', s) and stack:
            if stack[-1][1]:
                stack[-1][0] = not stack[-1][0]
        elif re.match(r'#\s*endif\b', s) and stack:
            stack.pop()
        elif not any(skip for skip, _ in stack):
            keep.append(i)
    return keep


def candidates(path):
    with open(os.path.join(ROOT, path), encoding='utf-8') as f:
        lines = f.read().split('\n')
    out = []
    for i in linux_lines(lines):
        line = lines[i]
        if not CODE.match(line) or 'PYHOST__ASSERT' in line or 'static_assert' in line:
            continue
        masked = strings_masked(line)
        if not masked.strip():
            continue
        for name, op in OPERATORS:
            for new in op(line, masked):
                if new != line:
                    out.append({'file': path, 'line': i + 1, 'op': name, 'before': line, 'after': new})
    return out


def sources(folder):
    base = os.path.join(ROOT, folder)
    for dirpath, _, files in os.walk(base):
        for name in sorted(files):
            rel = os.path.relpath(os.path.join(dirpath, name), ROOT)
            if re.search(r'\.(c|h|hpp)$', name) and not NOT_ON_LINUX.search(name):
                yield rel


def cmd_list(args):
    rng = random.Random(args.seed)
    chosen = []
    scale = args.count / sum(FOLDERS.values())
    for folder, n in FOLDERS.items():
        pool = [c for path in sorted(sources(folder)) for c in candidates(path)]
        by_op = {}
        for c in pool:
            by_op.setdefault(c['op'], []).append(c)
        ops = sorted(by_op)
        rng.shuffle(ops)
        want = max(1, round(n * scale))
        picked = []
        while len(picked) < want and any(by_op.values()):
            for op in ops:  # round-robin over the operators that have sites here
                if by_op[op] and len(picked) < want:
                    picked.append(by_op[op].pop(rng.randrange(len(by_op[op]))))
        chosen += picked
        print('%-14s %4d sites, %2d mutants' % (folder, len(pool), len(picked)))
    with open(args.out, 'w') as f:
        for i, c in enumerate(chosen, 1):
            c = dict(id='M%03d' % i, **c)
            f.write(json.dumps(c, ensure_ascii=False) + '\n')
    print('%d mutants in %s (seed %d)' % (len(chosen), os.path.relpath(args.out, ROOT), args.seed))


def load(path):
    with open(path, encoding='utf-8') as f:
        return [json.loads(l) for l in f if l.strip()]


def equivalents():
    out = {}
    if os.path.exists(EQUIVALENT):
        for line in open(EQUIVALENT, encoding='utf-8'):
            if line.strip() and not line.startswith('#'):
                ident, _, why = line.strip().partition(' ')
                out[ident] = why.strip()
    return out


PLANTED = None  # BUILD/planted.json while a mutant is in the copy: what undoes it


def apply(m):
    """Plants m; returns the original text (to restore), or None when the line moved."""
    path = os.path.join(SRC, m['file'])
    with open(path, encoding='utf-8') as f:
        text = f.read()
    if PLANTED:
        with open(PLANTED, 'w', encoding='utf-8') as f:
            json.dump({'file': m['file'], 'text': text}, f)
    lines = text.split('\n')
    i = m['line'] - 1
    if i >= len(lines) or lines[i] != m['before']:
        where = [k for k, l in enumerate(lines) if l == m['before']]
        if len(where) != 1:
            return None
        i = where[0]
    lines[i] = m['after']
    with open(path, 'w', encoding='utf-8') as f:
        f.write('\n'.join(lines))
    return text


def restore(m, text):
    with open(os.path.join(SRC, m['file']), 'w', encoding='utf-8') as f:
        f.write(text)
    if PLANTED and os.path.exists(PLANTED):
        os.remove(PLANTED)


def undo_leftover():
    """A run killed while a mutant was planted left it in the copy: take it out."""
    if PLANTED and os.path.exists(PLANTED):
        with open(PLANTED, encoding='utf-8') as f:
            left = json.load(f)
        restore(left, left['text'])
        print('mutate: took out the mutant a stopped run left in %s' % left['file'], flush=True)


def spread(mutants):
    """The mutants in turns over their folders, so a run stopped early has tried each."""
    by_folder = {}
    for m in mutants:
        by_folder.setdefault(os.path.dirname(m['file']).split('/')[0] if m['file'].startswith(('include', 'cli'))
                             else '/'.join(m['file'].split('/')[:2]), []).append(m)
    out, queues = [], list(by_folder.values())
    while any(queues):
        for q in queues:
            if q:
                out.append(q.pop(0))
    return out


BASELINE_FAILURES = []  # tests that fail with no mutant planted (baseline())


def selection(m):
    return r'^(%s)\.' % tests_for(m['file']), excluded()


def excluded():
    others = [t for t in ('py3.6', 'py3.7', 'py3.8', 'py3.9', 'py3.10', 'py3.11-system', 'py3.11', 'py3.12',
                          'py3.13', 'py3.14d', 'py3.14', 'py3.15', 'py3.15d') if t not in PYTHONS]
    exclude = r'\.(%s)$|^fidelity\.|^consumer\.' % '|'.join(re.escape(t) for t in others)
    return exclude + ''.join('|^%s$' % re.escape(t) for t in BASELINE_FAILURES)


def baseline(build, obj):
    """The selected tests that fail on the unmutated copy (kept in BUILD/baseline-failures.txt)."""
    path = os.path.join(build, 'baseline-failures.txt')
    if not os.path.exists(path):
        areas = sorted({a for _, group in TESTS for a in group.split('|')})
        print('mutate: running the selected tests once with no mutant planted', flush=True)
        t = subprocess.run(['ctest', '--test-dir', obj, '-R', r'^(%s)\.' % '|'.join(areas), '-E', excluded(),
                            '-j2', '--timeout', '180'], capture_output=True, text=True)
        failed = sorted(set(re.findall(r'\d+ - (\S+) \(', t.stdout)))
        with open(path, 'w') as f:
            f.write(''.join(n + '\n' for n in failed))
    BASELINE_FAILURES[:] = [l.strip() for l in open(path) if l.strip()]
    if BASELINE_FAILURES:
        print('mutate: left out, failing with no mutant: %s' % ' '.join(BASELINE_FAILURES), flush=True)


CHILD = []  # the build or test run going on: a stop ends its whole process group


def sh(cmd, timeout):
    """subprocess.run(cmd, capture_output=True, text=True, timeout=timeout), in a process
    group of its own that a timeout or a stop ends whole (a compiler left running would
    write an object of the mutant after the source was restored)."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True)
    CHILD[:] = [p]
    try:
        out, err = p.communicate(timeout=timeout)
    except BaseException:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
        raise
    finally:
        CHILD[:] = []
    return subprocess.CompletedProcess(cmd, p.returncode, out, err)


def run_one(m, build, timeout, log):
    include, exclude = selection(m)
    text = apply(m)
    if text is None:
        return 'stale', 0, 'the line is no longer in the file'
    start = time.time()
    try:
        # all of it: a test's program is not always named as its target (the command
        # `pyhost` is target pyhost_cli; target pyhost is the library)
        b = sh(['cmake', '--build', build, '-j2'], timeout)
        if b.returncode:
            log.write(b.stdout[-3000:] + b.stderr[-3000:])
            return 'stillborn', time.time() - start, 'does not build'
        left = max(60, timeout - (time.time() - start))
        t = sh(['ctest', '--test-dir', build, '-R', include, '-E', exclude, '-j2',
                '--timeout', '180', '--stop-on-failure', '--no-tests=error'], left)
        log.write(t.stdout[-6000:])
        if t.returncode:
            failed = re.findall(r'\d+ - (\S+) \(', t.stdout)
            return 'killed', time.time() - start, ' '.join(failed[:3]) or 'a test failed'
        ran = re.search(r'tests passed, 0 tests failed out of (\d+)', t.stdout)
        return 'survived', time.time() - start, '%s tests passed' % (ran.group(1) if ran else '?')
    except subprocess.TimeoutExpired:
        return 'killed', time.time() - start, 'timed out'
    finally:
        restore(m, text)


def setup(build, fresh):
    """The copy of the sources in BUILD/src and its configured build in BUILD/obj."""
    src, obj = os.path.join(build, 'src'), os.path.join(build, 'obj')
    if fresh:
        subprocess.run(['rm', '-rf', src], check=True)
    # the files git knows, copied when the copy differs (a merge rebuilds only what it
    # changed: a copy's new time stamp makes make rebuild what includes it)
    files = subprocess.run(['git', '-C', ROOT, 'ls-files', '-z', '--cached', '--others',
                            '--exclude-standard'], capture_output=True, check=True).stdout
    copied = 0
    for rel in filter(None, files.decode().split('\0')):
        a, b = os.path.join(ROOT, rel), os.path.join(src, rel)
        if os.path.isfile(a) and not (os.path.isfile(b) and open(a, 'rb').read() == open(b, 'rb').read()):
            os.makedirs(os.path.dirname(b), exist_ok=True)
            subprocess.run(['cp', a, b], check=True)
            copied += 1
    print('mutate: %d files copied to %s' % (copied, os.path.relpath(src, ROOT)), flush=True)
    # configured on every run: the tests' names are read from their sources then
    subprocess.run(['cmake', '-S', src, '-B', obj, '-DCMAKE_BUILD_TYPE=Debug', '-DPYHOST_WERROR=OFF',
                    '-DPYHOST_SHARED_DIR=' + os.path.join(os.path.dirname(ROOT), 'shared')],
                   check=True, capture_output=True)
    b = subprocess.run(['cmake', '--build', obj, '-j2'], capture_output=True, text=True)
    if b.returncode:
        sys.exit('mutate: the unmutated copy does not build:\n' + b.stdout[-3000:] + b.stderr[-3000:])
    return src, obj


def check_killers(build, obj, results):
    """--baseline=after: each test that killed a mutant runs once on the unmutated copy.
    One that fails there killed nothing: it joins BUILD/baseline-failures.txt, and the
    mutants it alone killed are marked 'unsure' (run them again)."""
    killers = {r['id']: r['why'].split() for r in results if r['status'] == 'killed' and r['why'] != 'timed out'}
    names = sorted({n for ns in killers.values() for n in ns})
    if not names:
        return
    t = subprocess.run(['ctest', '--test-dir', obj, '-R', '^(%s)$' % '|'.join(re.escape(n) for n in names),
                        '-j2', '--timeout', '180'], capture_output=True, text=True)
    bad = set(re.findall(r'\d+ - (\S+) \(', t.stdout))
    print('mutate: %d killing tests run with no mutant: %s' % (len(names), 'all pass' if not bad else
                                                                'failing: ' + ' '.join(sorted(bad))), flush=True)
    if bad:
        path = os.path.join(build, 'baseline-failures.txt')
        with open(path, 'a') as f:
            f.write(''.join(n + '\n' for n in sorted(bad)))
        with open(os.path.join(build, 'mutants-results.jsonl'), 'a') as out:
            for ident, ns in killers.items():
                if not set(ns) - bad:
                    out.write(json.dumps({'id': ident, 'status': 'unsure', 'seconds': 0,
                                          'why': 'killed only by a test failing with no mutant'}) + '\n')


def cmd_run(args):
    global SRC, PLANTED
    args.build = os.path.abspath(args.build)
    os.makedirs(args.build, exist_ok=True)
    # a TERM (a stopped job) ends through the finally that takes the mutant out
    signal.signal(signal.SIGTERM, lambda *_: sys.exit('mutate: stopped'))
    PLANTED = os.path.join(args.build, 'planted.json')
    if args.fresh and os.path.exists(PLANTED):
        os.remove(PLANTED)
    SRC, obj = setup(args.build, args.fresh)
    undo_leftover()
    if args.fresh and os.path.exists(os.path.join(args.build, 'baseline-failures.txt')):
        os.remove(os.path.join(args.build, 'baseline-failures.txt'))
    if args.pythons:
        PYTHONS[:] = args.pythons.split(',')
    if args.baseline == 'before':
        baseline(args.build, obj)
    else:
        path = os.path.join(args.build, 'baseline-failures.txt')
        BASELINE_FAILURES[:] = [l.strip() for l in open(path) if l.strip()] if os.path.exists(path) else []
    mutants = load(args.mutants)
    if args.only:
        mutants = [m for m in mutants if m['id'] in args.only.split(',')]
    mutants = spread(mutants)
    results_path = os.path.join(args.build, 'mutants-results.jsonl')
    done = {}
    if os.path.exists(results_path) and not args.again:
        done = {r['id']: r for r in load(results_path)}
    with open(results_path, 'a') as out, open(os.path.join(args.build, 'mutants.log'), 'a') as log:
        for m in mutants:
            if m['id'] in done:
                continue
            log.write('\n==== %s %s:%d %s\n' % (m['id'], m['file'], m['line'], m['op']))
            log.flush()
            status, secs, why = run_one(m, obj, args.timeout, log)
            r = {'id': m['id'], 'status': status, 'seconds': round(secs), 'why': why}
            out.write(json.dumps(r) + '\n')
            out.flush()
            print('%s %-9s %4ds %s:%d %s: %s' % (m['id'], status, secs, m['file'], m['line'], m['op'], why),
                  flush=True)
    # the build goes back to the sources as they are
    subprocess.run(['cmake', '--build', obj, '-j2'], capture_output=True)
    if args.baseline == 'after':
        check_killers(args.build, obj, [r for r in load(results_path) if r['id'] in {m['id'] for m in mutants}])


def cmd_show(args):
    for m in load(args.mutants):
        if m['id'] == args.id:
            print('--- %s:%d (%s)\n-%s\n+%s' % (m['file'], m['line'], m['op'], m['before'], m['after']))


def cmd_score(args):
    path = os.path.join(args.build, 'baseline-failures.txt')
    if os.path.exists(path) and os.path.getsize(path):
        print('left out of every run (failing with no mutant): %s' % ' '.join(open(path).read().split()))
    mutants = {m['id']: m for m in load(args.mutants)}
    results = {r['id']: r for r in load(os.path.join(args.build, 'mutants-results.jsonl'))}
    eq = equivalents()
    counts = {}
    for ident, r in results.items():
        status = 'equivalent' if r['status'] == 'survived' and ident in eq else r['status']
        counts[status] = counts.get(status, 0) + 1
    scored = counts.get('killed', 0) + counts.get('survived', 0)
    print('%d mutants run of %d: %s' % (len(results), len(mutants),
                                        ', '.join('%d %s' % (n, s) for s, n in sorted(counts.items()))))
    if scored:
        print('score: %d killed of %d (%.0f%%), equivalent ones left out'
              % (counts.get('killed', 0), scored, 100.0 * counts.get('killed', 0) / scored))
    for ident, r in sorted(results.items()):
        if r['status'] in ('survived', 'stillborn', 'stale'):
            m = mutants[ident]
            tag = 'equivalent: ' + eq[ident] if ident in eq else r['status']
            print('%s %s:%d %s (%s)\n  -%s\n  +%s' % (ident, m['file'], m['line'], m['op'], tag,
                                                    m['before'].strip(), m['after'].strip()))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest='cmd', required=True)
    a = sub.add_parser('list')
    a.add_argument('--seed', type=int, default=39)
    a.add_argument('--count', type=int, default=60)
    a.add_argument('--out', default=CATALOGUE)
    a = sub.add_parser('run')
    a.add_argument('--build', default=os.path.join(ROOT, 'build-mut'))
    a.add_argument('--mutants', default=CATALOGUE)
    a.add_argument('--only', default='')
    a.add_argument('--timeout', type=int, default=900)
    a.add_argument('--again', action='store_true', help='run mutants that have a result already')
    a.add_argument('--fresh', action='store_true', help='copy the sources from the worktree again')
    a.add_argument('--pythons', default='', help='comma-separated, e.g. py3.15d (default: %s)' % ','.join(PYTHONS))
    a.add_argument('--baseline', choices=('before', 'after'), default='before',
                   help='before: every selected test once with no mutant first; after: only the '
                        'tests that killed a mutant, once the run is over (quicker)')
    a = sub.add_parser('show')
    a.add_argument('id')
    a.add_argument('--mutants', default=CATALOGUE)
    a = sub.add_parser('score')
    a.add_argument('--build', default=os.path.join(ROOT, 'build-mut'))
    a.add_argument('--mutants', default=CATALOGUE)
    args = p.parse_args()
    {'list': cmd_list, 'run': cmd_run, 'show': cmd_show, 'score': cmd_score}[args.cmd](args)


if __name__ == '__main__':
    main()
