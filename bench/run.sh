#!/usr/bin/env bash
# bench/run.sh: builds the benchmarks and reproduces docs/performance.md's table and
# docs/performance.png in one command, then the C++ layer's table (docs/bench/cpp.md,
# bench/run_cpp.py).  Arguments go to bench/run.py, e.g.
#   bench/run.sh --versions 3.8,3.11,3.13 --runs 5
# PYHOST_BENCH_CPP=0 skips the C++ table.
# Needs gnuplot (apt-get install gnuplot-nox) for the plot and valgrind for the
# instruction counts; pybind11-dev adds the pybind11 rows on Debian's Python 3.11.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${PYHOST_BENCH_BUILD:-$root/build-bench}"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DPYHOST_BUILD_BENCH=ON >/dev/null
cmake --build "$build" -j2 --target bench_pyhost $(cd "$build" && make help 2>/dev/null | grep -o 'bench_direct_[a-z0-9_-]*\|bench_abi3_[a-z0-9_-]*\|bench_pybind11\|bench_cpp' | sort -u) >/dev/null
python3 "$root/bench/run.py" "$build" --out "$root/docs" "$@"
if [ "${PYHOST_BENCH_CPP:-1}" != 0 ] && [ -x "$build/bench/bench_cpp" ]; then
  pybind11=()
  [ -x "$build/bench/bench_pybind11" ] && pybind11=(--pybind11)
  # its exit status says whether the C++ rows meet their 1.05x; the table says it too
  python3 "$root/bench/run_cpp.py" "$build" "${pybind11[@]}" --out "$root/docs/bench/cpp.md" ||
    echo "bench/run.sh: a C++ row is above its target (see docs/bench/cpp.md)" >&2
fi
