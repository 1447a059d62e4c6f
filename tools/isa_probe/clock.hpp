// SPDX-License-Identifier: MIT
// The probes' clock: wall time, and cycles per second from a dependent integer-add chain (the VM
// has no performance counters). Shared by isa_probe.cpp and chain_probe.cpp.
#pragma once

#include <chrono>

namespace nonlin_probe {

inline double seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Cycles per second from 4 dependent integer adds per loop iteration, of a register: an add of
// an immediate is no clock on Intel's Golden Cove cores (an Emerald Rapids Xeon, 2026-12-07),
// whose renamer folds chains of them and ran 3.8 of them a cycle (FMA's latency read 15 cycles).
inline double clock_hz() {
  long const n = 400000000;
  long x = 0;
  long const one = 1;
  double const t0 = seconds();
  asm volatile(
      "mov %1, %%rcx\n1:\nadd %2, %0\nadd %2, %0\nadd %2, %0\nadd %2, %0\nsub $4, %%rcx\njnz 1b\n"
      : "+r"(x)
      : "r"(n), "r"(one)
      : "rcx");
  return static_cast<double>(n) / (seconds() - t0);
}

}  // namespace nonlin_probe
