#!/usr/bin/env bash
# The main job: builds the benchmarks for this machine (-march=native), runs nonlin beside its
# peers (bench/peers/: -ffast-math loop, Eigen, SLEEF, xsimd, oneDNN on one thread) and the
# bandwidth ceilings, prints the tables, measures accuracy against MPFR (nonlin and the peers)
# and draws the figures (build/bench/*.svg; scripts/update-readme.sh copies them to docs/img).
# Extra arguments go to nonlin_bench, e.g. scripts/bench.sh --benchmark_filter=gelu
#   NONLIN_ACCURACY_ARGS  arguments of nonlin_accuracy (default: every 64th float pattern,
#                         200000 double samples, the peers on every 1024th float pattern)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/setup-deps.sh --bench

build=build/bench
cmake -S . -B "$build" \
  -DCMAKE_BUILD_TYPE=Release \
  -DNONLIN_ARCH_FLAGS=-march=native \
  -DNONLIN_BUILD_BENCHMARKS=ON \
  -DNONLIN_BUILD_TESTS=OFF \
  -DNONLIN_BUILD_EXAMPLES=OFF \
  -DNONLIN_WARNINGS_AS_ERRORS=OFF
echo "bench.sh: [1/4] building nonlin_bench and nonlin_accuracy (-march=native)"
cmake --build "$build" -j "$(nproc)" --target nonlin_bench nonlin_accuracy

# One thread for every peer (oneDNN's OpenMP also forces it from inside, see onednn.cpp).
# Three repetitions in random order, so that a slow moment of a shared machine does not land
# on one variant only; the tables show medians. Progress every 20 s: the benchmarks whose three
# repetitions are done (in random order, so most finish late) and the time so far.
total=$("$build/bench/nonlin_bench" --benchmark_list_tests "$@" | wc -l)
echo "bench.sh: [2/4] nonlin_bench: $total benchmarks x 3 repetitions (about 7 minutes on 2 cores;"
echo "          its console output goes to $build/bench.txt)"
OMP_NUM_THREADS=1 "$build/bench/nonlin_bench" \
  --benchmark_min_time=0.02 \
  --benchmark_repetitions=3 \
  --benchmark_enable_random_interleaving=true \
  --benchmark_report_aggregates_only=true \
  --benchmark_out="$build/bench.json" \
  --benchmark_out_format=json \
  "$@" >"$build/bench.txt" &
bench_pid=$!
started=$SECONDS
while kill -0 "$bench_pid" 2>/dev/null; do
  sleep 20
  done_count=$(grep -c '_median ' "$build/bench.txt" 2>/dev/null || true)
  if kill -0 "$bench_pid" 2>/dev/null; then
    echo "bench.sh:   nonlin_bench: ${done_count:-0} / $total done, $((SECONDS - started)) s"
  fi
done
wait "$bench_pid"

echo "bench.sh: [3/4] the report"
python3 bench/report.py "$build/bench.json" --plot-data "$build/throughput.tsv" \
  | tee "$build/report.md"

# Accuracy against MPFR (tools/accuracy.cpp; --exhaustive walks all 2^32 floats). Its progress
# (tasks done of all) goes to the terminal, the tables to accuracy.md.
echo
echo "bench.sh: [4/4] nonlin_accuracy against MPFR (about 2 minutes), then the figures"
read -r -a accuracy_args <<<"${NONLIN_ACCURACY_ARGS:---stride 64 --samples 200000 --peer-stride 1024}"
OMP_NUM_THREADS=1 "$build/bench/nonlin_accuracy" "${accuracy_args[@]}" --threads "$(nproc)" \
  --gelu-curve "$build/gelu_curve.tsv" | tee "$build/accuracy.md"

# 16-bit arrays: the span kernels' results on all 65536 bfloat16 and float16 inputs of every
# function, correctly rounded or not (seconds).
echo
echo "bench.sh: 16-bit storage: correct rounding against MPFR"
"$build/bench/nonlin_accuracy" --storage16 --threads "$(nproc)" | tee "$build/accuracy16.md"

python3 bench/accuracy_figure.py "$build/accuracy.md" "$build"
gnuplot -e "dir='$build'; out='$build'" scripts/plot.gp
echo
echo "bench.sh: figures in $build/accuracy.svg, $build/throughput.svg and $build/gelu_errors.svg"
