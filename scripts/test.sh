#!/usr/bin/env bash
# The test command: installs what is missing, then configures, builds and runs every test.
# Extra arguments go to ctest, e.g. scripts/test.sh -R sigmoid
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/setup-deps.sh --tests

jobs=$(nproc)
# Release flags without -DNDEBUG: optimized code as users build it, with assert() still live.
# The compiler is CMake's default (c++) unless CXX is set on the first configure of build/test.
cmake -S . -B build/test \
  -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_FLAGS_RELEASE=-O3 \
  -DNONLIN_WARNINGS_AS_ERRORS=ON
cmake --build build/test -j "$jobs"
# Tests labelled `exhaustive` (tests/*_exhaustive_test.cpp) are too slow for every run:
# run them with  ctest --test-dir build/test -L exhaustive
exec ctest --test-dir build/test --output-on-failure -j "$jobs" -LE exhaustive "$@"
