// SPDX-License-Identifier: MIT
// Peer "onednn": oneDNN's (2.6, C++ API) CPU primitives on a 1-D f32 tensor of n elements, the way
// a framework calls them: eltwise_forward (forward_inference), eltwise_backward (backward_data,
// from x with the plain algorithms, from the output with the *_use_dst_for_bwd ones) and
// softmax_v2_forward (softmax_accurate / softmax_log over axis 1 of a rows x cols tensor).
// oneDNN has one implementation per algorithm (no accuracy knobs), so there is no variant to pick;
// gelu_exact is eltwise_gelu_erf, gelu_tanh is eltwise_gelu_tanh, softplus is eltwise_soft_relu.
//
// Each kernel is one primitive, except where oneDNN 2.6 has no algorithm for the function: selu
// (elu with alpha, then linear by lambda), hardsigmoid (linear x / 6 + 1/2, then clip to [0, 1];
// backward: clip_v2 backward, then linear by 1/6) and squared_relu (relu, then square) run two jit
// primitives, the second in place on the output. (An eltwise post-op would fuse them into one
// pass, but in 2.6 an eltwise primitive with an eltwise post-op falls back to the scalar "ref:any"
// implementation, which no user would keep.)
// Softmax backward from the output: softmax_v2_backward (softmax_accurate / softmax_log, reading
// dst), created with a forward_training softmax_v2_forward primitive descriptor as its hint.
//
// Gated units (out = value * act(gate)): oneDNN has no gated primitive and in 2.6 an eltwise
// primitive with a binary_mul post-op (the one-pass way) also falls back to "ref:any", so they are
// two jit primitives, as a framework chains them: eltwise_forward of the gate into out, then
// binary_mul of out and value in place. Backward is four: eltwise_forward of the gate into d_value,
// binary_mul by dy in place, binary_mul dy * value into d_gate, and eltwise_backward (from the
// gate) in place on d_gate. glu is logistic, reglu relu, geglu gelu_erf, swiglu swish (alpha 1).
//
// Bias + activation forward (peer::bias, for bench/bias_bench.cpp): one binary primitive,
// binary_add of src0 = x as a (tokens, features) tensor and src1 = bias as (1, features), broadcast
// over the tokens, with the activation as an eltwise post-op (primitive_attr, post_ops::
// append_eltwise), the one-pass way a framework fuses a Linear's bias with its activation. The
// primitive and memory objects bound to the caller's arrays are all created by the prepare call
// (the benchmark's setup); the returned callable only executes and waits. No backward: oneDNN has
// no primitive for bias + activation backward (it would be eltwise_backward, then a reduction
// primitive for the bias gradient).
//
// Left out: step (no algorithm), the backward of squared_relu (dy * 2 relu(x) is a product of two
// tensors: a binary primitive and a scratch buffer), and backward-from-output where oneDNN has no
// *_use_dst_for_bwd algorithm (selu, log_sigmoid, softplus).
//
// Accuracy: oneDNN computes several functions in the cancelling textbook form, so the relative
// error grows in the tails while the absolute error stays ~1e-6: softplus / log_sigmoid as
// log(1 + e^x) (wrong by 7% at x = -12, garbage below), elu as e^x - 1 (1% at x = -1e-6),
// gelu_erf through 1 + erf (4% at x = -5), gelu_tanh (30% at x = -5), mish (17% at x = -15).
//
// Dispatch: on the development machine (AMD EPYC with AVX-512 and BF16)
// dnnl::get_effective_cpu_isa() reports avx512_core_bf16, and eltwise (forward and backward) and
// softmax_v2 all run their "jit:avx512_core" implementations (ONEDNN_VERBOSE=1 shows them).
//
// Setup: primitives and memory objects are created on the first call for a given n (rows x cols)
// and cached per (function, direction, size) in a function-local static map, so a timed call only
// points the cached dnnl::memory objects at the caller's arrays (set_data_handle) and executes on
// a cached stream. Not thread-safe, like the benchmark that calls it.
//
// Threads: Debian's libdnnl is built with DNNL_CPU_THREADING_RUNTIME = OMP (it links libgomp), so
// by default it would use every core. The comparison is single-threaded, so we set the OpenMP
// thread count of the calling thread to 1 with omp_set_num_threads, looked up in the already
// loaded libgomp with dlsym (that keeps -fopenmp out of the build). This changes the OpenMP
// default of the whole process (nothing else in the benchmark uses OpenMP).

