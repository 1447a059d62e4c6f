// SPDX-License-Identifier: MIT
// Peer "xsimd": nonlin's functions written with xsimd's own math library on xsimd::batch<float>
// (xsimd::exp, expm1, log1p, log, tanh, erfc, with select / max / min / fma around them), the way
// a user of xsimd writes them. xsimd has a single variant of each function (no accuracy/speed
// choice to make); the batch is xsimd's default architecture for the compile target (avx512bw,
// fma3+avx2, sse2, ...), shown in the version string.
//
// nonlin itself uses xsimd only as its register layer, with its own math: this peer measures
// xsimd's math functions, which is a different thing. No nonlin header is included here.
//
// xsimd 8.1 traps avoided: batch != is an ordered comparison (false for NaN), batch_bool ^ acts
// like |, and unqualified fma / select can resolve to xsimd's by ADL: every call is qualified.

#include <algorithm>
#include <cstddef>
#include <limits>
#include <string>

// g++ 12 reports the _mm512_undefined_*() operand inside the AVX-512 max, min, shift ...
// intrinsics as (maybe-)uninitialized once inlined into xsimd's kernels (a false positive of its
// intrinsic headers): silenced from before xsimd's headers to the end of the file.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

#include <xsimd/xsimd.hpp>

#include "peer.hpp"

