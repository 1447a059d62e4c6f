#!/usr/bin/env bash
# Installs the Debian packages nonlin needs, and only those that are missing.
#   scripts/setup-deps.sh --tests   build and run the tests (the default)
#   scripts/setup-deps.sh --bench   the above plus the benchmark peers and plotting
set -euo pipefail

# clang-tidy, clang-format: stage lint; libclang-rt-14-dev: libFuzzer and the sanitizer runtimes
# of clang 14 (Debian 12), stages sanitize and fuzz.
test_packages=(cmake g++ clang clang-tidy clang-format libclang-rt-14-dev libxsimd-dev googletest
               libgtest-dev libbenchmark-dev libmpfr-dev libgmp-dev python3)
# ocl-icd-opencl-dev: Debian's dnnl CMake config requires OpenCL, but libdnnl-dev only
# recommends it, and we install without recommends.
bench_packages=("${test_packages[@]}" libeigen3-dev libsleef-dev libdnnl-dev ocl-icd-opencl-dev
                gnuplot-nox)

wanted=()
[[ $# -gt 0 ]] || set -- --tests
for arg in "$@"; do
  case "$arg" in
    --tests) wanted+=("${test_packages[@]}") ;;
    --bench) wanted+=("${bench_packages[@]}") ;;
    -h | --help) sed -n '2,4s/^# \{0,1\}//p' "$0"; exit 0 ;;
    *) echo "setup-deps.sh: unknown argument '$arg' (use --tests or --bench)" >&2; exit 2 ;;
  esac
done

missing=()
for package in $(printf '%s\n' "${wanted[@]}" | sort -u); do
  status=$(dpkg-query -W -f='${Status}' "$package" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$package")
done

if [[ ${#missing[@]} -eq 0 ]]; then
  echo "setup-deps.sh: all required packages are installed"
  exit 0
fi

sudo=()
if [[ $(id -u) -ne 0 ]]; then
  if command -v sudo >/dev/null; then
    sudo=(sudo)
  else
    echo "setup-deps.sh: not root and no sudo; install these packages: ${missing[*]}" >&2
    exit 1
  fi
fi

echo "setup-deps.sh: installing ${missing[*]}"
"${sudo[@]}" apt-get update
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
  apt-get install -y --no-install-recommends "${missing[@]}"
