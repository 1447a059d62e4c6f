// SPDX-License-Identifier: MIT
#pragma once
// The kernels of one dispatch level (nonlin/dispatch.hpp), for a translation unit compiled for
// that level: -march=x86-64-vN -DNONLIN_DISPATCH_LEVEL=N, N = 2, 3, 4 (CMake's
// nonlin_add_dispatch does both, once per level). The TU lists what the program dispatches:
//
//   #include <nonlin/dispatch_level.hpp>
//   NONLIN_DISPATCH_ELEMENTWISE(nonlin::silu, float)       // forward, backward (and from the
//   NONLIN_DISPATCH_ELEMENTWISE(nonlin::sigmoid, nonlin::bfloat16)  // output where f has it)
//   NONLIN_DISPATCH_SOFTMAX(nonlin::softmax, float)        // forward, backward_from_output
//   NONLIN_DISPATCH_GATED(nonlin::swiglu, nonlin::bfloat16)  // gated_forward, ..._fused
//
// The target is checked against the level: a TU for v2 that the compiler lets use AVX would run
// AVX code on a CPU without it.

#include <span>

#include "dispatch.hpp"
#include "nonlin.hpp"

#if !defined(NONLIN_DISPATCH_LEVEL)
// Included without a level (the headers' self-containment check, clang-tidy): using the macro
// below fails to compile.
#define NONLIN_DISPATCH_THIS_LEVEL ::nonlin::dispatch::level::none
#elif NONLIN_DISPATCH_LEVEL == 4
#if !(defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512DQ__) && \
      defined(__AVX512VL__))
#error "NONLIN_DISPATCH_LEVEL=4 needs -march=x86-64-v4 (AVX-512 F, BW, DQ, VL)"
#endif
#define NONLIN_DISPATCH_THIS_LEVEL ::nonlin::dispatch::level::v4
#elif NONLIN_DISPATCH_LEVEL == 3
#if !(defined(__AVX2__) && defined(__FMA__)) || defined(__AVX512F__)
#error "NONLIN_DISPATCH_LEVEL=3 needs -march=x86-64-v3 (AVX2 and FMA, no AVX-512)"
#endif
#define NONLIN_DISPATCH_THIS_LEVEL ::nonlin::dispatch::level::v3
#elif NONLIN_DISPATCH_LEVEL == 2
#if !defined(__SSE4_2__) || defined(__AVX__)
#error "NONLIN_DISPATCH_LEVEL=2 needs -march=x86-64-v2 (SSE4.2, no AVX)"
#endif
#define NONLIN_DISPATCH_THIS_LEVEL ::nonlin::dispatch::level::v2
#else
#error "NONLIN_DISPATCH_LEVEL must be 2, 3 or 4"
#endif