namespace nonlin::peers {
namespace {

using batch = xsimd::batch<float>;
constexpr std::size_t width = batch::size;

// ---- Whole-array loops: full batches, then the remainder through a zero-padded block. ----

template <class Op>
void map1(float const* x, float* y, std::size_t n, Op op) {
  std::size_t i = 0;
  for (; i + width <= n; i += width) {
    op(batch::load_unaligned(x + i)).store_unaligned(y + i);
  }
  if (i < n) {
    alignas(batch::arch_type::alignment()) float block[width] = {};
    std::copy(x + i, x + n, block);
    op(batch::load_aligned(block)).store_aligned(block);
    std::copy(block, block + (n - i), y + i);
  }
}

template <class Op>
void map2(float const* a, float const* b, float* out, std::size_t n, Op op) {
  std::size_t i = 0;
  for (; i + width <= n; i += width) {
    op(batch::load_unaligned(a + i), batch::load_unaligned(b + i)).store_unaligned(out + i);
  }
  if (i < n) {
    alignas(batch::arch_type::alignment()) float block_a[width] = {};
    alignas(batch::arch_type::alignment()) float block_b[width] = {};
    std::copy(a + i, a + n, block_a);
    std::copy(b + i, b + n, block_b);
    op(batch::load_aligned(block_a), batch::load_aligned(block_b)).store_aligned(block_a);
    std::copy(block_a, block_a + (n - i), out + i);
  }
}

// Turns a batch expression into the kernel signatures of peer.hpp (variadic: commas are fine).
#define NONLIN_XSIMD_FWD(...)                                     \
  [](float const* x_, float* y_, std::size_t n_) {                \
    map1(x_, y_, n_, [](batch const& x) { return __VA_ARGS__; }); \
  }
#define NONLIN_XSIMD_BWD(var, ...)                                                          \
  [](float const* in_, float const* dy_, float* dx_, std::size_t n_) {                      \
    map2(in_, dy_, dx_, n_, [](batch const& var, batch const& dy) { return __VA_ARGS__; }); \
  }

// ---- Shared pieces. ----

// Constants are written as batch(v) where a template (select, max, fma, ...) needs a batch and
// as plain floats in arithmetic and comparisons, which convert implicitly.

// xsimd has no logistic function: 1 / (1 + e^-x) (e^-x = inf for x < -88 gives 0).
inline batch sigmoid(batch const& x) { return 1.0F / (1.0F + xsimd::exp(-x)); }

constexpr float selu_alpha = 1.67326324235437728481704299167171F;
constexpr float selu_lambda = 1.05070098735548049341933498529460F;
constexpr float selu_lambda_alpha = 1.75809934084737685994021752081F;
constexpr float sqrt_half = 0.707106781186547524400844362104849F;
constexpr float inv_sqrt_2pi = 0.398942280401432677939946059934382F;
constexpr float gelu_c = 0.797884560802865355879892119868763737F;  // sqrt(2/pi)
constexpr float gelu_k = 0.044715F;
constexpr float quick_k = 1.702F;

// gelu_tanh's tanh argument sqrt(2/pi) (x + 0.044715 x^3).
inline batch gelu_tanh_arg(batch const& x) {
  return gelu_c * x * xsimd::fma(batch(gelu_k) * x, x, batch(1.0F));
}

// d/dx [x s(kx)] = s + k x s (1 - s), s = sigmoid(kx); silu/swish are k = 1.
inline batch swish_grad(batch const& x, batch const& s, float k) {
  return xsimd::fma(k * x, s * (1.0F - s), s);
}

// ---- Softmax rows: max, exp(x - max) and its sum, then scale (or subtract the log-sum). ----

constexpr float neg_inf = -std::numeric_limits<float>::infinity();

// xsimd 8.1 has hadd (sum) but no horizontal max: the lanes are reduced through memory.
float reduce_max(batch const& v) {
  alignas(batch::arch_type::alignment()) float lanes[width];
  v.store_aligned(lanes);
  return *std::max_element(lanes, lanes + width);
}

// The row remainder as batch(1.0F) batch padded with -inf: it never wins the max and exp(-inf) = 0.
batch load_rest(float const* p, std::size_t n) {
  alignas(batch::arch_type::alignment()) float block[width];
  std::fill(block, block + width, neg_inf);
  std::copy(p, p + n, block);
  return batch::load_aligned(block);
}

float row_max(float const* in, std::size_t cols) {
  batch m(neg_inf);
  std::size_t i = 0;
  for (; i + width <= cols; i += width) {
    m = xsimd::max(m, batch::load_unaligned(in + i));
  }
  if (i < cols) {
    m = xsimd::max(m, load_rest(in + i, cols - i));
  }
  return reduce_max(m);
}

// out[i] = exp(in[i] - m) when out is not null; returns the sum of those.
float row_exp_sum(float const* in, float* out, std::size_t cols, float m) {
  batch sum(0.0F);
  std::size_t i = 0;
  for (; i + width <= cols; i += width) {
    batch const e = xsimd::exp(batch::load_unaligned(in + i) - m);
    if (out != nullptr) {
      e.store_unaligned(out + i);
    }
    sum += e;
  }
  if (i < cols) {
    batch const e = xsimd::exp(load_rest(in + i, cols - i) - m);
    if (out != nullptr) {
      alignas(batch::arch_type::alignment()) float block[width];
      e.store_aligned(block);
      std::copy(block, block + (cols - i), out + i);
    }
    sum += e;
  }
  return xsimd::hadd(sum);
}

void softmax_rows(float const* x, float* y, std::size_t rows, std::size_t cols) {
  for (std::size_t r = 0; r < rows; ++r) {
    float const* in = x + r * cols;
    float* out = y + r * cols;
    batch const inv(1.0F / row_exp_sum(in, out, cols, row_max(in, cols)));
    map1(out, out, cols, [&inv](batch const& e) { return e * inv; });
  }
}

void log_softmax_rows(float const* x, float* y, std::size_t rows, std::size_t cols) {
  for (std::size_t r = 0; r < rows; ++r) {
    float const* in = x + r * cols;
    batch const m(row_max(in, cols));
    // The scalar log of the sum through xsimd too (batch(1.0F) lane's worth of work per row).
    batch const log_sum = xsimd::log(batch(row_exp_sum(in, nullptr, cols, m.get(0))));
    // (x - m) - log(sum): x - m is exact near the maximum, where the result is small.
    map1(in, y + r * cols, cols, [&](batch const& v) { return (v - m) - log_sum; });
  }
}

// Backward from the output, per row: softmax dx = y (dy - sum dy y); log_softmax
// dx = dy - e^y sum dy. The remainder goes through map2's zero-padded block, and zero-padded
// lanes add nothing to the sums.
float row_dot(float const* a, float const* b, std::size_t cols) {
  batch acc(0.0F);
  std::size_t i = 0;
  for (; i + width <= cols; i += width) {
    acc = xsimd::fma(batch::load_unaligned(a + i), batch::load_unaligned(b + i), acc);
  }
  float sum = xsimd::hadd(acc);
  for (; i < cols; ++i) {
    sum += a[i] * b[i];
  }
  return sum;
}

float row_sum(float const* a, std::size_t cols) {
  batch acc(0.0F);
  std::size_t i = 0;
  for (; i + width <= cols; i += width) {
    acc += batch::load_unaligned(a + i);
  }
  float sum = xsimd::hadd(acc);
  for (; i < cols; ++i) {
    sum += a[i];
  }
  return sum;
}

void softmax_backward_rows(float const* y, float const* dy, float* dx, std::size_t rows,
                           std::size_t cols) {
  for (std::size_t r = 0; r < rows; ++r) {
    std::size_t const base = r * cols;
    batch const dot(row_dot(y + base, dy + base, cols));
    map2(y + base, dy + base, dx + base, cols,
         [&dot](batch const& p, batch const& g) { return p * (g - dot); });
  }
}

void log_softmax_backward_rows(float const* y, float const* dy, float* dx, std::size_t rows,
                               std::size_t cols) {
  for (std::size_t r = 0; r < rows; ++r) {
    std::size_t const base = r * cols;
    batch const sum(row_sum(dy + base, cols));
    map2(y + base, dy + base, dx + base, cols,
         [&sum](batch const& logp, batch const& g) { return g - xsimd::exp(logp) * sum; });
  }
}

// ---- Gated units out = value * act(gate), one fused loop each (the act's formulas above). ----

struct batch2 {
  batch d_value;
  batch d_gate;
};

// (d_value[i], d_gate[i]) = op(value[i], gate[i], dy[i]); the remainder through padded blocks.
template <class Op>
void map3_2(float const* v, float const* g, float const* dy, float* dv, float* dg, std::size_t n,
            Op op) {
  std::size_t i = 0;
  for (; i + width <= n; i += width) {
    batch2 const r = op(batch::load_unaligned(v + i), batch::load_unaligned(g + i),
                        batch::load_unaligned(dy + i));
    r.d_value.store_unaligned(dv + i);
    r.d_gate.store_unaligned(dg + i);
  }
  if (i < n) {
    alignas(batch::arch_type::alignment()) float block_v[width] = {};
    alignas(batch::arch_type::alignment()) float block_g[width] = {};
    alignas(batch::arch_type::alignment()) float block_dy[width] = {};
    std::copy(v + i, v + n, block_v);
    std::copy(g + i, g + n, block_g);
    std::copy(dy + i, dy + n, block_dy);
    batch2 const r = op(batch::load_aligned(block_v), batch::load_aligned(block_g),
                        batch::load_aligned(block_dy));
    r.d_value.store_aligned(block_v);
    r.d_gate.store_aligned(block_g);
    std::copy(block_v, block_v + (n - i), dv + i);
    std::copy(block_g, block_g + (n - i), dg + i);
  }
}

struct glu {
  static constexpr char const* name = "glu";
  static batch fwd(batch const& v, batch const& g) { return v * sigmoid(g); }
  static batch2 bwd(batch const& v, batch const& g, batch const& dy) {
    batch const s = sigmoid(g);
    return {dy * s, dy * v * (s * (1.0F - s))};
  }
};

struct reglu {
  static constexpr char const* name = "reglu";
  static batch fwd(batch const& v, batch const& g) { return v * xsimd::max(g, batch(0.0F)); }
  static batch2 bwd(batch const& v, batch const& g, batch const& dy) {
    return {dy * xsimd::max(g, batch(0.0F)), xsimd::select(g > 0.0F, dy * v, batch(0.0F))};
  }
};

struct geglu {
  static constexpr char const* name = "geglu";
  static batch fwd(batch const& v, batch const& g) {
    return v * (0.5F * g * xsimd::erfc(g * -sqrt_half));
  }
  static batch2 bwd(batch const& v, batch const& g, batch const& dy) {
    batch const cdf = 0.5F * xsimd::erfc(g * -sqrt_half);
    batch const pdf = inv_sqrt_2pi * xsimd::exp(-0.5F * g * g);
    return {dy * (g * cdf), dy * v * xsimd::fma(g, pdf, cdf)};
  }
};

struct swiglu {
  static constexpr char const* name = "swiglu";
  static batch fwd(batch const& v, batch const& g) { return v * (g * sigmoid(g)); }
  static batch2 bwd(batch const& v, batch const& g, batch const& dy) {
    batch const s = sigmoid(g);
    return {dy * (g * s), dy * v * swish_grad(g, s, 1.0F)};
  }
};

template <class Unit>
gated_kernels gated_of() {
  return {Unit::name,
          [](float const* v, float const* g, float* out, std::size_t n) {
            map2(v, g, out, n, [](batch const& a, batch const& b) { return Unit::fwd(a, b); });
          },
          [](float const* v, float const* g, float const* dy, float* dv, float* dg, std::size_t n) {
            map3_2(v, g, dy, dv, dg, n, [](batch const& a, batch const& b, batch const& c) {
              return Unit::bwd(a, b, c);
            });
          }};
}

function_kernels fn(char const* name, forward_kernel f, backward_kernel b,
                    backward_kernel by = nullptr) {
  return function_kernels{name, f, b, by};
}

}  // namespace

peer make_xsimd() {
  peer p;
  p.name = "xsimd";
  p.version = "xsimd " + std::to_string(XSIMD_VERSION_MAJOR) + "." +
              std::to_string(XSIMD_VERSION_MINOR) + "." + std::to_string(XSIMD_VERSION_PATCH) +
              " (" + batch::arch_type::name() + ")";
  auto& f = p.functions;

  // Gradients that are all zeros or dy itself are a fill or a copy.
  backward_kernel const zeros = [](float const*, float const*, float* dx, std::size_t n) {
    std::fill(dx, dx + n, 0.0F);
  };
  backward_kernel const pass = [](float const*, float const* dy, float* dx, std::size_t n) {
    std::copy(dy, dy + n, dx);
  };
  f.push_back(fn("step", NONLIN_XSIMD_FWD(xsimd::select(x > 0.0F, batch(1.0F), batch(0.0F))), zeros,
                 zeros));
  f.push_back(fn(
      "identity", [](float const* x, float* y, std::size_t n) { std::copy(x, x + n, y); }, pass,
      pass));
  f.push_back(fn("relu", NONLIN_XSIMD_FWD(xsimd::max(x, batch(0.0F))),
                 NONLIN_XSIMD_BWD(x, xsimd::select(x > 0.0F, dy, batch(0.0F))),
                 NONLIN_XSIMD_BWD(y, xsimd::select(y > 0.0F, dy, batch(0.0F)))));
  f.push_back(fn("relu6", NONLIN_XSIMD_FWD(xsimd::min(xsimd::max(x, batch(0.0F)), batch(6.0F))),
                 NONLIN_XSIMD_BWD(x, xsimd::select((x > 0.0F) & (x < 6.0F), dy, batch(0.0F))),
                 NONLIN_XSIMD_BWD(y, xsimd::select((y > 0.0F) & (y < 6.0F), dy, batch(0.0F)))));
  f.push_back(fn("hardtanh", NONLIN_XSIMD_FWD(xsimd::min(xsimd::max(x, batch(-1.0F)), batch(1.0F))),
                 NONLIN_XSIMD_BWD(x, xsimd::select((x > -1.0F) & (x < 1.0F), dy, batch(0.0F))),
                 NONLIN_XSIMD_BWD(y, xsimd::select((y > -1.0F) & (y < 1.0F), dy, batch(0.0F)))));
  f.push_back(fn("leaky_relu", NONLIN_XSIMD_FWD(xsimd::select(x > 0.0F, x, 0.01F * x)),
                 NONLIN_XSIMD_BWD(x, xsimd::select(x > 0.0F, dy, 0.01F * dy)),
                 NONLIN_XSIMD_BWD(y, xsimd::select(y > 0.0F, dy, 0.01F * dy))));
  // expm1 / exp overflow to inf for large positive x, in lanes the select discards.
  f.push_back(fn("elu", NONLIN_XSIMD_FWD(xsimd::select(x > 0.0F, x, xsimd::expm1(x))),
                 NONLIN_XSIMD_BWD(x, xsimd::select(x > 0.0F, dy, dy * xsimd::exp(x))),
                 NONLIN_XSIMD_BWD(y, xsimd::select(y > 0.0F, dy, dy * (y + 1.0F)))));
  f.push_back(fn(
      "selu",
      NONLIN_XSIMD_FWD(selu_lambda * xsimd::select(x > 0.0F, x, selu_alpha * xsimd::expm1(x))),
      NONLIN_XSIMD_BWD(
          x, dy * xsimd::select(x > 0.0F, batch(selu_lambda), selu_lambda_alpha * xsimd::exp(x))),
      NONLIN_XSIMD_BWD(y,
                       dy * xsimd::select(y > 0.0F, batch(selu_lambda), y + selu_lambda_alpha))));
  f.push_back(
      fn("celu",
         NONLIN_XSIMD_FWD(xsimd::max(x, batch(0.0F)) + xsimd::min(xsimd::expm1(x), batch(0.0F))),
         NONLIN_XSIMD_BWD(x, xsimd::select(x > 0.0F, dy, dy * xsimd::exp(x))),
         NONLIN_XSIMD_BWD(y, xsimd::select(y > 0.0F, dy, dy * (y + 1.0F)))));
  f.push_back(fn("sigmoid", NONLIN_XSIMD_FWD(sigmoid(x)),
                 NONLIN_XSIMD_BWD(x,
                                  [&] {
                                    batch const s = sigmoid(x);
                                    return dy * s * (1.0F - s);
                                  }()),
                 NONLIN_XSIMD_BWD(y, dy * y * (1.0F - y))));
  f.push_back(fn("tanh", NONLIN_XSIMD_FWD(xsimd::tanh(x)),
                 NONLIN_XSIMD_BWD(x,
                                  [&] {
                                    batch const t = xsimd::tanh(x);
                                    return dy * xsimd::fnma(t, t, batch(1.0F));
                                  }()),
                 NONLIN_XSIMD_BWD(y, dy * xsimd::fnma(y, y, batch(1.0F)))));
  // The overflow-free forms min(x, 0) - log1p(e^-|x|) and dy * -expm1(y) (exact near y = 0).
  f.push_back(
      fn("log_sigmoid",
         NONLIN_XSIMD_FWD(xsimd::min(x, batch(0.0F)) - xsimd::log1p(xsimd::exp(-xsimd::abs(x)))),
         NONLIN_XSIMD_BWD(x, dy / (1.0F + xsimd::exp(x))),
         NONLIN_XSIMD_BWD(y, -dy * xsimd::expm1(y))));
  // (x + 3) / 6 and dy (2x + 3) / 6: x + 3 is exact near -3 (and 2x + 3 near -1.5), where
  // x / 6 + 1/2 or x / 3 + 1/2 would cancel.
  f.push_back(fn(
      "hardsigmoid",
      NONLIN_XSIMD_FWD(xsimd::min(xsimd::max((x + 3.0F) * (1.0F / 6), batch(0.0F)), batch(1.0F))),
      NONLIN_XSIMD_BWD(x, xsimd::select((x > -3.0F) & (x < 3.0F), dy * (1.0F / 6), batch(0.0F))),
      NONLIN_XSIMD_BWD(y, xsimd::select((y > 0.0F) & (y < 1.0F), dy * (1.0F / 6), batch(0.0F)))));
  f.push_back(fn(
      "hardswish",
      NONLIN_XSIMD_FWD(x * xsimd::min(xsimd::max(x + 3.0F, batch(0.0F)), batch(6.0F)) * (1.0F / 6)),
      NONLIN_XSIMD_BWD(
          x, xsimd::select(x > -3.0F,
                           xsimd::select(x >= 3.0F, dy,
                                         dy * xsimd::fma(x, batch(2.0F), batch(3.0F)) * (1.0F / 6)),
                           batch(0.0F)))));
  // Overflow-free max(x, 0) + log1p(e^-|x|); from the output: dy * -expm1(-y).
  f.push_back(
      fn("softplus",
         NONLIN_XSIMD_FWD(xsimd::max(x, batch(0.0F)) + xsimd::log1p(xsimd::exp(-xsimd::abs(x)))),
         NONLIN_XSIMD_BWD(x, dy * sigmoid(x)), NONLIN_XSIMD_BWD(y, -dy * xsimd::expm1(-y))));
  // 0.5 x erfc(-x / sqrt 2): erfc keeps the left tail accurate where 1 + erf(x / sqrt 2) cancels.
  f.push_back(fn("gelu_exact", NONLIN_XSIMD_FWD(0.5F * x * xsimd::erfc(x * -sqrt_half)),
                 NONLIN_XSIMD_BWD(x, [&] {
                   batch const cdf = 0.5F * xsimd::erfc(x * -sqrt_half);
                   batch const pdf = inv_sqrt_2pi * xsimd::exp(-0.5F * x * x);
                   return dy * xsimd::fma(x, pdf, cdf);
                 }())));
  f.push_back(fn("gelu_tanh", NONLIN_XSIMD_FWD(0.5F * x * (1.0F + xsimd::tanh(gelu_tanh_arg(x)))),
                 NONLIN_XSIMD_BWD(x, [&] {
                   batch const t = xsimd::tanh(gelu_tanh_arg(x));
                   batch const du = gelu_c * xsimd::fma(batch(3 * gelu_k) * x, x, batch(1.0F));
                   // 0.5 (1 + t) + 0.5 x (1 - t^2) du
                   return dy * xsimd::fma(0.5F * x * xsimd::fnma(t, t, batch(1.0F)), du,
                                          xsimd::fma(batch(0.5F), t, batch(0.5F)));
                 }())));
  f.push_back(fn("gelu_quick", NONLIN_XSIMD_FWD(x * sigmoid(quick_k * x)),
                 NONLIN_XSIMD_BWD(x, dy * swish_grad(x, sigmoid(quick_k * x), quick_k))));
  f.push_back(fn("silu", NONLIN_XSIMD_FWD(x * sigmoid(x)),
                 NONLIN_XSIMD_BWD(x, dy * swish_grad(x, sigmoid(x), 1.0F))));
  f.push_back(fn("swish", NONLIN_XSIMD_FWD(x * sigmoid(x)),
                 NONLIN_XSIMD_BWD(x, dy * swish_grad(x, sigmoid(x), 1.0F))));
  // x tanh(softplus(x)); exp(x) = inf past x ~ 88 still gives tanh(inf) = 1.
  f.push_back(fn("mish", NONLIN_XSIMD_FWD(x * xsimd::tanh(xsimd::log1p(xsimd::exp(x)))),
                 NONLIN_XSIMD_BWD(x, [&] {
                   // One exp serves tanh(softplus) and sigmoid = e / (1 + e); clamping at 20
                   // keeps e / (1 + e) finite and changes neither (both are 1 in float there).
                   batch const e = xsimd::exp(xsimd::min(x, batch(20.0F)));
                   batch const t = xsimd::tanh(xsimd::log1p(e));
                   batch const s = e / (1.0F + e);
                   // t + x s (1 - t^2)
                   return dy * xsimd::fma(x * s, xsimd::fnma(t, t, batch(1.0F)), t);
                 }())));
  f.push_back(fn("squared_relu",
                 NONLIN_XSIMD_FWD(xsimd::max(x, batch(0.0F)) * xsimd::max(x, batch(0.0F))),
                 NONLIN_XSIMD_BWD(x, 2.0F * dy * xsimd::max(x, batch(0.0F)))));

  p.softmax = softmax_rows;
  p.log_softmax = log_softmax_rows;
  p.softmax_backward = softmax_backward_rows;
  p.log_softmax_backward = log_softmax_backward_rows;
  p.gated = {gated_of<glu>(), gated_of<reglu>(), gated_of<geglu>(), gated_of<swiglu>()};
  return p;
}

#undef NONLIN_XSIMD_FWD
#undef NONLIN_XSIMD_BWD

}  // namespace nonlin::peers

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
