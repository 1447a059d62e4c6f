// SPDX-License-Identifier: MIT
// Throughput and latency of the zmm instructions nonlin's kernels are made of, on the machine it
// runs on (the VM has no performance counters): each instruction repeated in 12 independent
// chains (throughput) and in one dependent chain (latency), timed against a dependent chain of
// integer adds (1 cycle each) run in the same process for the clock. Needs AVX-512F.
//   g++ -O2 -mavx512f tools/isa_probe/isa_probe.cpp -o build/isa_probe && build/isa_probe
//   (-march=native instead adds the AVX-512 BF16 conversions where the CPU has them)
// The figures it printed, and what they explain, are in docs/design.md ("The machine").

#include <cstdio>

#include "clock.hpp"

namespace {

using nonlin_probe::clock_hz;
using nonlin_probe::seconds;

#define NONLIN_STR(x) #x
#define NONLIN_X12(I) I(0) I(1) I(2) I(3) I(4) I(5) I(6) I(7) I(8) I(9) I(10) I(11)
#define NONLIN_X8(S) S S S S S S S S
#define NONLIN_CLOBBERS                                                                        \
  "rcx", "k1", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", \
      "xmm10", "xmm11", "xmm14", "xmm15"
#define NONLIN_SETUP \
  "vxorps %%xmm14, %%xmm14, %%xmm14\n vbroadcastss %%xmm14, %%zmm15\n vmovaps %%zmm15, %%zmm0\n"

// A timed loop of n iterations of `body` (string literal asm).
#define NONLIN_PROBE(name, body)                                                   \
  double name(long n) {                                                            \
    double const t0 = seconds();                                                   \
    asm volatile(NONLIN_SETUP "mov %0, %%rcx\n1:\n" body "sub $1, %%rcx\njnz 1b\n" \
                 :                                                                 \
                 : "r"(n)                                                          \
                 : NONLIN_CLOBBERS);                                               \
    return seconds() - t0;                                                         \
  }
// Throughput: 12 independent copies per iteration (zmm0..zmm11 written, zmm14/15 read).
#define NONLIN_THROUGHPUT(name, make) NONLIN_PROBE(name, NONLIN_X12(make))
// Latency: 8 copies per iteration, each reading the previous one's result (zmm0).
#define NONLIN_LATENCY(name, text) NONLIN_PROBE(name, NONLIN_X8(text))

#define FMA(i) "vfmadd231ps %%zmm15, %%zmm14, %%zmm" NONLIN_STR(i) "\n"
#define ADD(i) "vaddps %%zmm15, %%zmm14, %%zmm" NONLIN_STR(i) "\n"
#define MUL(i) "vmulps %%zmm15, %%zmm14, %%zmm" NONLIN_STR(i) "\n"
#define MAX(i) "vmaxps %%zmm15, %%zmm14, %%zmm" NONLIN_STR(i) "\n"
#define CMP(i) "vcmpltps %%zmm15, %%zmm" NONLIN_STR(i) ", %%k1\n"
#define RCP(i) "vrcp14ps %%zmm15, %%zmm" NONLIN_STR(i) "\n"
#define SCALEF(i) "vscalefps %%zmm15, %%zmm14, %%zmm" NONLIN_STR(i) "\n"
#define TERNLOG(i) "vpternlogd $0x78, %%zmm15, %%zmm14, %%zmm" NONLIN_STR(i) "\n"
#define BLEND(i) "vblendmps %%zmm15, %%zmm14, %%zmm" NONLIN_STR(i) "%{%%k1%}\n"
#define PERM(i) "vpermps %%zmm15, %%zmm14, %%zmm" NONLIN_STR(i) "\n"
#define DIV(i) "vdivps %%zmm15, %%zmm14, %%zmm" NONLIN_STR(i) "\n"
#define FPCLASS(i) "vfpclassps $0x18, %%zmm" NONLIN_STR(i) ", %%k1\n"
#define FMA_ADD(i) FMA(i) "vaddps %%zmm15, %%zmm14, %%zmm" NONLIN_STR(i) "\n"
// The 16-bit storage path (math/convert16.hpp, round16.hpp): widening, the midpoint test, the
// narrowing (vcvtne*: AVX-512 BF16, so the probe needs -mavx512bf16 or -march=native on a CPU
// with it: it is left out otherwise).
#define ZEXT(i) "vpmovzxwd %%ymm15, %%zmm" NONLIN_STR(i) "\n"
#define SLLD(i) "vpslld $16, %%zmm15, %%zmm" NONLIN_STR(i) "\n"
#define PADDD(i) "vpaddd %%zmm15, %%zmm14, %%zmm" NONLIN_STR(i) "\n"
#define TESTNM(i) "vptestnmd %%zmm15, %%zmm" NONLIN_STR(i) ", %%k1\n"
#define PERMT2W(i) "vpermt2w %%zmm15, %%zmm14, %%zmm" NONLIN_STR(i) "\n"
#define UNPCKLWD(i) "vpunpcklwd %%zmm15, %%zmm14, %%zmm" NONLIN_STR(i) "\n"
#define PACKUSDW(i) "vpackusdw %%zmm15, %%zmm14, %%zmm" NONLIN_STR(i) "\n"
#define PS2PH(i) "vcvtps2ph $4, %%zmm15, %%ymm" NONLIN_STR(i) "\n"
#define PH2PS(i) "vcvtph2ps %%ymm15, %%zmm" NONLIN_STR(i) "\n"
// The float sums held in double (math/sum.hpp's wide_sum): widening half a batch, the upper
// half's extraction, a double fma.
#define PS2PD(i) "vcvtps2pd %%ymm15, %%zmm" NONLIN_STR(i) "\n"
#define EXTRACT64X4(i) "vextractf64x4 $1, %%zmm15, %%ymm" NONLIN_STR(i) "\n"
#define FMAPD(i) "vfmadd231pd %%zmm15, %%zmm14, %%zmm" NONLIN_STR(i) "\n"
#define NE2BF16(i) "vcvtneps2bf16 %%zmm15, %%ymm" NONLIN_STR(i) "\n"
#define NE2BF16_PAIR(i) "vcvtne2ps2bf16 %%zmm15, %%zmm14, %%zmm" NONLIN_STR(i) "\n"

NONLIN_THROUGHPUT(t_fma, FMA)
NONLIN_THROUGHPUT(t_add, ADD)
NONLIN_THROUGHPUT(t_mul, MUL)
NONLIN_THROUGHPUT(t_max, MAX)
NONLIN_THROUGHPUT(t_cmp, CMP)
NONLIN_THROUGHPUT(t_rcp, RCP)
NONLIN_THROUGHPUT(t_scalef, SCALEF)
NONLIN_THROUGHPUT(t_ternlog, TERNLOG)
NONLIN_THROUGHPUT(t_blend, BLEND)
NONLIN_THROUGHPUT(t_perm, PERM)
NONLIN_THROUGHPUT(t_div, DIV)
NONLIN_THROUGHPUT(t_fpclass, FPCLASS)
NONLIN_THROUGHPUT(t_fma_add, FMA_ADD)
NONLIN_THROUGHPUT(t_ps2pd, PS2PD)
NONLIN_THROUGHPUT(t_extract64x4, EXTRACT64X4)
NONLIN_THROUGHPUT(t_fmapd, FMAPD)
NONLIN_THROUGHPUT(t_zext, ZEXT)
NONLIN_THROUGHPUT(t_slld, SLLD)
NONLIN_THROUGHPUT(t_paddd, PADDD)
NONLIN_THROUGHPUT(t_testnm, TESTNM)
NONLIN_THROUGHPUT(t_permt2w, PERMT2W)
NONLIN_THROUGHPUT(t_unpcklwd, UNPCKLWD)
NONLIN_THROUGHPUT(t_packusdw, PACKUSDW)
NONLIN_THROUGHPUT(t_ps2ph, PS2PH)
NONLIN_THROUGHPUT(t_ph2ps, PH2PS)
#if defined(__AVX512BF16__)
NONLIN_THROUGHPUT(t_ne2bf16, NE2BF16)
NONLIN_THROUGHPUT(t_ne2bf16_pair, NE2BF16_PAIR)
#endif

NONLIN_LATENCY(l_fma, "vfmadd231ps %%zmm15, %%zmm14, %%zmm0\n")
NONLIN_LATENCY(l_add, "vaddps %%zmm15, %%zmm0, %%zmm0\n")
NONLIN_LATENCY(l_mul, "vmulps %%zmm15, %%zmm0, %%zmm0\n")
NONLIN_LATENCY(l_max, "vmaxps %%zmm15, %%zmm0, %%zmm0\n")
NONLIN_LATENCY(l_rcp, "vrcp14ps %%zmm0, %%zmm0\n")
NONLIN_LATENCY(l_scalef, "vscalefps %%zmm15, %%zmm0, %%zmm0\n")
NONLIN_LATENCY(l_ternlog, "vpternlogd $0x78, %%zmm15, %%zmm14, %%zmm0\n")
NONLIN_LATENCY(l_blend, "vblendmps %%zmm15, %%zmm0, %%zmm0%{%%k1%}\n")
NONLIN_LATENCY(l_cmp_blend,
               "vcmpltps %%zmm15, %%zmm0, %%k1\nvblendmps %%zmm15, %%zmm0, %%zmm0%{%%k1%}\n")
NONLIN_LATENCY(l_perm, "vpermps %%zmm0, %%zmm15, %%zmm0\n")
NONLIN_LATENCY(l_div, "vdivps %%zmm15, %%zmm0, %%zmm0\n")

struct probe {
  char const* name;
  double (*run)(long);
  int per_iteration;
};

// Cycles per instruction: the fastest of five runs of n iterations.
double cycles_each(probe const& p, long n, double hz) {
  double best = 1e300;
  for (int k = 0; k < 5; ++k) {
    double const t = p.run(n);
    best = t < best ? t : best;
  }
  return best * hz / (static_cast<double>(n) * p.per_iteration);
}

}  // namespace

