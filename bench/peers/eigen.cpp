// SPDX-License-Identifier: MIT
// Peer "eigen": Eigen 3.4 array expressions over Eigen::Map views of the caller's buffers, the
// way TensorFlow's CPU kernels use Eigen. Every transcendental is Eigen's own packet math
// (AVX-512 / AVX2 / SSE, whatever -march allows), with Eigen's defaults (EIGEN_FAST_MATH = 1):
//   exp             Cephes-style range reduction and polynomial (pexp)
//   expm1, log1p    the accurate ones, built on exp and log (Kahan's expm1: exp, log and a
//                   division, about 8 exps); used where the textbook uses them (elu, selu, celu
//                   forward; softplus), while the textbook's 1 - e^y stays 1 - exp(y)
//   tanh            generic_fast_tanh_float, the 13/6 rational (vectorized only under
//                   EIGEN_FAST_MATH, the default; exactly +-1 beyond |x| ~ 7.9)
//   logistic        Eigen's sigmoid: the 9/10 rational for float (exp(x) below -9), accurate in
//                   absolute terms (~1e-7), up to ~7e-4 relative for x in [-9, -6]
//   erf             generic_fast_erf_float from <unsupported/Eigen/SpecialFunctions>
// Eigen 3.4 has no packet erfc (HasErfc = 0: .erfc() is a scalar std::erfc loop), so gelu_exact
// is 0.5 x (1 + erf(x / sqrt 2)), as PyTorch's and TF's vectorized CPU paths write it; its
// relative accuracy is lost for x < -4, where 1 + erf cancels (erf is clamped to -1 at -4).
//
// Eigen 3.4's comparisons and select() have no packet path (coefficient loops, which g++ -O3 and
// clang auto-vectorize when the branches are cheap), so piecewise functions use max/min wherever
// that is exact and select() only between cheap values: an expensive branch is first evaluated
// vectorized into the output and then picked. Work goes in blocks of kBlock elements so that
// such a two-pass kernel re-reads its output from L1, not from DRAM. Tails (n not a multiple of
// the packet, unaligned starts) are Eigen's own scalar loop over the same functors.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string>

// g++ 12 reports (maybe-)uninitialized use inside its own AVX-512 intrinsics (the
// self-initialized _mm512_undefined_ps) once Eigen's packet code is inlined: a false positive,
// silenced where <immintrin.h> is first included (the state at the header is what counts).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <Eigen/Core>
#include <unsupported/Eigen/SpecialFunctions>
#pragma GCC diagnostic pop

#include "peer.hpp"

