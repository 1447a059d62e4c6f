#!/usr/bin/env bash
# Instructions per batch in the hot loop of every float span kernel: compiles
# tools/opcount/kernels.cpp with the benchmarks' flags and reads its disassembly (no timing runs;
# needs a compiler, objdump and xsimd). Arguments go to tools/opcount.py, e.g.
#   scripts/opcount.sh --compiler clang++ --march x86-64-v3 --json build/opcount.json
#   scripts/opcount.sh --bench build/bench/bench.json     # adds el/ns from scripts/bench.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
exec python3 tools/opcount.py "$@"
