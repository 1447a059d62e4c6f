#!/usr/bin/env bash
# The main job: builds the benchmarks for this machine (-march=native), runs them and prints
# the tables. Extra arguments go to nonlin_bench, e.g. scripts/bench.sh --benchmark_filter=gelu
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

if ! compgen -G "bench/*.cpp" >/dev/null; then
  echo "bench.sh: no bench/*.cpp yet, nothing to run" >&2
  exit 1
fi

bash scripts/setup-deps.sh --bench

build=build/bench
cmake -S . -B "$build" \
  -DCMAKE_BUILD_TYPE=Release \
  -DNONLIN_ARCH_FLAGS=-march=native \
  -DNONLIN_BUILD_BENCHMARKS=ON \
  -DNONLIN_BUILD_TESTS=OFF \
  -DNONLIN_BUILD_EXAMPLES=OFF \
  -DNONLIN_WARNINGS_AS_ERRORS=OFF
targets=(nonlin_bench)
[[ -f tools/accuracy.cpp ]] && targets+=(nonlin_accuracy)
cmake --build "$build" -j "$(nproc)" --target "${targets[@]}"

"$build/bench/nonlin_bench" \
  --benchmark_min_time=0.05 \
  --benchmark_out="$build/bench.json" \
  --benchmark_out_format=json \
  "$@"

python3 bench/report.py "$build/bench.json" | tee "$build/report.md"

# Accuracy against MPFR: every 64th float bit pattern and 200000 double samples (about a minute
# on two cores; tools/accuracy.cpp --exhaustive walks all 2^32 floats).
echo
"$build/bench/nonlin_accuracy" --stride 64 --samples 200000 --threads "$(nproc)" \
  2>/dev/null | tee "$build/accuracy.md"
