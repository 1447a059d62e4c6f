#!/usr/bin/env bash
# The test command: installs what is missing, then lints, builds and runs the whole suite in
# four configurations, each in its own build tree under build/, then fuzzes (three more, v3,
# sanitize and aarch64-gcc, run when asked for, e.g. NONLIN_TEST_STAGES=v3):
#
#   lint        clang-tidy (.clang-tidy, warnings as errors) on include/nonlin: one TU with every
#               public header; each header alone compiled by clang (-fsyntax-only, warnings as
#               errors); clang-format --dry-run --Werror on include/, tests/, bench/, examples/,
#               fuzz/, tools/*.cpp
#   test        g++, -march=x86-64-v4 (AVX-512): tests, examples, benchmarks (built), packaging
#   clang       clang++, -march=x86-64-v3 (AVX2 + FMA), AddressSanitizer +
#               UndefinedBehaviorSanitizer, -fno-sanitize-recover, at -O0, the accuracy screens
#               on every 8th input (NONLIN_ACCURACY_STRIDE=8; the places near kinks stay dense):
#               on a Zen 5 host the stage took 511 s at -O1 (build 441) and 251 at -O0 (build
#               133; the tests ~120 s with the stride against 70 at -O1 without it); cross_build_test holds its
#               results to the v3 bits at any level (the formulas do not depend on contraction:
#               aarch64 builds with -ffp-contract=off give the same bits): tests, examples; not isa_mix
#               (v2's), packaging, headers (lint compiles every header alone with clang) nor benchmarks
#               (the main job builds them with g++, the test stage checks that). One stage for
#               clang's build and the sanitizers: as two (clang at x86-64-v3, sanitize at
#               -march=native) they took 242 s + 324 s of CI's 30 minutes
#   sanitize    the same at -march=native (clang's AVX-512 paths under the sanitizers); not a
#               default stage: the test stage runs the AVX-512 paths (g++), fuzz runs clang's
#               AVX-512 build under ASan + UBSan, lint compiles it
#   v3          g++, -march=x86-64-v3: the tests; not a default stage (CI's 30 min: clang covers
#               the level, and dispatch_test and cross_build_test hold g++'s v3 bits)
#   v2          clang++, -march=x86-64-v2 (SSE4.2, no FMA), at -O0 with the accuracy screens on
#               every 8th input (as the clang stage): the tests, isa_mix. clang compiles the suite in
#               about half g++'s time (this stage: 153 s against 251) and gives g++'s v2 bits in all
#               376 results of cross_build_test (at any -O); on a Zen 5 host its build took 253 s at
#               -O3 and 239 at -O1; g++ builds v2 code in the test stage
#               (tests/dispatch's level TUs) and in scripts/update-cross-build-hashes.sh
#   aarch64     clang++ --target=aarch64-linux-gnu (clang 14 with Debian's cross libstdc++ and
#               ld.lld), -march=armv8-a (NEON, fused multiply-add), -ffp-contract=off, -O1: the tests,
#               cross-compiled (cmake/toolchains/aarch64-linux-gnu-clang.cmake) and run by ctest
#               under qemu-aarch64 with NONLIN_ACCURACY_STRIDE=8 (accuracy_test on every 8th grid
#               and random input, storage16_accuracy_test on every 8th pattern, math_test's
#               every-float loops on every 8th batch, softmax_test without its 10^5-class rows:
#               tests/support/accuracy_stride.hpp); ~4 min.
#               Correctness only: timings under qemu mean nothing, and nonlin makes no speed
#               claim for ARM. cross_build_test holds its results to the x86-64-v3 build's bits
#   aarch64-gcc the same with Debian's cross g++ 12 (aarch64-linux-gnu.cmake); not a default
#               stage: g++ takes ~10 min for this build (glu_test alone 204 s; clang 32 s)
#   fuzz        clang++ libFuzzer + ASan + UBSan builds of fuzz/*_fuzz.cpp, each run with
#               seed 1 for a fixed number of inputs (~20 s) on a copy of its seed corpus (fuzz/corpus/<target>/,
#               copied to build/fuzz/corpus/ so the committed one is not modified); any crash
#               fails the stage and leaves its input in build/fuzz/artifacts/
#
# Warnings are errors on our targets in every configuration. NONLIN_TEST_STAGES picks a subset,
# e.g.  NONLIN_TEST_STAGES="test" scripts/test.sh  for the quick native run. Extra arguments go
# to every ctest run, e.g. scripts/test.sh -R sigmoid
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

