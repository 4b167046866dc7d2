#!/usr/bin/env python3
"""coverage.py: line and branch coverage of src/ per folder, against the floors CI keeps.

Usage:
  tools/coverage.py [--build build-cov] [--ctest ARGS] [--floors FILE] [--json FILE] [--missing]
  tools/coverage.py --report-only [--build DIR] ...

Configures BUILD (default build-cov: gcc, Debug, --coverage -fprofile-update=atomic,
-Werror) when it has no cache yet, builds it, clears the counts of an earlier run,
runs ctest -j2 there (default: every test but fidelity, as README's test command; with
--ctest the arguments given, e.g. --ctest="-R ^fuzz\.replay\." for the fuzzers'
corpora), then reports.  --report-only reports the counts BUILD has now.

gcovr (Debian's package) reads the counts for src/, the library's code that builds on
Linux (the Windows files are not compiled here, so they are not counted).  Prints lines
and branches per folder of src/ and for all of it, and exits 1 when one is below its
floor in the floors file (docs/reliability.md, "Coverage", says how they were set).
--missing lists, per file, the lines no test ran.  A failing test does not stop the
report; ctest's own status is printed and makes the exit status 1.
"""
import argparse
import collections
import glob
import json
import os
import shlex
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FLOORS = os.path.join(ROOT, 'tools', 'coverage-floors.txt')


# Lines that make no code but that gcc's -O0 coverage still counts, often 0 in a
# function that ran thousands of times: a local declared without an initializer
# (`char dir[PYHOST__IPATH];`, `struct pyhost__fast_call v;`) and `(void)x;`.
NO_CODE = (r'^\s*(?!(?:return|goto|else|case|do)\b)(?:(?:const|unsigned|struct|enum)\s+)*[A-Za-z_]\w*[\s\*]+[A-Za-z_][\w\s\*\[\],]*;\s*(?:/\*.*\*/)?$'
           r'|^\s*\(void\)\w+(?:,\s*\(void\)\w+)*;\s*(?:/\*.*\*/)?$')


def floors(path):
    out = {}
    for line in open(path, encoding='utf-8'):
        parts = line.split('#')[0].split()
        if parts:
            out[parts[0]] = (float(parts[1]), float(parts[2]))
    return out


def summary(build, keep):
    with tempfile.TemporaryDirectory() as tmp:
        out = keep or os.path.join(tmp, 'coverage.json')
        # -fprofile-update=atomic keeps the counts consistent in threaded tests; a child
        # that exits while another thread updates a counter can still leave one count
        # odd, which gcov prints as a negative "returned": skipped, not fatal
        cmd = ['gcovr', '-r', ROOT, build, '--filter', os.path.join(ROOT, 'src') + '/',
               # the consumer tests build pyhost again inside the build tree, from the
               # sources as they were then: their notes are not this build's
               '--exclude-directories', r'.*/tests/consumer/.*',
               '--exclude-unreachable-branches', '--gcov-ignore-parse-errors',
               '--exclude-lines-by-pattern', NO_CODE, '--json', out]
        run = subprocess.run(cmd, capture_output=True, text=True)
        if run.returncode:
            sys.exit('coverage: gcovr failed:\n' + run.stderr)
        with open(out, encoding='utf-8') as f:
            return json.load(f)


def run_tests(build, ctest_args):
    """Configures (once), builds, zeroes the counts, runs the tests: ctest's status."""
    if not os.path.exists(os.path.join(build, 'CMakeCache.txt')):
        flags = '--coverage -fprofile-update=atomic'
        subprocess.run(['cmake', '-S', ROOT, '-B', build, '-DCMAKE_BUILD_TYPE=Debug', '-DPYHOST_WERROR=ON',
                        '-DCMAKE_C_FLAGS=' + flags, '-DCMAKE_CXX_FLAGS=' + flags], check=True)
    subprocess.run(['cmake', '--build', build, '-j2'], check=True, stdout=subprocess.DEVNULL)
    for gcda in glob.glob(os.path.join(build, '**', '*.gcda'), recursive=True):
        try:
            os.remove(gcda)
        except FileNotFoundError:  # found twice (a tree reached through a symlink)
            pass
    # docs.build_lines.* link README's command lines against the instrumented static
    # library without --coverage, which cannot work in this build
    cmd = ['ctest', '--test-dir', build, '-j2'] + (shlex.split(ctest_args) if ctest_args else
                                                   ['-LE', '^fidelity$', '-E', r'^docs\.build_lines\.'])
    print('coverage: ' + ' '.join(shlex.quote(c) for c in cmd), flush=True)
    t = subprocess.run(cmd, capture_output=True, text=True)
    tail = [l for l in t.stdout.splitlines() if 'tests passed' in l or '***' in l or 'Failed' in l]
    print('\n'.join(tail[-30:]), flush=True)
    return t.returncode


def percent(hit, total):
    return 100.0 * hit / total if total else 100.0


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument('--build', default=os.path.join(ROOT, 'build-cov'))
    p.add_argument('--ctest', default='', help='ctest arguments (default: -LE ^fidelity$ -E ^docs\\.build_lines\\.)')
    p.add_argument('--report-only', action='store_true', help='report the counts the build has, run nothing')
    p.add_argument('--floors', default=FLOORS)
    p.add_argument('--json', help='keep gcovr\'s JSON report here')
    p.add_argument('--missing', action='store_true')
    args = p.parse_args()
    tests_rc = 0 if args.report_only else run_tests(os.path.abspath(args.build), args.ctest)
    data = summary(os.path.abspath(args.build), args.json and os.path.abspath(args.json))
    per = collections.defaultdict(lambda: [0, 0, 0, 0])
    missing = {}
    for f in data['files']:
        folder = '/'.join(f['file'].split('/')[:2])
        lines = [l for l in f['lines'] if not l.get('gcovr/noncode')]
        branches = [b for l in lines for b in l['branches']]
        hit = [l['count'] > 0 for l in lines]
        for key in (folder, 'all'):
            a = per[key]
            a[0] += sum(hit)
            a[1] += len(hit)
            a[2] += sum(b['count'] > 0 for b in branches)
            a[3] += len(branches)
        missing[f['file']] = [l['line_number'] for l in lines if l['count'] == 0]
    want = floors(args.floors) if os.path.exists(args.floors) else {}
    below = []
    print('%-14s %18s %20s   floors' % ('', 'lines', 'branches'))
    for key in sorted(per, key=lambda k: (k == 'all', k)):
        a = per[key]
        lp, bp = percent(a[0], a[1]), percent(a[2], a[3])
        floor = want.get(key)
        print('%-14s %5.1f%% %5d/%-5d  %5.1f%% %5d/%-5d  %s' % (
            key, lp, a[0], a[1], bp, a[2], a[3], '%g%% %g%%' % floor if floor else '-'))
        if floor and (lp < floor[0] or bp < floor[1]):
            below.append(key)
    if args.missing:
        for path, nums in sorted(missing.items()):
            if nums:
                print('%s: %s' % (path, ','.join(map(str, nums))))
    if below:
        print('coverage below its floor in: %s (tools/coverage-floors.txt)' % ', '.join(below))
    if tests_rc:
        print('coverage: some tests failed (ctest status %d)' % tests_rc)
    if below or tests_rc:
        sys.exit(1)


if __name__ == '__main__':
    main()
