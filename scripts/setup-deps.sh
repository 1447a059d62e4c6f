#!/usr/bin/env bash
# Installs the Debian packages nonlin needs, and only those that are missing.
#   scripts/setup-deps.sh --tests   build and run the tests (the default)
#   scripts/setup-deps.sh --bench   the above plus the benchmark peers and plotting
#   scripts/setup-deps.sh --aarch64 the cross toolchain, lld, qemu-user and the arm64 libraries
#                                   of the test stages aarch64 and aarch64-gcc
set -euo pipefail

# clang-tidy, clang-format: stage lint; libclang-rt-14-dev: libFuzzer and the sanitizer runtimes
# of clang 14 (Debian 12), stages sanitize and fuzz.
test_packages=(cmake g++ clang clang-tidy clang-format libclang-rt-14-dev libxsimd-dev googletest
               libgtest-dev libbenchmark-dev libmpfr-dev libgmp-dev python3)
# Stages aarch64 (clang) and aarch64-gcc: Debian's cross toolchain (its libstdc++, crt files and
# binutils serve clang --target=aarch64-linux-gnu too), ld.lld, qemu-user, and the arm64 builds
# of the libraries the tests link (multiarch: they install beside the amd64 ones, under
# /usr/lib/aarch64-linux-gnu).
aarch64_packages=(g++-aarch64-linux-gnu lld qemu-user libxsimd-dev:arm64 libgtest-dev:arm64
                  libmpfr-dev:arm64 libgmp-dev:arm64)
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
    --aarch64) wanted+=("${aarch64_packages[@]}") ;;
    -h | --help) sed -n '2,6s/^# \{0,1\}//p' "$0"; exit 0 ;;
    *) echo "setup-deps.sh: unknown argument '$arg' (use --tests, --bench or --aarch64)" >&2; exit 2 ;;
  esac
done

# A name without :arch means the native architecture (or an Architecture: all package). One
# line per installed architecture: with arm64 added, libgtest-dev is there twice.
native=$(dpkg --print-architecture)
missing=()
for package in $(printf '%s\n' "${wanted[@]}" | sort -u); do
  arch=$native
  [[ $package != *:* ]] || arch=${package##*:}
  status=$(dpkg-query -W -f='${Status} ${Architecture}\n' "${package%%:*}" 2>/dev/null || true)
  grep -qxE "install ok installed (${arch}|all)" <<<"$status" || missing+=("$package")
done

if [[ ${#missing[@]} -eq 0 ]]; then
  echo "setup-deps.sh: all required packages are installed"
  exit 0
fi

sudo=()
# Packages of a foreign architecture (name:arm64) need dpkg to know it before apt-get update.
foreign=()
for package in "${missing[@]}"; do
  [[ $package == *:* ]] || continue
  arch=${package##*:}
  if [[ $arch != "$native" ]] &&
     ! dpkg --print-foreign-architectures | grep -qx "$arch"; then
    foreign+=("$arch")
  fi
done
if [[ $(id -u) -ne 0 ]]; then
  if command -v sudo >/dev/null; then
    sudo=(sudo)
  else
    echo "setup-deps.sh: not root and no sudo; install these packages: ${missing[*]}" >&2
    exit 1
  fi
fi

echo "setup-deps.sh: installing ${missing[*]}"
for arch in $(printf '%s\n' "${foreign[@]}" | sort -u); do
  "${sudo[@]}" dpkg --add-architecture "$arch"
done
"${sudo[@]}" apt-get update
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
  apt-get install -y --no-install-recommends "${missing[@]}"