jobs=$(nproc)
stages=${NONLIN_TEST_STAGES:-"lint test clang v2 aarch64 fuzz"}

deps=(--tests)
[[ " ${stages} " != *" aarch64"* ]] || deps+=(--aarch64)
bash scripts/setup-deps.sh "${deps[@]}"

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
  echo "=== test stage ${name}: built in $((SECONDS - started)) s"
  # Tests labelled `exhaustive` are too slow for every run: ctest --test-dir build/test -L exhaustive
  ctest --test-dir "build/${name}" --output-on-failure -j "$jobs" -LE "$exclude" "${ctest_args[@]}"
  echo "=== test stage ${name}: passed in $((SECONDS - started)) s"
}

# Generated tables (tools/fit_coefficients.py): one coefficient row per line, not reformatted.
lint_format_excludes='include/nonlin/math/(normal|root)_tables\.hpp$'

run_lint() {
  echo "=== test stage lint: clang-tidy, clang-format, each header alone"
  local started=$SECONDS dir=build/lint
  rm -rf "$dir" && mkdir -p "$dir"
  # clang-tidy on one TU that includes every public header (warnings are errors:
  # .clang-tidy's WarningsAsErrors; only headers under include/nonlin/ report, not xsimd or the
  # standard library), then each header alone in a TU of its own, compiled by clang
  # (-fsyntax-only: self-contained, and clean under -Wall -Wextra -Werror). The TUs live under the
  # source tree so that clang-tidy finds .clang-tidy. clang-tidy on every header's TU instead
  # took 119 s of CI's 30 minutes here; the one TU sees the same code.
  local header name headers=()
  for header in include/nonlin/*.hpp include/nonlin/detail/*.hpp include/nonlin/math/*.hpp; do
    name=${header#include/}
    headers+=("$name")
    echo "#include <${name}>" >"$dir/${name//\//_}.cpp"
  done
  printf '#include <%s>\n' "${headers[@]}" >"$dir/all_headers.cpp"
  clang-tidy --quiet "$dir/all_headers.cpp" -header-filter='.*/include/nonlin/.*' -- \
    -std=c++20 -march=native -I"$PWD/include"
  find "$dir" -name '*.hpp.cpp' -print0 | sort -z |
    xargs -0 -P "$jobs" -I{} clang++ -std=c++20 -march=native -I"$PWD/include" \
      -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Werror -fsyntax-only {}
  git ls-files -z --cached --others --exclude-standard -- \
      'include/*.hpp' 'tests/*.hpp' 'tests/*.cpp' 'bench/*.cpp' 'examples/*.cpp' \
      'fuzz/*.hpp' 'fuzz/*.cpp' 'tools/*.cpp' |
    grep -zEv "$lint_format_excludes" |
    xargs -0 clang-format --dry-run --Werror
  echo "=== test stage lint: passed in $((SECONDS - started)) s"
}