int main() {
  double const hz = clock_hz();
  long const n = 20000000;
  std::printf("clock %.2f GHz (dependent integer adds)\n\n", hz / 1e9);
  probe const throughput[] = {
    {"vfmadd231ps", t_fma, 12},
    {"vaddps", t_add, 12},
    {"vmulps", t_mul, 12},
    {"vmaxps", t_max, 12},
    {"vcmpltps -> k", t_cmp, 12},
    {"vrcp14ps", t_rcp, 12},
    {"vscalefps", t_scalef, 12},
    {"vpternlogd", t_ternlog, 12},
    {"vblendmps", t_blend, 12},
    {"vpermps", t_perm, 12},
    {"vdivps", t_div, 12},
    {"vfpclassps", t_fpclass, 12},
    {"fma + add mixed", t_fma_add, 24},
    {"vcvtps2pd (ymm to zmm)", t_ps2pd, 12},
    {"vextractf64x4", t_extract64x4, 12},
    {"vfmadd231pd", t_fmapd, 12},
    {"vpmovzxwd (ymm to zmm)", t_zext, 12},
    {"vpslld", t_slld, 12},
    {"vpaddd", t_paddd, 12},
    {"vptestnmd -> k", t_testnm, 12},
    {"vpermt2w", t_permt2w, 12},
    {"vpunpcklwd", t_unpcklwd, 12},
    {"vpackusdw", t_packusdw, 12},
    {"vcvtps2ph", t_ps2ph, 12},
    {"vcvtph2ps", t_ph2ps, 12},
#if defined(__AVX512BF16__)
    {"vcvtneps2bf16", t_ne2bf16, 12},
    {"vcvtne2ps2bf16 (two batches)", t_ne2bf16_pair, 12},
#endif
  };
  std::printf("| zmm instruction | per cycle | cycles each |\n|---|--:|--:|\n");
  for (auto const& p : throughput) {
    double const cycles = cycles_each(p, n, hz);
    std::printf("| %s | %.2f | %.2f |\n", p.name, 1.0 / cycles, cycles);
  }
  probe const latency[] = {{"vfmadd231ps", l_fma, 8},
                           {"vaddps", l_add, 8},
                           {"vmulps", l_mul, 8},
                           {"vmaxps", l_max, 8},
                           {"vrcp14ps", l_rcp, 8},
                           {"vscalefps", l_scalef, 8},
                           {"vpternlogd", l_ternlog, 8},
                           {"vblendmps", l_blend, 8},
                           {"vcmpltps -> k + vblendmps", l_cmp_blend, 8},
                           {"vpermps", l_perm, 8},
                           {"vdivps", l_div, 8}};
  std::printf("\n| zmm instruction | latency, cycles |\n|---|--:|\n");
  for (auto const& p : latency) {
    std::printf("| %s | %.2f |\n", p.name, cycles_each(p, n, hz));
  }
  return 0;
}
