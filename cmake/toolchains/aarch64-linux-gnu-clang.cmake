# Cross-compiling for aarch64 Linux (NEON) with clang 14 (--target=aarch64-linux-gnu), the
# headers and libraries of Debian's cross toolchain (g++-aarch64-linux-gnu: libstdc++, crt files,
# binutils) and ld.lld. Otherwise as aarch64-linux-gnu.cmake (arm64 multiarch libraries, tests run
# under qemu-user). scripts/test.sh's stage aarch64 uses this one: the test suite builds about six
# times faster than with the cross g++ 12 (glu_test: 32 s against 204 s here), which keeps the
# stage within CI's budget; stage aarch64-gcc builds with the cross g++.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_CXX_COMPILER clang++)
set(CMAKE_CXX_COMPILER_TARGET aarch64-linux-gnu)
set(CMAKE_EXE_LINKER_FLAGS_INIT -fuse-ld=lld)
set(CMAKE_SHARED_LINKER_FLAGS_INIT -fuse-ld=lld)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
# No -L prefix for qemu: see aarch64-linux-gnu.cmake.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64)
