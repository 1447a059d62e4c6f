// SPDX-License-Identifier: MIT
// The probes' clock: wall time, and cycles per second from a dependent integer-add chain (the VM
// has no performance counters). Shared by isa_probe.cpp and chain_probe.cpp.
#pragma once

#include <chrono>

namespace nonlin_probe {

inline double seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Cycles per second from 4 dependent integer adds per loop iteration.
inline double clock_hz() {
  long const n = 400000000;
  long x = 0;
  double const t0 = seconds();
  asm volatile(
      "mov %1, %%rcx\n1:\nadd $1, %0\nadd $1, %0\nadd $1, %0\nadd $1, %0\nsub $4, %%rcx\njnz 1b\n"
      : "+r"(x)
      : "r"(n)
      : "rcx");
  return static_cast<double>(n) / (seconds() - t0);
}

}  // namespace nonlin_probe
