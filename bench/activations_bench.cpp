// SPDX-License-Identifier: MIT
// Throughput of every nonlin activation, forward and backward, in three variants side by side:
//
//   nonlin  the span kernel (nonlin::forward / backward / backward_from_output, SIMD)
//   scalar  a plain loop calling the nonlin functor on one scalar at a time; each input goes
//           through an empty asm register barrier, so the compiler can neither vectorize the
//           loop nor fold it away: this is the cost of the scalar code path
//   std     a plain loop of the textbook formula with std::exp / std::tanh / std::erfc ...
//           (and the analytic derivative), compiled as the compiler likes (it may vectorize the
//           piecewise-linear ones, it cannot vectorize libm calls without -ffast-math)
//
// plus memcpy rows (the bandwidth ceiling for the same element counts), and the gated units of
// glu.hpp (glu, reglu, geglu, swiglu: nonlin::gated_forward / gated_backward on separate value
// and gate spans, float, H = 4096 only, nonlin variant only).
//
// Names (bench/report.py parses them):
//   <dir>/<function>/<type>/<variant>/<n>   dir: fwd | bwd (from x) | bwdy (from the output y)
//   memcpy/<type>/<n>
// The gated rows use the same form (fwd/swiglu/float/nonlin/4096); items/s counts the H outputs,
// bytes/s 3 arrays forward (value, gate, out) and 5 backward (value, gate, dy, d_value, d_gate).
// items/s counts elements; bytes/s counts the bytes read and written (fwd 2, bwd and bwdy 3
// arrays). Inputs: a fixed pseudo-random array over [-8, 8]; dy over [-1, 1]; for bwdy the saved
// y = f(x) of that input.
//
// Sizes: 4096 (L1), 262144 (L2), 16M (DRAM), for every variant (the whole run takes about two
// minutes with scripts/bench.sh's --benchmark_min_time=0.05 on a 2-core AVX-512 machine);
// `nonlin_bench --nonlin_no_reference_dram` drops 16M for the slow scalar and std variants.

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <numbers>
#include <span>
#include <string>
#include <string_view>

#include <benchmark/benchmark.h>
#include <xsimd/xsimd.hpp>

#include <nonlin/nonlin.hpp>

#ifndef NONLIN_BENCH_ARCH_FLAGS
#define NONLIN_BENCH_ARCH_FLAGS ""
#endif
#ifndef NONLIN_BENCH_COMPILER
#define NONLIN_BENCH_COMPILER ""
#endif