namespace nonlin::peers {
namespace {

using in_t = Eigen::Map<Eigen::ArrayXf const>;
using out_t = Eigen::Map<Eigen::ArrayXf>;

constexpr std::size_t kBlock = 2048;  // 8 KiB per array: a block's output stays in L1

// The same parameters as nonlin's defaults (README).
constexpr float kSeluAlpha = 1.67326324235437728481704299167171F;
constexpr float kSeluLambda = 1.05070098735548049341933498529460F;
constexpr float kSqrtHalf = 0.707106781186547524400844362104849F;     // 1 / sqrt(2)
constexpr float kInvSqrt2Pi = 0.398942280401432677939946059934382F;   // 1 / sqrt(2 pi)
constexpr float kSqrt2OverPi = 0.797884560802865355879892119868763F;  // sqrt(2 / pi)
constexpr float kGeluCubic = 0.044715F;
constexpr float kGeluQuick = 1.702F;
constexpr float kSixth = 1.0F / 6.0F;

// Numerically stable softplus log(1 + e^x) = max(x, 0) + log1p(e^-|x|), as an expression.
template <class X>
auto softplus_of(X const& x) {
  return x.max(0.0F) + (-x.abs()).exp().log1p();
}

// ---------------------------------------------------------------------------------------------
// One struct per function: fwd(x, y), bwd(x, dy, dx) and, where natural, bwdy(y, dy, dx), each
// on one block. Their own namespace keeps tanh, step, ... clear of <cmath>'s names.

namespace fn {

struct step {
  static constexpr char const* name = "step";
  // select(), unlike cast<float>() of the comparison, is a loop g++ -O3 vectorizes.
  static void fwd(in_t x, out_t y) { y = (x > 0.0F).select(Eigen::ArrayXf::Ones(x.size()), 0.0F); }
  static void bwd(in_t, in_t, out_t dx) { dx.setZero(); }
  static void bwdy(in_t, in_t, out_t dx) { dx.setZero(); }
};

struct identity {
  static constexpr char const* name = "identity";
  static void fwd(in_t x, out_t y) { y = x; }
  static void bwd(in_t, in_t dy, out_t dx) { dx = dy; }
  static void bwdy(in_t, in_t dy, out_t dx) { dx = dy; }
};

struct relu {
  static constexpr char const* name = "relu";
  static void fwd(in_t x, out_t y) { y = x.max(0.0F); }
  static void bwd(in_t x, in_t dy, out_t dx) { dx = (x > 0.0F).select(dy, 0.0F); }
  static void bwdy(in_t y, in_t dy, out_t dx) { dx = (y > 0.0F).select(dy, 0.0F); }
};

struct relu6 {
  static constexpr char const* name = "relu6";
  static void fwd(in_t x, out_t y) { y = x.max(0.0F).min(6.0F); }
  static void bwd(in_t x, in_t dy, out_t dx) { dx = (x > 0.0F && x < 6.0F).select(dy, 0.0F); }
  static void bwdy(in_t y, in_t dy, out_t dx) { dx = (y > 0.0F && y < 6.0F).select(dy, 0.0F); }
};

struct hardtanh {
  static constexpr char const* name = "hardtanh";
  static void fwd(in_t x, out_t y) { y = x.max(-1.0F).min(1.0F); }
  static void bwd(in_t x, in_t dy, out_t dx) { dx = (x > -1.0F && x < 1.0F).select(dy, 0.0F); }
  static void bwdy(in_t y, in_t dy, out_t dx) { dx = (y > -1.0F && y < 1.0F).select(dy, 0.0F); }
};

struct leaky_relu {
  static constexpr char const* name = "leaky_relu";
  static constexpr float slope = 0.01F;
  // max(x, a x) is x > 0 ? x : a x for 0 <= a <= 1 (TensorFlow's Eigen LeakyRelu).
  static void fwd(in_t x, out_t y) { y = x.max(slope * x); }
  static void bwd(in_t x, in_t dy, out_t dx) { dx = (x > 0.0F).select(dy, slope * dy); }
  static void bwdy(in_t y, in_t dy, out_t dx) { dx = (y > 0.0F).select(dy, slope * dy); }
};

// elu and celu with alpha = 1 are the same function. Splitting x into max(x, 0) and min(x, 0)
// gives both branches without a select, and expm1 never sees a large positive argument.
struct elu {
  static constexpr char const* name = "elu";
  static void fwd(in_t x, out_t y) { y = x.max(0.0F) + x.min(0.0F).expm1(); }
  // exp(min(x, 0)) is 1 for x > 0 and e^x otherwise.
  static void bwd(in_t x, in_t dy, out_t dx) { dx = dy * x.min(0.0F).exp(); }
  // y + 1 for y <= 0, 1 for y > 0.
  static void bwdy(in_t y, in_t dy, out_t dx) { dx = dy * (y.min(0.0F) + 1.0F); }
};

struct celu : elu {
  static constexpr char const* name = "celu";
};

struct selu {
  static constexpr char const* name = "selu";
  static void fwd(in_t x, out_t y) {
    y = kSeluLambda * x.max(0.0F) + (kSeluLambda * kSeluAlpha) * x.min(0.0F).expm1();
  }
  static void bwd(in_t x, in_t dy, out_t dx) {
    dx = x.min(0.0F).exp();  // vectorized; the select below only picks
    dx = (x > 0.0F).select(kSeluLambda * dy, (kSeluLambda * kSeluAlpha) * dy * dx);
  }
  static void bwdy(in_t y, in_t dy, out_t dx) {
    dx = (y > 0.0F).select(kSeluLambda * dy, dy * (y + kSeluLambda * kSeluAlpha));
  }
};

struct sigmoid {
  static constexpr char const* name = "sigmoid";
  static void fwd(in_t x, out_t y) { y = x.logistic(); }
  static void bwd(in_t x, in_t dy, out_t dx) {
    dx = x.logistic();  // s, once (an expression would evaluate it twice)
    dx = dy * dx * (1.0F - dx);
  }
  static void bwdy(in_t y, in_t dy, out_t dx) { dx = dy * y * (1.0F - y); }
};

struct tanh {
  static constexpr char const* name = "tanh";
  static void fwd(in_t x, out_t y) { y = x.tanh(); }
  static void bwd(in_t x, in_t dy, out_t dx) {
    dx = x.tanh();
    dx = dy * (1.0F - dx.square());
  }
  static void bwdy(in_t y, in_t dy, out_t dx) { dx = dy * (1.0F - y.square()); }
};

// log sigmoid(x) = -softplus(-x) = min(x, 0) - log1p(e^-|x|), stable for any x.
struct log_sigmoid {
  static constexpr char const* name = "log_sigmoid";
  static void fwd(in_t x, out_t y) { y = x.min(0.0F) - (-x.abs()).exp().log1p(); }
  // 1 / (1 + e^x) = sigmoid(-x).
  static void bwd(in_t x, in_t dy, out_t dx) { dx = dy * (-x).logistic(); }
  // 1 - e^y as written: Eigen's expm1 (exp, log and a division) costs about 8 exps.
  static void bwdy(in_t y, in_t dy, out_t dx) { dx = dy * (1.0F - y.exp()); }
};

struct hardsigmoid {
  static constexpr char const* name = "hardsigmoid";
  static void fwd(in_t x, out_t y) { y = (x * kSixth + 0.5F).max(0.0F).min(1.0F); }
  static void bwd(in_t x, in_t dy, out_t dx) {
    dx = (x > -3.0F && x < 3.0F).select(dy * kSixth, 0.0F);
  }
  static void bwdy(in_t y, in_t dy, out_t dx) {
    dx = (y > 0.0F && y < 1.0F).select(dy * kSixth, 0.0F);
  }
};

struct hardswish {
  static constexpr char const* name = "hardswish";
  static void fwd(in_t x, out_t y) { y = x * (x + 3.0F).max(0.0F).min(6.0F) * kSixth; }
  // The derivative jumps at both ends (0 -> -1/2 at -3, 3/2 -> 1 at 3): no max/min form.
  static void bwd(in_t x, in_t dy, out_t dx) {
    dx = (x <= -3.0F).select(0.0F, (x >= 3.0F).select(dy, dy * (2.0F * x + 3.0F) * kSixth));
  }
};

struct softplus {
  static constexpr char const* name = "softplus";
  static void fwd(in_t x, out_t y) { y = softplus_of(x); }
  static void bwd(in_t x, in_t dy, out_t dx) { dx = dy * x.logistic(); }
  // sigmoid(x) = 1 - e^-y.
  static void bwdy(in_t y, in_t dy, out_t dx) { dx = dy * (1.0F - (-y).exp()); }
};

struct gelu_exact {
  static constexpr char const* name = "gelu_exact";
  static void fwd(in_t x, out_t y) { y = 0.5F * x * (1.0F + (x * kSqrtHalf).erf()); }
  static void bwd(in_t x, in_t dy, out_t dx) {
    dx =
        dy * (0.5F * (1.0F + (x * kSqrtHalf).erf()) + kInvSqrt2Pi * x * (-0.5F * x.square()).exp());
  }
};

struct gelu_tanh {
  static constexpr char const* name = "gelu_tanh";
  static void fwd(in_t x, out_t y) {
    y = 0.5F * x * (1.0F + (kSqrt2OverPi * (x + kGeluCubic * x.cube())).tanh());
  }
  static void bwd(in_t x, in_t dy, out_t dx) {
    dx = (kSqrt2OverPi * (x + kGeluCubic * x.cube())).tanh();  // t
    dx = dy * (0.5F * (1.0F + dx) + (0.5F * kSqrt2OverPi) * x * (1.0F - dx.square()) *
                                        (1.0F + (3.0F * kGeluCubic) * x.square()));
  }
};

struct gelu_quick {
  static constexpr char const* name = "gelu_quick";
  static void fwd(in_t x, out_t y) { y = x * (kGeluQuick * x).logistic(); }
  static void bwd(in_t x, in_t dy, out_t dx) {
    dx = (kGeluQuick * x).logistic();  // s
    dx = dy * dx * (1.0F + kGeluQuick * x * (1.0F - dx));
  }
};

// swish with beta = 1 is silu.
struct silu {
  static constexpr char const* name = "silu";
  static void fwd(in_t x, out_t y) { y = x * x.logistic(); }
  static void bwd(in_t x, in_t dy, out_t dx) {
    dx = x.logistic();  // s
    dx = dy * dx * (1.0F + x * (1.0F - dx));
  }
};

struct swish : silu {
  static constexpr char const* name = "swish";
};

struct mish {
  static constexpr char const* name = "mish";
  static void fwd(in_t x, out_t y) { y = x * softplus_of(x).tanh(); }
  static void bwd(in_t x, in_t dy, out_t dx) {
    dx = softplus_of(x).tanh();  // t
    dx = dy * (dx + x * x.logistic() * (1.0F - dx.square()));
  }
};

struct squared_relu {
  static constexpr char const* name = "squared_relu";
  static void fwd(in_t x, out_t y) { y = x.max(0.0F).square(); }
  static void bwd(in_t x, in_t dy, out_t dx) { dx = 2.0F * dy * x.max(0.0F); }
};

}  // namespace fn

// ---------------------------------------------------------------------------------------------
// Gated units out = value * act(gate), one block kernel each, fused into single expressions (the
// backward computes act's shared factor into d_value first, like the two-step bwd above).

namespace gate {

struct glu {
  static constexpr char const* name = "glu";
  static void fwd(in_t v, in_t g, out_t out) { out = v * g.logistic(); }
  static void bwd(in_t v, in_t g, in_t dy, out_t dv, out_t dg) {
    dv = g.logistic();  // s
    dg = dy * v * dv * (1.0F - dv);
    dv = dy * dv;
  }
};

struct reglu {
  static constexpr char const* name = "reglu";
  static void fwd(in_t v, in_t g, out_t out) { out = v * g.max(0.0F); }
  static void bwd(in_t v, in_t g, in_t dy, out_t dv, out_t dg) {
    dv = dy * g.max(0.0F);
    dg = (g > 0.0F).select(dy * v, 0.0F);
  }
};

struct geglu {
  static constexpr char const* name = "geglu";
  static void fwd(in_t v, in_t g, out_t out) {
    out = v * (0.5F * g * (1.0F + (g * kSqrtHalf).erf()));
  }
  static void bwd(in_t v, in_t g, in_t dy, out_t dv, out_t dg) {
    dv = 0.5F * (1.0F + (g * kSqrtHalf).erf());  // cdf
    dg = dy * v * (dv + kInvSqrt2Pi * g * (-0.5F * g.square()).exp());
    dv = dy * g * dv;
  }
};

struct swiglu {
  static constexpr char const* name = "swiglu";
  static void fwd(in_t v, in_t g, out_t out) { out = v * (g * g.logistic()); }
  static void bwd(in_t v, in_t g, in_t dy, out_t dv, out_t dg) {
    dv = g.logistic();  // s
    dg = dy * v * dv * (1.0F + g * (1.0F - dv));
    dv = dy * g * dv;
  }
};

}  // namespace gate

// ---------------------------------------------------------------------------------------------
// Whole-array kernels: the block loop around a function's block kernels.

Eigen::Index block_size(std::size_t i, std::size_t n) {
  return static_cast<Eigen::Index>(std::min(kBlock, n - i));
}

template <void (*Block)(in_t, out_t)>
void forward_kernel_of(float const* x, float* y, std::size_t n) {
  for (std::size_t i = 0; i < n; i += kBlock) {
    Eigen::Index const m = block_size(i, n);
    Block(in_t(x + i, m), out_t(y + i, m));
  }
}

template <void (*Block)(in_t, in_t, out_t)>
void backward_kernel_of(float const* in, float const* dy, float* dx, std::size_t n) {
  for (std::size_t i = 0; i < n; i += kBlock) {
    Eigen::Index const m = block_size(i, n);
    Block(in_t(in + i, m), in_t(dy + i, m), out_t(dx + i, m));
  }
}

template <void (*Block)(in_t, in_t, out_t)>
void gated_forward_of(float const* value, float const* gate, float* out, std::size_t n) {
  for (std::size_t i = 0; i < n; i += kBlock) {
    Eigen::Index const m = block_size(i, n);
    Block(in_t(value + i, m), in_t(gate + i, m), out_t(out + i, m));
  }
}

template <void (*Block)(in_t, in_t, in_t, out_t, out_t)>
void gated_backward_of(float const* value, float const* gate, float const* dy, float* d_value,
                       float* d_gate, std::size_t n) {
  for (std::size_t i = 0; i < n; i += kBlock) {
    Eigen::Index const m = block_size(i, n);
    Block(in_t(value + i, m), in_t(gate + i, m), in_t(dy + i, m), out_t(d_value + i, m),
          out_t(d_gate + i, m));
  }
}

template <class Unit>
gated_kernels gated_of() {
  return {Unit::name, gated_forward_of<&Unit::fwd>, gated_backward_of<&Unit::bwd>};
}

template <class Fn>
function_kernels kernels_of() {
  function_kernels k;
  k.function = Fn::name;
  k.forward = forward_kernel_of<&Fn::fwd>;
  k.backward = backward_kernel_of<&Fn::bwd>;
  if constexpr (requires { &Fn::bwdy; }) {
    k.backward_from_output = backward_kernel_of<&Fn::bwdy>;
  }
  return k;
}

// ---------------------------------------------------------------------------------------------
// Softmax rows: max shift, exp, sum, each a vectorized Eigen expression or reduction per row.

void softmax_rows(float const* x, float* y, std::size_t rows, std::size_t cols) {
  if (cols == 0) {
    return;  // maxCoeff() of an empty row is undefined
  }
  auto const c = static_cast<Eigen::Index>(cols);
  for (std::size_t r = 0; r < rows; ++r) {
    in_t const in(x + r * cols, c);
    out_t out(y + r * cols, c);
    out = (in - in.maxCoeff()).exp();
    out *= 1.0F / out.sum();
  }
}

void log_softmax_rows(float const* x, float* y, std::size_t rows, std::size_t cols) {
  if (cols == 0) {
    return;
  }
  auto const c = static_cast<Eigen::Index>(cols);
  for (std::size_t r = 0; r < rows; ++r) {
    in_t const in(x + r * cols, c);
    out_t out(y + r * cols, c);
    float const m = in.maxCoeff();
    out = in - (m + std::log((in - m).exp().sum()));
  }
}

// Backward from the output: softmax dx = y (dy - sum dy y), log_softmax dx = dy - e^y sum dy.
void softmax_backward_rows(float const* y, float const* dy, float* dx, std::size_t rows,
                           std::size_t cols) {
  auto const c = static_cast<Eigen::Index>(cols);
  for (std::size_t r = 0; r < rows; ++r) {
    in_t const p(y + r * cols, c);
    in_t const g(dy + r * cols, c);
    out_t out(dx + r * cols, c);
    out = p * (g - (p * g).sum());
  }
}

void log_softmax_backward_rows(float const* y, float const* dy, float* dx, std::size_t rows,
                               std::size_t cols) {
  auto const c = static_cast<Eigen::Index>(cols);
  for (std::size_t r = 0; r < rows; ++r) {
    in_t const logp(y + r * cols, c);
    in_t const g(dy + r * cols, c);
    out_t out(dx + r * cols, c);
    out = g - logp.exp() * g.sum();
  }
}

}  // namespace

peer make_eigen() {
  peer p;
  p.name = "eigen";
  p.version = "Eigen " + std::to_string(EIGEN_WORLD_VERSION) + "." +
              std::to_string(EIGEN_MAJOR_VERSION) + "." + std::to_string(EIGEN_MINOR_VERSION);
  p.functions = {
      kernels_of<fn::step>(),         kernels_of<fn::identity>(),  kernels_of<fn::relu>(),
      kernels_of<fn::relu6>(),        kernels_of<fn::hardtanh>(),  kernels_of<fn::leaky_relu>(),
      kernels_of<fn::elu>(),          kernels_of<fn::selu>(),      kernels_of<fn::celu>(),
      kernels_of<fn::sigmoid>(),      kernels_of<fn::tanh>(),      kernels_of<fn::log_sigmoid>(),
      kernels_of<fn::hardsigmoid>(),  kernels_of<fn::hardswish>(), kernels_of<fn::softplus>(),
      kernels_of<fn::gelu_exact>(),   kernels_of<fn::gelu_tanh>(), kernels_of<fn::gelu_quick>(),
      kernels_of<fn::silu>(),         kernels_of<fn::swish>(),     kernels_of<fn::mish>(),
      kernels_of<fn::squared_relu>(),
  };
  p.softmax = softmax_rows;
  p.log_softmax = log_softmax_rows;
  p.softmax_backward = softmax_backward_rows;
  p.log_softmax_backward = log_softmax_backward_rows;
  p.gated = {gated_of<gate::glu>(), gated_of<gate::reglu>(), gated_of<gate::geglu>(),
             gated_of<gate::swiglu>()};
  return p;
}

}  // namespace nonlin::peers
