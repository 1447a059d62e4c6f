// SPDX-License-Identifier: MIT
#pragma once
// The target a translation unit is compiled for, as a name, so that TUs built for different
// targets share no symbol whose body differs (the linker keeps one copy of an inline function
// for the whole program: a TU built for x86-64-v2 would run another's AVX-512 code, or the
// other's scalar math next to its own kernels).
//
//   NONLIN_ISA      an identifier made of the instruction-set features that change nonlin's code
//                   or the compiler's (isa_x86_sse3_ssse3_sse41_sse42_avx_avx2_fma_f16c_...,
//                   isa_arm64_..., isa_generic). Every namespace that holds functions (math,
//                   detail, the kernels) has an inline namespace of this name, so nonlin::math::exp
//                   is spelled the same everywhere and mangled per target.
//    the same name as an ABI tag, on the member functions of the types that are
//                   the same on every target (the functors, bfloat16 and float16): a functor
//                   passed between TUs of different targets stays one type.
//
// A consumer that needs its own copies under another name (two builds for one target) may
// define NONLIN_ISA before including nonlin.

#if defined(__x86_64__) || defined(_M_X64) || defined(__i386__)
#define NONLIN_ISA_BASE_ isa_x86
#elif defined(__aarch64__)
#define NONLIN_ISA_BASE_ isa_arm64
#else
#define NONLIN_ISA_BASE_ isa_generic
#endif

#if defined(__SSE3__)
#define NONLIN_ISA_SSE3_ _sse3
#else
#define NONLIN_ISA_SSE3_
#endif
#if defined(__SSSE3__)
#define NONLIN_ISA_SSSE3_ _ssse3
#else
#define NONLIN_ISA_SSSE3_
#endif
#if defined(__SSE4_1__)
#define NONLIN_ISA_SSE41_ _sse41
#else
#define NONLIN_ISA_SSE41_
#endif
#if defined(__SSE4_2__)
#define NONLIN_ISA_SSE42_ _sse42
#else
#define NONLIN_ISA_SSE42_
#endif
#if defined(__AVX__)
#define NONLIN_ISA_AVX_ _avx
#else
#define NONLIN_ISA_AVX_
#endif
#if defined(__AVX2__)
#define NONLIN_ISA_AVX2_ _avx2
#else
#define NONLIN_ISA_AVX2_
#endif
#if defined(__FMA__) || (defined(__aarch64__) && defined(__ARM_FEATURE_FMA))
#define NONLIN_ISA_FMA_ _fma
#else
#define NONLIN_ISA_FMA_
#endif
#if defined(__F16C__)
#define NONLIN_ISA_F16C_ _f16c
#else
#define NONLIN_ISA_F16C_
#endif
#if defined(__BMI2__)
#define NONLIN_ISA_BMI2_ _bmi2
#else
#define NONLIN_ISA_BMI2_
#endif
#if defined(__AVX512F__)
#define NONLIN_ISA_AVX512F_ _avx512f
#else
#define NONLIN_ISA_AVX512F_
#endif
#if defined(__AVX512BW__)
#define NONLIN_ISA_AVX512BW_ _bw
#else
#define NONLIN_ISA_AVX512BW_
#endif
#if defined(__AVX512DQ__)
#define NONLIN_ISA_AVX512DQ_ _dq
#else
#define NONLIN_ISA_AVX512DQ_
#endif
#if defined(__AVX512VL__)
#define NONLIN_ISA_AVX512VL_ _vl
#else
#define NONLIN_ISA_AVX512VL_
#endif
#if defined(__AVX512BF16__) || defined(__ARM_FEATURE_BF16)
#define NONLIN_ISA_BF16_ _bf16
#else
#define NONLIN_ISA_BF16_
#endif
#if defined(__AVX512FP16__) || defined(__ARM_FEATURE_FP16_VECTOR_ARITHMETIC)
#define NONLIN_ISA_FP16_ _fp16
#else
#define NONLIN_ISA_FP16_
#endif
#if defined(__ARM_FEATURE_SVE)
#define NONLIN_ISA_SVE_ _sve
#else
#define NONLIN_ISA_SVE_
#endif

#define NONLIN_ISA_JOIN2_(a, b) a##b
#define NONLIN_ISA_JOIN_(a, b) NONLIN_ISA_JOIN2_(a, b)
#define NONLIN_ISA_STRING2_(x) #x
#define NONLIN_ISA_STRING_(x) NONLIN_ISA_STRING2_(x)

#ifndef NONLIN_ISA
// clang-format off
#define NONLIN_ISA                                                                          \
  NONLIN_ISA_JOIN_(NONLIN_ISA_JOIN_(NONLIN_ISA_JOIN_(NONLIN_ISA_JOIN_(NONLIN_ISA_JOIN_(     \
  NONLIN_ISA_JOIN_(NONLIN_ISA_JOIN_(NONLIN_ISA_JOIN_(NONLIN_ISA_JOIN_(NONLIN_ISA_JOIN_(     \
  NONLIN_ISA_JOIN_(NONLIN_ISA_JOIN_(NONLIN_ISA_JOIN_(NONLIN_ISA_JOIN_(NONLIN_ISA_JOIN_(     \
  NONLIN_ISA_JOIN_(NONLIN_ISA_BASE_, NONLIN_ISA_SSE3_), NONLIN_ISA_SSSE3_),                 \
  NONLIN_ISA_SSE41_), NONLIN_ISA_SSE42_), NONLIN_ISA_AVX_), NONLIN_ISA_AVX2_),              \
  NONLIN_ISA_FMA_), NONLIN_ISA_F16C_), NONLIN_ISA_BMI2_), NONLIN_ISA_AVX512F_),             \
  NONLIN_ISA_AVX512BW_), NONLIN_ISA_AVX512DQ_), NONLIN_ISA_AVX512VL_), NONLIN_ISA_BF16_),  \
  NONLIN_ISA_FP16_), NONLIN_ISA_SVE_)
// clang-format on
#endif

#if defined(__GNUC__) || defined(__clang__)
#define NONLIN_ISA_TAG [[gnu::abi_tag(NONLIN_ISA_STRING_(NONLIN_ISA))]]
#else
#define NONLIN_ISA_TAG
#endif
