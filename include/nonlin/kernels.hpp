// SPDX-License-Identifier: MIT
#pragma once
// Span kernels: apply an activation to whole arrays.
//
//   nonlin::forward(f, x, y)                      y  = f(x)
//   nonlin::backward(f, x, dy, dx)                dx = dy * f'(x)
//   nonlin::backward_from_output(f, y, dy, dx)    dx = dy * f'(x), from y = f(x)
//
// The arrays may also hold bfloat16 or float16 (float16.hpp), all of one call the same type: the
// values are widened to float and the float functor runs; a result within a few float ulp of a
// 16-bit rounding midpoint is recomputed by the same functor in double (math/round16.hpp), and
// each is rounded once on the store. Element i is detail::rounded16<T>(op, x[i]) bit for bit:
// the correctly rounded value of the functor's function wherever its double result is (a
// functor that does not take double is rounded from float alone). Where the fast tier's twin of
// a default functor is within the margin, its float is evaluated instead, with the same 16-bit
// results (detail/fast16.hpp).
//
// Any length and alignment; an output may be the very same array as an input (in place). The
// body runs the functor on xsimd::batch<T, Arch>; the tail is loaded into a zero-padded batch
// and runs the same code, so an element's result does not depend on the span's length or on
// its position, and equals the scalar call f(x[i]) bit for bit. Sizes that differ, or an output
// that partly overlaps an input, throw std::invalid_argument before anything is written.

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <ranges>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include <xsimd/xsimd.hpp>

#include "concepts.hpp"
#include "detail/checks.hpp"
#include "detail/fast16.hpp"
#include "detail/partial.hpp"
#include "detail/ranges.hpp"
#include "float16.hpp"
#include "isa.hpp"
#include "math/convert16.hpp"
#include "math/ops.hpp"
#include "math/round16.hpp"