# The gate is deterministic: a fixed seed and a fixed number of runs per target (about 20 s
# each here), so a red run reproduces. NONLIN_FUZZ_SECONDS=N explores instead: N seconds per
# target from a time-based seed (what found the bugs in fuzz/README.md); not for the gate.
run_fuzz() {
  local seconds=${NONLIN_FUZZ_SECONDS:-} dir=build/fuzz
  if [[ -n $seconds ]]; then
    echo "=== test stage fuzz: clang++ libFuzzer + ASan + UBSan, exploring ${seconds} s per target"
  else
    echo "=== test stage fuzz: clang++ libFuzzer + ASan + UBSan, seed 1, fixed runs per target"
  fi
  local started=$SECONDS
  cmake -S . -B "$dir" \
    -DCMAKE_CXX_COMPILER=clang++ \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CXX_FLAGS_RELEASE="-O2" \
    -DNONLIN_ARCH_FLAGS=-march=native \
    -DNONLIN_WARNINGS_AS_ERRORS=ON \
    -DNONLIN_BUILD_FUZZERS=ON \
    -DNONLIN_BUILD_TESTS=OFF -DNONLIN_BUILD_BENCHMARKS=OFF -DNONLIN_BUILD_EXAMPLES=OFF \
    -DNONLIN_INSTALL=OFF >/dev/null
  cmake --build "$dir" -j "$jobs"
  rm -rf "$dir/corpus" "$dir/artifacts" && mkdir -p "$dir/artifacts"
  local target
  local -A runs=([elementwise_fuzz]=8000 [softmax_fuzz]=60000 [glu_fuzz]=12000)
  # One target on its own core, the other two after each other on the second (41 s beside
  # 28 + 27 s: the three one after another took 96 s of CI's 30 minutes). Each run is seeded and
  # of a fixed length, so running them side by side changes none of their inputs.
  fuzz_one() {
    local target=$1 limit status=0
    if [[ -n $seconds ]]; then
      limit=(-max_total_time="$seconds")
    else
      limit=(-seed=1 -runs="${runs[$target]}")
    fi
    mkdir -p "$dir/corpus/$target" && cp -r "fuzz/corpus/$target/." "$dir/corpus/$target/"
    # A crash (an abort from a failed check, a sanitizer report, a leak, a timeout or more than
    # 2 GB) exits non-zero; libFuzzer writes the input to $dir/artifacts/ and prints it.
    "$dir/fuzz/$target" "${limit[@]}" -rss_limit_mb=2048 -max_len=4096 \
      -timeout=10 -print_final_stats=1 -artifact_prefix="$dir/artifacts/${target}-" \
      "$dir/corpus/$target" >"$dir/${target}.log" 2>&1 || status=$?
    echo "$status" >"$dir/${target}.status"
  }
  fuzz_one elementwise_fuzz &
  local first=$!
  fuzz_one softmax_fuzz
  fuzz_one glu_fuzz
  wait "$first" || true
  for target in elementwise_fuzz softmax_fuzz glu_fuzz; do
    echo "--- ${target}"
    # The log without the progress lines: the outcome, the stats, any report.
    grep -Ev '^(#[0-9]+ +(NEW|REDUCE|pulse|RELOAD)|\s+NEW_FUNC)' "$dir/${target}.log" | tail -n 40
    local status
    status=$(cat "$dir/${target}.status" 2>/dev/null || echo missing)
    if [[ $status != 0 ]] || compgen -G "$dir/artifacts/${target}-*" >/dev/null; then
      echo "test.sh: ${target} failed (exit ${status}); reproduce with:" \
           "$dir/fuzz/$target $dir/artifacts/${target}-*" >&2
      exit 1
    fi
  done
  echo "=== test stage fuzz: passed in $((SECONDS - started)) s"
}

