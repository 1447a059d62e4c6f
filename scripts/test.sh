#!/usr/bin/env bash
# The test command: installs what is missing, then builds and runs the whole suite in five
# configurations, each in its own build tree under build/:
#
#   test        g++, -march=native (AVX-512 here): tests, examples, benchmarks (built), packaging
#   clang       clang++, -march=native: the same targets, the same tests but packaging
#   v3          g++, -march=x86-64-v3 (AVX2 + FMA): the tests
#   v2          g++, -march=x86-64-v2 (SSE4.2, no FMA): the tests
#   sanitize    clang++, AddressSanitizer + UndefinedBehaviorSanitizer, -fno-sanitize-recover:
#               tests and examples
#
# Warnings are errors on our targets in every configuration. NONLIN_TEST_STAGES picks a subset,
# e.g.  NONLIN_TEST_STAGES="test" scripts/test.sh  for the quick native run. Extra arguments go
# to every ctest run, e.g. scripts/test.sh -R sigmoid
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/setup-deps.sh --tests

jobs=$(nproc)
stages=${NONLIN_TEST_STAGES:-"test clang v3 v2 sanitize"}

# configure_and_test NAME CXX ARCH_FLAGS EXTRA_CXX_FLAGS CTEST_EXCLUDE_LABELS [cmake args...]
run_stage() {
  local name=$1 cxx=$2 arch=$3 extra=$4 exclude=$5
  shift 5
  echo "=== test stage ${name}: ${cxx} ${arch} ${extra}"
  local started=$SECONDS
  # Release flags without -DNDEBUG: optimized code as users build it, with assert() still live.
  CXX=$cxx cmake -S . -B "build/${name}" \
    -DCMAKE_CXX_COMPILER="$cxx" \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CXX_FLAGS_RELEASE="-O3 ${extra}" \
    -DNONLIN_ARCH_FLAGS="$arch" \
    -DNONLIN_WARNINGS_AS_ERRORS=ON \
    "$@" >/dev/null
  cmake --build "build/${name}" -j "$jobs"
  # Tests labelled `exhaustive` are too slow for every run: ctest --test-dir build/test -L exhaustive
  ctest --test-dir "build/${name}" --output-on-failure -j "$jobs" -LE "$exclude" "${ctest_args[@]}"
  echo "=== test stage ${name}: passed in $((SECONDS - started)) s"
}

ctest_args=("$@")
for stage in $stages; do
  case "$stage" in
    test) run_stage test g++ -march=native "" exhaustive ;;
    clang) run_stage clang clang++ -march=native "" "exhaustive|package" ;;
    v3) run_stage v3 g++ -march=x86-64-v3 "" "exhaustive|package|examples" \
          -DNONLIN_BUILD_BENCHMARKS=OFF -DNONLIN_BUILD_EXAMPLES=OFF ;;
    v2) run_stage v2 g++ -march=x86-64-v2 "" "exhaustive|package|examples" \
          -DNONLIN_BUILD_BENCHMARKS=OFF -DNONLIN_BUILD_EXAMPLES=OFF ;;
    sanitize) run_stage sanitize clang++ -march=native \
                "-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer" \
                "exhaustive|package" -DNONLIN_BUILD_BENCHMARKS=OFF ;;
    *) echo "test.sh: unknown stage '$stage' (test clang v3 v2 sanitize)" >&2; exit 2 ;;
  esac
done
echo "test.sh: all stages passed (${stages})"
