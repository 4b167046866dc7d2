#!/usr/bin/env bash
# bench/run.sh: builds the benchmarks and reproduces docs/performance.md's table and
# docs/performance.png in one command.  Arguments go to bench/run.py, e.g.
#   bench/run.sh --versions 3.8,3.11,3.13 --runs 5
# Needs gnuplot (apt-get install gnuplot-nox) for the plot and valgrind for the
# instruction counts; pybind11-dev adds the pybind11 rows on Debian's Python 3.11.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${PYHOST_BENCH_BUILD:-$root/build-bench}"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DPYHOST_BUILD_BENCH=ON >/dev/null
cmake --build "$build" -j2 --target bench_pyhost $(cd "$build" && make help 2>/dev/null | grep -o 'bench_direct_[a-z0-9_-]*\|bench_abi3_[a-z0-9_-]*\|bench_pybind11' | sort -u) >/dev/null
exec python3 "$root/bench/run.py" "$build" --out "$root/docs" "$@"
