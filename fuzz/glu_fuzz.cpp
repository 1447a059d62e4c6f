// SPDX-License-Identifier: MIT
// libFuzzer target: the gated units (glu, bilinear, reglu, geglu, geglu_tanh, swiglu and gated<>
// with parameterised acts), separate (gated_forward, gated_backward) and fused (rows, 2H) with
// both splits, float and double, on fuzzed values, lengths, offsets, rows and memory layouts
// (outputs apart from, on, or partly over their inputs; sizes that do not fit). Asserts:
//  - a call that returns wrote exactly its outputs, each element equal to the scalar call
//    f(value, gate) / f.backward(value, gate, dy) bit for bit (any NaN equal to any NaN);
//  - std::invalid_argument exactly for the documented bad arguments (sizes, an odd last
//    dimension, rows that do not divide, an output partly over an input, d_value and d_gate or
//    fused outputs and inputs that must be apart but overlap), and then nothing was written;
//  - finite inputs give finite outputs where the products cannot overflow
//    (|value| * max(1, |gate|) * growth and |dy| * |value| * 2 growth below max/8).

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include <nonlin/nonlin.hpp>

#include "fuzz_support.hpp"

namespace nonlin::fuzz {
namespace {

struct profile {
  bool check_finite = true;
  int growth_exponent = 0;  // log2 of a bound on |act(g)| / max(1, |g|) and on |act'(g)| / 2
};

template <class T>
bool product_fits(std::initializer_list<T> factors, int extra) {
  int e = extra;
  for (T v : factors) {
    if (!std::isfinite(v)) {
      return false;
    }
    e += magnitude(v);
  }
  return e < std::numeric_limits<T>::max_exponent - 4;
}

template <class T>
T at_least_one(T v) {
  return std::abs(v) < T(1) ? T(1) : v;
}

// Where an output goes, relative to the inputs.
enum class target { apart, on_value, on_gate, on_dy, shifted, wrong_size, on_other_output };

struct layout {
  target out0 = target::apart;
  target out1 = target::apart;
  std::ptrdiff_t shift0 = 0, shift1 = 0;
  std::size_t offset = 0;
  bool gate_wrong_size = false, dy_wrong_size = false;
};

layout read_layout(reader& in, std::size_t width, std::size_t n) {
  static constexpr target modes[] = {
      target::apart, target::apart,   target::apart,      target::on_value,        target::on_gate,
      target::on_dy, target::shifted, target::wrong_size, target::on_other_output, target::apart};
  layout l;
  l.out0 = modes[in.byte() % std::size(modes)];
  l.out1 = modes[in.byte() % std::size(modes)];
  auto shift = [&] {
    return static_cast<std::ptrdiff_t>(in.below(4 * n + 5)) -
           static_cast<std::ptrdiff_t>(2 * n + 2);
  };
  l.shift0 = shift();
  l.shift1 = shift();
  l.offset = in.below(width + 1);
  l.gate_wrong_size = in.byte() % 16 == 0;
  l.dy_wrong_size = in.byte() % 16 == 0;
  return l;
}

template <class T>
struct separate_setup {
  std::size_t n = 0, cap = 0;
  place value, gate, dy;
  std::vector<T> values, gates, dys;
};

// The k-th output's place (k = 0: out / d_value, region 3; k = 1: d_gate, region 4).
template <class T>
place output_place(separate_setup<T> const& s, target t, std::ptrdiff_t shift, std::size_t offset,
                   int k, place other) {
  switch (t) {
    case target::apart:
      return {(3 + static_cast<std::size_t>(k)) * s.cap + offset, s.n};
    case target::on_value:
      return s.value;
    case target::on_gate:
      return s.gate;
    case target::on_dy:
      return s.dy;
    case target::shifted: {
      std::ptrdiff_t const at = static_cast<std::ptrdiff_t>(s.value.offset) + shift;
      return {static_cast<std::size_t>(std::max<std::ptrdiff_t>(at, 0)), s.n};
    }
    case target::wrong_size:
      return {(3 + static_cast<std::size_t>(k)) * s.cap + offset, s.n + 1};
    case target::on_other_output:
      return k == 1 ? place{other.offset + static_cast<std::size_t>(shift < 0 ? 0 : shift % 3), s.n}
                    : place{(3 + static_cast<std::size_t>(k)) * s.cap + offset, s.n};
  }
  return {};
}

template <class T, class F>
void exercise_separate(char const* name, F const& f, profile const& prof,
                       separate_setup<T> const& s, layout const& lf, layout const& lb) {
  auto fill = [&](arena<T>& a, place gate, place dy) {
    std::copy(s.values.begin(), s.values.end(),
              a.memory.begin() + static_cast<std::ptrdiff_t>(s.value.offset));
    std::copy(s.gates.begin(), s.gates.end(),
              a.memory.begin() + static_cast<std::ptrdiff_t>(gate.offset));
    std::copy(s.dys.begin(), s.dys.end(),
              a.memory.begin() + static_cast<std::ptrdiff_t>(dy.offset));
  };
  // Forward.
  {
    arena<T> a(5 * s.cap + 2);
    place gate = s.gate;
    gate.size += lf.gate_wrong_size ? 1 : 0;
    fill(a, gate, s.dy);
    place const out = output_place(s, lf.out0, lf.shift0, lf.offset, 0, {});
    if (out.offset + out.size <= a.memory.size()) {
      bool const bad = gate.size != s.n || out.size != s.n || partly_overlap(out, s.value) ||
                       partly_overlap(out, gate);
      std::vector<T> expected(out.size);
      for (std::size_t i = 0; i < s.n && !bad; ++i) {
        expected[i] = f(a.memory[s.value.offset + i], a.memory[gate.offset + i]);
      }
      std::vector<T> const before = a.memory;
      bool const threw = throws_invalid_argument(
          [&] { gated_forward(f, a.cspan(s.value), a.cspan(gate), a.span(out)); });
      check(threw == bad, threw ? "threw for valid arguments" : "did not throw for bad arguments",
            name, s.n);
      if (threw) {
        check_untouched(name, before, a.memory);
      } else {
        place const written[] = {out};
        std::vector<T> const expect[] = {expected};
        check_only_written<T>(name, before, a.memory, written, expect);
      }
    }
  }
  // Backward.
  {
    arena<T> a(5 * s.cap + 2);
    place gate = s.gate;
    gate.size += lb.gate_wrong_size ? 1 : 0;
    place dy = s.dy;
    dy.size += lb.dy_wrong_size ? 1 : 0;
    fill(a, gate, dy);
    place const dv = output_place(s, lb.out0, lb.shift0, lb.offset, 0, {});
    place const dg = output_place(s, lb.out1, lb.shift1, lb.offset, 1, dv);
    if (dv.offset + dv.size <= a.memory.size() && dg.offset + dg.size <= a.memory.size()) {
      bool const bad = gate.size != s.n || dy.size != s.n || dv.size != s.n || dg.size != s.n ||
                       partly_overlap(dv, s.value) || partly_overlap(dv, gate) ||
                       partly_overlap(dv, dy) || partly_overlap(dg, s.value) ||
                       partly_overlap(dg, gate) || partly_overlap(dg, dy) || any_overlap(dv, dg);
      std::vector<T> expected_dv(dv.size);
      std::vector<T> expected_dg(dg.size);
      for (std::size_t i = 0; i < s.n && !bad; ++i) {
        auto const r = f.backward(a.memory[s.value.offset + i], a.memory[gate.offset + i],
                                  a.memory[dy.offset + i]);
        expected_dv[i] = r.d_value;
        expected_dg[i] = r.d_gate;
      }
      std::vector<T> const before = a.memory;
      bool const threw = throws_invalid_argument([&] {
        gated_backward(f, a.cspan(s.value), a.cspan(gate), a.cspan(dy), a.span(dv), a.span(dg));
      });
      check(threw == bad, threw ? "threw for valid arguments" : "did not throw for bad arguments",
            name, s.n);
      if (threw) {
        check_untouched(name, before, a.memory);
      } else {
        place const written[] = {dv, dg};
        std::vector<T> const expect[] = {expected_dv, expected_dg};
        check_only_written<T>(name, before, a.memory, written, expect);
      }
    }
  }
  // Finite where the products cannot overflow (on the scalar calls, equal to the spans).
  if (!prof.check_finite) {
    return;
  }
  for (std::size_t i = 0; i < s.n; ++i) {
    T const v = s.values[i];
    T const g = s.gates[i];
    T const d = s.dys[i];
    // act(g) itself must fit (leaky_relu(alpha) of -max overflows before value scales it).
    bool const act_fits = product_fits<T>({at_least_one(g)}, prof.growth_exponent);
    if (act_fits && product_fits<T>({v, at_least_one(g)}, prof.growth_exponent)) {
      T const y = f(v, g);
      check(std::isfinite(y), "finite value and gate: forward not finite", name, i, v, g);
    }
    auto const r = f.backward(v, g, d);
    if (act_fits && product_fits<T>({d, at_least_one(g)}, prof.growth_exponent) &&
        std::isfinite(v)) {
      check(std::isfinite(r.d_value), "finite inputs: d_value not finite", name, i, v, g);
    }
    if (product_fits<T>({d, v}, prof.growth_exponent + 1) && std::isfinite(g)) {
      check(std::isfinite(r.d_gate), "finite inputs: d_gate not finite", name, i, v, g);
    }
  }
}

// The fused (rows, 2H) forms.
struct fused_setup {
  std::size_t rows = 0, half = 0;
  std::size_t x_size = 0, small_size = 0;  // x / dx (rows, 2H) and out / dy (rows, H), maybe off
  glu_split split = glu_split::value_first;
  int out_mode = 0;  // 0 apart, 1 on x (same start), 2 shifted over x / dy
  std::size_t shift = 0;
  std::size_t offset = 0;
};

// What fused_half_width accepts: the half width, or nothing.
std::optional<std::size_t> fused_half(std::size_t x_size, std::size_t rows, std::size_t out_size) {
  if (rows == 0) {
    return x_size == 0 && out_size == 0 ? std::optional<std::size_t>(0) : std::nullopt;
  }
  if (x_size % rows != 0 || (x_size / rows) % 2 != 0 || out_size != rows * (x_size / rows / 2)) {
    return std::nullopt;
  }
  return x_size / rows / 2;
}

template <class T, class F>
void exercise_fused(char const* name, F const& f, fused_setup const& s, std::vector<T> const& xs,
                    std::vector<T> const& dys) {
  std::size_t const cap = s.x_size + s.small_size + 64;
  auto const half = fused_half(s.x_size, s.rows, s.small_size);
  auto const split_at = [&](std::size_t h) {
    return s.split == glu_split::value_first ? std::pair<std::size_t, std::size_t>{0, h}
                                             : std::pair<std::size_t, std::size_t>{h, 0};
  };
  // Forward: x in region 0, out apart (region 1), over x, or shifted into x.
  {
    arena<T> a(2 * cap);
    place const x{s.offset, s.x_size};
    std::copy(xs.begin(), xs.begin() + static_cast<std::ptrdiff_t>(s.x_size),
              a.memory.begin() + static_cast<std::ptrdiff_t>(x.offset));
    place const out = s.out_mode == 0   ? place{cap + s.offset, s.small_size}
                      : s.out_mode == 1 ? place{x.offset, s.small_size}
                                        : place{x.offset + s.shift, s.small_size};
    bool const bad = !half || any_overlap(out, x);
    std::vector<T> expected(out.size);
    if (!bad) {
      auto const [value_at, gate_at] = split_at(*half);
      for (std::size_t r = 0; r < s.rows; ++r) {
        for (std::size_t i = 0; i < *half; ++i) {
          std::size_t const base = x.offset + 2 * *half * r;
          expected[r * *half + i] = f(a.memory[base + value_at + i], a.memory[base + gate_at + i]);
        }
      }
    }
    std::vector<T> const before = a.memory;
    bool const threw = throws_invalid_argument(
        [&] { gated_forward_fused(f, a.cspan(x), a.span(out), s.rows, s.split); });
    check(threw == bad,
          threw ? "fused: threw for valid arguments" : "fused: did not throw for bad arguments",
          name, s.x_size);
    if (threw) {
      check_untouched(name, before, a.memory);
    } else {
      place const written[] = {out};
      std::vector<T> const expect[] = {expected};
      check_only_written<T>(name, before, a.memory, written, expect);
    }
  }
  // Backward: x in region 0, dy in region 1; dx apart (region 2), on x, or shifted over x/dy.
  {
    arena<T> a(3 * cap);
    place const x{s.offset, s.x_size};
    place const dy{cap + s.offset, s.small_size};
    std::copy(xs.begin(), xs.begin() + static_cast<std::ptrdiff_t>(s.x_size),
              a.memory.begin() + static_cast<std::ptrdiff_t>(x.offset));
    std::copy(dys.begin(), dys.begin() + static_cast<std::ptrdiff_t>(s.small_size),
              a.memory.begin() + static_cast<std::ptrdiff_t>(dy.offset));
    std::size_t const dx_size = s.x_size;
    place const dx = s.out_mode == 0   ? place{2 * cap + s.offset, dx_size}
                     : s.out_mode == 1 ? x
                                       : place{x.offset + s.shift * 2, dx_size};
    if (dx.offset + dx.size > a.memory.size()) {
      return;
    }
    auto const half_b = fused_half(s.x_size, s.rows, s.small_size);
    bool const bad = !half_b || dx.size != x.size || partly_overlap(dx, x) || any_overlap(dx, dy);
    std::vector<T> expected(dx.size);
    if (!bad) {
      auto const [value_at, gate_at] = split_at(*half_b);
      for (std::size_t r = 0; r < s.rows; ++r) {
        for (std::size_t i = 0; i < *half_b; ++i) {
          std::size_t const base = 2 * *half_b * r;
          auto const g = f.backward(a.memory[x.offset + base + value_at + i],
                                    a.memory[x.offset + base + gate_at + i],
                                    a.memory[dy.offset + r * *half_b + i]);
          expected[base + value_at + i] = g.d_value;
          expected[base + gate_at + i] = g.d_gate;
        }
      }
    }
    std::vector<T> const before = a.memory;
    bool const threw = throws_invalid_argument(
        [&] { gated_backward_fused(f, a.cspan(x), a.cspan(dy), a.span(dx), s.rows, s.split); });
    check(threw == bad,
          threw ? "fused backward: threw for valid arguments"
                : "fused backward: did not throw for bad arguments",
          name, s.x_size);
    if (threw) {
      check_untouched(name, before, a.memory);
    } else {
      place const written[] = {dx};
      std::vector<T> const expect[] = {expected};
      check_only_written<T>(name, before, a.memory, written, expect);
    }
  }
}

template <class T>
void run(reader& in) {
  constexpr std::size_t width = xsimd::batch<T>::size;
  separate_setup<T> s;
  s.n = in.below(4 * width + 2);
  s.cap = s.n + 2 * width + 2;
  s.value = {in.below(width + 1), s.n};
  s.gate = {s.cap + in.below(width + 1), s.n};
  s.dy = {2 * s.cap + in.below(width + 1), s.n};
  layout const lf = read_layout(in, width, s.n);
  layout const lb = read_layout(in, width, s.n);

  fused_setup fs;
  fs.rows = in.below(4);
  fs.half = in.below(2 * width + 2);
  fs.x_size = fs.rows * 2 * fs.half;
  fs.small_size = fs.rows * fs.half;
  switch (in.byte() % 12) {  // arguments that do not fit
    case 0:
      fs.x_size += fs.rows;
      break;  // odd last dimension
    case 1:
      fs.x_size += 1;
      break;
    case 2:
      fs.small_size += 1;
      break;
    case 3:
      if (fs.small_size > 0) {
        fs.small_size -= 1;
      }
      break;
    default:
      break;
  }
  fs.split = in.flag() ? glu_split::gate_first : glu_split::value_first;
  fs.out_mode = in.byte() % 4 == 0 ? 1 : in.byte() % 3 == 0 ? 2 : 0;
  fs.shift = in.below(fs.x_size + 1);
  fs.offset = in.below(width + 1);

  double const p[4] = {in.parameter(), in.parameter(), in.parameter(), in.parameter()};
  s.values.resize(s.n);
  s.gates.resize(s.n);
  s.dys.resize(s.n);
  for (std::size_t i = 0; i < s.n; ++i) {
    s.values[i] = in.value<T>();
    s.gates[i] = in.value<T>();
    s.dys[i] = in.value<T>();
  }
  std::vector<T> xs(fs.x_size + 1);
  std::vector<T> dys(fs.small_size + 1);
  for (T& v : xs) {
    v = in.value<T>();
  }
  for (T& v : dys) {
    v = in.value<T>();
  }

  auto both = [&](char const* name, auto const& f, profile const& prof) {
    exercise_separate<T>(name, f, prof, s, lf, lb);
    exercise_fused<T>(name, f, fs, xs, dys);
  };
  auto growth = [](double a) {
    return static_cast<int>(std::ceil(std::log2(std::max(1.0, std::abs(a)))));
  };
  both("glu", glu{}, {});
  both("bilinear", bilinear{}, {});
  both("reglu", reglu{}, {});
  both("geglu", geglu{}, {});
  both("geglu_tanh", geglu_tanh{}, {});
  both("swiglu", swiglu{}, {});
  both("gated<hardswish>", gated<hardswish>{}, {});
  both("gated<mish>", gated<mish>{}, {});
  both("gated<softplus>", gated<softplus>{}, {});
  both("gated<swish>(beta)", gated<swish>{.act = {.beta = p[0]}}, {.check_finite = sane(p[0])});
  both("gated<gelu_quick>(k)", gated<gelu_quick>{.act = {.k = p[1]}}, {.check_finite = sane(p[1])});
  both("gated<leaky_relu>(alpha)", gated<leaky_relu>{.act = {.alpha = p[2]}},
       {.check_finite = sane(p[2]), .growth_exponent = sane(p[2]) ? growth(p[2]) : 0});
  both("gated<elu>(alpha)", gated<elu>{.act = {.alpha = p[3]}},
       {.check_finite = sane(p[3]) && p[3] > 0, .growth_exponent = sane(p[3]) ? growth(p[3]) : 0});
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
