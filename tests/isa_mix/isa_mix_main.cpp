// SPDX-License-Identifier: MIT
// isa_mix_test's main, built for the baseline: runs each copy of isa_mix_tu.cpp whose level the
// CPU supports and fails if any reports a mismatch.
#include <cstdio>

extern "C" long isa_mix_v2();
extern "C" long isa_mix_v3();
extern "C" long isa_mix_v4();

int main() {
  __builtin_cpu_init();
  long bad = isa_mix_v2();
  // x86-64-v3 also has F16C, which clang 14's __builtin_cpu_supports does not know (every CPU
  // with AVX2 has it).
  bool const v3 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
                  __builtin_cpu_supports("bmi2");
  bool const v4 = v3 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                  __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
  if (v3) {
    bad += isa_mix_v3();
  } else {
    std::printf("isa_mix_v3: skipped (the CPU is not x86-64-v3)\n");
  }
  if (v4) {
    bad += isa_mix_v4();
  } else {
    std::printf("isa_mix_v4: skipped (the CPU is not x86-64-v4)\n");
  }
  return bad == 0 ? 0 : 1;
}
