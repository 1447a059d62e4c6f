// SPDX-License-Identifier: MIT
#pragma once
// Gated linear units (Dauphin et al. 2017; Shazeer 2020, "GLU Variants Improve Transformer"):
//
//   out = value * act(gate)        value = x V, gate = x W, act any elementwise nonlin functor
//
// gated<Act> is the two-input functor; the named variants are aliases of it:
//   glu = gated<sigmoid>, bilinear = gated<identity>, reglu = gated<relu>,
//   geglu = gated<gelu_exact>, geglu_tanh = gated<gelu_tanh>, swiglu = gated<silu>,
// and a parameterised act is set by designated initialisation:
//   nonlin::gated<nonlin::swish>{.act = {.beta = 1.5}}
//
// Backward gives both gradients in one pass ("both paths get gradients"):
//   d_value = dy * act(gate),   d_gate = act.backward(gate, dy * value) = dy * value * act'(gate)
// (act.backward(gate, dy) * value where dy * value alone overflows and the result need not)
// d_gate goes through act.backward so that it follows act's own policy: for the
// piecewise-linear acts (relu, identity) backward *selects* its dy, so where act' is a hard
// zero d_gate is +0 even if dy * value is infinite or NaN (as PyTorch's threshold_backward);
// for every other act, backward is dy * act'(x), so d_gate is dy * value * act'(gate) exactly.
//
// Span kernels, with the same guarantees as kernels.hpp (any length and alignment, each result
// equal to the scalar call bit for bit, arguments checked before anything is written):
//   nonlin::gated_forward(f, value, gate, out)
//   nonlin::gated_backward(f, value, gate, dy, d_value, d_gate)
//   nonlin::gated_forward_fused(f, x, out, rows, split)        x: (rows, 2H), out: (rows, H)
//   nonlin::gated_backward_fused(f, x, dy, dx, rows, split)    dy: (rows, H), dx: (rows, 2H)
// The fused forms take the projection output as one (rows, 2H) buffer, as a single matmul with
// the concatenated [V W] weights produces it; glu_split says which half is which. All four take
// bfloat16 and float16 arrays as the kernels of kernels.hpp do: computed in float, each result
// correctly rounded by the same rule (near a 16-bit midpoint: recomputed in double).

#include <algorithm>
#include <array>
#include <concepts>
#include <cstddef>
#include <limits>
#include <ranges>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>

#include <xsimd/xsimd.hpp>

#include "concepts.hpp"
#include "gelu.hpp"
#include "isa.hpp"
#include "kernels.hpp"
#include "math/ops.hpp"
#include "math/true_side.hpp"
#include "piecewise.hpp"
#include "sigmoid.hpp"
#include "silu.hpp"

namespace nonlin {

// The two gradients of a gated unit.
template <class V>
struct gated_gradient {
  V d_value;
  V d_gate;
};

namespace detail {
// Whether the act's backward, as the gated unit calls it, takes tails as its last argument: its
// backward_given_derivative where it has value_and_derivative, else its backward.
template <class Act, class V, class Tails>
concept act_takes_tails = requires(Act const& act, V v, Tails const& tails) {
  requires(
      requires { act.value_and_derivative(v); } &&
      requires { act.backward_given_derivative(v, v, v, tails); }) ||
      (
          !requires { act.value_and_derivative(v); } && requires { act.backward(v, v, tails); });
};

// Whether the gated F's backward on batches B takes the tails argument (gated<Act> where Act's
// does, act_takes_tails): then its span backward defers the act's product tails
// (backward_deferring_tails; also the fused kernel with a bias, bias.hpp).
template <class F, class B>
concept gated_defers_product_tails = requires(F const& f, B x, math::mask_t<B>& lanes) {
  f.backward(x, x, x, math::recorded_product_tails<B>{lanes});
};
}  // namespace detail

// out = value * act(gate). An aggregate, like every nonlin functor: the act's parameters are
// set as gated<swish>{.act = {.beta = 1.5}}.
template <class Act>
struct gated {
  Act act{};

