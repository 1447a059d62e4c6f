// SPDX-License-Identifier: MIT
#pragma once
// Runtime dispatch: one binary that runs the span kernels built for the best x86-64 level the CPU
// has (x86-64-v2, -v3 or -v4), chosen once by CPUID.
//
//   nonlin::dispatch::forward(f, x, y);                 // the same arguments as nonlin::forward
//   nonlin::dispatch::backward(f, x, dy, dx);
//   nonlin::dispatch::backward_from_output(f, y, dy, dx);
//   nonlin::dispatch::forward(softmax{}, x, y, cols);   // softmax, log_softmax: rows or an
//   nonlin::dispatch::backward_from_output(softmax{}, y, dy, dx, shape);  // axis_layout
//   nonlin::dispatch::gated_forward(swiglu{}, value, gate, out);    // and gated_backward,
//   nonlin::dispatch::gated_forward_fused(swiglu{}, x, out, rows, split);  // gated_backward_fused
//
// The kernels of each level come from a translation unit of the program compiled for that level
// (nonlin/dispatch_level.hpp says what it holds; CMake: nonlin_add_dispatch(target SOURCES ...)
// compiles it three times). Each (functor, element type) the program dispatches is listed there
// once; one that is not gives an undefined symbol at link time, never a silent fallback. The
// functor object is passed as it is (its type is the same in every TU: nonlin/isa.hpp).
//
// The level is the highest the CPU supports, capped by the environment variable NONLIN_DISPATCH
// (v2, v3 or v4, read once) or by set_level_cap (tests, benchmarks). Below x86-64-v2, and on other
// architectures, the calls are nonlin::forward etc. of the calling TU's own build.

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <span>

#include "axis_layout.hpp"
#include "glu.hpp"
#include "isa.hpp"
#include "kernels.hpp"
#include "softmax.hpp"

#if (defined(__x86_64__) || defined(_M_X64)) && (defined(__GNUC__) || defined(__clang__))
#define NONLIN_DISPATCH_X86 1
#else
#define NONLIN_DISPATCH_X86 0
#endif