namespace nonlin {

namespace detail {
inline namespace NONLIN_ISA {

// elu, celu and leaky_relu with alpha <= 0 (or NaN) are not invertible on the left: y does not
// give x there, so the derivative cannot come from y.
template <class F>
void require_output_backward_defined(F const& f) {
  if constexpr (requires { f.output_backward_defined(); }) {
    if (!f.output_backward_defined()) {
      throw std::invalid_argument(
          "nonlin::backward_from_output: alpha = " + number_text(static_cast<double>(f.alpha)) +
          ", but the output determines the derivative only for alpha > 0; use nonlin::backward "
          "from x");
    }
  }
}

// What a functor's float results from 16-bit inputs are known to be, so that its span kernels on
// 16-bit arrays test fewer lanes against the midpoints of math/round16.hpp:
//   representable: every result is a value of the 16-bit type itself, or a NaN (relu, relu6,
//           step, identity: an argument, 0 or a small integer, `static constexpr bool
//           exact_results = true`; hardtanh's backward, dy or 0): no test at all, and the store
//           needs no rounding (math::store16_pair_values);
//   all:    every result is exact in float (hardtanh's forward with bounds that are floats), or
//           rounds once to the correct 16-bit value (hardsigmoid's forward): no test at all;
//   normal: every normal result is exact (squared_relu: products of two 16-bit values, at most
//           22 significant bits, and a factor 2: `static constexpr bool exact_normal_results =
//           true`): only subnormal results are tested. Such exact results lie on a midpoint
//           often, and each marked lane is recomputed in double;
//   none:   any result may have been rounded: every lane is tested.
// (In this order: from `all` on, no lane is tested.)
enum class exact16 { none, normal, all, representable };

template <class F>
constexpr exact16 exactness16() {
  if constexpr (requires { F::exact_results; }) {
    if constexpr (F::exact_results) {
      return exact16::representable;
    }
  }
  if constexpr (requires { F::exact_normal_results; }) {
    if constexpr (F::exact_normal_results) {
      return exact16::normal;
    }
  }
  return exact16::none;
}

// exactness16 for the backward directions (backward, backward_from_output): a functor whose
// backward results are an argument or 0 while its forward ones need not be says so with
// `static constexpr bool exact_backward_results = true` (hardtanh: dy or 0).
template <class F>
constexpr exact16 backward_exactness16() {
  // True where the member exists and is true (a nested requirement).
  if constexpr (requires { requires F::exact_backward_results; }) {
    return exact16::representable;
  } else {
    return exactness16<F>();
  }
}

// exactness16 for the forward: a functor whose forward results from 16-bit inputs, each rounded
// once, are the correctly rounded 16-bit values although they need not be exact says so with
// `static constexpr bool forward_rounds_correctly16 = true` (hardsigmoid: see there); its 16-bit
// forward then tests no lane, as for exact16::all. Where that holds on some lanes only, the
// functor names them (correctly_rounded_forward16, hardswish; tested16).
template <class F>
constexpr exact16 forward_exactness16() {
  if constexpr (requires { requires F::forward_rounds_correctly16; }) {
    return exact16::all;
  } else {
    return exactness16<F>();
  }
}

// A functor whose forward results are exact for some values of its parameters says so at run
// time, `bool exact_forward_results() const` (hardtanh: its bounds are floats); the 16-bit
// forward kernel then tests no lane, as for exact16::all. Where they are values of the 16-bit
// type T too, `bool forward_results_are_values_of<T>() const` (hardtanh: its bounds are), it
// runs as for exact16::representable.
template <class F>
concept exact_forward_at_run_time = requires(F const& f) {
  { f.exact_forward_results() } -> std::convertible_to<bool>;
};

// Whether f's forward results are values of T, for its parameters (the run-time declaration).
template <storage16 T, class F>
bool forward_results_are_values_of(F const& f) {
  if constexpr (requires { f.template forward_results_are_values_of<T>(); }) {
    return f.template forward_results_are_values_of<T>();
  } else {
    return false;
  }
}

// The element types a span kernel takes, and the type its functor computes in.
template <class T>
concept span_element = real_scalar<T> || storage16<T>;

template <class T>
struct compute_type {
  using type = T;
};
template <storage16 T>
struct compute_type<T> {
  using type = float;
};
template <span_element T>
using compute_t = typename compute_type<T>::type;

template <class B, class T>
NONLIN_ALWAYS_INLINE B load_batch(T const* p) {
  if constexpr (storage16<T>) {
    return math::load16<B>(p);
  } else {
    return B::load_unaligned(p);
  }
}

template <class B, class T>
NONLIN_ALWAYS_INLINE void store_batch(B const& value, T* p) {
  if constexpr (storage16<T>) {
    math::store16(value, p);
  } else {
    value.store_unaligned(p);
  }
}

// The first count elements (count < B::size), the other lanes 0.
template <class B, class T>
NONLIN_ALWAYS_INLINE B load_tail(T const* p, std::size_t count) {
  if constexpr (storage16<T>) {
    std::array<T, B::size> padded{};
    std::copy_n(p, count, padded.begin());
    return math::load16<B>(padded.data());
  } else {
    return detail::load_partial<B>(p, count, T(0));
  }
}

template <class B, class T>
NONLIN_ALWAYS_INLINE void store_tail(B const& value, T* p, std::size_t count) {
  if constexpr (storage16<T>) {
    std::array<T, B::size> narrow;
    math::store16(value, narrow.data());
    std::copy_n(narrow.begin(), count, p);
  } else {
    detail::store_partial(value, p, count);
  }
}

// A value of the arrays as the computation takes it (a 16-bit one widened to float), and a
// computed value stored into the arrays' type (rounded once to 16 bits).
template <span_element T>
compute_t<T> widened(T v) noexcept {
  return static_cast<compute_t<T>>(v);
}
template <span_element T>
T narrowed(compute_t<T> v) noexcept {
  if constexpr (storage16<T>) {
    return T::from_float(v);
  } else {
    return v;
  }
}

// 16-bit values widened into floats, and floats rounded once into 16-bit values, with the SIMD
// conversions (the softmax drivers' 16-bit path runs through float buffers).
template <class Arch, storage16 T>
void widen16(std::span<T const> x, float* out) {
  using B = xsimd::batch<float, Arch>;
  std::size_t i = 0;
  for (; i + B::size <= x.size(); i += B::size) {
    load_batch<B>(x.data() + i).store_unaligned(out + i);
  }
  if (i < x.size()) {
    detail::store_partial(load_tail<B>(x.data() + i, x.size() - i), out + i, x.size() - i);
  }
}
template <class Arch, storage16 T>
void narrow16(float const* x, std::span<T> out) {
  using B = xsimd::batch<float, Arch>;
  std::size_t i = 0;
  for (; i + B::size <= out.size(); i += B::size) {
    store_batch(B::load_unaligned(x + i), out.data() + i);
  }
  if (i < out.size()) {
    std::size_t const rest = out.size() - i;
    store_tail(detail::load_partial<B>(x + i, rest, 0.0F), out.data() + i, rest);
  }
}

// An op on 16-bit arrays whose lanes near a midpoint are recomputed in double.
template <class>
using as_double = double;
template <class Op, class... In>
concept recomputable_in_double = std::is_invocable_v<Op const&, as_double<In>...>;
template <class, class D>
using as_batch = D;

// arch::widen where the target has it (the double batches' type for the others: unused).
template <class B>
auto arch_widened(B const& x) {
  if constexpr (math::arch::has_widen<B>) {
    return math::arch::widen(x);
  } else {
    return std::pair<B, B>{x, x};
  }
}

// Whether op takes the double batches of B's arch (AVX-512: two for a float batch), and its
// lanes recomputed that way: op on x's lanes in double, rounded to odd at float's precision by
// one conversion (arch::narrow_to_odd; the same bits as math::round_to_odd of the scalar call,
// since the functors' double batches and double scalars agree bit for bit).
template <class B, class Op, class... In>
inline constexpr bool recomputable_in_double_batches =
    math::arch::has_narrow_to_odd<B>&& math::arch::has_widen<B>&&
        std::is_invocable_v<Op const&, as_batch<In, decltype(arch_widened<B>(B{}).first)>...>;
template <class B, class Op, class... X>
NONLIN_ALWAYS_INLINE B recomputed_in_double(Op const& op, X const&... x) {
  return math::arch::narrow_to_odd<B>(op(arch_widened<B>(x).first...),
                                      op(arch_widened<B>(x).second...));
}

// The 16-bit value of a float result r: r rounded once, or, where r is near a midpoint of T,
// in_double() (the same result computed in double) rounded to odd and then to T.
template <storage16 T, class InDouble>
T rounded16_given(float r, InDouble const& in_double) {
  if (math::near_midpoint16<T>(std::bit_cast<std::int32_t>(r) & 0x7fffffff)) {
    r = math::round_to_odd(static_cast<double>(in_double()));
  }
  return T::from_float(r);
}

// The 16-bit value of op(x...) (floats widened from T): op in float, and in double where the
// float result is within math::midpoint_margin float steps of a midpoint of T. The span
// kernels' result for one element, and the tests' reference.
template <storage16 T, class Op, class... X>
T rounded16(Op const& op, X... x) {
  if constexpr (recomputable_in_double<Op, X...>) {
    return rounded16_given<T>(op(x...), [&] { return op(static_cast<double>(x)...); });
  } else {
    return T::from_float(op(x...));
  }
}

// f's result where a 16-bit forward kernel evaluates it: f(x...) in float; in double, f(x...)
// moved toward the true value where f says on which side it lies (side_of_true_value(x..., y),
// math/true_side.hpp) and f(x...) is exactly a float (math::toward_side), so that a double
// rounded onto a midpoint rounds to 16 bits as the true value does. The forward kernels' op
// (the gated units' too, glu.hpp), and the tests' reference (rounded16 of forward16_op).
template <class F, class V, class... X>
concept knows_true_side = requires(F const& f, V y, X... x) {
  { f.side_of_true_value(x..., y) } -> std::same_as<V>;
};
template <class F, class... X>
auto value16(F const& f, X... x) {
  using V = decltype(f(x...));
  V const y = f(x...);
  if constexpr (std::is_same_v<scalar_t<V>, double> && knows_true_side<F, V, X...>) {
    return math::toward_side(y, f.side_of_true_value(x..., y));
  } else {
    return y;
  }
}
// The 16-bit backward_from_output kernel's op: f.backward_from_output, and where f says which
// of its float results are exact (exact_backward_from_output), those lanes for tested16.
template <class F>
struct from_output16_op {
  F f;
  template <class V>
  auto operator()(V y, V dy) const -> decltype(f.backward_from_output(y, dy)) {
    return f.backward_from_output(y, dy);
  }
  template <class V>
  requires requires(F const& g, V v) { g.exact_backward_from_output(v, v); }
  auto exact_lanes(V y, V dy) const { return f.exact_backward_from_output(y, dy); }
};

// The 16-bit backward kernels' op where F has a fast twin G (detail/fast16.hpp): G's backward in
// float, F's in double (G's where G says it recomputes: hardswish's), and where G names the lanes
// whose float result rounded once is the correctly rounded 16-bit value
// (correctly_rounded_backward16: hardswish's), those lanes for tested16.
template <class F, class G>
struct backward16_twin_op {
  F f;
  G g;
  template <class V>
  auto operator()(V x, V dy) const -> decltype(f.backward(x, dy)) {
    if constexpr (std::is_same_v<scalar_t<V>, float> || requires { G::recomputes; }) {
      return g.backward(x, dy);
    } else {
      return f.backward(x, dy);
    }
  }
  template <class V>
  requires requires(G const& t, V v) { t.correctly_rounded_backward16(v, v); }
  auto exact_lanes(V x, V dy) const { return g.correctly_rounded_backward16(x, dy); }
};

// The 16-bit forward kernels' op: value16 of G in float (F's fast twin, detail/fast16.hpp, or F
// itself), of F in double, and where G names the lanes whose float result rounded once is already
// the correctly rounded 16-bit value (correctly_rounded_forward16), those lanes for tested16.
template <class F, class G = F>
struct forward16_op_t {
  F f;
  G g;
  template <class V>
  auto operator()(V x) const -> decltype(f(x)) {
    if constexpr (std::is_same_v<scalar_t<V>, float>) {
      return detail::value16(g, x);
    } else {
      return detail::value16(f, x);
    }
  }
  template <class V>
  requires requires(G const& t, V v) { t.correctly_rounded_forward16(v); }
  auto exact_lanes(V x) const { return g.correctly_rounded_forward16(x); }
};

template <class F>
auto forward16_op(F const& f) {
  return forward16_op_t<F>{f, f};
}

// The lanes of r near a midpoint of T (r: floats on their way to T), within a window of W floats
// (math/round16.hpp); for exact16::normal only those that are subnormal too (one compare more).
template <class T, exact16 E = exact16::none, std::int32_t W = math::midpoint_window, class B>
NONLIN_ALWAYS_INLINE auto near_midpoints(B const& r) {
  using I = xsimd::batch<std::int32_t, typename B::arch_type>;
  if constexpr (std::is_same_v<T, bfloat16> && E == exact16::none) {
    return math::near_midpoint16<T, W>(math::bits16::as_bits(r));  // the sign does not matter
  } else {
    I const magnitude = math::bits16::as_bits(r) & I(0x7fffffff);
    if constexpr (E == exact16::normal) {
      return math::near_midpoint16<T, W>(magnitude) & (magnitude < I(0x00800000));
    } else {
      return math::near_midpoint16<T, W>(magnitude);
    }
  }
}

// math::has_narrow16_exceptions for any element type (false for float and double).
template <class B, class T>
constexpr bool narrowed_with_exceptions() {
  if constexpr (storage16<T>) {
    return math::has_narrow16_exceptions<B, T>;
  } else {
    return false;
  }
}

// The lanes of a result r that leave a 16-bit kernel's usual iteration: those near a midpoint
// of T (where recomputed) and, where T's narrowing instruction flushes subnormals
// (math::narrow16_exceptions), the subnormal ones; for exact16::normal the subnormal ones alone
// (its near lanes are subnormal too). One definition for elementwise and elementwise_pair.
// `tested`: r, or r with 0 on the lanes the op knows to be exact (tested16).
template <class T, exact16 E, bool recompute, std::int32_t W = math::midpoint_window, class B>
NONLIN_ALWAYS_INLINE auto flagged16(B const& r, B const& tested) {
  constexpr bool exceptions = narrowed_with_exceptions<B, T>();
  static_assert(recompute || exceptions);
  if constexpr (recompute && exceptions && E != exact16::normal) {
    return near_midpoints<T, E, W>(tested) | math::narrow16_exceptions<T>(r);
  } else if constexpr (recompute && !exceptions) {
    if constexpr (E == exact16::normal && math::arch::has_subnormal_class<B>) {
      // Only the subnormal results can be near a midpoint and inexact: one vfpclass flags them,
      // a superset of the near ones that recomputed_near_midpoints narrows down (they are rare:
      // float16's squared_relu forward ran 2.1x faster than with the midpoint test).
      using mask = typename xsimd::batch<std::int32_t, typename B::arch_type>::batch_bool_type;
      return mask(static_cast<typename mask::register_type>(math::arch::subnormal_class(tested)));
    } else {
      return near_midpoints<T, E, W>(tested);
    }
  } else {
    return math::narrow16_exceptions<T>(r);
  }
}

// The result r as the midpoint test sees it: 0 (never near a midpoint) on the lanes where the op
// says r is exact (op.exact_lanes(x...), e.g. a functor's exact_backward_from_output): the
// rounding once of an exact result is the correctly rounded value, even on a midpoint, where
// exact results from 16-bit inputs often lie (elu's backward from the output called the
// recomputation in 84% of its iterations of 64 bfloat16 elements). Other ops: r itself.
template <class Op, class B, class... X>
NONLIN_ALWAYS_INLINE B tested16(Op const& op, B const& r, X const&... x) {
  if constexpr (requires { op.exact_lanes(x...); }) {
    return xsimd::select(op.exact_lanes(x...), B(0), r);
  } else {
    return r;
  }
}

// Bit k set where lane k of the mask (of batches B) is true.
template <class B, class M>
std::uint64_t lane_bits(M const& mask) {
  if constexpr (sizeof(M) <= sizeof(std::uint64_t)) {  // AVX-512: the mask register itself
    return static_cast<std::uint64_t>(static_cast<typename M::register_type>(mask));
  } else {
    using I = xsimd::batch<std::int32_t, typename B::arch_type>;
    alignas(64) std::array<std::int32_t, I::size> lanes;
    xsimd::select(mask, I(1), I(0)).store_aligned(lanes.data());
    std::uint64_t bits = 0;
    for (std::size_t k = 0; k < I::size; ++k) {
      bits |= static_cast<std::uint64_t>(lanes[k] != 0) << k;
    }
    return bits;
  }
}

// 0, 1, ..., B::size - 1 as floats.
template <class B>
std::array<float, B::size> const& lane_numbers() {
  alignas(64) static constexpr std::array<float, B::size> numbers = [] {
    std::array<float, B::size> v{};
    for (std::size_t k = 0; k < B::size; ++k) {
      v[k] = static_cast<float>(k);
    }
    return v;
  }();
  return numbers;
}

// r[j] = op(in[i + j * size], ...) for the `count` elements from i: the lanes near a midpoint
// of T (those of tested[j], tested16's) recomputed in double from the inputs (out of line, one call
// for the batches of an iteration; everything by value, since a reference would make the hot loop
// store its operands for the call). Rare for the transcendental functions (16 of 2^16 results of
// bfloat16), but results that are exact in float often lie on a midpoint themselves: on the
// benchmarks' inputs, elu's and celu's backward from the output called it in 84% of the
// iterations of 64 bfloat16 elements (none since they tell their exact lanes: tested16),
// hardsigmoid's forward in 55% (squared_relu's in 50% before it declared exact16::normal),
// hardswish's backward in 64% (bfloat16's twin names those lanes now: detail/fast16.hpp). A
// per-lane test cannot tell an exact result from a rounded one; a functor can say which of its
// results are exact: exactness16, or lane by lane: tested16.
template <class T, exact16 E, std::int32_t W, class B, std::size_t N, class Op, class... In>
NONLIN_OUT_OF_LINE std::array<B, N> recomputed_near_midpoints(Op op, std::array<B, N> r,
                                                              std::array<B, N> tested,
                                                              std::size_t i, std::size_t count,
                                                              In... in) {
  static_assert(N * B::size <= 64);
  std::uint64_t marked = 0;
  for (std::size_t j = 0; j < N; ++j) {
    marked |= lane_bits<B>(near_midpoints<T, E, W>(tested[j])) << (j * B::size);
  }
  if (count < 64) {
    marked &= (std::uint64_t{1} << count) - 1;
  }
  // With AVX-512, each batch that has a marked lane is recomputed whole (recomputed_in_double:
  // the same bits as the lane loop below): exact results mark several lanes a batch
  // (hardsigmoid's forward, elu's backward from the output), where the lane loop cost each
  // 30-40 cycles.
  if constexpr (recomputable_in_double_batches<B, Op, In...>) {
    if (count == N * B::size) {
      for (std::size_t j = 0; j < N; ++j) {
        auto const lanes = static_cast<std::uint16_t>(marked >> (j * B::size));
        if (lanes == 0) {
          continue;
        }
        std::size_t const at = i + j * B::size;
        B const value = recomputed_in_double<B>(op, load_batch<B>(in.data() + at)...);
        r[j] = xsimd::select(typename B::batch_bool_type(lanes), value, r[j]);
      }
      return r;
    }
  }
  // Each recomputed lane blended in whole-batch (a lane stored into an array and the batch
  // loaded back would stall on the failed store forwarding).
  B const lane_index = B::load_aligned(lane_numbers<B>().data());
  for (; marked != 0; marked &= marked - 1) {
    auto const lane = static_cast<std::size_t>(std::countr_zero(marked));
    float const value = math::round_to_odd(
        static_cast<double>(op(static_cast<double>(static_cast<float>(in[i + lane]))...)));
    B& batch = r[lane / B::size];
    batch = xsimd::select(lane_index == B(static_cast<float>(lane % B::size)), B(value), batch);
  }
  return r;
}

// The lanes near a midpoint of the usual iterations of a 16-bit kernel, recomputed after the
// loop instead of in it: their inputs packed (vcompressps) and their positions, until `capacity`
// lanes wait. Recomputed in the iteration, each marked batch's double evaluation sat on the
// loop's critical path: about 150 cycles an iteration that marks a lane, which bfloat16 silu's
// forward paid in 17% of its iterations on the benchmarks' inputs (x = 5.9375 and -3.047 lie
// within two float steps of a midpoint); packed, B::size lanes share two double batches, and the
// evaluations of a flush overlap. The iteration stores its float results rounded as usual; the
// flush overwrites the marked lanes (positions already passed, so an output that is an input
// loses nothing: the inputs were packed before the store).
template <class T, class B, std::size_t Inputs>
struct deferred_lanes16 {
  static constexpr std::size_t capacity = 256;
  // Room past the capacity for a batch stored whole at the last packed position, and for the
  // flush's last double batches.
  std::array<std::array<float, capacity + 2 * B::size>, Inputs> inputs;
  std::array<std::size_t, capacity + 2 * B::size> at;
  std::size_t count = 0;
};

// Packs `lanes` of the batch at `first` (bit k: lane k) from the input arrays.
template <class T, class B, class... In>
void defer_lanes(deferred_lanes16<T, B, sizeof...(In)>& deferred, std::uint16_t lanes,
                 std::size_t first, In... in) {
  std::size_t k = 0;
  (math::arch::compress(load_batch<B>(in.data() + first), lanes)
       .store_unaligned(deferred.inputs[k++].data() + deferred.count),
   ...);
  for (auto rest = lanes; rest != 0; rest &= static_cast<std::uint16_t>(rest - 1)) {
    deferred.at[deferred.count++] = first + static_cast<std::size_t>(std::countr_zero(rest));
  }
}

// Packs the lanes of the N batches from i that near_midpoints<T, E, W> marks in tested.
template <class T, exact16 E, std::int32_t W, class B, std::size_t N, class... In>
NONLIN_OUT_OF_LINE void defer_near_midpoints(deferred_lanes16<T, B, sizeof...(In)>& deferred,
                                             std::array<B, N> tested, std::size_t i, In... in) {
  for (std::size_t j = 0; j < N; ++j) {
    auto const lanes = static_cast<std::uint16_t>(lane_bits<B>(near_midpoints<T, E, W>(tested[j])));
    if (lanes != 0) {
      defer_lanes(deferred, lanes, i + j * B::size, in...);
    }
  }
}

// The waiting lanes recomputed in double, B::size at a time (recomputed_in_double), each stored
// rounded once to T.
template <class B, class T, class Op, std::size_t Inputs>
NONLIN_OUT_OF_LINE void flush_deferred16(Op op, deferred_lanes16<T, B, Inputs>& deferred,
                                         std::span<T> out) {
  std::size_t const count = deferred.count;
  std::size_t const end = (count + B::size - 1) / B::size * B::size;
  for (auto& packed : deferred.inputs) {  // no uninitialised lane in the last batch
    std::fill(packed.begin() + static_cast<std::ptrdiff_t>(count),
              packed.begin() + static_cast<std::ptrdiff_t>(end), 0.0f);
  }
  alignas(64) std::array<float, B::size> values;
  auto const recompute = [&]<std::size_t... K>(std::index_sequence<K...>, std::size_t from) {
    return recomputed_in_double<B>(op, B::load_unaligned(deferred.inputs[K].data() + from)...);
  };
  for (std::size_t from = 0; from < count; from += B::size) {
    recompute(std::make_index_sequence<Inputs>{}, from).store_aligned(values.data());
    std::size_t const lanes = std::min(B::size, count - from);
    for (std::size_t k = 0; k < lanes; ++k) {
      out[deferred.at[from + k]] = T::from_float(values[k]);
    }
  }
  deferred.count = 0;
}

// The iterations of a 16-bit kernel whose output is not one of its inputs, each with its 64 lanes
// near a midpoint, until `capacity` have a marked lane; their inputs are read again from the
// input arrays when the lanes are recomputed. Each iteration records its position and its lanes
// unconditionally and advances the count by whether it marked any: no branch on the marks. A
// branch on them resolves only at the end of the iteration's chain, so when it goes the
// unpredicted way everything fetched past it is lost: bfloat16 silu's forward on 16M distinct
// inputs (17% of its iterations mark a lane) ran at 2/3 of its speed on 256K repeated ones, whose
// pattern the predictor had learned.
struct marked_iterations16 {
  static constexpr std::size_t capacity = 64;
  std::array<std::size_t, capacity> at;
  std::array<std::uint64_t, capacity> lanes;
  std::size_t count = 0;
  // Records the iteration at `position` with its marked lanes (kept only if any is set); true
  // when the record is full.
  bool full_after(std::size_t position, std::uint64_t marked_lanes) noexcept {
    at[count] = position;
    lanes[count] = marked_lanes;
    count += marked_lanes != 0 ? 1 : 0;
    return count == capacity;
  }
};

// The marked lanes of `marked` packed into `deferred` from the input arrays, batch by batch
// (defer_lanes), and recomputed (flush_deferred16); the count reset.
template <class B, class T, class Op, std::size_t Inputs, class... In>
NONLIN_OUT_OF_LINE void flush_marked16(Op op, marked_iterations16& marked,
                                       deferred_lanes16<T, B, Inputs>& deferred, std::span<T> out,
                                       In... in) {
  static_assert(4 * B::size == 64);
  for (std::size_t e = 0; e < marked.count; ++e) {
    for (std::size_t j = 0; j < 4; ++j) {
      auto const lanes = static_cast<std::uint16_t>(marked.lanes[e] >> (j * B::size));
      if (lanes == 0) {
        continue;
      }
      if (deferred.count > deferred.capacity - B::size) {
        flush_deferred16<B>(op, deferred, out);
      }
      defer_lanes(deferred, lanes, marked.at[e] + j * B::size, in...);
    }
  }
  if (deferred.count != 0) {
    flush_deferred16<B>(op, deferred, out);
  }
  marked.count = 0;
}

// out[i] = op(in0[i], ..., ink[i]) over batches, the tail through a zero-padded batch; 16-bit
// arrays widened on the load and rounded on the store.
//
// The op is copied into the kernel, and the span kernels capture the functor by value: a vector
// store may alias anything, so a functor reached through a reference has its parameters reloaded
// (and converted, double to float, split into hi + lo) in every iteration. hardtanh's forward
// spent 2.7x the time of relu6's on that; a local whose address does not escape stays in
// registers.
NONLIN_LOOP_DIAGNOSTICS_PUSH
template <class Arch, exact16 E = exact16::none, std::int32_t W = math::midpoint_window, class T,
          class Op, class... In>
NONLIN_FLATTEN void elementwise(Op const& shared_op, std::span<T> out, In... in) {
  Op const op = shared_op;
  using batch = xsimd::batch<compute_t<T>, Arch>;
  constexpr std::size_t width = batch::size;
  std::size_t const n = out.size();
  std::size_t i = 0;
  // Four batches an iteration, all loaded before any is stored (so out may be an input itself):
  // 1.02-1.08x on the exp-based kernels at 4K floats, 1.1-1.5x on the piecewise ones in L1,
  // 0.96-0.97x where four copies spill (gelu_exact, softplus, gelu_quick backward); same run,
  // alternated.
  // 16-bit results near a midpoint are recomputed in double (math/round16.hpp), the four
  // batches tested with one branch; the inputs are read again for that, before any store.
  constexpr bool recompute = storage16<T> && E < exact16::all && recomputable_in_double<Op, In...>;
  // bfloat16 with AVX-512 BF16: the lanes that its narrowing instruction would flush join the
  // near ones in that one branch (flagged16), and the usual iteration stores two batches an
  // instruction with no test of its own. Results that are 16-bit values need neither: they are
  // stored as they are (math::store16_pair_values).
  constexpr bool values16 = storage16<T> && E == exact16::representable;
  constexpr bool exceptions16 = narrowed_with_exceptions<batch, T>() && !values16;
  // The usual iterations' lanes near a midpoint wait for one recomputation after the loop
  // (deferred_lanes16), where the op takes double batches.
  constexpr bool defers = recompute && math::arch::has_compress<batch> &&
                          recomputable_in_double_batches<batch, Op, In...>;
  // (Default-initialised: only the count is set; the arrays are written before they are read.)
  [[maybe_unused]] std::conditional_t<defers, deferred_lanes16<T, batch, sizeof...(In)>, char>
      deferred;
  // Where the output is not an input, the marked iterations are only recorded
  // (marked_iterations16). Not for exact16::normal: it marks only subnormal results, rare, found
  // by one vfpclass, and the record cost squared_relu's forward (a cheap kernel) 0.6x. Nor where
  // the op names its exact lanes (tested16): its results are often near a midpoint, the branch on
  // them is mostly taken and predicted, and the record cost bfloat16 hardswish's backward 0.8x.
  constexpr bool names_exact_lanes = requires(as_batch<In, batch>... x) { op.exact_lanes(x...); };
  constexpr bool records_marks = defers && E == exact16::none && !names_exact_lanes;
  [[maybe_unused]] std::conditional_t<records_marks, marked_iterations16, char> marked;
  [[maybe_unused]] bool reads_output = true;
  // An op that can defer its product tails (backward_deferring_tails), on float or double arrays.
  constexpr bool records_tails =
      !storage16<T> && requires(math::mask_t<batch> & lanes, as_batch<In, batch>... x) {
    op.recording_tails(lanes, x...);
  };
  if constexpr (records_marks) {
    reads_output = (overlap(std::span<T const>(out), std::span<T const>(in)) || ...);
  }
  // The four batches from i, each rounded alone; or as usual: two a store instruction where the
  // results are 16-bit values (values16) or none is subnormal (exceptions16).
  auto const store_each = [&](batch const& a, batch const& b, batch const& c, batch const& d) {
    store_batch(a, out.data() + i);
    store_batch(b, out.data() + i + width);
    store_batch(c, out.data() + i + 2 * width);
    store_batch(d, out.data() + i + 3 * width);
  };
  auto const store_usual = [&](batch const& a, batch const& b, batch const& c, batch const& d) {
    if constexpr (values16) {
      math::store16_pair_values(a, b, out.data() + i);
      math::store16_pair_values(c, d, out.data() + i + 2 * width);
    } else if constexpr (exceptions16) {
      math::store16_pair_unexceptional(a, b, out.data() + i);
      math::store16_pair_unexceptional(c, d, out.data() + i + 2 * width);
    } else {
      store_each(a, b, c, d);
    }
  };
  // Two loops: one that records its marked iterations (marked_iterations16), one that branches
  // on them.
  auto const usual_iterations = [&]<bool records>(std::bool_constant<records>) {
    for (; i + 4 * width <= n; i += 4 * width) {
      if constexpr (records_tails) {
        // The four batches without a branch between them, their tail lanes recorded; again as
        // usual where one was (backward_deferring_tails).
        math::mask_t<batch> tails(false);
        batch r0 = op.recording_tails(tails, load_batch<batch>(in.data() + i)...);
        batch r1 = op.recording_tails(tails, load_batch<batch>(in.data() + i + width)...);
        batch r2 = op.recording_tails(tails, load_batch<batch>(in.data() + i + 2 * width)...);
        batch r3 = op.recording_tails(tails, load_batch<batch>(in.data() + i + 3 * width)...);
        if (xsimd::any(tails)) [[unlikely]] {
          r0 = op(load_batch<batch>(in.data() + i)...);
          r1 = op(load_batch<batch>(in.data() + i + width)...);
          r2 = op(load_batch<batch>(in.data() + i + 2 * width)...);
          r3 = op(load_batch<batch>(in.data() + i + 3 * width)...);
        }
        store_each(r0, r1, r2, r3);
        continue;
      }
      batch r0 = op(load_batch<batch>(in.data() + i)...);
      batch r1 = op(load_batch<batch>(in.data() + i + width)...);
      batch r2 = op(load_batch<batch>(in.data() + i + 2 * width)...);
      batch r3 = op(load_batch<batch>(in.data() + i + 3 * width)...);
      // (Tested first outside the lambda: clang 14 checks the body of a generic lambda when the
      // enclosing template is instantiated, and the record exists only where it records.)
      if constexpr (records_marks) {
        if constexpr (records) {
          batch const t0 = tested16(op, r0, load_batch<batch>(in.data() + i)...);
          batch const t1 = tested16(op, r1, load_batch<batch>(in.data() + i + width)...);
          batch const t2 = tested16(op, r2, load_batch<batch>(in.data() + i + 2 * width)...);
          batch const t3 = tested16(op, r3, load_batch<batch>(in.data() + i + 3 * width)...);
          std::uint64_t const lanes = lane_bits<batch>(near_midpoints<T, E, W>(t0)) |
                                      lane_bits<batch>(near_midpoints<T, E, W>(t1)) << width |
                                      lane_bits<batch>(near_midpoints<T, E, W>(t2)) << 2 * width |
                                      lane_bits<batch>(near_midpoints<T, E, W>(t3)) << 3 * width;
          bool subnormal = false;
          if constexpr (exceptions16) {
            subnormal =
                xsimd::any(math::narrow16_exceptions<T>(r0) | math::narrow16_exceptions<T>(r1) |
                           math::narrow16_exceptions<T>(r2) | math::narrow16_exceptions<T>(r3));
          }
          if (subnormal) [[unlikely]] {
            store_each(r0, r1, r2, r3);
          } else {
            store_usual(r0, r1, r2, r3);
          }
          if (marked.full_after(i, lanes)) [[unlikely]] {
            flush_marked16<batch>(op, marked, deferred, out, in...);
          }
          continue;
        }
      }
      if constexpr (recompute || exceptions16) {
        batch const t0 = tested16(op, r0, load_batch<batch>(in.data() + i)...);
        batch const t1 = tested16(op, r1, load_batch<batch>(in.data() + i + width)...);
        batch const t2 = tested16(op, r2, load_batch<batch>(in.data() + i + 2 * width)...);
        batch const t3 = tested16(op, r3, load_batch<batch>(in.data() + i + 3 * width)...);
        if (xsimd::any(
                flagged16<T, E, recompute, W>(r0, t0) | flagged16<T, E, recompute, W>(r1, t1) |
                flagged16<T, E, recompute, W>(r2, t2) | flagged16<T, E, recompute, W>(r3, t3)))
            [[unlikely]] {
          if constexpr (defers) {
            if (deferred.count > deferred.capacity - 4 * width) {
              flush_deferred16<batch>(op, deferred, out);
            }
            defer_near_midpoints<T, E, W>(deferred, std::array{t0, t1, t2, t3}, i, in...);
          } else if constexpr (recompute) {
            std::array<batch, 4> const r = recomputed_near_midpoints<T, E, W>(
                op, std::array{r0, r1, r2, r3}, std::array{t0, t1, t2, t3}, i, 4 * width, in...);
            r0 = r[0];
            r1 = r[1];
            r2 = r[2];
            r3 = r[3];
          }
          store_each(r0, r1, r2, r3);
          continue;
        }
      }
      store_usual(r0, r1, r2, r3);
    }
  };
  if constexpr (records_marks) {
    if (reads_output) {
      usual_iterations(std::false_type{});
    } else {
      usual_iterations(std::true_type{});
    }
  } else {
    usual_iterations(std::false_type{});
  }
  auto const evaluate = [&](std::size_t count, auto... x) {
    batch r = op(x...);
    if constexpr (recompute) {
      batch const tested = tested16(op, r, x...);
      if (xsimd::any(near_midpoints<T, E, W>(tested))) [[unlikely]] {
        r = recomputed_near_midpoints<T, E, W>(op, std::array{r}, std::array{tested}, i, count,
                                               in...)[0];
      }
    }
    return r;
  };
  for (; i + width <= n; i += width) {
    store_batch(evaluate(width, load_batch<batch>(in.data() + i)...), out.data() + i);
  }
  if (i < n) {
    std::size_t const rest = n - i;
    store_tail(evaluate(rest, load_tail<batch>(in.data() + i, rest)...), out.data() + i, rest);
  }
  if constexpr (records_marks) {
    if (marked.count != 0) {
      flush_marked16<batch>(op, marked, deferred, out, in...);
    }
  }
  if constexpr (defers) {
    if (deferred.count != 0) {
      flush_deferred16<batch>(op, deferred, out);
    }
  }
}
NONLIN_LOOP_DIAGNOSTICS_POP

// The backward op of an F whose backward takes the way its product tail is applied (math/exp.hpp:
// product_tails) as its last argument: as usual, or recording the lanes that need the tail
// instead of branching on them. elementwise (elementwise_pair for the gated units' two results,
// glu.hpp) evaluates the batches of an iteration the second way, one chain after another with no
// branch between them (so that the interleaved loops can interleave them), and only where a lane
// was recorded the first way: the same bits.
template <class F>
struct backward_deferring_tails {
  F f;

  template <class B, class... Rest>
  auto operator()(B x, Rest... rest) const -> decltype(f.backward(x, rest...)) {
    return f.backward(x, rest...);
  }
  template <class B, class... Rest>
  auto recording_tails(math::mask_t<B>& lanes, B x, Rest... rest) const {
    return f.backward(x, rest..., math::recorded_product_tails<B>{lanes});
  }
};

// Whether F's backward on batches B takes the tails argument.
template <class F, class B>
concept defers_product_tails = requires(F const& f, B x, math::mask_t<B>& lanes) {
  f.backward(x, x, math::recorded_product_tails<B>{lanes});
};

// elementwise with the loop body's instructions scheduled by GCC (NONLIN_INTERLEAVED), for an op
// whose one batch is a long chain of dependent operations: GCC otherwise emits the four batches
// of an iteration one after the other, and the out-of-order window fills with the operations of
// one chain waiting for their inputs.
template <class Arch, exact16 E = exact16::none, std::int32_t W = math::midpoint_window, class T,
          class Op, class... In>
NONLIN_FLATTEN NONLIN_INTERLEAVED void elementwise_interleaved(Op const& op, std::span<T> out,
                                                               In... in) {
  elementwise<Arch, E, W>(op, out, in...);
}

// Whether F says its forward's batch is one long chain (`static constexpr bool
// long_forward_chain = true`), so that its span kernel interleaves the batches.
template <class F>
inline constexpr bool long_forward_chain = requires {
  requires F::long_forward_chain;
};

// The forward kernel of F's op: elementwise_interleaved where F's forward is a long chain on
// float or double arrays, elementwise elsewhere (on 16-bit arrays the widening, the midpoint
// test and the narrowing sit between the chains: measured no faster).
template <class F, class Arch, exact16 E, class T, class Op, class... In>
void elementwise_forward(Op const& op, std::span<T> out, In... in) {
  if constexpr (long_forward_chain<F> && !storage16<T>) {
    elementwise_interleaved<Arch, E>(op, out, in...);
  } else {
    elementwise<Arch, E>(op, out, in...);
  }
}

}  // namespace NONLIN_ISA
}  // namespace detail

inline namespace NONLIN_ISA {

// y = f(x).
template <class Arch = xsimd::default_arch, class F, detail::span_element T>
requires unary_activation<F, detail::compute_t<T>>
void forward(F const& f, std::span<T const> x, std::span<T> y) {
  detail::require_same_size<T>("nonlin::forward", "x", x, "y", y);
  detail::require_no_partial_overlap<T>("nonlin::forward", "y", y, "x", x);
  if constexpr (storage16<T>) {
    if constexpr (detail::fast16<F>::template forward_in<T>) {
      // The fast twin's float, the same 16-bit results (detail/fast16.hpp).
      using twin = decltype(detail::twin16<T>(f));
      detail::elementwise<Arch, detail::forward_exactness16<F>()>(
          detail::forward16_op_t<F, twin>{f, detail::twin16<T>(f)}, y, x);
      return;
    }
    if constexpr (detail::exact_forward_at_run_time<F>) {
      if (detail::forward_results_are_values_of<T>(f)) {
        detail::elementwise<Arch, detail::exact16::representable>(detail::forward16_op(f), y, x);
        return;
      }
      if (f.exact_forward_results()) {
        detail::elementwise<Arch, detail::exact16::all>(detail::forward16_op(f), y, x);
        return;
      }
    }
    detail::elementwise<Arch, detail::forward_exactness16<F>()>(detail::forward16_op(f), y, x);
  } else {
    // The ops say their result type, so that recomputable_in_double asks whether f takes double.
    detail::elementwise_forward<F, Arch, detail::forward_exactness16<F>()>(
        [f](auto xb) -> decltype(f(xb)) { return f(xb); }, y, x);
  }
}

// dx = dy * f'(x).
template <class Arch = xsimd::default_arch, class F, detail::span_element T>
requires unary_activation<F, detail::compute_t<T>>
void backward(F const& f, std::span<T const> x, std::span<T const> dy, std::span<T> dx) {
  char const* where = "nonlin::backward";
  detail::require_same_size<T>(where, "x", x, "dy", dy);
  detail::require_same_size<T>(where, "x", x, "dx", dx);
  detail::require_no_partial_overlap<T>(where, "dx", dx, "x", x);
  detail::require_no_partial_overlap<T>(where, "dx", dx, "dy", dy);
  if constexpr (storage16<T> && detail::fast16<F>::template backward_in<T>) {
    // The fast twin's float, the same 16-bit results (detail/fast16.hpp).
    using twin = decltype(detail::twin16<T>(f));
    detail::elementwise<Arch, detail::backward_exactness16<F>(),
                        detail::fast16<F>::backward_window>(
        detail::backward16_twin_op<F, twin>{f, detail::twin16<T>(f)}, dx, x, dy);
    return;
  }
  if constexpr (!storage16<T> &&
                detail::defers_product_tails<F, xsimd::batch<detail::compute_t<T>, Arch>>) {
    // Four chains with no branch between them, interleaved (backward_deferring_tails).
    detail::elementwise_interleaved<Arch, detail::backward_exactness16<F>()>(
        detail::backward_deferring_tails<F>{f}, dx, x, dy);
    return;
  }
  detail::elementwise<Arch, detail::backward_exactness16<F>()>(
      [f](auto xb, auto dyb) -> decltype(f.backward(xb, dyb)) { return f.backward(xb, dyb); }, dx,
      x, dy);
}

// dx = dy * f'(x) computed from the saved output y = f(x).
template <class Arch = xsimd::default_arch, class F, detail::span_element T>
requires output_differentiable<F, detail::compute_t<T>>
void backward_from_output(F const& f, std::span<T const> y, std::span<T const> dy,
                          std::span<T> dx) {
  char const* where = "nonlin::backward_from_output";
  detail::require_same_size<T>(where, "y", y, "dy", dy);
  detail::require_same_size<T>(where, "y", y, "dx", dx);
  detail::require_no_partial_overlap<T>(where, "dx", dx, "y", y);
  detail::require_no_partial_overlap<T>(where, "dx", dx, "dy", dy);
  detail::require_output_backward_defined(f);
  if constexpr (storage16<T>) {
    detail::elementwise<Arch, detail::backward_exactness16<F>()>(detail::from_output16_op<F>{f}, dx,
                                                                 y, dy);
  } else {
    detail::elementwise<Arch, detail::backward_exactness16<F>()>(
        [f](auto yb, auto dyb) -> decltype(f.backward_from_output(yb, dyb)) {
          return f.backward_from_output(yb, dyb);
        },
        dx, y, dy);
  }
}

// The same for any contiguous ranges (std::vector, std::array, ...): detail/ranges.hpp.
template <class Arch = xsimd::default_arch, class F, std::ranges::contiguous_range X,
          std::ranges::contiguous_range Y>
requires detail::not_spans<detail::outputs<Y>, detail::inputs<X>>
void forward(F const& f, X&& x, Y&& y) {
  forward<Arch>(f, detail::as_input(x), detail::as_output(y));
}

template <class Arch = xsimd::default_arch, class F, std::ranges::contiguous_range X,
          std::ranges::contiguous_range DY, std::ranges::contiguous_range DX>
requires detail::not_spans<detail::outputs<DX>, detail::inputs<X, DY>>
void backward(F const& f, X&& x, DY&& dy, DX&& dx) {
  backward<Arch>(f, detail::as_input(x), detail::as_input(dy), detail::as_output(dx));
}

template <class Arch = xsimd::default_arch, class F, std::ranges::contiguous_range Y,
          std::ranges::contiguous_range DY, std::ranges::contiguous_range DX>
requires detail::not_spans<detail::outputs<DX>, detail::inputs<Y, DY>>
void backward_from_output(F const& f, Y&& y, DY&& dy, DX&& dx) {
  backward_from_output<Arch>(f, detail::as_input(y), detail::as_input(dy), detail::as_output(dx));
}

}  // namespace NONLIN_ISA
}  // namespace nonlin