ctest_args=("$@")
# -O0 after run_stage's -O3 (the last -O wins): see the clang stage above.
sanitizers="-O0 -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
for stage in $stages; do
  case "$stage" in
    # The benchmark and the accuracy tools are built here to hold them to warnings as errors,
    # never run: at -O1 (NONLIN_TOOLS_COMPILE_OPTIONS) they compile in about 40% of -O3's time
    # (tools/accuracy.cpp 44 s against 118). dispatch_test's TUs take it too (each level checks
    # its dispatched calls against direct calls in the same TU; 134 CPU s against 185); -O3 stays
    # on every other test. Not -O0: g++ 12 does not compile xsimd 8.1's AVX-512BW select of 8-
    # and 16-bit lanes there (its intrinsics are macros without __OPTIMIZE__; -Og compiles
    # tools/accuracy.cpp in the time of -O1). The header self-containment test (label headers) is left to lint,
    # which compiles every header alone with clang (clang-tidy); `ctest -L headers` runs it on
    # demand (89 s here, one job).
    test) run_stage test g++ -march=x86-64-v4 "" "exhaustive|headers" \
            -DNONLIN_TOOLS_COMPILE_OPTIONS=-O1 ;;
    clang | sanitize)
      arch=-march=x86-64-v3
      [[ $stage == clang ]] || arch=-march=native
      run_stage "$stage" clang++ "$arch" "$sanitizers" "exhaustive|package|headers" \
        -DNONLIN_ACCURACY_STRIDE="${NONLIN_ACCURACY_STRIDE:-8}" -DNONLIN_BUILD_BENCHMARKS=OFF \
        -DNONLIN_TEST_MULTI_TARGET=OFF -DNONLIN_TEST_DISPATCH=OFF ;;
    # headers_self_contained (label `headers`) runs in no default stage: including each header
    # alone is a property of the headers, not of the ISA or the sanitizers, and the lint stage
    # compiles every header alone with clang.
    # The tests that build their own x86-64-v2, -v3 and -v4 TUs run in test (g++: isa_mix,
    # dispatch) and v2 (clang: isa_mix, whose -O0 TUs took 35 s under the sanitizers of the
    # clang stage and take ~5 s without): the other stages would build the same TUs again.
    v3) run_stage v3 g++ -march=x86-64-v3 "" "exhaustive|package|examples|headers" \
          -DNONLIN_BUILD_BENCHMARKS=OFF -DNONLIN_BUILD_EXAMPLES=OFF \
          -DNONLIN_TEST_MULTI_TARGET=OFF -DNONLIN_TEST_DISPATCH=OFF ;;
    v2) run_stage v2 clang++ -march=x86-64-v2 -O0 "exhaustive|package|examples|headers" \
          -DNONLIN_ACCURACY_STRIDE="${NONLIN_ACCURACY_STRIDE:-8}" -DNONLIN_BUILD_BENCHMARKS=OFF \
          -DNONLIN_BUILD_EXAMPLES=OFF -DNONLIN_TEST_DISPATCH=OFF ;;
    # Cross-compiled, every test emulated by qemu-user (CMAKE_CROSSCOMPILING_EMULATOR), so
    # accuracy_test screens every 8th point of its grids and random inputs (the neighbours of the
    # known worst places stay dense; NONLIN_ACCURACY_STRIDE=1 for all of them). The examples
    # only time themselves. -ffp-contract=off: under g++'s default "fast", aarch64 fuses a
    # product followed by a subtraction in scalars (fnmsub) but not in NEON lanes, which have no
    # a * b - c; there it fused the other product (fmls) of softmax's z/T - m/T, and the
    # cross-entropy loss missed log_softmax's lane by an ulp on 487 of 2000 rows
    # (Softmax.LossIsLogSoftmaxWhereTheDifferenceOverflows). g++ on x86 fuses both alike.
    aarch64 | aarch64-gcc)
      toolchain=aarch64-linux-gnu-clang cross=clang++
      [[ $stage == aarch64 ]] || toolchain=aarch64-linux-gnu cross=aarch64-linux-gnu-g++
      run_stage "$stage" "$cross" -march=armv8-a "-ffp-contract=off -O1" \
        "exhaustive|package|examples|headers" \
        -DCMAKE_TOOLCHAIN_FILE="cmake/toolchains/${toolchain}.cmake" \
        -DNONLIN_ACCURACY_STRIDE="${NONLIN_ACCURACY_STRIDE:-8}" \
        -DNONLIN_BUILD_BENCHMARKS=OFF -DNONLIN_BUILD_EXAMPLES=OFF ;;
    lint) run_lint ;;
    fuzz) run_fuzz ;;
    *) echo "test.sh: unknown stage '$stage' (lint test clang v3 v2 sanitize aarch64 aarch64-gcc fuzz)" >&2
       exit 2 ;;
  esac
done
echo "test.sh: all stages passed (${stages})"