namespace {

constexpr std::array<std::int64_t, 3> kSizes = {4096, 262144, std::int64_t{1} << 24};
constexpr std::int64_t kMaxSize = kSizes.back();
std::int64_t reference_max_size = kMaxSize;  // scalar and std variants; --nonlin_no_reference_dram

// ---------------------------------------------------------------------------------------------
// Buffers: allocated once per type and role at the largest size, 64-byte aligned, first touched
// here (not in a timed loop). Smaller sizes use a prefix.

struct free_deleter {
  void operator()(void* p) const noexcept { std::free(p); }
};

// splitmix64: the same inputs on every machine and run.
std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

template <class T>
T* allocate(std::size_t n) {
  std::size_t const bytes = (n * sizeof(T) + 63) / 64 * 64;
  void* p = std::aligned_alloc(64, bytes);
  if (p == nullptr) {
    throw std::bad_alloc();
  }
  return static_cast<T*>(p);
}

template <class T>
T* uniform_buffer(std::uint64_t seed, double lo, double hi) {
  auto const n = static_cast<std::size_t>(kMaxSize);
  T* p = allocate<T>(n);
  std::uint64_t state = seed;
  for (std::size_t i = 0; i < n; ++i) {
    double const u = static_cast<double>(splitmix64(state) >> 11) * 0x1p-53;  // [0, 1)
    p[i] = static_cast<T>(lo + (hi - lo) * u);
  }
  return p;
}

template <class T>
T const* input_x() {
  static std::unique_ptr<T, free_deleter> const p(uniform_buffer<T>(0x6e6f6e6c696e31ULL, -8, 8));
  return p.get();
}
template <class T>
T const* input_dy() {
  static std::unique_ptr<T, free_deleter> const p(uniform_buffer<T>(0x6e6f6e6c696e32ULL, -1, 1));
  return p.get();
}
template <class T>
T* output() {
  static std::unique_ptr<T, free_deleter> const p(uniform_buffer<T>(1, 0, 0));
  return p.get();
}
// y = f(input_x) for the bwdy rows, recomputed when the function changes.
template <class T, class F>
T const* saved_y(F const& f, char const* name) {
  static std::unique_ptr<T, free_deleter> const p(uniform_buffer<T>(1, 0, 0));
  static char const* computed_for = nullptr;
  if (computed_for != name) {
    auto const n = static_cast<std::size_t>(kMaxSize);
    nonlin::forward(f, std::span<T const>(input_x<T>(), n), std::span<T>(p.get(), n));
    computed_for = name;
  }
  return p.get();
}

// An empty asm that claims to change v in a vector register: no vectorization across it, no
// folding of the computation that follows, and no memory clobber (unlike DoNotOptimize).
template <class T>
inline T opaque(T v) {
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
  asm volatile("" : "+x"(v));
#else
  benchmark::DoNotOptimize(v);
#endif
  return v;
}

template <class Body>
void timed(benchmark::State& state, std::size_t n, std::size_t arrays, std::size_t elem_bytes,
           Body const& body) {
  for (auto _ : state) {
    body();
    benchmark::ClobberMemory();
  }
  auto const items = static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(n);
  state.SetItemsProcessed(items);
  state.SetBytesProcessed(items * static_cast<std::int64_t>(arrays * elem_bytes));
}

// ---------------------------------------------------------------------------------------------
// The textbook formulas, with the same parameters as the nonlin functors' defaults.

template <class T>
constexpr T k(double v) {
  return static_cast<T>(v);
}

template <class T>
T std_sigmoid(T x) {
  return T(1) / (T(1) + std::exp(-x));
}

struct ref_step {
  static constexpr char const* name = "step";
  using F = nonlin::step;
  template <class T>
  static T fwd(T x) {
    return x > T(0) ? T(1) : T(0);
  }
  template <class T>
  static T bwd(T, T) {
    return T(0);
  }
  template <class T>
  static T bwdy(T, T) {
    return T(0);
  }
};
struct ref_identity {
  static constexpr char const* name = "identity";
  using F = nonlin::identity;
  template <class T>
  static T fwd(T x) {
    return x;
  }
  template <class T>
  static T bwd(T, T dy) {
    return dy;
  }
  template <class T>
  static T bwdy(T, T dy) {
    return dy;
  }
};
struct ref_relu {
  static constexpr char const* name = "relu";
  using F = nonlin::relu;
  template <class T>
  static T fwd(T x) {
    return std::max(x, T(0));
  }
  template <class T>
  static T bwd(T x, T dy) {
    return x > T(0) ? dy : T(0);
  }
  template <class T>
  static T bwdy(T y, T dy) {
    return y > T(0) ? dy : T(0);
  }
};
struct ref_relu6 {
  static constexpr char const* name = "relu6";
  using F = nonlin::relu6;
  template <class T>
  static T fwd(T x) {
    return std::min(std::max(x, T(0)), T(6));
  }
  template <class T>
  static T bwd(T x, T dy) {
    return x > T(0) && x < T(6) ? dy : T(0);
  }
  template <class T>
  static T bwdy(T y, T dy) {
    return y > T(0) && y < T(6) ? dy : T(0);
  }
};
struct ref_hardtanh {
  static constexpr char const* name = "hardtanh";
  using F = nonlin::hardtanh;
  template <class T>
  static T fwd(T x) {
    return std::clamp(x, T(-1), T(1));
  }
  template <class T>
  static T bwd(T x, T dy) {
    return x > T(-1) && x < T(1) ? dy : T(0);
  }
  template <class T>
  static T bwdy(T y, T dy) {
    return y > T(-1) && y < T(1) ? dy : T(0);
  }
};
struct ref_leaky_relu {
  static constexpr char const* name = "leaky_relu";
  using F = nonlin::leaky_relu;
  template <class T>
  static T fwd(T x) {
    return x > T(0) ? x : k<T>(0.01) * x;
  }
  template <class T>
  static T bwd(T x, T dy) {
    return x > T(0) ? dy : k<T>(0.01) * dy;
  }
  template <class T>
  static T bwdy(T y, T dy) {
    return y > T(0) ? dy : k<T>(0.01) * dy;
  }
};
struct ref_elu {
  static constexpr char const* name = "elu";
  using F = nonlin::elu;
  template <class T>
  static T fwd(T x) {
    return x > T(0) ? x : std::expm1(x);
  }
  template <class T>
  static T bwd(T x, T dy) {
    return x > T(0) ? dy : dy * std::exp(x);
  }
  template <class T>
  static T bwdy(T y, T dy) {
    return y > T(0) ? dy : dy * (y + T(1));
  }
};
struct ref_selu {
  static constexpr char const* name = "selu";
  using F = nonlin::selu;
  static constexpr double alpha = 1.67326324235437728481704299167171;
  static constexpr double lambda = 1.05070098735548049341933498529460;
  template <class T>
  static T fwd(T x) {
    return k<T>(lambda) * (x > T(0) ? x : k<T>(alpha) * std::expm1(x));
  }
  template <class T>
  static T bwd(T x, T dy) {
    return x > T(0) ? dy * k<T>(lambda) : dy * k<T>(lambda * alpha) * std::exp(x);
  }
  template <class T>
  static T bwdy(T y, T dy) {
    return y > T(0) ? dy * k<T>(lambda) : dy * (y + k<T>(lambda * alpha));
  }
};
struct ref_celu {
  static constexpr char const* name = "celu";
  using F = nonlin::celu;
  template <class T>
  static T fwd(T x) {
    return std::max(T(0), x) + std::min(T(0), std::expm1(x / T(1)));
  }
  template <class T>
  static T bwd(T x, T dy) {
    return x > T(0) ? dy : dy * std::exp(x / T(1));
  }
  template <class T>
  static T bwdy(T y, T dy) {
    return y > T(0) ? dy : dy * (T(1) + y / T(1));
  }
};
struct ref_sigmoid {
  static constexpr char const* name = "sigmoid";
  using F = nonlin::sigmoid;
  template <class T>
  static T fwd(T x) {
    return std_sigmoid(x);
  }
  template <class T>
  static T bwd(T x, T dy) {
    T const s = std_sigmoid(x);
    return dy * s * (T(1) - s);
  }
  template <class T>
  static T bwdy(T y, T dy) {
    return dy * y * (T(1) - y);
  }
};
struct ref_tanh {
  static constexpr char const* name = "tanh";
  using F = nonlin::tanh;
  template <class T>
  static T fwd(T x) {
    return std::tanh(x);
  }
  template <class T>
  static T bwd(T x, T dy) {
    T const t = std::tanh(x);
    return dy * (T(1) - t * t);
  }
  template <class T>
  static T bwdy(T y, T dy) {
    return dy * (T(1) - y * y);
  }
};
struct ref_log_sigmoid {
  static constexpr char const* name = "log_sigmoid";
  using F = nonlin::log_sigmoid;
  template <class T>
  static T fwd(T x) {
    return -std::log1p(std::exp(-x));
  }
  template <class T>
  static T bwd(T x, T dy) {
    return dy / (T(1) + std::exp(x));
  }
  template <class T>
  static T bwdy(T y, T dy) {
    return dy * (T(1) - std::exp(y));
  }
};
struct ref_hardsigmoid {
  static constexpr char const* name = "hardsigmoid";
  using F = nonlin::hardsigmoid;
  template <class T>
  static T fwd(T x) {
    return std::clamp(x / T(6) + k<T>(0.5), T(0), T(1));
  }
  template <class T>
  static T bwd(T x, T dy) {
    return x > T(-3) && x < T(3) ? dy / T(6) : T(0);
  }
  template <class T>
  static T bwdy(T y, T dy) {
    return y > T(0) && y < T(1) ? dy / T(6) : T(0);
  }
};
struct ref_hardswish {
  static constexpr char const* name = "hardswish";
  using F = nonlin::hardswish;
  template <class T>
  static T fwd(T x) {
    return x * std::clamp(x + T(3), T(0), T(6)) / T(6);
  }
  template <class T>
  static T bwd(T x, T dy) {
    return x <= T(-3) ? T(0) : x >= T(3) ? dy : dy * (T(2) * x + T(3)) / T(6);
  }
};
struct ref_softplus {
  static constexpr char const* name = "softplus";
  using F = nonlin::softplus;
  template <class T>
  static T fwd(T x) {
    return x > T(20) ? x : std::log1p(std::exp(x));
  }
  template <class T>
  static T bwd(T x, T dy) {
    return x > T(20) ? dy : dy * std_sigmoid(x);
  }
  template <class T>
  static T bwdy(T y, T dy) {
    return y > T(20) ? dy : dy * (T(1) - std::exp(-y));
  }
};
struct ref_gelu_exact {
  static constexpr char const* name = "gelu_exact";
  using F = nonlin::gelu_exact;
  template <class T>
  static T fwd(T x) {
    return k<T>(0.5) * x * std::erfc(-x * k<T>(std::numbers::sqrt2 / 2));
  }
  template <class T>
  static T bwd(T x, T dy) {
    T const cdf = k<T>(0.5) * std::erfc(-x * k<T>(std::numbers::sqrt2 / 2));
    T const pdf =
        k<T>(0.5 * std::numbers::inv_sqrtpi * std::numbers::sqrt2) * std::exp(-k<T>(0.5) * x * x);
    return dy * (cdf + x * pdf);
  }
};
struct ref_gelu_tanh {
  static constexpr char const* name = "gelu_tanh";
  using F = nonlin::gelu_tanh;
  static constexpr double c = 0.797884560802865355879892119868763737;  // sqrt(2/pi)
  template <class T>
  static T fwd(T x) {
    return k<T>(0.5) * x * (T(1) + std::tanh(k<T>(c) * (x + k<T>(0.044715) * x * x * x)));
  }
  template <class T>
  static T bwd(T x, T dy) {
    T const t = std::tanh(k<T>(c) * (x + k<T>(0.044715) * x * x * x));
    T const du = k<T>(c) * (T(1) + k<T>(3 * 0.044715) * x * x);
    return dy * (k<T>(0.5) * (T(1) + t) + k<T>(0.5) * x * (T(1) - t * t) * du);
  }
};
struct ref_gelu_quick {
  static constexpr char const* name = "gelu_quick";
  using F = nonlin::gelu_quick;
  template <class T>
  static T fwd(T x) {
    return x * std_sigmoid(k<T>(1.702) * x);
  }
  template <class T>
  static T bwd(T x, T dy) {
    T const s = std_sigmoid(k<T>(1.702) * x);
    return dy * (s + k<T>(1.702) * x * s * (T(1) - s));
  }
};
struct ref_silu {
  static constexpr char const* name = "silu";
  using F = nonlin::silu;
  template <class T>
  static T fwd(T x) {
    return x * std_sigmoid(x);
  }
  template <class T>
  static T bwd(T x, T dy) {
    T const s = std_sigmoid(x);
    return dy * s * (T(1) + x * (T(1) - s));
  }
};
struct ref_swish {
  static constexpr char const* name = "swish";
  using F = nonlin::swish;  // beta = 1
  template <class T>
  static T fwd(T x) {
    return x * std_sigmoid(T(1) * x);
  }
  template <class T>
  static T bwd(T x, T dy) {
    T const s = std_sigmoid(T(1) * x);
    return dy * (s + T(1) * x * s * (T(1) - s));
  }
};
struct ref_mish {
  static constexpr char const* name = "mish";
  using F = nonlin::mish;
  template <class T>
  static T fwd(T x) {
    return x * std::tanh(std::log1p(std::exp(x)));
  }
  template <class T>
  static T bwd(T x, T dy) {
    T const t = std::tanh(std::log1p(std::exp(x)));
    return dy * (t + x * std_sigmoid(x) * (T(1) - t * t));
  }
};
struct ref_squared_relu {
  static constexpr char const* name = "squared_relu";
  using F = nonlin::squared_relu;
  template <class T>
  static T fwd(T x) {
    T const r = std::max(x, T(0));
    return r * r;
  }
  template <class T>
  static T bwd(T x, T dy) {
    return dy * T(2) * std::max(x, T(0));
  }
};

// ---------------------------------------------------------------------------------------------
// Registration.

template <class T>
constexpr char const* type_name() {
  return std::is_same_v<T, float> ? "float" : "double";
}

std::string row_name(char const* dir, char const* fn, char const* type, char const* variant,
                     std::int64_t n) {
  return std::string(dir) + "/" + fn + "/" + type + "/" + variant + "/" + std::to_string(n);
}

// n is in the name and captured by the body (no ->Arg, which would repeat it in the name).
template <class Body>
void add(std::string const& name, Body body) {
  benchmark::RegisterBenchmark(name.c_str(), body)->Unit(benchmark::kMicrosecond);
}

template <class Ref, class T>
void add_forward() {
  using F = typename Ref::F;
  for (std::int64_t const n : kSizes) {
    auto const un = static_cast<std::size_t>(n);
    add(row_name("fwd", Ref::name, type_name<T>(), "nonlin", n), [un](benchmark::State& st) {
      F const f{};
      std::span<T const> const x(input_x<T>(), un);
      std::span<T> const y(output<T>(), un);
      timed(st, un, 2, sizeof(T), [&] { nonlin::forward(f, x, y); });
    });
    if (n > reference_max_size) {
      continue;
    }
    add(row_name("fwd", Ref::name, type_name<T>(), "scalar", n), [un](benchmark::State& st) {
      F const f{};
      T const* x = input_x<T>();
      T* y = output<T>();
      timed(st, un, 2, sizeof(T), [&] {
        for (std::size_t i = 0; i < un; ++i) {
          y[i] = f(opaque(x[i]));
        }
      });
    });
    add(row_name("fwd", Ref::name, type_name<T>(), "std", n), [un](benchmark::State& st) {
      T const* x = input_x<T>();
      T* y = output<T>();
      timed(st, un, 2, sizeof(T), [&] {
        for (std::size_t i = 0; i < un; ++i) {
          y[i] = Ref::template fwd<T>(x[i]);
        }
      });
    });
  }
}

template <class Ref, class T>
void add_backward() {
  using F = typename Ref::F;
  for (std::int64_t const n : kSizes) {
    auto const un = static_cast<std::size_t>(n);
    add(row_name("bwd", Ref::name, type_name<T>(), "nonlin", n), [un](benchmark::State& st) {
      F const f{};
      std::span<T const> const x(input_x<T>(), un);
      std::span<T const> const dy(input_dy<T>(), un);
      std::span<T> const dx(output<T>(), un);
      timed(st, un, 3, sizeof(T), [&] { nonlin::backward(f, x, dy, dx); });
    });
    if (n > reference_max_size) {
      continue;
    }
    add(row_name("bwd", Ref::name, type_name<T>(), "scalar", n), [un](benchmark::State& st) {
      F const f{};
      T const* x = input_x<T>();
      T const* dy = input_dy<T>();
      T* dx = output<T>();
      timed(st, un, 3, sizeof(T), [&] {
        for (std::size_t i = 0; i < un; ++i) {
          dx[i] = f.backward(opaque(x[i]), dy[i]);
        }
      });
    });
    add(row_name("bwd", Ref::name, type_name<T>(), "std", n), [un](benchmark::State& st) {
      T const* x = input_x<T>();
      T const* dy = input_dy<T>();
      T* dx = output<T>();
      timed(st, un, 3, sizeof(T), [&] {
        for (std::size_t i = 0; i < un; ++i) {
          dx[i] = Ref::template bwd<T>(x[i], dy[i]);
        }
      });
    });
  }
}

template <class Ref, class T>
void add_backward_from_output() {
  using F = typename Ref::F;
  if constexpr (nonlin::output_differentiable<F, T>) {
    for (std::int64_t const n : kSizes) {
      auto const un = static_cast<std::size_t>(n);
      add(row_name("bwdy", Ref::name, type_name<T>(), "nonlin", n), [un](benchmark::State& st) {
        F const f{};
        std::span<T const> const y(saved_y<T>(f, Ref::name), un);
        std::span<T const> const dy(input_dy<T>(), un);
        std::span<T> const dx(output<T>(), un);
        timed(st, un, 3, sizeof(T), [&] { nonlin::backward_from_output(f, y, dy, dx); });
      });
      if (n > reference_max_size) {
        continue;
      }
      add(row_name("bwdy", Ref::name, type_name<T>(), "scalar", n), [un](benchmark::State& st) {
        F const f{};
        T const* y = saved_y<T>(f, Ref::name);
        T const* dy = input_dy<T>();
        T* dx = output<T>();
        timed(st, un, 3, sizeof(T), [&] {
          for (std::size_t i = 0; i < un; ++i) {
            dx[i] = f.backward_from_output(opaque(y[i]), dy[i]);
          }
        });
      });
      if constexpr (requires(T v) { Ref::template bwdy<T>(v, v); }) {
        add(row_name("bwdy", Ref::name, type_name<T>(), "std", n), [un](benchmark::State& st) {
          T const* y = saved_y<T>(F{}, Ref::name);
          T const* dy = input_dy<T>();
          T* dx = output<T>();
          timed(st, un, 3, sizeof(T), [&] {
            for (std::size_t i = 0; i < un; ++i) {
              dx[i] = Ref::template bwdy<T>(y[i], dy[i]);
            }
          });
        });
      }
    }
  }
}

template <class Ref>
void add_function() {
  add_forward<Ref, float>();
  add_backward<Ref, float>();
  add_backward_from_output<Ref, float>();
  add_forward<Ref, double>();
}

// Gated units at H = 4096 (one row of a d_ff = 4096 FFN; the arrays stay in L1). value and gate
// are two regions of the same [-8, 8] input, d_gate a second region of the output buffer.
constexpr std::int64_t kGatedWidth = 4096;

template <class F>
void add_gated(char const* name) {
  using T = float;
  constexpr auto un = static_cast<std::size_t>(kGatedWidth);
  add(row_name("fwd", name, type_name<T>(), "nonlin", kGatedWidth), [](benchmark::State& st) {
    F const f{};
    std::span<T const> const value(input_x<T>() + un, un);
    std::span<T const> const gate(input_x<T>(), un);
    std::span<T> const y(output<T>(), un);
    timed(st, un, 3, sizeof(T), [&] { nonlin::gated_forward(f, value, gate, y); });
  });
  add(row_name("bwd", name, type_name<T>(), "nonlin", kGatedWidth), [](benchmark::State& st) {
    F const f{};
    std::span<T const> const value(input_x<T>() + un, un);
    std::span<T const> const gate(input_x<T>(), un);
    std::span<T const> const dy(input_dy<T>(), un);
    std::span<T> const d_value(output<T>(), un);
    std::span<T> const d_gate(output<T>() + un, un);
    timed(st, un, 5, sizeof(T),
          [&] { nonlin::gated_backward(f, value, gate, dy, d_value, d_gate); });
  });
}

template <class T>
void add_memcpy() {
  for (std::int64_t const n : kSizes) {
    auto const un = static_cast<std::size_t>(n);
    add(std::string("memcpy/") + type_name<T>() + "/" + std::to_string(n),
        [un](benchmark::State& st) {
          T const* x = input_x<T>();
          T* y = output<T>();
          timed(st, un, 2, sizeof(T), [&] { std::memcpy(y, x, un * sizeof(T)); });
        });
  }
}

void register_all() {
  add_memcpy<float>();
  add_memcpy<double>();
  add_function<ref_step>();
  add_function<ref_identity>();
  add_function<ref_relu>();
  add_function<ref_relu6>();
  add_function<ref_hardtanh>();
  add_function<ref_leaky_relu>();
  add_function<ref_elu>();
  add_function<ref_selu>();
  add_function<ref_celu>();
  add_function<ref_sigmoid>();
  add_function<ref_tanh>();
  add_function<ref_log_sigmoid>();
  add_function<ref_hardsigmoid>();
  add_function<ref_hardswish>();
  add_function<ref_softplus>();
  add_function<ref_gelu_exact>();
  add_function<ref_gelu_tanh>();
  add_function<ref_gelu_quick>();
  add_function<ref_silu>();
  add_function<ref_swish>();
  add_function<ref_mish>();
  add_function<ref_squared_relu>();
  add_gated<nonlin::glu>("glu");
  add_gated<nonlin::reglu>("reglu");
  add_gated<nonlin::geglu>("geglu");
  add_gated<nonlin::swiglu>("swiglu");
}

}  // namespace

