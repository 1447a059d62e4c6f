// SPDX-License-Identifier: MIT
// Peer "sleef": nonlin's functions written with SLEEF's vectorized float math (exp, expm1,
// log1p, tanh, erfc; log for log_softmax) and x86 intrinsics for the arithmetic around them,
// the way a user of SLEEF writes them. It uses the 1.0-ULP variants a user picks by default
// (Sleef_*f*_u10; erfc only exists as the 1.5-ULP Sleef_erfcf*_u15), at the widest vector
// width the compile target allows:
//   AVX-512F: Sleef_expf16_u10 ... (__m512, masked loads/stores for the tail)
//   AVX2:     Sleef_expf8_u10avx2 ... (__m256, tail through a padded local block)
//   SSE2:     Sleef_expf4_u10 ... (__m128, runtime-dispatched by SLEEF, padded tail)
// Piecewise-linear functions (relu, hardtanh, ...) use no SLEEF function, only intrinsics.

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <limits>
#include <string>

#include <sleef.h>

#include "peer.hpp"

// g++ 12 reports the _mm512_undefined_ps() operand inside _mm512_max_ps, _mm512_reduce_*_ps, ...
// as maybe-uninitialized once inlined here (a false positive of its intrinsic headers).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

namespace nonlin::peers {
namespace {

// ---- The few vector operations the kernels need, for the widest available ISA. ----

#if defined(__AVX512F__)

using vf = __m512;
using vmask = __mmask16;
constexpr std::size_t width = 16;
constexpr char const* isa = "AVX-512 f16_u10";

inline vf set1(float v) { return _mm512_set1_ps(v); }
inline vf load(float const* p) { return _mm512_loadu_ps(p); }
inline void store(float* p, vf v) { _mm512_storeu_ps(p, v); }
inline vmask first(std::size_t n) { return static_cast<vmask>((1U << n) - 1U); }
// n < width elements; the other lanes read as `fill` and are never written.
inline vf load_tail(float const* p, std::size_t n, float fill = 0.0F) {
  return _mm512_mask_loadu_ps(set1(fill), first(n), p);
}
inline void store_tail(float* p, vf v, std::size_t n) { _mm512_mask_storeu_ps(p, first(n), v); }
inline vf add(vf a, vf b) { return _mm512_add_ps(a, b); }
inline vf sub(vf a, vf b) { return _mm512_sub_ps(a, b); }
inline vf mul(vf a, vf b) { return _mm512_mul_ps(a, b); }
inline vf div(vf a, vf b) { return _mm512_div_ps(a, b); }
inline vf fmadd(vf a, vf b, vf c) { return _mm512_fmadd_ps(a, b, c); }
inline vf max(vf a, vf b) { return _mm512_max_ps(a, b); }
inline vf min(vf a, vf b) { return _mm512_min_ps(a, b); }
inline vmask gt(vf a, vf b) { return _mm512_cmp_ps_mask(a, b, _CMP_GT_OQ); }
inline vmask ge(vf a, vf b) { return _mm512_cmp_ps_mask(a, b, _CMP_GE_OQ); }
// lo < x < hi
inline vmask inside(vf x, vf lo, vf hi) {
  return _mm512_mask_cmp_ps_mask(gt(x, lo), x, hi, _CMP_LT_OQ);
}
inline vf blend(vmask m, vf t, vf f) { return _mm512_mask_blend_ps(m, f, t); }
inline vf zero_unless(vmask m, vf v) { return _mm512_maskz_mov_ps(m, v); }
inline float reduce_max(vf v) { return _mm512_reduce_max_ps(v); }
inline float reduce_add(vf v) { return _mm512_reduce_add_ps(v); }
inline vf exp(vf v) { return Sleef_expf16_u10(v); }
inline vf expm1(vf v) { return Sleef_expm1f16_u10(v); }
inline vf log1p(vf v) { return Sleef_log1pf16_u10(v); }
inline vf tanh(vf v) { return Sleef_tanhf16_u10(v); }
inline vf erfc(vf v) { return Sleef_erfcf16_u15(v); }

#else  // AVX2 or SSE2: no masked float loads worth using, the tail goes through a local block.

#if defined(__AVX2__)
using vf = __m256;
constexpr std::size_t width = 8;
constexpr char const* isa = "AVX2 f8_u10avx2";

inline vf set1(float v) { return _mm256_set1_ps(v); }
inline vf load(float const* p) { return _mm256_loadu_ps(p); }
inline void store(float* p, vf v) { _mm256_storeu_ps(p, v); }
inline vf add(vf a, vf b) { return _mm256_add_ps(a, b); }
inline vf sub(vf a, vf b) { return _mm256_sub_ps(a, b); }
inline vf mul(vf a, vf b) { return _mm256_mul_ps(a, b); }
inline vf div(vf a, vf b) { return _mm256_div_ps(a, b); }
#if defined(__FMA__)
inline vf fmadd(vf a, vf b, vf c) { return _mm256_fmadd_ps(a, b, c); }
#else
inline vf fmadd(vf a, vf b, vf c) { return add(mul(a, b), c); }
#endif
inline vf max(vf a, vf b) { return _mm256_max_ps(a, b); }
inline vf min(vf a, vf b) { return _mm256_min_ps(a, b); }
using vmask = __m256;  // all-ones / all-zeros lanes
inline vmask gt(vf a, vf b) { return _mm256_cmp_ps(a, b, _CMP_GT_OQ); }
inline vmask ge(vf a, vf b) { return _mm256_cmp_ps(a, b, _CMP_GE_OQ); }
inline vmask inside(vf x, vf lo, vf hi) {
  return _mm256_and_ps(gt(x, lo), _mm256_cmp_ps(x, hi, _CMP_LT_OQ));
}
inline vf blend(vmask m, vf t, vf f) { return _mm256_blendv_ps(f, t, m); }
inline vf zero_unless(vmask m, vf v) { return _mm256_and_ps(m, v); }
inline vf exp(vf v) { return Sleef_expf8_u10avx2(v); }
inline vf expm1(vf v) { return Sleef_expm1f8_u10avx2(v); }
inline vf log1p(vf v) { return Sleef_log1pf8_u10avx2(v); }
inline vf tanh(vf v) { return Sleef_tanhf8_u10avx2(v); }
inline vf erfc(vf v) { return Sleef_erfcf8_u15avx2(v); }
#else
using vf = __m128;
constexpr std::size_t width = 4;
constexpr char const* isa = "SSE2 f4_u10";

inline vf set1(float v) { return _mm_set1_ps(v); }
inline vf load(float const* p) { return _mm_loadu_ps(p); }
inline void store(float* p, vf v) { _mm_storeu_ps(p, v); }
inline vf add(vf a, vf b) { return _mm_add_ps(a, b); }
inline vf sub(vf a, vf b) { return _mm_sub_ps(a, b); }
inline vf mul(vf a, vf b) { return _mm_mul_ps(a, b); }
inline vf div(vf a, vf b) { return _mm_div_ps(a, b); }
inline vf fmadd(vf a, vf b, vf c) { return add(mul(a, b), c); }
inline vf max(vf a, vf b) { return _mm_max_ps(a, b); }
inline vf min(vf a, vf b) { return _mm_min_ps(a, b); }
using vmask = __m128;
inline vmask gt(vf a, vf b) { return _mm_cmpgt_ps(a, b); }
inline vmask ge(vf a, vf b) { return _mm_cmpge_ps(a, b); }
inline vmask inside(vf x, vf lo, vf hi) { return _mm_and_ps(gt(x, lo), _mm_cmplt_ps(x, hi)); }
inline vf blend(vmask m, vf t, vf f) { return _mm_or_ps(_mm_and_ps(m, t), _mm_andnot_ps(m, f)); }
inline vf zero_unless(vmask m, vf v) { return _mm_and_ps(m, v); }
inline vf exp(vf v) { return Sleef_expf4_u10(v); }
inline vf expm1(vf v) { return Sleef_expm1f4_u10(v); }
inline vf log1p(vf v) { return Sleef_log1pf4_u10(v); }
inline vf tanh(vf v) { return Sleef_tanhf4_u10(v); }
inline vf erfc(vf v) { return Sleef_erfcf4_u15(v); }
#endif

inline vf load_tail(float const* p, std::size_t n, float fill = 0.0F) {
  alignas(64) float block[width];
  std::fill(block, block + width, fill);
  std::memcpy(block, p, n * sizeof(float));
  return load(block);
}
inline void store_tail(float* p, vf v, std::size_t n) {
  alignas(64) float block[width];
  store(block, v);
  std::memcpy(p, block, n * sizeof(float));
}
inline float reduce_max(vf v) {
  alignas(64) float block[width];
  store(block, v);
  return *std::max_element(block, block + width);
}
inline float reduce_add(vf v) {
  alignas(64) float block[width];
  store(block, v);
  float s = 0.0F;
  for (float b : block) {
    s += b;
  }
  return s;
}

#endif

// ---- Whole-array loops: full vectors, then one partial vector for the tail. ----

template <class Op>
inline void map1(float const* x, float* y, std::size_t n, Op op) {
  std::size_t i = 0;
  for (; i + width <= n; i += width) {
    store(y + i, op(load(x + i)));
  }
  if (i < n) {
    store_tail(y + i, op(load_tail(x + i, n - i)), n - i);
  }
}

template <class Op>
inline void map2(float const* a, float const* b, float* out, std::size_t n, Op op) {
  std::size_t i = 0;
  for (; i + width <= n; i += width) {
    store(out + i, op(load(a + i), load(b + i)));
  }
  if (i < n) {
    store_tail(out + i, op(load_tail(a + i, n - i), load_tail(b + i, n - i)), n - i);
  }
}

// Turns a vector expression into the kernel signatures of peer.hpp (variadic: commas are fine).
#define NONLIN_SLEEF_FWD(...)                           \
  [](float const* x_, float* y_, std::size_t n_) {      \
    map1(x_, y_, n_, [](vf x) { return __VA_ARGS__; }); \
  }
#define NONLIN_SLEEF_BWD(var, ...)                                      \
  [](float const* in_, float const* dy_, float* dx_, std::size_t n_) {  \
    map2(in_, dy_, dx_, n_, [](vf var, vf dy) { return __VA_ARGS__; }); \
  }

// ---- Shared pieces. ----

inline vf zero() { return set1(0.0F); }
inline vf one() { return set1(1.0F); }
inline vf neg(vf v) { return sub(zero(), v); }
// 1 / (1 + e^-x): SLEEF has no logistic function. exp overflows to inf for x < -88, giving 0.
inline vf sigmoid(vf x) { return div(one(), add(one(), exp(neg(x)))); }

constexpr float selu_alpha = 1.67326324235437728481704299167171F;
constexpr float selu_lambda = 1.05070098735548049341933498529460F;
constexpr float sqrt_half = 0.707106781186547524400844362104849F;
constexpr float inv_sqrt_2pi = 0.398942280401432677939946059934382F;
constexpr float selu_lambda_alpha = 1.75809934084737685994021752081F;
constexpr float gelu_c = 0.797884560802865355879892119868763737F;  // sqrt(2/pi)
constexpr float gelu_k = 0.044715F;
constexpr float quick_k = 1.702F;

// gelu_tanh's tanh argument sqrt(2/pi) (x + 0.044715 x^3).
inline vf gelu_tanh_arg(vf x) {
  return mul(mul(set1(gelu_c), x), fmadd(mul(set1(gelu_k), x), x, one()));
}

// d/dx [x s(kx)] = s + k x s (1 - s), s = sigmoid(kx); silu/swish are k = 1.
inline vf swish_grad(vf x, vf s, float k) {
  return fmadd(mul(set1(k), x), mul(s, sub(one(), s)), s);
}

// ---- Softmax rows: max, exp(x - max) and its sum, then scale (or subtract the log-sum). ----

constexpr float neg_inf = -std::numeric_limits<float>::infinity();

// Row maximum; tail lanes read as -inf so they never win.
inline float row_max(float const* in, std::size_t cols) {
  vf m = set1(neg_inf);
  std::size_t i = 0;
  for (; i + width <= cols; i += width) {
    m = max(m, load(in + i));
  }
  if (i < cols) {
    m = max(m, load_tail(in + i, cols - i, neg_inf));
  }
  return reduce_max(m);
}

// out[i] = exp(in[i] - m) when out is not null; returns their sum (-inf tail lanes add 0).
inline float row_exp_sum(float const* in, float* out, std::size_t cols, float m) {
  vf const vm = set1(m);
  vf sum = zero();
  std::size_t i = 0;
  for (; i + width <= cols; i += width) {
    vf const e = exp(sub(load(in + i), vm));
    if (out != nullptr) {
      store(out + i, e);
    }
    sum = add(sum, e);
  }
  if (i < cols) {
    vf const e = exp(sub(load_tail(in + i, cols - i, neg_inf), vm));
    if (out != nullptr) {
      store_tail(out + i, e, cols - i);
    }
    sum = add(sum, e);
  }
  return reduce_add(sum);
}

void softmax_rows(float const* x, float* y, std::size_t rows, std::size_t cols) {
  for (std::size_t r = 0; r < rows; ++r) {
    float const* in = x + r * cols;
    float* out = y + r * cols;
    float const sum = row_exp_sum(in, out, cols, row_max(in, cols));
    vf const inv = set1(1.0F / sum);
    map1(out, out, cols, [inv](vf e) { return mul(e, inv); });
  }
}

void log_softmax_rows(float const* x, float* y, std::size_t rows, std::size_t cols) {
  for (std::size_t r = 0; r < rows; ++r) {
    float const* in = x + r * cols;
    float const m = row_max(in, cols);
    vf const vm = set1(m);
    vf const log_sum = set1(Sleef_logf_u10(row_exp_sum(in, nullptr, cols, m)));
    // (x - m) - log(sum): x - m is exact near the maximum, where the result is small.
    map1(in, y + r * cols, cols, [vm, log_sum](vf v) { return sub(sub(v, vm), log_sum); });
  }
}

// Backward from the output, per row: softmax dx = y (dy - sum dy y); log_softmax
// dx = dy - e^y sum dy. Tail lanes read as 0 and add nothing to either sum.
inline float row_dot(float const* a, float const* b, std::size_t cols) {
  vf acc = zero();
  std::size_t i = 0;
  for (; i + width <= cols; i += width) {
    acc = fmadd(load(a + i), load(b + i), acc);
  }
  if (i < cols) {
    acc = fmadd(load_tail(a + i, cols - i), load_tail(b + i, cols - i), acc);
  }
  return reduce_add(acc);
}

inline float row_sum(float const* a, std::size_t cols) {
  vf acc = zero();
  std::size_t i = 0;
  for (; i + width <= cols; i += width) {
    acc = add(acc, load(a + i));
  }
  if (i < cols) {
    acc = add(acc, load_tail(a + i, cols - i));
  }
  return reduce_add(acc);
}

void softmax_backward_rows(float const* y, float const* dy, float* dx, std::size_t rows,
                           std::size_t cols) {
  for (std::size_t r = 0; r < rows; ++r) {
    std::size_t const base = r * cols;
    vf const dot = set1(row_dot(y + base, dy + base, cols));
    map2(y + base, dy + base, dx + base, cols, [dot](vf p, vf g) { return mul(p, sub(g, dot)); });
  }
}

void log_softmax_backward_rows(float const* y, float const* dy, float* dx, std::size_t rows,
                               std::size_t cols) {
  for (std::size_t r = 0; r < rows; ++r) {
    std::size_t const base = r * cols;
    vf const sum = set1(row_sum(dy + base, cols));
    map2(y + base, dy + base, dx + base, cols,
         [sum](vf logp, vf g) { return sub(g, mul(exp(logp), sum)); });
  }
}

// ---- Gated units out = value * act(gate), one fused loop each (the act's formulas above). ----

struct vf2 {
  vf d_value;
  vf d_gate;
};

// (d_value[i], d_gate[i]) = op(value[i], gate[i], dy[i]).
template <class Op>
inline void map3_2(float const* v, float const* g, float const* dy, float* dv, float* dg,
                   std::size_t n, Op op) {
  std::size_t i = 0;
  for (; i + width <= n; i += width) {
    vf2 const r = op(load(v + i), load(g + i), load(dy + i));
    store(dv + i, r.d_value);
    store(dg + i, r.d_gate);
  }
  if (i < n) {
    std::size_t const rest = n - i;
    vf2 const r = op(load_tail(v + i, rest), load_tail(g + i, rest), load_tail(dy + i, rest));
    store_tail(dv + i, r.d_value, rest);
    store_tail(dg + i, r.d_gate, rest);
  }
}

struct glu {
  static constexpr char const* name = "glu";
  static vf fwd(vf v, vf g) { return mul(v, sigmoid(g)); }
  static vf2 bwd(vf v, vf g, vf dy) {
    vf const s = sigmoid(g);
    return {mul(dy, s), mul(mul(dy, v), mul(s, sub(one(), s)))};
  }
};

struct reglu {
  static constexpr char const* name = "reglu";
  static vf fwd(vf v, vf g) { return mul(v, max(g, zero())); }
  static vf2 bwd(vf v, vf g, vf dy) {
    return {mul(dy, max(g, zero())), zero_unless(gt(g, zero()), mul(dy, v))};
  }
};

struct geglu {
  static constexpr char const* name = "geglu";
  static vf fwd(vf v, vf g) {
    return mul(v, mul(mul(set1(0.5F), g), erfc(mul(g, set1(-sqrt_half)))));
  }
  static vf2 bwd(vf v, vf g, vf dy) {
    vf const cdf = mul(set1(0.5F), erfc(mul(g, set1(-sqrt_half))));
    vf const pdf = mul(set1(inv_sqrt_2pi), exp(mul(mul(set1(-0.5F), g), g)));
    return {mul(dy, mul(g, cdf)), mul(mul(dy, v), fmadd(g, pdf, cdf))};
  }
};

struct swiglu {
  static constexpr char const* name = "swiglu";
  static vf fwd(vf v, vf g) { return mul(v, mul(g, sigmoid(g))); }
  static vf2 bwd(vf v, vf g, vf dy) {
    vf const s = sigmoid(g);
    return {mul(dy, mul(g, s)), mul(mul(dy, v), swish_grad(g, s, 1.0F))};
  }
};

template <class Unit>
gated_kernels gated_of() {
  return {Unit::name,
          [](float const* v, float const* g, float* out, std::size_t n) {
            map2(v, g, out, n, [](vf a, vf b) { return Unit::fwd(a, b); });
          },
          [](float const* v, float const* g, float const* dy, float* dv, float* dg, std::size_t n) {
            map3_2(v, g, dy, dv, dg, n, [](vf a, vf b, vf c) { return Unit::bwd(a, b, c); });
          }};
}

function_kernels fn(char const* name, forward_kernel f, backward_kernel b,
                    backward_kernel by = nullptr) {
  return function_kernels{name, f, b, by};
}

}  // namespace

peer make_sleef() {
  peer p;
  p.name = "sleef";
  p.version = "SLEEF " + std::to_string(SLEEF_VERSION_MAJOR) + "." +
              std::to_string(SLEEF_VERSION_MINOR) + "." + std::to_string(SLEEF_VERSION_PATCHLEVEL) +
              " (" + isa + ")";
  auto& f = p.functions;

  // Gradients that are all zeros or dy itself are a fill or a copy.
  backward_kernel const zeros = [](float const*, float const*, float* dx, std::size_t n) {
    std::fill(dx, dx + n, 0.0F);
  };
  backward_kernel const pass = [](float const*, float const* dy, float* dx, std::size_t n) {
    std::copy(dy, dy + n, dx);
  };
  f.push_back(fn("step", NONLIN_SLEEF_FWD(zero_unless(gt(x, zero()), one())), zeros, zeros));
  f.push_back(fn(
      "identity", [](float const* x, float* y, std::size_t n) { std::copy(x, x + n, y); }, pass,
      pass));
  f.push_back(fn("relu", NONLIN_SLEEF_FWD(max(x, zero())),
                 NONLIN_SLEEF_BWD(x, zero_unless(gt(x, zero()), dy)),
                 NONLIN_SLEEF_BWD(y, zero_unless(gt(y, zero()), dy))));
  f.push_back(fn("relu6", NONLIN_SLEEF_FWD(min(max(x, zero()), set1(6.0F))),
                 NONLIN_SLEEF_BWD(x, zero_unless(inside(x, zero(), set1(6.0F)), dy)),
                 NONLIN_SLEEF_BWD(y, zero_unless(inside(y, zero(), set1(6.0F)), dy))));
  f.push_back(fn("hardtanh", NONLIN_SLEEF_FWD(min(max(x, set1(-1.0F)), one())),
                 NONLIN_SLEEF_BWD(x, zero_unless(inside(x, set1(-1.0F), one()), dy)),
                 NONLIN_SLEEF_BWD(y, zero_unless(inside(y, set1(-1.0F), one()), dy))));
  f.push_back(fn("leaky_relu", NONLIN_SLEEF_FWD(blend(gt(x, zero()), x, mul(set1(0.01F), x))),
                 NONLIN_SLEEF_BWD(x, blend(gt(x, zero()), dy, mul(set1(0.01F), dy))),
                 NONLIN_SLEEF_BWD(y, blend(gt(y, zero()), dy, mul(set1(0.01F), dy)))));
  // expm1 / exp overflow to inf for large positive x, in lanes the blend discards.
  f.push_back(fn("elu", NONLIN_SLEEF_FWD(blend(gt(x, zero()), x, expm1(x))),
                 NONLIN_SLEEF_BWD(x, blend(gt(x, zero()), dy, mul(dy, exp(x)))),
                 NONLIN_SLEEF_BWD(y, blend(gt(y, zero()), dy, mul(dy, add(y, one()))))));
  f.push_back(fn("selu",
                 NONLIN_SLEEF_FWD(mul(set1(selu_lambda),
                                      blend(gt(x, zero()), x, mul(set1(selu_alpha), expm1(x))))),
                 NONLIN_SLEEF_BWD(x, mul(dy, blend(gt(x, zero()), set1(selu_lambda),
                                                   mul(set1(selu_lambda_alpha), exp(x))))),
                 NONLIN_SLEEF_BWD(y, mul(dy, blend(gt(y, zero()), set1(selu_lambda),
                                                   add(y, set1(selu_lambda_alpha)))))));
  f.push_back(fn("celu", NONLIN_SLEEF_FWD(add(max(x, zero()), min(expm1(x), zero()))),
                 NONLIN_SLEEF_BWD(x, blend(gt(x, zero()), dy, mul(dy, exp(x)))),
                 NONLIN_SLEEF_BWD(y, blend(gt(y, zero()), dy, mul(dy, add(y, one()))))));
  f.push_back(fn("sigmoid", NONLIN_SLEEF_FWD(sigmoid(x)),
                 NONLIN_SLEEF_BWD(x,
                                  [&] {
                                    vf const s = sigmoid(x);
                                    return mul(dy, mul(s, sub(one(), s)));
                                  }()),
                 NONLIN_SLEEF_BWD(y, mul(dy, mul(y, sub(one(), y))))));
  f.push_back(fn("tanh", NONLIN_SLEEF_FWD(tanh(x)),
                 NONLIN_SLEEF_BWD(x,
                                  [&] {
                                    vf const t = tanh(x);
                                    return mul(dy, fmadd(neg(t), t, one()));
                                  }()),
                 NONLIN_SLEEF_BWD(y, mul(dy, fmadd(neg(y), y, one())))));
  // The overflow-free forms min(x, 0) - log1p(e^-|x|) and dy * -expm1(y) (exact near y = 0).
  f.push_back(fn("log_sigmoid", NONLIN_SLEEF_FWD(sub(min(x, zero()), log1p(exp(min(x, neg(x)))))),
                 NONLIN_SLEEF_BWD(x, div(dy, add(one(), exp(x)))),
                 NONLIN_SLEEF_BWD(y, mul(dy, neg(expm1(y))))));
  // (x + 3) / 6 and dy (2x + 3) / 6: x + 3 is exact near -3 (and 2x + 3 near -1.5), where
  // x / 6 + 1/2 or x / 3 + 1/2 would cancel.
  f.push_back(fn(
      "hardsigmoid",
      NONLIN_SLEEF_FWD(min(max(mul(add(x, set1(3.0F)), set1(1.0F / 6)), zero()), one())),
      NONLIN_SLEEF_BWD(x, zero_unless(inside(x, set1(-3.0F), set1(3.0F)), mul(dy, set1(1.0F / 6)))),
      NONLIN_SLEEF_BWD(y, zero_unless(inside(y, zero(), one()), mul(dy, set1(1.0F / 6))))));
  f.push_back(fn(
      "hardswish",
      NONLIN_SLEEF_FWD(
          mul(mul(x, min(max(add(x, set1(3.0F)), zero()), set1(6.0F))), set1(1.0F / 6))),
      NONLIN_SLEEF_BWD(
          x, zero_unless(gt(x, set1(-3.0F)),
                         blend(ge(x, set1(3.0F)), dy,
                               mul(mul(dy, fmadd(x, set1(2.0F), set1(3.0F))), set1(1.0F / 6)))))));
  // Overflow-free max(x, 0) + log1p(e^-|x|); from the output: dy * -expm1(-y).
  f.push_back(fn("softplus", NONLIN_SLEEF_FWD(add(max(x, zero()), log1p(exp(min(x, neg(x)))))),
                 NONLIN_SLEEF_BWD(x, mul(dy, sigmoid(x))),
                 NONLIN_SLEEF_BWD(y, mul(dy, neg(expm1(neg(y)))))));
  // 0.5 x erfc(-x / sqrt 2): erfc keeps the left tail accurate where 1 + erf(x / sqrt 2) cancels.
  f.push_back(fn("gelu_exact",
                 NONLIN_SLEEF_FWD(mul(mul(set1(0.5F), x), erfc(mul(x, set1(-sqrt_half))))),
                 NONLIN_SLEEF_BWD(x, [&] {
                   vf const cdf = mul(set1(0.5F), erfc(mul(x, set1(-sqrt_half))));
                   vf const pdf = mul(set1(inv_sqrt_2pi), exp(mul(mul(set1(-0.5F), x), x)));
                   return mul(dy, fmadd(x, pdf, cdf));
                 }())));
  f.push_back(fn(
      "gelu_tanh", NONLIN_SLEEF_FWD(mul(mul(set1(0.5F), x), add(one(), tanh(gelu_tanh_arg(x))))),
      NONLIN_SLEEF_BWD(x, [&] {
        vf const t = tanh(gelu_tanh_arg(x));
        vf const du = mul(set1(gelu_c), fmadd(mul(set1(3 * gelu_k), x), x, one()));
        vf const half_x = mul(set1(0.5F), x);
        // 0.5 (1 + t) + 0.5 x (1 - t^2) du
        return mul(
            dy, fmadd(mul(half_x, fmadd(neg(t), t, one())), du, fmadd(set1(0.5F), t, set1(0.5F))));
      }())));
  f.push_back(
      fn("gelu_quick", NONLIN_SLEEF_FWD(mul(x, sigmoid(mul(set1(quick_k), x)))),
         NONLIN_SLEEF_BWD(x, mul(dy, swish_grad(x, sigmoid(mul(set1(quick_k), x)), quick_k)))));
  f.push_back(fn("silu", NONLIN_SLEEF_FWD(mul(x, sigmoid(x))),
                 NONLIN_SLEEF_BWD(x, mul(dy, swish_grad(x, sigmoid(x), 1.0F)))));
  f.push_back(fn("swish", NONLIN_SLEEF_FWD(mul(x, sigmoid(x))),
                 NONLIN_SLEEF_BWD(x, mul(dy, swish_grad(x, sigmoid(x), 1.0F)))));
  // x tanh(softplus(x)); exp(x) = inf past x ~ 88 still gives tanh(inf) = 1.
  f.push_back(fn("mish", NONLIN_SLEEF_FWD(mul(x, tanh(log1p(exp(x))))), NONLIN_SLEEF_BWD(x, [&] {
                   // One exp serves tanh(softplus) and sigmoid = e / (1 + e); clamping at 20
                   // keeps e / (1 + e) finite and changes neither (both are 1 in float there).
                   vf const e = exp(min(x, set1(20.0F)));
                   vf const t = tanh(log1p(e));
                   vf const s = div(e, add(one(), e));
                   // t + x s (1 - t^2)
                   return mul(dy, fmadd(mul(x, s), fmadd(neg(t), t, one()), t));
                 }())));
  f.push_back(fn("squared_relu", NONLIN_SLEEF_FWD(mul(max(x, zero()), max(x, zero()))),
                 NONLIN_SLEEF_BWD(x, mul(mul(dy, set1(2.0F)), max(x, zero())))));

  p.softmax = softmax_rows;
  p.log_softmax = log_softmax_rows;
  p.softmax_backward = softmax_backward_rows;
  p.log_softmax_backward = log_softmax_backward_rows;
  p.gated = {gated_of<glu>(), gated_of<reglu>(), gated_of<geglu>(), gated_of<swiglu>()};
  return p;
}

#undef NONLIN_SLEEF_FWD
#undef NONLIN_SLEEF_BWD

}  // namespace nonlin::peers

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
