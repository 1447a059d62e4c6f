// SPDX-License-Identifier: MIT
// libFuzzer target: every elementwise functor's span kernels (forward, backward and, where the
// functor offers it, backward_from_output), float and double, on fuzzed values (NaN, infinities,
// subnormals, raw bit patterns), lengths, offsets, in-place and overlapping layouts, and fuzzed
// parameters (alpha, beta, threshold, k, min/max; valid and invalid). Asserts:
//  - a call that returns wrote exactly its output, each element equal to the scalar call bit for
//    bit (any NaN equal to any NaN), and nothing else;
//  - it throws std::invalid_argument exactly for the documented bad arguments (sizes that differ,
//    an output partly over an input, alpha <= 0 or NaN for backward_from_output of leaky_relu,
//    elu, celu), and then nothing was written;
//  - prelu_backward's two outputs: any overlap of dalpha with x, alpha, dy or dx, or of dx with
//    alpha, throws with nothing written; apart, dx is leaky_relu's backward per channel;
//  - NaN in gives NaN out; finite inputs give finite results where the true result is finite
//    (|x| <= max/2, x <= sqrt(max)/2 for squared_relu, |dy| <= 1 for the gradients), and for any
//    finite x and dy where the long double product dy f'(x) is below max/4 (no overflow in
//    between), the same from the output.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include <nonlin/nonlin.hpp>

#include "fuzz_support.hpp"
#include "support/functors.hpp"