int main(int argc, char** argv) {
  // Our own flag, removed before Google Benchmark parses the rest.
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    if (std::string_view(argv[i]) == "--nonlin_no_reference_dram") {
      reference_max_size = kSizes[1];
    } else {
      argv[kept++] = argv[i];
    }
  }
  argc = kept;

  register_all();
  benchmark::AddCustomContext("nonlin_version", std::to_string(NONLIN_VERSION_MAJOR) + "." +
                                                    std::to_string(NONLIN_VERSION_MINOR) + "." +
                                                    std::to_string(NONLIN_VERSION_PATCH));
  benchmark::AddCustomContext("nonlin_compiler", NONLIN_BENCH_COMPILER);
  benchmark::AddCustomContext("nonlin_arch_flags", NONLIN_BENCH_ARCH_FLAGS);
  benchmark::AddCustomContext("nonlin_xsimd_arch", xsimd::default_arch::name());
#if defined(__OPTIMIZE__) && defined(NDEBUG)
  benchmark::AddCustomContext("nonlin_build", "optimized, NDEBUG");
#elif defined(__OPTIMIZE__)
  benchmark::AddCustomContext("nonlin_build", "optimized, assertions on");
#else
  benchmark::AddCustomContext("nonlin_build", "NOT optimized");
#endif
  benchmark::AddCustomContext("nonlin_reference_max_size", std::to_string(reference_max_size));

  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) {
    return 1;
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