#include <dlfcn.h>
#include <dnnl.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>

#include "peer.hpp"

namespace nonlin::peers {
namespace {

using dnnl::algorithm;
using dnnl::memory;

// Runs oneDNN on one thread (see the header comment). Returns false where that cannot be done
// from here (a TBB or threadpool build), so that the version string does not claim it.
bool force_one_thread() {
  auto const runtime = dnnl::version()->cpu_runtime;
  if (runtime == DNNL_RUNTIME_SEQ) {
    return true;
  }
  if (runtime == DNNL_RUNTIME_OMP) {
    // Conditionally-supported object-to-function pointer cast: fine on every POSIX system.
    auto const set_threads =
        reinterpret_cast<void (*)(int)>(dlsym(RTLD_DEFAULT, "omp_set_num_threads"));
    if (set_threads != nullptr) {
      set_threads(1);
      return true;
    }
  }
  return false;
}

struct context {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
};

context& ctx() {
  static context c;
  return c;
}

// One eltwise algorithm with its alpha and beta (meaning per algorithm, see dnnl_types.h).
struct op {
  algorithm alg = algorithm::undef;
  float alpha = 0;
  float beta = 0;
};

// A forward: `first` from x to y, then `then` (if any) in place on y.
struct forward_plan {
  op first;
  op then;
};

// A backward: eltwise_backward with `alg` (a *_use_dst_for_bwd algorithm reads y instead of x),
// then (if any) `then` in place on dx.
struct backward_plan {
  op alg;
  bool use_dst = false;
  op then;
};

memory::desc vector_desc(std::size_t n, memory::data_type type = memory::data_type::f32) {
  return {{static_cast<memory::dim>(n)}, type, memory::format_tag::a};
}

// The element type of a kernel's arrays: float, or bfloat16 as its bits.
template <class E>
constexpr memory::data_type data_type_of() {
  return sizeof(E) == 4 ? memory::data_type::f32 : memory::data_type::bf16;
}

// A memory object with no buffer of its own: set_data_handle points it at the caller's array.
memory unbound(memory::desc const& md) { return {md, ctx().engine, DNNL_MEMORY_NONE}; }

// An eltwise forward primitive run in place on one memory object (the second step of a plan).
struct in_place {
  dnnl::eltwise_forward prim;
  std::unordered_map<int, memory> args;