namespace nonlin::fuzz {
namespace {

// What the finiteness checks may assume about one functor with its parameters.
struct profile {
  bool check_finite = true;  // parameters of moderate size: the bounds below hold
  double growth = 1.0;       // |f(x)| <= growth |x| + small, |f'(x)| <= growth + small
  bool square = false;       // squared_relu: |f(x)| = x^2
};

// Where each array of one call lives in the arena.
enum class target { apart, on_x, on_dy, shifted_x, shifted_dy, wrong_size };

struct layout {
  target out = target::apart;
  std::size_t offset = 0;  // inside the output's own region (apart)
  std::ptrdiff_t shift = 0;
  bool dy_wrong_size = false;
};

layout read_layout(reader& in, std::size_t width, std::size_t n) {
  layout l;
  std::uint8_t const mode = in.byte() % 10;
  static constexpr target modes[] = {
      target::apart,     target::apart,      target::apart,      target::on_x,  target::on_dy,
      target::shifted_x, target::shifted_dy, target::wrong_size, target::apart, target::on_x};
  l.out = modes[mode];
  l.offset = in.below(width + 1);
  l.shift = static_cast<std::ptrdiff_t>(in.below(2 * n + 3)) - static_cast<std::ptrdiff_t>(n + 1);
  l.dy_wrong_size = in.byte() % 16 == 0;
  return l;
}

template <class T>
struct setup {
  std::size_t n = 0;
  std::size_t cap = 0;  // the size of each of the three regions: x, dy, output
  place x, dy;
  std::vector<T> xs, dys;
};

// The output's place for a layout: apart, on an input, shifted from one (possibly partly over
// it, possibly into the next region), or of the wrong size.
template <class T>
place output_place(setup<T> const& s, layout const& l) {
  auto shifted = [&](place base) {
    std::ptrdiff_t const at = static_cast<std::ptrdiff_t>(base.offset) + l.shift;
    return place{static_cast<std::size_t>(at < 0 ? 0 : at), s.n};
  };
  switch (l.out) {
    case target::apart:
      return {2 * s.cap + l.offset, s.n};
    case target::on_x:
      return s.x;
    case target::on_dy:
      return s.dy;
    case target::shifted_x:
      return shifted(s.x);
    case target::shifted_dy:
      return shifted(s.dy);
    case target::wrong_size:
      return {2 * s.cap + l.offset, s.n == 0 || l.shift >= 0 ? s.n + 1 : s.n - 1};
  }
  return {};
}

// Runs one span kernel on an arena laid out by `l` and checks it against the scalar call.
// kernel(arena, x, dy, out) calls the span kernel; scalar(x, dy) the scalar function; two_inputs:
// whether dy is an input; refused: bad arguments beyond the layout (alpha for from-output).
template <class T, class Kernel, class Scalar>
void run_kernel(char const* where, setup<T> const& s, layout const& l, bool two_inputs,
                bool refused, Kernel const& kernel, Scalar const& scalar) {
  arena<T> a(3 * s.cap);
  std::copy(s.xs.begin(), s.xs.end(), a.memory.begin() + static_cast<std::ptrdiff_t>(s.x.offset));
  place dy = s.dy;
  if (two_inputs) {
    std::copy(s.dys.begin(), s.dys.end(),
              a.memory.begin() + static_cast<std::ptrdiff_t>(s.dy.offset));
    if (l.dy_wrong_size) {
      dy.size = s.n + 1;
    }
  }
  place const out = output_place(s, l);
  if (out.offset + out.size > a.memory.size()) {
    return;  // shifted past the arena: no such layout
  }
  bool const bad = refused || out.size != s.n || (two_inputs && dy.size != s.n) ||
                   partly_overlap(out, s.x) || (two_inputs && partly_overlap(out, dy));
  std::vector<T> expected(out.size);
  if (!bad) {
    for (std::size_t i = 0; i < s.n; ++i) {
      expected[i] = scalar(a.memory[s.x.offset + i], a.memory[dy.offset + i]);
    }
  }
  std::vector<T> const before = a.memory;
  bool const threw = throws_invalid_argument([&] { kernel(a, s.x, dy, out); });
  check(threw == bad, threw ? "threw for valid arguments" : "did not throw for bad arguments",
        where, s.n);
  if (threw) {
    check_untouched(where, before, a.memory);
    return;
  }
  place const written[] = {out};
  std::vector<T> const expect[] = {std::move(expected)};
  check_only_written<T>(where, before, a.memory, written, expect);
}

template <class F>
constexpr bool has_alpha_guard = requires(F const& f) {
  f.output_backward_defined();
};

template <class T, class F>
void exercise(char const* name, F const& f, profile const& prof, setup<T> const& s,
              layout const (&layouts)[3], bool y_from_forward) {
  using L = std::numeric_limits<T>;
  run_kernel<T>(
      name, s, layouts[0], false, false,
      [&](arena<T>& a, place x, place, place out) { forward(f, a.cspan(x), a.span(out)); },
      [&](T x, T) { return f(x); });
  run_kernel<T>(
      name, s, layouts[1], true, false,
      [&](arena<T>& a, place x, place dy, place out) {
        backward(f, a.cspan(x), a.cspan(dy), a.span(out));
      },
      [&](T x, T dy) { return f.backward(x, dy); });

  bool refused = false;
  if constexpr (has_alpha_guard<F>) {
    refused = !f.output_backward_defined();
  }
  if constexpr (output_differentiable<F, T>) {
    setup<T> from_output = s;
    if (y_from_forward) {
      for (T& v : from_output.xs) {
        v = f(v);
      }
    }
    run_kernel<T>(
        name, from_output, layouts[2], true, refused,
        [&](arena<T>& a, place y, place dy, place out) {
          backward_from_output(f, a.cspan(y), a.cspan(dy), a.span(out));
        },
        [&](T y, T dy) { return f.backward_from_output(y, dy); });
  }

  // The policies, on the scalar calls (the span kernels equal them bit for bit, checked above).
  T const bound =
      prof.square ? std::sqrt(L::max()) / 2 : static_cast<T>(L::max() / (2 * prof.growth));
  for (std::size_t i = 0; i < s.n; ++i) {
    T const x = s.xs[i];
    T const dy = s.dys[i];
    T const y = f(x);
    T const dx = f.backward(x, dy);
    if (std::isnan(x)) {
      check(std::isnan(y), "NaN in, not NaN out (forward)", name, i, x, y);
    }
    // dy anywhere in the range: where the long double product dy f'(x) (f' rounded, finite) is
    // comfortably finite, so is backward: nothing may overflow in between (squared_relu's
    // dy (2x) did at x = max/2^k). The same from the output.
    if (prof.check_finite && std::isfinite(x) && std::isfinite(dy)) {
      T const d = f.derivative(x);
      long double const product = static_cast<long double>(dy) * static_cast<long double>(d);
      if (std::isfinite(d) && std::fabs(product) <= static_cast<long double>(L::max()) / 4) {
        check(std::isfinite(dx), "finite x, dy and dy f'(x): backward not finite", name, i, x, dx);
      }
      if constexpr (output_differentiable<F, T>) {
        if (!refused && std::isfinite(y)) {
          T const dg = f.derivative_from_output(y);
          long double const from_y = static_cast<long double>(dy) * static_cast<long double>(dg);
          if (std::isfinite(dg) && std::fabs(from_y) <= static_cast<long double>(L::max()) / 4) {
            T const g = f.backward_from_output(y, dy);
            check(std::isfinite(g), "finite y, dy and dy g'(y): backward_from_output not finite",
                  name, i, y, g);
          }
        }
      }
    }
    bool const in_range = std::isfinite(x) && (prof.square ? x <= bound : std::abs(x) <= bound);
    bool const small_dy = std::isfinite(dy) && std::abs(dy) <= T(1);
    if (!prof.check_finite || !in_range) {
      continue;
    }
    check(std::isfinite(y), "finite x, infinite or NaN f(x)", name, i, x, y);
    bool const dx_bounded = !prof.square || x <= bound / 2;
    if (small_dy && dx_bounded) {
      check(std::isfinite(dx), "finite x and |dy| <= 1, infinite or NaN backward", name, i, x, dx);
    }
    if constexpr (output_differentiable<F, T>) {
      if (small_dy && !refused) {
        T const g = f.backward_from_output(y, dy);
        check(std::isfinite(g), "y = f(finite x), |dy| <= 1: infinite or NaN backward_from_output",
              name, i, x, g);
      }
    }
  }
}

// PReLU's two outputs (dx, dalpha) in one buffer with the inputs (x, alpha, dy): apart, or dalpha
// over x, alpha, dy or dx, or dx over alpha. Overlaps are rejected with nothing written;
// otherwise dx is the per-channel leaky_relu backward bit for bit and dalpha is sum dy x over
// x < 0, within the compensated sum's bound, against a long double sum.
template <class T>
void check_prelu(reader& in, setup<T> const& s) {
  if (s.n == 0) {
    return;
  }
  prelu_shape const shape{1 + in.below(3), 1 + in.below(3), in.below(xsimd::batch<T>::size + 2)};
  std::size_t const n = shape.n * shape.channels * shape.inner;
  std::size_t const c = in.flag() ? 1 : shape.channels;
  std::size_t const at_x = 0;
  std::size_t const at_alpha = n;
  std::size_t const at_dy = at_alpha + c;
  std::size_t at_dx = at_dy + n;
  std::size_t at_dalpha = at_dx + n;
  std::uint8_t const placement = in.byte() % 6;
  std::size_t const shift = in.below(2);
  if (placement == 1 && n > 0) {
    at_dalpha = at_x + std::min(shift, n - 1);
  } else if (placement == 2) {
    at_dalpha = at_alpha;
  } else if (placement == 3 && n > 0) {
    at_dalpha = at_dy + std::min(shift, n - 1);
  } else if (placement == 4 && n > 0) {
    at_dalpha = at_dx + std::min(shift, n - 1);
  } else if (placement == 5) {
    at_dx = at_alpha;  // dx over alpha (and dy, where n > c)
  }
  bool const overlapping =
      (placement >= 1 && placement <= 4 && (n > 0 || placement == 2)) || (placement == 5 && n > 0);
  std::vector<T> buffer(at_dy + 3 * n + 2 * c + 2, std::numeric_limits<T>::quiet_NaN());
  for (std::size_t i = 0; i < n; ++i) {
    buffer[at_x + i] = s.xs[i % s.n];
    buffer[at_dy + i] = s.dys[i % s.n];
  }
  for (std::size_t k = 0; k < c; ++k) {
    buffer[at_alpha + k] = static_cast<T>(in.parameter());
  }
  std::vector<T> const before = buffer;
  auto span_at = [&](std::size_t offset, std::size_t size) {
    return std::span<T>(buffer.data() + offset, size);
  };
  bool const threw = throws_invalid_argument([&] {
    prelu_backward(std::span<T const>(span_at(at_x, n)), std::span<T const>(span_at(at_alpha, c)),
                   std::span<T const>(span_at(at_dy, n)), span_at(at_dx, n), span_at(at_dalpha, c),
                   shape);
  });
  check(threw == overlapping,
        threw ? "prelu_backward: threw for apart outputs"
              : "prelu_backward: overlapping outputs not rejected",
        "prelu", placement);
  if (threw) {
    check_untouched("prelu_backward", before, buffer);
    return;
  }
  for (std::size_t b = 0; b < shape.n * shape.channels; ++b) {
    std::size_t const channel = b % shape.channels;
    leaky_relu const f{.alpha = static_cast<double>(before[at_alpha + (c == 1 ? 0 : channel)])};
    for (std::size_t k = 0; k < shape.inner; ++k) {
      std::size_t const i = b * shape.inner + k;
      T const want = f.backward(before[at_x + i], before[at_dy + i]);
      check(same_bits(buffer[at_dx + i], want), "prelu_backward: dx != leaky_relu backward",
            "prelu", i, before[at_x + i], buffer[at_dx + i]);
    }
  }
}

template <class T>
void run(reader& in) {
  constexpr std::size_t width = xsimd::batch<T>::size;
  setup<T> s;
  s.n = in.below(4 * width + 2);
  s.cap = s.n + 2 * width + 2;
  s.x = {in.below(width + 1), s.n};
  s.dy = {s.cap + in.below(width + 1), s.n};
  layout const layouts[3] = {read_layout(in, width, s.n), read_layout(in, width, s.n),
                             read_layout(in, width, s.n)};
  bool const y_from_forward = in.flag();
  double p[6];
  for (double& v : p) {
    v = in.parameter();
  }
  s.xs.resize(s.n);
  s.dys.resize(s.n);
  for (std::size_t i = 0; i < s.n; ++i) {
    s.xs[i] = in.value<T>();
    s.dys[i] = in.value<T>();
  }

  test::for_each_functor([&](auto const& entry) {
    profile prof;
    using F = std::remove_cvref_t<decltype(entry.f)>;
    prof.square = std::is_same_v<F, squared_relu>;
    exercise<T>(std::string(entry.name).c_str(), entry.f, prof, s, layouts, y_from_forward);
  });

  check_prelu<T>(in, s);

  // The parameterised functors with fuzzed parameters.
  exercise<T>("leaky_relu(alpha)", leaky_relu{.alpha = p[0]},
              {.check_finite = sane(p[0]), .growth = std::max(1.0, std::abs(p[0]))}, s, layouts,
              y_from_forward);
  exercise<T>("elu(alpha)", elu{.alpha = p[1]}, {.check_finite = sane(p[1]) && p[1] > 0}, s,
              layouts, y_from_forward);
  exercise<T>("celu(alpha)", celu{.alpha = p[2]}, {.check_finite = sane(p[2]) && p[2] > 0}, s,
              layouts, y_from_forward);
  exercise<T>("hardtanh(min, max)", hardtanh{.min = p[3], .max = p[4]},
              {.check_finite = sane(p[3]) && sane(p[4])}, s, layouts, y_from_forward);
  exercise<T>("softplus(beta, threshold)", softplus{.beta = p[4], .threshold = p[5]},
              {.check_finite = sane(p[4]) && p[4] > 0 && sane(p[5])}, s, layouts, y_from_forward);
  exercise<T>("swish(beta)", swish{.beta = p[5]}, {.check_finite = sane(p[5])}, s, layouts,
              y_from_forward);
  exercise<T>("gelu_quick(k)", gelu_quick{.k = p[0]}, {.check_finite = sane(p[0])}, s, layouts,
              y_from_forward);
}

}  // namespace
}  // namespace nonlin::fuzz

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {
  nonlin::fuzz::reader in(data, size);
  if (in.flag()) {
    nonlin::fuzz::run<double>(in);
  } else {
    nonlin::fuzz::run<float>(in);
  }
  return 0;
}