namespace nonlin::dispatch {

template <level L, class F, class T>
void entry<L, F, T>::forward(F const& f, std::span<T const> x, std::span<T> y) {
  static_assert(L == NONLIN_DISPATCH_THIS_LEVEL, "a level's kernels come from its own TU");
  nonlin::forward(f, x, y);
}

template <level L, class F, class T>
void entry<L, F, T>::backward(F const& f, std::span<T const> x, std::span<T const> dy,
                              std::span<T> dx) {
  static_assert(L == NONLIN_DISPATCH_THIS_LEVEL, "a level's kernels come from its own TU");
  nonlin::backward(f, x, dy, dx);
}

template <level L, class F, class T, bool has_output_derivative>
void output_entry<L, F, T, has_output_derivative>::backward_from_output(F const& f,
                                                                        std::span<T const> y,
                                                                        std::span<T const> dy,
                                                                        std::span<T> dx) {
  static_assert(L == NONLIN_DISPATCH_THIS_LEVEL, "a level's kernels come from its own TU");
  nonlin::backward_from_output(f, y, dy, dx);
}

template <level L, class F, class T>
void normalization_entry<L, F, T>::forward(F const& f, std::span<T const> x, std::span<T> y,
                                           axis_layout shape) {
  static_assert(L == NONLIN_DISPATCH_THIS_LEVEL, "a level's kernels come from its own TU");
  nonlin::forward(f, x, y, shape);
}

template <level L, class F, class T>
void normalization_entry<L, F, T>::backward_from_output(F const& f, std::span<T const> y,
                                                        std::span<T const> dy, std::span<T> dx,
                                                        axis_layout shape) {
  static_assert(L == NONLIN_DISPATCH_THIS_LEVEL, "a level's kernels come from its own TU");
  nonlin::backward_from_output(f, y, dy, dx, shape);
}

template <level L, class F, class T>
void gated_entry<L, F, T>::forward(F const& f, std::span<T const> value, std::span<T const> gate,
                                   std::span<T> out) {
  static_assert(L == NONLIN_DISPATCH_THIS_LEVEL, "a level's kernels come from its own TU");
  nonlin::gated_forward(f, value, gate, out);
}

template <level L, class F, class T>
void gated_entry<L, F, T>::backward(F const& f, std::span<T const> value, std::span<T const> gate,
                                    std::span<T const> dy, std::span<T> d_value,
                                    std::span<T> d_gate) {
  static_assert(L == NONLIN_DISPATCH_THIS_LEVEL, "a level's kernels come from its own TU");
  nonlin::gated_backward(f, value, gate, dy, d_value, d_gate);
}

template <level L, class F, class T>
void gated_entry<L, F, T>::forward_fused(F const& f, std::span<T const> x, std::span<T> out,
                                         std::size_t rows, glu_split split) {
  static_assert(L == NONLIN_DISPATCH_THIS_LEVEL, "a level's kernels come from its own TU");
  nonlin::gated_forward_fused(f, x, out, rows, split);
}

template <level L, class F, class T>
void gated_entry<L, F, T>::backward_fused(F const& f, std::span<T const> x, std::span<T const> dy,
                                          std::span<T> dx, std::size_t rows, glu_split split) {
  static_assert(L == NONLIN_DISPATCH_THIS_LEVEL, "a level's kernels come from its own TU");
  nonlin::gated_backward_fused(f, x, dy, dx, rows, split);
}

}  // namespace nonlin::dispatch

// This TU's level's forward, backward and (where F has it) backward_from_output of functor F on
// spans of T: an explicit instantiation, so they are defined here whether or not this TU calls
// them.
// NONLIN_DISPATCH_SOFTMAX(F, T): softmax or log_softmax, forward and backward_from_output (both
// layouts). NONLIN_DISPATCH_GATED(F, T): a gated unit (nonlin::swiglu, ...), gated_forward,
// gated_backward and their fused forms.
#if defined(NONLIN_DISPATCH_LEVEL)
#define NONLIN_DISPATCH_ELEMENTWISE(F, T)                                      \
  template struct ::nonlin::dispatch::entry<NONLIN_DISPATCH_THIS_LEVEL, F, T>; \
  template struct ::nonlin::dispatch::output_entry<NONLIN_DISPATCH_THIS_LEVEL, F, T>;
#define NONLIN_DISPATCH_SOFTMAX(F, T) \
  template struct ::nonlin::dispatch::normalization_entry<NONLIN_DISPATCH_THIS_LEVEL, F, T>;
#define NONLIN_DISPATCH_GATED(F, T) \
  template struct ::nonlin::dispatch::gated_entry<NONLIN_DISPATCH_THIS_LEVEL, F, T>;
#else
#define NONLIN_DISPATCH_ELEMENTWISE(F, T) \
  static_assert(false,                    \
                "NONLIN_DISPATCH_ELEMENTWISE: compile with -DNONLIN_DISPATCH_LEVEL=2, 3 or 4");
#define NONLIN_DISPATCH_SOFTMAX(F, T) \
  static_assert(false, "NONLIN_DISPATCH_SOFTMAX: compile with -DNONLIN_DISPATCH_LEVEL=2, 3 or 4");
#define NONLIN_DISPATCH_GATED(F, T) \
  static_assert(false, "NONLIN_DISPATCH_GATED: compile with -DNONLIN_DISPATCH_LEVEL=2, 3 or 4");
#endif