namespace nonlin::dispatch {

enum class level : int { none = 0, v2 = 2, v3 = 3, v4 = 4 };

// The per-level entry points: declared here, defined only in the TUs built for that level
// (dispatch_level.hpp: NONLIN_DISPATCH_ELEMENTWISE instantiates them), so that every other TU
// calls that level's code.
template <level L, class F, class T>
struct entry {
  static void forward(F const& f, std::span<T const> x, std::span<T> y);
  static void backward(F const& f, std::span<T const> x, std::span<T const> dy, std::span<T> dx);
};

// backward_from_output's entry point, for the functors that have one: empty for the others, so
// that NONLIN_DISPATCH_ELEMENTWISE instantiates it for every functor.
template <level L, class F, class T, bool = output_differentiable<F, nonlin::detail::compute_t<T>>>
struct output_entry {
  static void backward_from_output(F const& f, std::span<T const> y, std::span<T const> dy,
                                   std::span<T> dx);
};
template <level L, class F, class T>
struct output_entry<L, F, T, false> {};

// softmax and log_softmax (F) over an axis (the rows layout is converted before the call).
template <level L, class F, class T>
struct normalization_entry {
  static void forward(F const& f, std::span<T const> x, std::span<T> y, axis_layout shape);
  static void backward_from_output(F const& f, std::span<T const> y, std::span<T const> dy,
                                   std::span<T> dx, axis_layout shape);
};

// The gated units (F = gated<act>), separate and fused.
template <level L, class F, class T>
struct gated_entry {
  static void forward(F const& f, std::span<T const> value, std::span<T const> gate,
                      std::span<T> out);
  static void backward(F const& f, std::span<T const> value, std::span<T const> gate,
                       std::span<T const> dy, std::span<T> d_value, std::span<T> d_gate);
  static void forward_fused(F const& f, std::span<T const> x, std::span<T> out, std::size_t rows,
                            glu_split split);
  static void backward_fused(F const& f, std::span<T const> x, std::span<T const> dy,
                             std::span<T> dx, std::size_t rows, glu_split split);
};

namespace detail {
// The cap set by set_level_cap (0: none), and the level in use once chosen (-1: not yet).
inline std::atomic<int> level_cap{0};
inline std::atomic<int> chosen_level{-1};
}  // namespace detail

inline namespace NONLIN_ISA {

// The highest level this CPU (and its operating system, for the AVX and AVX-512 registers) runs.
inline level detected_level() noexcept {
#if NONLIN_DISPATCH_X86
  __builtin_cpu_init();
  bool const v2 = __builtin_cpu_supports("sse4.2") && __builtin_cpu_supports("popcnt") &&
                  __builtin_cpu_supports("ssse3");
  // x86-64-v3 also means F16C, LZCNT and MOVBE, which every CPU with AVX2 and BMI2 has (clang
  // 14's __builtin_cpu_supports knows neither F16C nor MOVBE).
  bool const v3 = v2 && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
                  __builtin_cpu_supports("bmi") && __builtin_cpu_supports("bmi2");
  bool const v4 = v3 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                  __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") &&
                  __builtin_cpu_supports("avx512cd");
  return v4 ? level::v4 : v3 ? level::v3 : v2 ? level::v2 : level::none;
#else
  return level::none;
#endif
}

// NONLIN_DISPATCH=v2|v3|v4 as a level (none if unset or anything else).
inline level environment_cap() noexcept {
  char const* value = std::getenv("NONLIN_DISPATCH");
  if (value == nullptr) {
    return level::none;
  }
  for (auto l : {level::v2, level::v3, level::v4}) {
    char const name[] = {'v', static_cast<char>('0' + static_cast<int>(l)), '\0'};
    if (std::strcmp(value, name) == 0) {
      return l;
    }
  }
  return level::none;
}

// The level the calls below use: the detected one, capped by set_level_cap or NONLIN_DISPATCH.
inline level active_level() noexcept {
  int chosen = detail::chosen_level.load(std::memory_order_relaxed);
  if (chosen < 0) [[unlikely]] {
    chosen = static_cast<int>(detected_level());
    int cap = detail::level_cap.load(std::memory_order_relaxed);
    if (cap == 0) {
      cap = static_cast<int>(environment_cap());
    }
    if (cap != 0 && cap < chosen) {
      chosen = cap;
    }
    detail::chosen_level.store(chosen, std::memory_order_relaxed);
  }
  return static_cast<level>(chosen);
}

// Caps the level at `cap` (level::none: no cap beyond NONLIN_DISPATCH) from the next call on.
inline void set_level_cap(level cap) noexcept {
  detail::level_cap.store(static_cast<int>(cap), std::memory_order_relaxed);
  detail::chosen_level.store(-1, std::memory_order_relaxed);
}

}  // namespace NONLIN_ISA

namespace detail {
inline namespace NONLIN_ISA {
// run.template operator()<L>() for the active level L, fallback() below x86-64-v2 and off x86.
template <class Run, class Fallback>
void at_active_level([[maybe_unused]] Run const& run, Fallback const& fallback) {
#if NONLIN_DISPATCH_X86
  switch (active_level()) {
    case level::v4:
      return run.template operator()<level::v4>();
    case level::v3:
      return run.template operator()<level::v3>();
    case level::v2:
      return run.template operator()<level::v2>();
    case level::none:
      break;
  }
#endif
  fallback();
}
}  // namespace NONLIN_ISA
}  // namespace detail

inline namespace NONLIN_ISA {

template <class F, nonlin::detail::span_element T>
requires unary_activation<F, nonlin::detail::compute_t<T>>
void forward(F const& f, std::span<T const> x, std::span<T> y) {
  detail::at_active_level([&]<level L>() { entry<L, F, T>::forward(f, x, y); },
                          [&] { nonlin::forward(f, x, y); });
}

template <class F, nonlin::detail::span_element T>
requires unary_activation<F, nonlin::detail::compute_t<T>>
void backward(F const& f, std::span<T const> x, std::span<T const> dy, std::span<T> dx) {
  detail::at_active_level([&]<level L>() { entry<L, F, T>::backward(f, x, dy, dx); },
                          [&] { nonlin::backward(f, x, dy, dx); });
}

template <class F, nonlin::detail::span_element T>
requires output_differentiable<F, nonlin::detail::compute_t<T>>
void backward_from_output(F const& f, std::span<T const> y, std::span<T const> dy,
                          std::span<T> dx) {
  detail::at_active_level(
      [&]<level L>() { output_entry<L, F, T>::backward_from_output(f, y, dy, dx); },
      [&] { nonlin::backward_from_output(f, y, dy, dx); });
}

// softmax / log_softmax over an axis, or over rows of `cols` (the same checks and messages as
// nonlin::forward's).
template <normalization F, nonlin::detail::span_element T>
void forward(F const& f, std::span<T const> x, std::span<T> y, axis_layout shape) {
  detail::at_active_level([&]<level L>() { normalization_entry<L, F, T>::forward(f, x, y, shape); },
                          [&] { nonlin::forward(f, x, y, shape); });
}

template <normalization F, nonlin::detail::span_element T>
void backward_from_output(F const& f, std::span<T const> y, std::span<T const> dy, std::span<T> dx,
                          axis_layout shape) {
  detail::at_active_level(
      [&]<level L>() { normalization_entry<L, F, T>::backward_from_output(f, y, dy, dx, shape); },
      [&] { nonlin::backward_from_output(f, y, dy, dx, shape); });
}

template <normalization F, nonlin::detail::span_element T>
void forward(F const& f, std::span<T const> x, std::span<T> y, std::size_t cols) {
  char const* where =
      std::same_as<F, log_softmax> ? "nonlin::forward(log_softmax)" : "nonlin::forward(softmax)";
  dispatch::forward(f, x, y, nonlin::detail::rows_layout(where, "x", x.size(), cols));
}

template <normalization F, nonlin::detail::span_element T>
void backward_from_output(F const& f, std::span<T const> y, std::span<T const> dy, std::span<T> dx,
                          std::size_t cols) {
  char const* where = std::same_as<F, log_softmax> ? "nonlin::backward_from_output(log_softmax)"
                                                   : "nonlin::backward_from_output(softmax)";
  dispatch::backward_from_output(f, y, dy, dx,
                                 nonlin::detail::rows_layout(where, "y", y.size(), cols));
}

// The gated units: the arguments of nonlin::gated_forward etc.
template <class F, nonlin::detail::span_element T>
requires gated_activation<F, nonlin::detail::compute_t<T>>
void gated_forward(F const& f, std::span<T const> value, std::span<T const> gate,
                   std::span<T> out) {
  detail::at_active_level([&]<level L>() { gated_entry<L, F, T>::forward(f, value, gate, out); },
                          [&] { nonlin::gated_forward(f, value, gate, out); });
}

template <class F, nonlin::detail::span_element T>
requires gated_activation<F, nonlin::detail::compute_t<T>>
void gated_backward(F const& f, std::span<T const> value, std::span<T const> gate,
                    std::span<T const> dy, std::span<T> d_value, std::span<T> d_gate) {
  detail::at_active_level(
      [&]<level L>() { gated_entry<L, F, T>::backward(f, value, gate, dy, d_value, d_gate); },
      [&] { nonlin::gated_backward(f, value, gate, dy, d_value, d_gate); });
}

template <class F, nonlin::detail::span_element T>
requires gated_activation<F, nonlin::detail::compute_t<T>>
void gated_forward_fused(F const& f, std::span<T const> x, std::span<T> out, std::size_t rows,
                         glu_split split) {
  detail::at_active_level(
      [&]<level L>() { gated_entry<L, F, T>::forward_fused(f, x, out, rows, split); },
      [&] { nonlin::gated_forward_fused(f, x, out, rows, split); });
}

template <class F, nonlin::detail::span_element T>
requires gated_activation<F, nonlin::detail::compute_t<T>>
void gated_backward_fused(F const& f, std::span<T const> x, std::span<T const> dy, std::span<T> dx,
                          std::size_t rows, glu_split split) {
  detail::at_active_level(
      [&]<level L>() { gated_entry<L, F, T>::backward_fused(f, x, dy, dx, rows, split); },
      [&] { nonlin::gated_backward_fused(f, x, dy, dx, rows, split); });
}

// The same for any contiguous ranges, as nonlin::forward's.
template <class F, std::ranges::contiguous_range X, std::ranges::contiguous_range Y>
requires nonlin::detail::not_spans<nonlin::detail::outputs<Y>, nonlin::detail::inputs<X>>
void forward(F const& f, X&& x, Y&& y) {
  dispatch::forward(f, nonlin::detail::as_input(x), nonlin::detail::as_output(y));
}

template <class F, std::ranges::contiguous_range X, std::ranges::contiguous_range DY,
          std::ranges::contiguous_range DX>
requires nonlin::detail::not_spans<nonlin::detail::outputs<DX>, nonlin::detail::inputs<X, DY>>
void backward(F const& f, X&& x, DY&& dy, DX&& dx) {
  dispatch::backward(f, nonlin::detail::as_input(x), nonlin::detail::as_input(dy),
                     nonlin::detail::as_output(dx));
}

template <class F, std::ranges::contiguous_range Y, std::ranges::contiguous_range DY,
          std::ranges::contiguous_range DX>
requires nonlin::detail::not_spans<nonlin::detail::outputs<DX>, nonlin::detail::inputs<Y, DY>>
void backward_from_output(F const& f, Y&& y, DY&& dy, DX&& dx) {
  dispatch::backward_from_output(f, nonlin::detail::as_input(y), nonlin::detail::as_input(dy),
                                 nonlin::detail::as_output(dx));
}

}  // namespace NONLIN_ISA
}  // namespace nonlin::dispatch