  // An act whose results are exact (relu, relu6, step, identity: the gate itself, 0, 6, 1;
  // derivatives 0 or 1): value act(gate), dy act(gate) and dy value act'(gate) are products of
  // two 16-bit values (and 6), at most 22 significant bits, so exact in float wherever normal,
  // and the 16-bit kernels test only the subnormal ones against the midpoints (kernels.hpp,
  // exactness16; their exact results lie on a midpoint often).
  static constexpr bool exact_normal_results =
      detail::exactness16<Act>() == detail::exact16::representable;
  // The act's long forward chain is the gated forward's (kernels.hpp: elementwise_interleaved).
  static constexpr bool long_forward_chain = detail::long_forward_chain<Act>;

  template <real_value V>
  requires unary_activation<Act, V> NONLIN_ISA_TAG V operator()(V value, V gate) const noexcept {
    return value * act(gate);
  }
  // For the 16-bit kernels (math/true_side.hpp): where act knows the side of its own result a
  // and y is value a exactly, the true value value act(gate) lies on that side times value's
  // sign (swiglu at a bfloat16 gate below 2^-125: value gate / 2 exactly, often a midpoint).
  template <real_value V>
  requires requires(Act const& a, V v) {
    { a.side_of_true_value(v, v) } -> std::same_as<V>;
  }
  NONLIN_ISA_TAG V side_of_true_value(V value, V gate, V y) const noexcept {
    V const a = act(gate);
    V const exact = math::select(math::product_minus(value, a, y) == V(0),
                                 act.side_of_true_value(gate, a), V(0));
    return math::select(value > V(0), exact, math::select(value < V(0), math::neg(exact), V(0)));
  }
  // tails: how act's backward applies its product tail (math/exp.hpp: product_tails); an act
  // whose backward takes it passes it on (the span kernels' recorder: gated_backward_op).
  template <real_value V, class Tails = math::product_tails>
  requires unary_activation<Act, V> &&
      (std::is_same_v<Tails, math::product_tails> || detail::act_takes_tails<Act, V, Tails>)
          NONLIN_ISA_TAG gated_gradient<V> backward(V value, V gate, V dy,
                                                    Tails const& tails = {}) const noexcept {
    // dy value can overflow where dy value act'(gate) does not (sigmoid' <= 1/4: value = max,
    // dy = 2 at gate = 0 is max / 2). Those lanes take act.backward(gate, dy) value instead,
    // from the same single evaluation of act.backward (its dy argument selected per lane), so
    // the other lanes keep their bits and the loop its length.
    constexpr auto inf = std::numeric_limits<scalar_t<V>>::infinity();
    V const product = dy * value;
    auto overflowed = math::both(math::abs(product) == V(inf),
                                 math::both(math::abs(dy) < V(inf), math::abs(value) < V(inf)));
    if constexpr (requires { act.value_and_derivative(gate); }) {
      // One evaluation for act and act' (gelu_exact); the same bits as act.backward.
      auto both = act.value_and_derivative(gate);
      V const factor = math::select(overflowed, dy, product);
      V d_gate;
      if constexpr (detail::act_takes_tails<Act, V, Tails>) {
        d_gate = act.backward_given_derivative(gate, both.derivative, factor, tails);
      } else {
        d_gate = act.backward_given_derivative(gate, both.derivative, factor);
      }
      return {dy * both.value, math::select(overflowed, d_gate * value, d_gate)};
    } else {
      V const factor = math::select(overflowed, dy, product);
      V d_gate;
      if constexpr (detail::act_takes_tails<Act, V, Tails>) {
        d_gate = act.backward(gate, factor, tails);
      } else {
        d_gate = act.backward(gate, factor);
      }
      return {dy * act(gate), math::select(overflowed, d_gate * value, d_gate)};
    }
  }
};

// A two-input gated functor: f(value, gate) and f.backward(value, gate, dy).
template <class F, class V>
concept gated_activation = real_value<V> && requires(F const& f, V v) {
  { f(v, v) } -> std::same_as<V>;
  { f.backward(v, v, v) } -> std::same_as<gated_gradient<V>>;
};

using glu = gated<sigmoid>;        // sigmoid(gate): Dauphin et al.'s GLU, PyTorch F.glu
using bilinear = gated<identity>;  // value * gate
using reglu = gated<relu>;
using geglu = gated<gelu_exact>;
using geglu_tanh = gated<gelu_tanh>;  // GEGLU with the tanh GELU (GPT-2's approximation)
using swiglu = gated<silu>;           // swish with beta = 1 (LLaMA's FFN)

// Which half of a fused (rows, 2H) row is the value. value_first is PyTorch's F.glu(x, dim=-1)
// (a = first half is the value, b = second half goes through sigmoid); many LLM checkpoints
// store the gate projection first. No default: a silently wrong guess trains, it just trains
// a different model.
enum class glu_split { value_first, gate_first };

namespace detail {
inline namespace NONLIN_ISA {

// The forward kernels' op: f(value, gate); on 16-bit arrays, where detail/fast16.hpp allows it
// for the act, value act(gate) from the act's fast twin in float (the same 16-bit results).
template <class T, class F>
auto gated_forward_op(F const& f) {
  if constexpr (storage16<T>) {
    return [f](auto v, auto g) -> decltype(f(v, g)) { return detail::value16(f, v, g); };
  } else {
    return [f](auto v, auto g) -> decltype(f(v, g)) { return f(v, g); };
  }
}
template <class T, class Act>
auto gated_forward_op(gated<Act> const& f) {
  if constexpr (storage16<T> && fast16<Act>::gated_forward) {
    using twin = decltype(fast16<Act>::twin(f.act));
    return twin_in_float(f, gated<twin>{fast16<Act>::twin(f.act)},
                         [](auto const& h, auto v, auto g) -> decltype(h(v, g)) {
                           return detail::value16(h, v, g);
                         });
  } else if constexpr (storage16<T>) {
    return [f](auto v, auto g) -> decltype(f(v, g)) { return detail::value16(f, v, g); };
  } else {
    return [f](auto v, auto g) -> decltype(f(v, g)) { return f(v, g); };
  }
}

// The 16-bit gated backward's float where detail/fast16.hpp allows it for the act (its backward
// and its value at 16-bit gates within the products' margin): gated<Twin>'s, d_value = dy
// twin(gate) and d_gate = twin.backward(gate, dy value), both within the margins of fast16.hpp
// where dy value is exact, a normal float (two 16-bit values: at most 22 significant bits).
// Where it is not (it overflowed or underflowed, bfloat16 only; or it is 0 or infinite) the
// default unit's, in a branch: an overflowed dy value is (dy f'(gate)) value, one rounding more,
// and an underflowed one is rounded, which the twin's error could carry past the margin.
template <class Act, class Twin>
struct gated_backward_twin {
  gated<Act> f;
  gated<Twin> g;
  template <real_value V>
  NONLIN_ISA_TAG gated_gradient<V> backward(V value, V gate, V dy) const noexcept {
    gated_gradient<V> r = g.backward(value, gate, dy);
    auto const inexact = math::zero_infinite_or_subnormal(dy * value);
    if (math::any(inexact)) [[unlikely]] {
      gated_gradient<V> d = f.backward(value, gate, dy);  // not const (GCC 12)
      r = {math::select(inexact, d.d_value, r.d_value), math::select(inexact, d.d_gate, r.d_gate)};
    }
    return r;
  }
};

// The backward kernels' op: f.backward; on 16-bit arrays, where fast16.hpp allows it for the act
// (backward and gated_forward), from the act's fast twin in float (the same 16-bit results).
template <class T, class F>
auto gated_backward_op(F const& f) {
  return
      [f](auto v, auto g, auto d) -> decltype(f.backward(v, g, d)) { return f.backward(v, g, d); };
}
template <class T, class Act>
auto gated_backward_op(gated<Act> const& f) {
  using batch = xsimd::batch<compute_t<T>>;
  if constexpr (!storage16<T> && gated_defers_product_tails<gated<Act>, batch>) {
    // Where Act's backward can defer its product tail, on float or double arrays:
    // elementwise_pair evaluates the two batches of an iteration recording the lanes that need
    // it, and again as usual only where one did (kernels.hpp: backward_deferring_tails).
    return backward_deferring_tails<gated<Act>>{f};
  } else if constexpr (storage16<T> && fast16<Act>::backward && fast16<Act>::gated_forward) {
    using twin = decltype(fast16<Act>::twin(f.act));
    return twin_in_float(
        f, gated_backward_twin<Act, twin>{f, {fast16<Act>::twin(f.act)}},
        [](auto const& h, auto v, auto g, auto d) -> decltype(h.backward(v, g, d)) {
          return h.backward(v, g, d);
        });
  } else {
    return [f](auto v, auto g, auto d) -> decltype(f.backward(v, g, d)) {
      return f.backward(v, g, d);
    };
  }
}

// elementwise (kernels.hpp) for an op with two results: (out0[i], out1[i]) = op(in0[i], ...).
// All inputs of a batch are loaded before either output is stored, so an output may be the very
// same array as an input; the tail runs the same batch code on a zero-padded copy.
// The op is copied in, as in elementwise.
// The lanes of either result of r near a midpoint of T, recomputed in double from the inputs
// (elementwise's recomputed_near_midpoints for two results; out of line, by value).
template <class T, exact16 E, class B, class Op, class... In>
NONLIN_OUT_OF_LINE gated_gradient<B> recomputed_pair_near_midpoints(Op op, gated_gradient<B> r,
                                                                    std::size_t i,
                                                                    std::size_t count, In... in) {
  B const lane_index = B::load_aligned(lane_numbers<B>().data());
  std::uint64_t const count_bits = count < 64 ? (std::uint64_t{1} << count) - 1 : ~std::uint64_t{0};
  std::uint64_t const near_value = lane_bits<B>(near_midpoints<T, E>(r.d_value)) & count_bits;
  std::uint64_t const near_gate = lane_bits<B>(near_midpoints<T, E>(r.d_gate)) & count_bits;
  for (std::uint64_t marked = near_value | near_gate; marked != 0; marked &= marked - 1) {
    auto const lane = static_cast<std::size_t>(std::countr_zero(marked));
    gated_gradient<double> const d = op(static_cast<double>(static_cast<float>(in[i + lane]))...);
    auto const at = lane_index == B(static_cast<float>(lane));
    if ((near_value >> lane) & 1U) {
      r.d_value = xsimd::select(at, B(math::round_to_odd(d.d_value)), r.d_value);
    }
    if ((near_gate >> lane) & 1U) {
      r.d_gate = xsimd::select(at, B(math::round_to_odd(d.d_gate)), r.d_gate);
    }
  }
  return r;
}

// The marked iterations of elementwise_pair (marked_iterations16; bits 0 to 2 B::size - 1 mark
// d_value's lanes of the iteration, the next 2 B::size d_gate's), each marked lane recomputed in
// double from the input arrays, the marked results stored rounded once.
template <class B, class T, class Op, class... In>
NONLIN_OUT_OF_LINE void flush_marked_pairs16(Op op, marked_iterations16& marked, std::span<T> out0,
                                             std::span<T> out1, In... in) {
  constexpr std::size_t lanes = 2 * B::size;
  static_assert(2 * lanes <= 64);
  for (std::size_t e = 0; e < marked.count; ++e) {
    std::uint64_t const bits = marked.lanes[e];
    for (std::uint64_t rest = (bits | bits >> lanes) & ((std::uint64_t{1} << lanes) - 1); rest != 0;
         rest &= rest - 1) {
      auto const lane = static_cast<std::size_t>(std::countr_zero(rest));
      std::size_t const at = marked.at[e] + lane;
      gated_gradient<double> const d = op(static_cast<double>(static_cast<float>(in[at]))...);
      if ((bits >> lane) & 1U) {
        out0[at] = T::from_float(math::round_to_odd(d.d_value));
      }
      if ((bits >> (lane + lanes)) & 1U) {
        out1[at] = T::from_float(math::round_to_odd(d.d_gate));
      }
    }
  }
  marked.count = 0;
}

// elementwise (kernels.hpp) for an op with two results: (out0[i], out1[i]) = op(in0[i], ...).
// All inputs of a batch are loaded before either output is stored, so an output may be the very
// same array as an input; the tail runs the same batch code on a zero-padded copy. 16-bit
// arrays as in elementwise: widened, the results near a midpoint recomputed in double, each
// rounded once. The op is copied in, as in elementwise.
NONLIN_LOOP_DIAGNOSTICS_PUSH
template <class Arch, exact16 E = exact16::none, class T, class Op, class... In>
NONLIN_FLATTEN void elementwise_pair(Op const& shared_op, std::span<T> out0, std::span<T> out1,
                                     In... in) {
  Op const op = shared_op;
  using batch = xsimd::batch<compute_t<T>, Arch>;
  constexpr std::size_t width = batch::size;
  constexpr bool recompute = storage16<T> && E < exact16::all && recomputable_in_double<Op, In...>;
  std::size_t const n = out0.size();
  std::size_t i = 0;
  auto const rounded = [&](gated_gradient<batch> r, std::size_t at, std::size_t count) {
    if constexpr (recompute) {
      if (xsimd::any(near_midpoints<T, E>(r.d_value) | near_midpoints<T, E>(r.d_gate)))
          [[unlikely]] {
        r = recomputed_pair_near_midpoints<T, E>(op, r, at, count, in...);
      }
    }
    return r;
  };
  // bfloat16 with AVX-512 BF16: as in elementwise, the subnormal results join the near ones in
  // one branch (flagged16), and the usual iteration narrows each output's two batches by one
  // instruction.
  constexpr bool exceptions16 = narrowed_with_exceptions<batch, T>();
  auto const flagged = [](auto const& r) {  // generic: instantiated only where called
    return flagged16<T, E, recompute>(r.d_value, r.d_value) |
           flagged16<T, E, recompute>(r.d_gate, r.d_gate);
  };
  // Where no output is an input, the marked iterations are only recorded and recomputed later
  // (marked_iterations16, as in elementwise).
  constexpr bool defers = recompute && E == exact16::none && math::arch::has_compress<batch>;
  [[maybe_unused]] std::conditional_t<defers, marked_iterations16, char> marked;
  [[maybe_unused]] bool reads_output = true;
  if constexpr (defers) {
    reads_output = (overlap(std::span<T const>(out0), std::span<T const>(in)) || ...) ||
                   (overlap(std::span<T const>(out1), std::span<T const>(in)) || ...);
  }
  // The two batches of each result from i, each rounded alone; or as usual: two a store
  // instruction where none is subnormal (exceptions16).
  auto const store_each = [&](gated_gradient<batch> const& a, gated_gradient<batch> const& b) {
    store_batch(a.d_value, out0.data() + i);
    store_batch(a.d_gate, out1.data() + i);
    store_batch(b.d_value, out0.data() + i + width);
    store_batch(b.d_gate, out1.data() + i + width);
  };
  auto const store_usual = [&](gated_gradient<batch> const& a, gated_gradient<batch> const& b) {
    if constexpr (exceptions16) {
      math::store16_pair_unexceptional(a.d_value, b.d_value, out0.data() + i);
      math::store16_pair_unexceptional(a.d_gate, b.d_gate, out1.data() + i);
    } else {
      store_each(a, b);
    }
  };
  // An op that can defer its product tails (kernels.hpp: backward_deferring_tails), on float or
  // double arrays.
  constexpr bool records_tails =
      !storage16<T> && requires(math::mask_t<batch> & lanes, as_batch<In, batch>... x) {
    op.recording_tails(lanes, x...);
  };
  // Two batches an iteration, both loaded before either is stored (detail::elementwise has
  // four; this op is twice the work and holds two results).
  auto const usual_iterations = [&]<bool records>(std::bool_constant<records>) {
    for (; i + 2 * width <= n; i += 2 * width) {
      if constexpr (records_tails) {
        // The two batches without a branch between them, their tail lanes recorded; again as
        // usual where one was (kernels.hpp: backward_deferring_tails).
        math::mask_t<batch> tails(false);
        gated_gradient<batch> r0 = op.recording_tails(tails, load_batch<batch>(in.data() + i)...);
        gated_gradient<batch> r1 =
            op.recording_tails(tails, load_batch<batch>(in.data() + i + width)...);
        if (xsimd::any(tails)) [[unlikely]] {
          r0 = op(load_batch<batch>(in.data() + i)...);
          r1 = op(load_batch<batch>(in.data() + i + width)...);
        }
        store_each(r0, r1);
        continue;
      }
      gated_gradient<batch> r0 = op(load_batch<batch>(in.data() + i)...);
      gated_gradient<batch> r1 = op(load_batch<batch>(in.data() + i + width)...);
      // (Tested first outside the lambda: clang 14 checks the body of a generic lambda when the
      // enclosing template is instantiated, and the record exists only where it records.)
      if constexpr (defers) {
        if constexpr (records) {
          std::uint64_t const lanes =
              lane_bits<batch>(near_midpoints<T, E>(r0.d_value)) |
              lane_bits<batch>(near_midpoints<T, E>(r1.d_value)) << width |
              lane_bits<batch>(near_midpoints<T, E>(r0.d_gate)) << 2 * width |
              lane_bits<batch>(near_midpoints<T, E>(r1.d_gate)) << 3 * width;
          bool subnormal = false;
          if constexpr (exceptions16) {
            subnormal = xsimd::any(math::narrow16_exceptions<T>(r0.d_value) |
                                   math::narrow16_exceptions<T>(r1.d_value) |
                                   math::narrow16_exceptions<T>(r0.d_gate) |
                                   math::narrow16_exceptions<T>(r1.d_gate));
          }
          if (subnormal) [[unlikely]] {
            store_each(r0, r1);
          } else {
            store_usual(r0, r1);
          }
          if (marked.full_after(i, lanes)) [[unlikely]] {
            flush_marked_pairs16<batch>(op, marked, out0, out1, in...);
          }
          continue;
        }
      }
      if constexpr (recompute || exceptions16) {
        if (xsimd::any(flagged(r0) | flagged(r1))) [[unlikely]] {
          r0 = rounded(r0, i, width);
          r1 = rounded(r1, i + width, width);
          store_each(r0, r1);
          continue;
        }
      }
      store_usual(r0, r1);
    }
  };
  if constexpr (defers) {
    if (reads_output) {
      usual_iterations(std::false_type{});
    } else {
      usual_iterations(std::true_type{});
    }
  } else {
    usual_iterations(std::false_type{});
  }
  for (; i + width <= n; i += width) {
    gated_gradient<batch> r = rounded(op(load_batch<batch>(in.data() + i)...), i, width);
    store_batch(r.d_value, out0.data() + i);
    store_batch(r.d_gate, out1.data() + i);
  }
  if (i < n) {
    std::size_t const rest = n - i;
    gated_gradient<batch> r = rounded(op(load_tail<batch>(in.data() + i, rest)...), i, rest);
    store_tail(r.d_value, out0.data() + i, rest);
    store_tail(r.d_gate, out1.data() + i, rest);
  }
  if constexpr (defers) {
    if (marked.count != 0) {
      flush_marked_pairs16<batch>(op, marked, out0, out1, in...);
    }
  }
}
NONLIN_LOOP_DIAGNOSTICS_POP

// elementwise_pair with the loop body scheduled by GCC (kernels.hpp: elementwise_interleaved).
template <class Arch, exact16 E = exact16::none, class T, class Op, class... In>
NONLIN_FLATTEN NONLIN_INTERLEAVED void elementwise_pair_interleaved(Op const& op, std::span<T> out0,
                                                                    std::span<T> out1, In... in) {
  elementwise_pair<Arch, E>(op, out0, out1, in...);
}

// The gated backward kernels' loop: interleaved where the op defers its product tails (the two
// chains of an iteration then lie in one block), elementwise_pair elsewhere.
template <class Op>
inline constexpr bool defers_pair_tails = false;
template <class F>
inline constexpr bool defers_pair_tails<backward_deferring_tails<F>> = true;

template <class Arch, exact16 E = exact16::none, class T, class Op, class... In>
void elementwise_pair_backward(Op const& op, std::span<T> out0, std::span<T> out1, In... in) {
  if constexpr (defers_pair_tails<Op>) {
    elementwise_pair_interleaved<Arch, E>(op, out0, out1, in...);
  } else {
    elementwise_pair<Arch, E>(op, out0, out1, in...);
  }
}

// The half width H of a fused (rows, 2H) buffer of x_size elements, after checking that it is
// one; out_name/out_size: the (rows, H) array that goes with it.
inline std::size_t fused_half_width(char const* where, std::size_t x_size, std::size_t rows,
                                    char const* out_name, std::size_t out_size) {
  auto const text = [where](std::string const& what) {
    return std::invalid_argument(std::string(where) + ": " + what);
  };
  if (rows == 0) {
    if (x_size != 0 || out_size != 0) {
      throw text("rows = 0 but " + size_text("x", x_size) + " and " +
                 size_text(out_name, out_size) + "; with no rows both must be empty");
    }
    return 0;
  }
  if (x_size % rows != 0) {
    throw text(size_text("x", x_size) + ", not a multiple of rows = " + std::to_string(rows));
  }
  std::size_t const row_size = x_size / rows;
  if (row_size % 2 != 0) {
    throw text(size_text("x", x_size) + " = " + std::to_string(rows) + " rows of " +
               std::to_string(row_size) +
               ", an odd last dimension; it must be 2H (a value half and a gate half)");
  }
  std::size_t const half = row_size / 2;
  if (out_size != rows * half) {
    throw text(size_text(out_name, out_size) + " but x is " + std::to_string(rows) +
               " rows of 2H = " + std::to_string(row_size) + ", so " + out_name +
               " must have rows * H = " + std::to_string(rows * half));
  }
  return half;
}

// The offsets of the value and the gate half inside a fused row of 2H.
struct split_offsets {
  std::size_t value;
  std::size_t gate;
};
inline split_offsets offsets(glu_split split, std::size_t half) noexcept {
  return split == glu_split::value_first ? split_offsets{0, half} : split_offsets{half, 0};
}

}  // namespace NONLIN_ISA
}  // namespace detail

inline namespace NONLIN_ISA {

// out = f(value, gate) = value * act(gate). out may be value or gate itself.
template <class Arch = xsimd::default_arch, class F, detail::span_element T>
requires gated_activation<F, detail::compute_t<T>>
void gated_forward(F const& f, std::span<T const> value, std::span<T const> gate,
                   std::span<T> out) {
  char const* where = "nonlin::gated_forward";
  detail::require_same_size<T>(where, "value", value, "gate", gate);
  detail::require_same_size<T>(where, "value", value, "out", out);
  detail::require_no_partial_overlap<T>(where, "out", out, "value", value);
  detail::require_no_partial_overlap<T>(where, "out", out, "gate", gate);
  detail::elementwise_forward<F, Arch, detail::exactness16<F>()>(detail::gated_forward_op<T>(f),
                                                                 out, value, gate);
}

// d_value = dy * act(gate), d_gate = dy * value * act'(gate), in one pass. Each output may be
// any one input itself (d_value = value and d_gate = gate overwrites the forward's inputs);
// d_value and d_gate must be separate arrays.
template <class Arch = xsimd::default_arch, class F, detail::span_element T>
requires gated_activation<F, detail::compute_t<T>>
void gated_backward(F const& f, std::span<T const> value, std::span<T const> gate,
                    std::span<T const> dy, std::span<T> d_value, std::span<T> d_gate) {
  char const* where = "nonlin::gated_backward";
  detail::require_same_size<T>(where, "value", value, "gate", gate);
  detail::require_same_size<T>(where, "value", value, "dy", dy);
  detail::require_same_size<T>(where, "value", value, "d_value", d_value);
  detail::require_same_size<T>(where, "value", value, "d_gate", d_gate);
  detail::require_no_partial_overlap<T>(where, "d_value", d_value, "value", value);
  detail::require_no_partial_overlap<T>(where, "d_value", d_value, "gate", gate);
  detail::require_no_partial_overlap<T>(where, "d_value", d_value, "dy", dy);
  detail::require_no_partial_overlap<T>(where, "d_gate", d_gate, "value", value);
  detail::require_no_partial_overlap<T>(where, "d_gate", d_gate, "gate", gate);
  detail::require_no_partial_overlap<T>(where, "d_gate", d_gate, "dy", dy);
  detail::require_disjoint<T, T>(where, "d_value", d_value, "d_gate", d_gate);
  detail::elementwise_pair_backward<Arch, detail::exactness16<F>()>(
      detail::gated_backward_op<T>(f), d_value, d_gate, value, gate, dy);
}

// out (rows, H) = f(value, gate) with value and gate the two halves of each row of x (rows, 2H).
// x and out must be separate arrays.
template <class Arch = xsimd::default_arch, class F, detail::span_element T>
requires gated_activation<F, detail::compute_t<T>>
void gated_forward_fused(F const& f, std::span<T const> x, std::span<T> out, std::size_t rows,
                         glu_split split) {
  char const* where = "nonlin::gated_forward_fused";
  std::size_t const half = detail::fused_half_width(where, x.size(), rows, "out", out.size());
  detail::require_disjoint<T, T>(where, "out", out, "x", x);
  if (half == 0) {
    return;  // rows of nothing: no work, however many rows
  }
  auto const at = detail::offsets(split, half);
  auto const op = detail::gated_forward_op<T>(f);
  for (std::size_t r = 0; r < rows; ++r) {
    auto const row = x.subspan(2 * half * r, 2 * half);
    detail::elementwise_forward<F, Arch, detail::exactness16<F>()>(
        op, out.subspan(half * r, half), row.subspan(at.value, half), row.subspan(at.gate, half));
  }
}

// dx (rows, 2H) = the value and gate gradients, in the layout of x; dy is (rows, H). dx may be
// x itself (the gradient overwrites the saved projection); dx and dy must be separate arrays.
template <class Arch = xsimd::default_arch, class F, detail::span_element T>
requires gated_activation<F, detail::compute_t<T>>
void gated_backward_fused(F const& f, std::span<T const> x, std::span<T const> dy, std::span<T> dx,
                          std::size_t rows, glu_split split) {
  char const* where = "nonlin::gated_backward_fused";
  std::size_t const half = detail::fused_half_width(where, x.size(), rows, "dy", dy.size());
  detail::require_same_size<T>(where, "x", x, "dx", dx);
  detail::require_no_partial_overlap<T>(where, "dx", dx, "x", x);
  detail::require_disjoint<T, T>(where, "dx", dx, "dy", dy);
  if (half == 0) {
    return;
  }
  auto const at = detail::offsets(split, half);
  auto const op = detail::gated_backward_op<T>(f);
  for (std::size_t r = 0; r < rows; ++r) {
    auto const row = x.subspan(2 * half * r, 2 * half);
    auto const grad = dx.subspan(2 * half * r, 2 * half);
    detail::elementwise_pair_backward<Arch, detail::exactness16<F>()>(
        op, grad.subspan(at.value, half), grad.subspan(at.gate, half), row.subspan(at.value, half),
        row.subspan(at.gate, half), dy.subspan(half * r, half));
  }
}

// The same for any contiguous ranges (std::vector, std::array, ...): detail/ranges.hpp.
template <class Arch = xsimd::default_arch, class F, std::ranges::contiguous_range A,
          std::ranges::contiguous_range B, std::ranges::contiguous_range Out>
requires detail::not_spans<detail::outputs<Out>, detail::inputs<A, B>>
void gated_forward(F const& f, A&& value, B&& gate, Out&& out) {
  gated_forward<Arch>(f, detail::as_input(value), detail::as_input(gate), detail::as_output(out));
}

template <class Arch = xsimd::default_arch, class F, std::ranges::contiguous_range A,
          std::ranges::contiguous_range B, std::ranges::contiguous_range DY,
          std::ranges::contiguous_range DA, std::ranges::contiguous_range DB>
requires detail::not_spans<detail::outputs<DA, DB>, detail::inputs<A, B, DY>>
void gated_backward(F const& f, A&& value, B&& gate, DY&& dy, DA&& d_value, DB&& d_gate) {
  gated_backward<Arch>(f, detail::as_input(value), detail::as_input(gate), detail::as_input(dy),
                       detail::as_output(d_value), detail::as_output(d_gate));
}

template <class Arch = xsimd::default_arch, class F, std::ranges::contiguous_range X,
          std::ranges::contiguous_range Out>
requires detail::not_spans<detail::outputs<Out>, detail::inputs<X>>
void gated_forward_fused(F const& f, X&& x, Out&& out, std::size_t rows, glu_split split) {
  gated_forward_fused<Arch>(f, detail::as_input(x), detail::as_output(out), rows, split);
}

template <class Arch = xsimd::default_arch, class F, std::ranges::contiguous_range X,
          std::ranges::contiguous_range DY, std::ranges::contiguous_range DX>
requires detail::not_spans<detail::outputs<DX>, detail::inputs<X, DY>>
void gated_backward_fused(F const& f, X&& x, DY&& dy, DX&& dx, std::size_t rows, glu_split split) {
  gated_backward_fused<Arch>(f, detail::as_input(x), detail::as_input(dy), detail::as_output(dx),
                             rows, split);
}

}  // namespace NONLIN_ISA
}  // namespace nonlin
