# Cross-compiling for aarch64 Linux (NEON) with Debian's cross toolchain, g++-aarch64-linux-gnu;
# the arm64 builds of GoogleTest, MPFR, GMP and xsimd's CMake config come from Debian multiarch
# under /usr/lib/aarch64-linux-gnu (scripts/setup-deps.sh installs them all). ctest runs each test
# executable under qemu-user. Used by scripts/test.sh's stage aarch64:
#   cmake -S . -B build/aarch64 -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/aarch64-linux-gnu.cmake
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
# find_package and find_library search /usr/lib/aarch64-linux-gnu (and not the host's
# /usr/lib/x86_64-linux-gnu): the arm64 GTestConfig, xsimdConfig, libmpfr and libgmp.
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
# Without -L /usr/aarch64-linux-gnu: with it qemu takes the loader from the cross libc
# (libc6-arm64-cross, 2.36-8cross1) while the loader still finds libc.so.6 in the multiarch
# /lib/aarch64-linux-gnu (libc6:arm64, a dependency of libmpfr6:arm64: 2.36-9+deb12u14), and that
# mismatched pair hangs in the first pthread_create (parallel_test, storage16_accuracy_test).
# Without a prefix the loader and libc both come from libc6:arm64.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64)