  in_place() = default;
  in_place(op const& o, memory const& data) {
    if (o.alg == algorithm::undef) {
      return;
    }
    dnnl::eltwise_forward::desc const d(dnnl::prop_kind::forward_inference, o.alg, data.get_desc(),
                                        o.alpha, o.beta);
    prim = dnnl::eltwise_forward({d, ctx().engine});
    args = {{DNNL_ARG_SRC, data}, {DNNL_ARG_DST, data}};
  }
  void run() const {
    if (prim) {
      prim.execute(ctx().stream, args);
    }
  }
};

template <forward_plan const& P, class E = float>
void forward(E const* x, E* y, std::size_t n) {
  if (n == 0) {
    return;
  }
  struct cached {
    memory src, dst;
    dnnl::eltwise_forward prim;
    std::unordered_map<int, memory> args;
    in_place then;
  };
  static std::map<std::size_t, cached> cache;
  auto it = cache.find(n);
  if (it == cache.end()) {
    force_one_thread();
    cached c;
    auto const md = vector_desc(n, data_type_of<E>());
    c.src = unbound(md);
    c.dst = unbound(md);
    dnnl::eltwise_forward::desc const d(dnnl::prop_kind::forward_inference, P.first.alg, md,
                                        P.first.alpha, P.first.beta);
    c.prim = dnnl::eltwise_forward({d, ctx().engine});
    c.args = {{DNNL_ARG_SRC, c.src}, {DNNL_ARG_DST, c.dst}};
    c.then = in_place(P.then, c.dst);
    it = cache.emplace(n, std::move(c)).first;
  }
  cached const& c = it->second;
  c.src.set_data_handle(const_cast<E*>(x));  // read only: oneDNN takes void*
  c.dst.set_data_handle(y);
  c.prim.execute(ctx().stream, c.args);
  c.then.run();
  ctx().stream.wait();
}

template <backward_plan const& P, class E = float>
void backward(E const* in, E const* dy, E* dx, std::size_t n) {
  if (n == 0) {
    return;
  }
  struct cached {
    memory in, diff_dst, diff_src;
    dnnl::eltwise_backward prim;
    std::unordered_map<int, memory> args;
    in_place then;
  };
  static std::map<std::size_t, cached> cache;
  auto it = cache.find(n);
  if (it == cache.end()) {
    force_one_thread();
    cached c;
    auto const md = vector_desc(n, data_type_of<E>());
    c.in = unbound(md);
    c.diff_dst = unbound(md);
    c.diff_src = unbound(md);
    // The backward primitive descriptor needs its forward one as a hint (same algorithm).
    dnnl::eltwise_forward::desc const fd(dnnl::prop_kind::forward_training, P.alg.alg, md,
                                         P.alg.alpha, P.alg.beta);
    dnnl::eltwise_forward::primitive_desc const hint(fd, ctx().engine);
    dnnl::eltwise_backward::desc const bd(P.alg.alg, md, md, P.alg.alpha, P.alg.beta);
    c.prim = dnnl::eltwise_backward({bd, ctx().engine, hint});
    c.args = {{P.use_dst ? DNNL_ARG_DST : DNNL_ARG_SRC, c.in},
              {DNNL_ARG_DIFF_DST, c.diff_dst},
              {DNNL_ARG_DIFF_SRC, c.diff_src}};
    c.then = in_place(P.then, c.diff_src);
    it = cache.emplace(n, std::move(c)).first;
  }
  cached const& c = it->second;
  c.in.set_data_handle(const_cast<E*>(in));
  c.diff_dst.set_data_handle(const_cast<E*>(dy));
  c.diff_src.set_data_handle(dx);
  c.prim.execute(ctx().stream, c.args);
  c.then.run();
  ctx().stream.wait();
}

template <algorithm A, class E = float>
void softmax_rows(E const* x, E* y, std::size_t rows, std::size_t cols) {
  if (rows == 0 || cols == 0) {
    return;
  }
  struct cached {
    memory src, dst;
    dnnl::softmax_v2_forward prim;
    std::unordered_map<int, memory> args;
  };
  static std::map<std::pair<std::size_t, std::size_t>, cached> cache;
  auto it = cache.find({rows, cols});
  if (it == cache.end()) {
    force_one_thread();
    cached c;
    memory::desc const md({static_cast<memory::dim>(rows), static_cast<memory::dim>(cols)},
                          data_type_of<E>(), memory::format_tag::ab);
    c.src = unbound(md);
    c.dst = unbound(md);
    dnnl::softmax_v2_forward::desc const d(dnnl::prop_kind::forward_inference, A, md, md, 1);
    c.prim = dnnl::softmax_v2_forward({d, ctx().engine});
    c.args = {{DNNL_ARG_SRC, c.src}, {DNNL_ARG_DST, c.dst}};
    it = cache.emplace(std::pair{rows, cols}, std::move(c)).first;
  }
  cached const& c = it->second;
  c.src.set_data_handle(const_cast<E*>(x));
  c.dst.set_data_handle(y);
  c.prim.execute(ctx().stream, c.args);
  ctx().stream.wait();
}

// Softmax backward from the output y (softmax_accurate: y; softmax_log: log y).
template <algorithm A>
void softmax_backward_rows(float const* y, float const* dy, float* dx, std::size_t rows,
                           std::size_t cols) {
  if (rows == 0 || cols == 0) {
    return;
  }
  struct cached {
    memory dst, diff_dst, diff_src;
    dnnl::softmax_v2_backward prim;
    std::unordered_map<int, memory> args;
  };
  static std::map<std::pair<std::size_t, std::size_t>, cached> cache;
  auto it = cache.find({rows, cols});
  if (it == cache.end()) {
    force_one_thread();
    cached c;
    memory::desc const md({static_cast<memory::dim>(rows), static_cast<memory::dim>(cols)},
                          memory::data_type::f32, memory::format_tag::ab);
    c.dst = unbound(md);
    c.diff_dst = unbound(md);
    c.diff_src = unbound(md);
    // The backward primitive descriptor needs its forward one as a hint (same algorithm).
    dnnl::softmax_v2_forward::desc const fd(dnnl::prop_kind::forward_training, A, md, md, 1);
    dnnl::softmax_v2_forward::primitive_desc const hint(fd, ctx().engine);
    dnnl::softmax_v2_backward::desc const bd(A, md, md, md, 1);
    c.prim = dnnl::softmax_v2_backward({bd, ctx().engine, hint});
    c.args = {
        {DNNL_ARG_DST, c.dst}, {DNNL_ARG_DIFF_DST, c.diff_dst}, {DNNL_ARG_DIFF_SRC, c.diff_src}};
    it = cache.emplace(std::pair{rows, cols}, std::move(c)).first;
  }
  cached const& c = it->second;
  c.dst.set_data_handle(const_cast<float*>(y));
  c.diff_dst.set_data_handle(const_cast<float*>(dy));
  c.diff_src.set_data_handle(dx);
  c.prim.execute(ctx().stream, c.args);
  ctx().stream.wait();
}

// Gated units (see the header comment): eltwise primitives for act, binary_mul for the products.
dnnl::eltwise_forward act_forward(op const& o, memory::desc const& md) {
  dnnl::eltwise_forward::desc const d(dnnl::prop_kind::forward_inference, o.alg, md, o.alpha,
                                      o.beta);
  return dnnl::eltwise_forward({d, ctx().engine});
}

dnnl::binary multiply(memory::desc const& md) {
  dnnl::binary::desc const d(algorithm::binary_mul, md, md, md);
  return dnnl::binary({d, ctx().engine});
}

template <op const& A>
void gated_forward(float const* value, float const* gate, float* out, std::size_t n) {
  if (n == 0) {
    return;
  }
  struct cached {
    memory value, gate, out;
    dnnl::eltwise_forward act;
    dnnl::binary mul;
    std::unordered_map<int, memory> act_args, mul_args;
  };
  static std::map<std::size_t, cached> cache;
  auto it = cache.find(n);
  if (it == cache.end()) {
    force_one_thread();
    cached c;
    auto const md = vector_desc(n);
    c.value = unbound(md);
    c.gate = unbound(md);
    c.out = unbound(md);
    c.act = act_forward(A, md);
    c.mul = multiply(md);
    c.act_args = {{DNNL_ARG_SRC, c.gate}, {DNNL_ARG_DST, c.out}};
    c.mul_args = {{DNNL_ARG_SRC_0, c.out}, {DNNL_ARG_SRC_1, c.value}, {DNNL_ARG_DST, c.out}};
    it = cache.emplace(n, std::move(c)).first;
  }
  cached const& c = it->second;
  c.value.set_data_handle(const_cast<float*>(value));
  c.gate.set_data_handle(const_cast<float*>(gate));
  c.out.set_data_handle(out);
  c.act.execute(ctx().stream, c.act_args);
  c.mul.execute(ctx().stream, c.mul_args);
  ctx().stream.wait();
}

template <op const& A>
void gated_backward(float const* value, float const* gate, float const* dy, float* d_value,
                    float* d_gate, std::size_t n) {
  if (n == 0) {
    return;
  }
  struct cached {
    memory value, gate, dy, d_value, d_gate;
    dnnl::eltwise_forward act;
    dnnl::binary mul;
    dnnl::eltwise_backward act_backward;
    std::unordered_map<int, memory> act_args, scale_args, product_args, backward_args;
  };
  static std::map<std::size_t, cached> cache;
  auto it = cache.find(n);
  if (it == cache.end()) {
    force_one_thread();
    cached c;
    auto const md = vector_desc(n);
    c.value = unbound(md);
    c.gate = unbound(md);
    c.dy = unbound(md);
    c.d_value = unbound(md);
    c.d_gate = unbound(md);
    c.act = act_forward(A, md);
    c.mul = multiply(md);
    dnnl::eltwise_forward::desc const fd(dnnl::prop_kind::forward_training, A.alg, md, A.alpha,
                                         A.beta);
    dnnl::eltwise_forward::primitive_desc const hint(fd, ctx().engine);
    dnnl::eltwise_backward::desc const bd(A.alg, md, md, A.alpha, A.beta);
    c.act_backward = dnnl::eltwise_backward({bd, ctx().engine, hint});
    // d_value = act(gate), then d_value *= dy; d_gate = dy * value, then act's backward in place.
    c.act_args = {{DNNL_ARG_SRC, c.gate}, {DNNL_ARG_DST, c.d_value}};
    c.scale_args = {{DNNL_ARG_SRC_0, c.d_value}, {DNNL_ARG_SRC_1, c.dy}, {DNNL_ARG_DST, c.d_value}};
    c.product_args = {{DNNL_ARG_SRC_0, c.dy}, {DNNL_ARG_SRC_1, c.value}, {DNNL_ARG_DST, c.d_gate}};
    c.backward_args = {
        {DNNL_ARG_SRC, c.gate}, {DNNL_ARG_DIFF_DST, c.d_gate}, {DNNL_ARG_DIFF_SRC, c.d_gate}};
    it = cache.emplace(n, std::move(c)).first;
  }
  cached const& c = it->second;
  c.value.set_data_handle(const_cast<float*>(value));
  c.gate.set_data_handle(const_cast<float*>(gate));
  c.dy.set_data_handle(const_cast<float*>(dy));
  c.d_value.set_data_handle(d_value);
  c.d_gate.set_data_handle(d_gate);
  c.act.execute(ctx().stream, c.act_args);
  c.mul.execute(ctx().stream, c.scale_args);
  c.mul.execute(ctx().stream, c.product_args);
  c.act_backward.execute(ctx().stream, c.backward_args);
  ctx().stream.wait();
}

// Bias + activation forward: binary_add (x, bias broadcast over the rows) with act as a post-op.
template <op const& A>
std::function<void()> bias_forward(float const* x, float const* bias, float* y, std::size_t tokens,
                                   std::size_t features) {
  if (tokens == 0 || features == 0) {
    return [] {};
  }
  force_one_thread();
  auto const rows = static_cast<memory::dim>(tokens);
  auto const cols = static_cast<memory::dim>(features);
  memory::desc const md({rows, cols}, memory::data_type::f32, memory::format_tag::ab);
  memory::desc const bias_md({1, cols}, memory::data_type::f32, memory::format_tag::ab);
  dnnl::post_ops po;
  po.append_eltwise(1.0f, A.alg, A.alpha, A.beta);
  dnnl::primitive_attr attr;
  attr.set_post_ops(po);
  dnnl::binary::desc const d(algorithm::binary_add, md, bias_md, md);
  dnnl::binary::primitive_desc const pd(d, attr, ctx().engine);
  struct bound {
    dnnl::binary prim;
    std::unordered_map<int, memory> args;
    void operator()() const {
      prim.execute(ctx().stream, args);
      ctx().stream.wait();
    }
  };
  // oneDNN takes void*; x and bias are only read.
  return bound{dnnl::binary(pd),
               {{DNNL_ARG_SRC_0, memory(md, ctx().engine, const_cast<float*>(x))},
                {DNNL_ARG_SRC_1, memory(bias_md, ctx().engine, const_cast<float*>(bias))},
                {DNNL_ARG_DST, memory(md, ctx().engine, y)}}};
}

// nonlin's default parameters (README), as oneDNN algorithms.
constexpr float selu_alpha = 1.67326324235437728481704299167171f;
constexpr float selu_lambda = 1.05070098735548049341933498529460f;

constexpr op linear{algorithm::eltwise_linear, 1, 0};
constexpr op relu{algorithm::eltwise_relu, 0, 0};
constexpr op relu6{algorithm::eltwise_clip_v2, 0, 6};  // clip_v2: derivative 0 at both bounds
constexpr op hardtanh{algorithm::eltwise_clip_v2, -1, 1};
constexpr op leaky_relu{algorithm::eltwise_relu, 0.01f, 0};
constexpr op elu{algorithm::eltwise_elu, 1, 0};
constexpr op selu_elu{algorithm::eltwise_elu, selu_alpha, 0};
constexpr op selu_scale{algorithm::eltwise_linear, selu_lambda, 0};
constexpr op logistic{algorithm::eltwise_logistic, 0, 0};
constexpr op tanh_op{algorithm::eltwise_tanh, 0, 0};
constexpr op logsigmoid{algorithm::eltwise_logsigmoid, 0, 0};
constexpr op hardswish{algorithm::eltwise_hardswish, 0, 0};  // 2.6: x relu6(x + 3) / 6, fixed
constexpr op soft_relu{algorithm::eltwise_soft_relu, 0, 0};  // 2.6: log(1 + e^x), no parameter
constexpr op gelu_erf{algorithm::eltwise_gelu_erf, 0, 0};
constexpr op gelu_tanh{algorithm::eltwise_gelu_tanh, 0, 0};
constexpr op gelu_quick{algorithm::eltwise_swish, 1.702f, 0};  // x sigmoid(1.702 x)
constexpr op swish{algorithm::eltwise_swish, 1, 0};            // x sigmoid(alpha x), alpha = beta
constexpr op mish{algorithm::eltwise_mish, 0, 0};
constexpr op square{algorithm::eltwise_square, 0, 0};
// hardsigmoid (no algorithm before oneDNN 3.0): clip(x / 6 + 1/2, 0, 1).
constexpr op hs_linear{algorithm::eltwise_linear, 1.0f / 6, 0.5f};
constexpr op hs_clip{algorithm::eltwise_clip_v2, 0, 1};
constexpr op hs_bwd{algorithm::eltwise_clip_v2, -3, 3};  // dy where -3 < x < 3, then / 6
constexpr op hs_bwd_y{algorithm::eltwise_clip_v2_use_dst_for_bwd, 0, 1};  // dy where 0 < y < 1
constexpr op sixth{algorithm::eltwise_linear, 1.0f / 6, 0};

// The same alpha and beta with the *_use_dst_for_bwd variant of the algorithm.
constexpr op use_dst(op o, algorithm a) {
  o.alg = a;
  return o;
}

// Forward plans.
constexpr forward_plan f_identity{linear, {}};
constexpr forward_plan f_relu{relu, {}};
constexpr forward_plan f_relu6{relu6, {}};
constexpr forward_plan f_hardtanh{hardtanh, {}};
constexpr forward_plan f_leaky_relu{leaky_relu, {}};
constexpr forward_plan f_elu{elu, {}};
constexpr forward_plan f_selu{selu_elu, selu_scale};
constexpr forward_plan f_sigmoid{logistic, {}};
constexpr forward_plan f_tanh{tanh_op, {}};
constexpr forward_plan f_log_sigmoid{logsigmoid, {}};
constexpr forward_plan f_hardsigmoid{hs_linear, hs_clip};
constexpr forward_plan f_hardswish{hardswish, {}};
constexpr forward_plan f_softplus{soft_relu, {}};
constexpr forward_plan f_gelu_exact{gelu_erf, {}};
constexpr forward_plan f_gelu_tanh{gelu_tanh, {}};
constexpr forward_plan f_gelu_quick{gelu_quick, {}};
constexpr forward_plan f_swish{swish, {}};
constexpr forward_plan f_mish{mish, {}};
constexpr forward_plan f_squared_relu{relu, square};

// Backward plans from x.
constexpr backward_plan b_identity{linear, false, {}};
constexpr backward_plan b_relu{relu, false, {}};
constexpr backward_plan b_relu6{relu6, false, {}};
constexpr backward_plan b_hardtanh{hardtanh, false, {}};
constexpr backward_plan b_leaky_relu{leaky_relu, false, {}};
constexpr backward_plan b_elu{elu, false, {}};
constexpr backward_plan b_selu{selu_elu, false, selu_scale};
constexpr backward_plan b_sigmoid{logistic, false, {}};
constexpr backward_plan b_tanh{tanh_op, false, {}};
constexpr backward_plan b_log_sigmoid{logsigmoid, false, {}};
constexpr backward_plan b_hardsigmoid{hs_bwd, false, sixth};
constexpr backward_plan b_hardswish{hardswish, false, {}};
constexpr backward_plan b_softplus{soft_relu, false, {}};
constexpr backward_plan b_gelu_exact{gelu_erf, false, {}};
constexpr backward_plan b_gelu_tanh{gelu_tanh, false, {}};
constexpr backward_plan b_gelu_quick{gelu_quick, false, {}};
constexpr backward_plan b_swish{swish, false, {}};
constexpr backward_plan b_mish{mish, false, {}};

// Backward plans from y = f(x) (identity's derivative does not depend on its input: b_identity
// serves both). leaky_relu keeps the sign (slope > 0), so relu_use_dst_for_bwd with the same alpha
// is exact.
constexpr backward_plan y_relu{use_dst(relu, algorithm::eltwise_relu_use_dst_for_bwd), true, {}};
constexpr backward_plan y_relu6{
    use_dst(relu6, algorithm::eltwise_clip_v2_use_dst_for_bwd), true, {}};
constexpr backward_plan y_hardtanh{
    use_dst(hardtanh, algorithm::eltwise_clip_v2_use_dst_for_bwd), true, {}};
constexpr backward_plan y_leaky_relu{
    use_dst(leaky_relu, algorithm::eltwise_relu_use_dst_for_bwd), true, {}};
constexpr backward_plan y_elu{use_dst(elu, algorithm::eltwise_elu_use_dst_for_bwd), true, {}};
constexpr backward_plan y_sigmoid{
    use_dst(logistic, algorithm::eltwise_logistic_use_dst_for_bwd), true, {}};
constexpr backward_plan y_tanh{use_dst(tanh_op, algorithm::eltwise_tanh_use_dst_for_bwd), true, {}};
constexpr backward_plan y_hardsigmoid{hs_bwd_y, true, sixth};

// A function's kernels on E arrays (float, or bf16 bits: oneDNN's bf16 eltwise computes in f32
// and rounds on the store), K the peer's table type for E.
template <class K, class E, forward_plan const& F, backward_plan const& B>
K entry(char const* name) {
  return {name, forward<F, E>, backward<B, E>, nullptr};
}

template <class K, class E, forward_plan const& F, backward_plan const& B, backward_plan const& Y>
K entry(char const* name) {
  return {name, forward<F, E>, backward<B, E>, backward<Y, E>};
}

// Every function oneDNN's eltwise expresses (squared_relu's forward aside), for E arrays.
template <class K, class E>
std::vector<K> eltwise_functions() {
  return {
      entry<K, E, f_identity, b_identity, b_identity>("identity"),
      entry<K, E, f_relu, b_relu, y_relu>("relu"),
      entry<K, E, f_relu6, b_relu6, y_relu6>("relu6"),
      entry<K, E, f_hardtanh, b_hardtanh, y_hardtanh>("hardtanh"),
      entry<K, E, f_leaky_relu, b_leaky_relu, y_leaky_relu>("leaky_relu"),
      entry<K, E, f_elu, b_elu, y_elu>("elu"),
      entry<K, E, f_selu, b_selu>("selu"),
      // celu with nonlin's default alpha = 1 is exactly elu with alpha = 1.
      entry<K, E, f_elu, b_elu, y_elu>("celu"),
      entry<K, E, f_sigmoid, b_sigmoid, y_sigmoid>("sigmoid"),
      entry<K, E, f_tanh, b_tanh, y_tanh>("tanh"),
      entry<K, E, f_log_sigmoid, b_log_sigmoid>("log_sigmoid"),
      entry<K, E, f_hardsigmoid, b_hardsigmoid, y_hardsigmoid>("hardsigmoid"),
      entry<K, E, f_hardswish, b_hardswish>("hardswish"),
      entry<K, E, f_softplus, b_softplus>("softplus"),
      entry<K, E, f_gelu_exact, b_gelu_exact>("gelu_exact"),
      entry<K, E, f_gelu_tanh, b_gelu_tanh>("gelu_tanh"),
      entry<K, E, f_gelu_quick, b_gelu_quick>("gelu_quick"),
      entry<K, E, f_swish, b_swish>("silu"),  // silu = swish with beta 1
      entry<K, E, f_swish, b_swish>("swish"),
      entry<K, E, f_mish, b_mish>("mish"),
  };
}

}  // namespace

peer make_onednn() {
  peer p;
  p.name = "onednn";
  p.thread_safe = false;  // one cache of primitives and memory objects per size
  bool const one_thread = force_one_thread();
  auto const* v = dnnl::version();
  p.version = "oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." +
              std::to_string(v->patch) + (one_thread ? " (1 thread)" : " (default threads)");
  p.functions = eltwise_functions<function_kernels, float>();
  p.functions.push_back({"squared_relu", forward<f_squared_relu>, nullptr, nullptr});
  p.functions_bf16 = eltwise_functions<function_kernels16, std::uint16_t>();
  p.softmax_bf16 = softmax_rows<algorithm::softmax_accurate, std::uint16_t>;
  p.log_softmax_bf16 = softmax_rows<algorithm::softmax_log, std::uint16_t>;
  p.softmax = softmax_rows<algorithm::softmax_accurate>;
  p.log_softmax = softmax_rows<algorithm::softmax_log>;
  p.softmax_backward = softmax_backward_rows<algorithm::softmax_accurate>;
  p.log_softmax_backward = softmax_backward_rows<algorithm::softmax_log>;
  p.gated = {
      {"glu", gated_forward<logistic>, gated_backward<logistic>},
      {"reglu", gated_forward<relu>, gated_backward<relu>},
      {"geglu", gated_forward<gelu_erf>, gated_backward<gelu_erf>},
      {"swiglu", gated_forward<swish>, gated_backward<swish>},
  };
  // Bias + activation forward where the activation is one eltwise algorithm (a post-op).
  p.bias = {
      {"identity", bias_forward<linear>},
      {"relu", bias_forward<relu>},
      {"relu6", bias_forward<relu6>},
      {"hardtanh", bias_forward<hardtanh>},
      {"leaky_relu", bias_forward<leaky_relu>},
      {"elu", bias_forward<elu>},
      {"celu", bias_forward<elu>},
      {"sigmoid", bias_forward<logistic>},
      {"tanh", bias_forward<tanh_op>},
      {"log_sigmoid", bias_forward<logsigmoid>},
      {"hardswish", bias_forward<hardswish>},
      {"softplus", bias_forward<soft_relu>},
      {"gelu_exact", bias_forward<gelu_erf>},
      {"gelu_tanh", bias_forward<gelu_tanh>},
      {"gelu_quick", bias_forward<gelu_quick>},
      {"silu", bias_forward<swish>},
      {"swish", bias_forward<swish>},
      {"mish", bias_forward<mish>},
  };
  return p;
}

}  // namespace nonlin::peers
