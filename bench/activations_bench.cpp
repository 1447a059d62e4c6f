// SPDX-License-Identifier: MIT
// Throughput of every nonlin activation, forward and backward, side by side with the peers:
//
//   nonlin  the span kernel (nonlin::forward / backward / backward_from_output, SIMD)
//   scalar  a plain loop calling the nonlin functor on one scalar at a time; each input goes
//           through an empty asm register barrier, so the compiler can neither vectorize the
//           loop nor fold it away: this is the cost of the scalar code path
//   std     a plain loop of the textbook std:: formula (bench/peers/textbook.hpp), compiled as
//           the compiler likes (it cannot vectorize libm calls without -ffast-math)
//   fastmath, eigen, sleef, xsimd, onednn
//           the peers of bench/peers/ (float only; each built when its library is found)
//
// plus the bandwidth ceilings for the same element counts (memcpy: one read, one write, the
// forward's traffic; read2write1: dx = x + dy, the backward's), and the gated units of
// glu.hpp (glu, reglu, geglu, swiglu: nonlin::gated_forward / gated_backward on separate value
// and gate spans, float, H = 4096 only, nonlin and the peers' gated kernels).
//
// Names (bench/report.py parses them):
//   <dir>/<function>/<type>/<variant>/<n>   dir: fwd | bwd (from x) | bwdy (from the output y)
//   memcpy/<type>/<n>, read2write1/<type>/<n>
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
#include <fstream>
#include <memory>
#include <new>
#include <numbers>
#include <span>
#include <string>
#include <string_view>

#include <benchmark/benchmark.h>
#include <xsimd/xsimd.hpp>

#include <nonlin/nonlin.hpp>

#include "peer.hpp"
#include "textbook.hpp"
#include "timed.hpp"

#ifndef NONLIN_BENCH_ARCH_FLAGS
#define NONLIN_BENCH_ARCH_FLAGS ""
#endif
#ifndef NONLIN_BENCH_COMPILER
#define NONLIN_BENCH_COMPILER ""
#endif

namespace {

using namespace nonlin::peers::textbook;

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
    if constexpr (nonlin::storage16<T>) {
      p[i] = T::from_float(static_cast<float>(lo + (hi - lo) * u));
    } else {
      p[i] = static_cast<T>(lo + (hi - lo) * u);
    }
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
T const* saved_y(F const& f, std::string_view name) {
  static std::unique_ptr<T, free_deleter> const p(uniform_buffer<T>(1, 0, 0));
  static std::string computed_for;
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

using nonlin::bench::timed;

// ---------------------------------------------------------------------------------------------
// Registration.

template <class T>
constexpr char const* type_name() {
  if constexpr (std::is_same_v<T, nonlin::bfloat16>) {
    return "bf16";
  } else if constexpr (std::is_same_v<T, nonlin::float16>) {
    return "fp16";
  } else {
    return std::is_same_v<T, float> ? "float" : "double";
  }
}

std::string row_name(char const* dir, std::string_view fn, char const* type, char const* variant,
                     std::int64_t n) {
  return std::string(dir) + "/" + std::string(fn) + "/" + type + "/" + variant + "/" +
         std::to_string(n);
}

// n is in the name and captured by the body (no ->Arg, which would repeat it in the name).
template <class Body>
void add(std::string const& name, Body body) {
  benchmark::RegisterBenchmark(name.c_str(), body)->Unit(benchmark::kMicrosecond);
}

template <class Ref, class T>
void add_forward() {
  using F = typename Ref::functor;
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
          y[i] = Ref::template textbook_forward<T>(x[i]);
        }
      });
    });
  }
}

template <class Ref, class T>
void add_backward() {
  using F = typename Ref::functor;
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
          dx[i] = Ref::template textbook_backward<T>(x[i], dy[i]);
        }
      });
    });
  }
}

template <class Ref, class T>
void add_backward_from_output() {
  using F = typename Ref::functor;
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
      if constexpr (requires(T v) { Ref::template textbook_backward_from_output<T>(v, v); }) {
        add(row_name("bwdy", Ref::name, type_name<T>(), "std", n), [un](benchmark::State& st) {
          T const* y = saved_y<T>(F{}, Ref::name);
          T const* dy = input_dy<T>();
          T* dx = output<T>();
          timed(st, un, 3, sizeof(T), [&] {
            for (std::size_t i = 0; i < un; ++i) {
              dx[i] = Ref::template textbook_backward_from_output<T>(y[i], dy[i]);
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

// 16-bit arrays (bf16, fp16): the span kernels on them (nonlin), and the "convert" baseline a
// user without 16-bit kernels writes: widen to a float array, the float kernel, narrow back
// (three passes; the conversions are nonlin's own SIMD ones, detail::widen16 / narrow16).
// Float scratch arrays for the convert baseline (three: x or y, dy, the result).
float* scratch(int which) {
  static std::array<std::unique_ptr<float, free_deleter>, 3> const p{
      std::unique_ptr<float, free_deleter>(uniform_buffer<float>(1, 0, 0)),
      std::unique_ptr<float, free_deleter>(uniform_buffer<float>(2, 0, 0)),
      std::unique_ptr<float, free_deleter>(uniform_buffer<float>(3, 0, 0))};
  return p[static_cast<std::size_t>(which)].get();
}

template <class Ref, class T>
void add_function16() {
  using F = typename Ref::functor;
  char const* const type = type_name<T>();
  for (std::int64_t const n : kSizes) {
    auto const un = static_cast<std::size_t>(n);
    add(row_name("fwd", Ref::name, type, "nonlin", n), [un](benchmark::State& st) {
      F const f{};
      std::span<T const> const x(input_x<T>(), un);
      std::span<T> const y(output<T>(), un);
      timed(st, un, 2, sizeof(T), [&] { nonlin::forward(f, x, y); });
    });
    add(row_name("fwd", Ref::name, type, "convert", n), [un](benchmark::State& st) {
      F const f{};
      T const* x = input_x<T>();
      T* y = output<T>();
      timed(st, un, 2, sizeof(T), [&] {
        nonlin::detail::widen16<xsimd::default_arch>(std::span<T const>(x, un), scratch(0));
        nonlin::forward(f, std::span<float const>(scratch(0), un),
                        std::span<float>(scratch(2), un));
        nonlin::detail::narrow16<xsimd::default_arch>(scratch(2), std::span<T>(y, un));
      });
    });
    add(row_name("bwd", Ref::name, type, "nonlin", n), [un](benchmark::State& st) {
      F const f{};
      std::span<T const> const x(input_x<T>(), un);
      std::span<T const> const dy(input_dy<T>(), un);
      std::span<T> const dx(output<T>(), un);
      timed(st, un, 3, sizeof(T), [&] { nonlin::backward(f, x, dy, dx); });
    });
    add(row_name("bwd", Ref::name, type, "convert", n), [un](benchmark::State& st) {
      F const f{};
      T const* x = input_x<T>();
      T const* dy = input_dy<T>();
      T* dx = output<T>();
      timed(st, un, 3, sizeof(T), [&] {
        nonlin::detail::widen16<xsimd::default_arch>(std::span<T const>(x, un), scratch(0));
        nonlin::detail::widen16<xsimd::default_arch>(std::span<T const>(dy, un), scratch(1));
        nonlin::backward(f, std::span<float const>(scratch(0), un),
                         std::span<float const>(scratch(1), un), std::span<float>(scratch(2), un));
        nonlin::detail::narrow16<xsimd::default_arch>(scratch(2), std::span<T>(dx, un));
      });
    });
    if constexpr (nonlin::output_differentiable<F, float>) {
      add(row_name("bwdy", Ref::name, type, "nonlin", n), [un](benchmark::State& st) {
        F const f{};
        std::span<T const> const y(saved_y<T>(f, Ref::name), un);
        std::span<T const> const dy(input_dy<T>(), un);
        std::span<T> const dx(output<T>(), un);
        timed(st, un, 3, sizeof(T), [&] { nonlin::backward_from_output(f, y, dy, dx); });
      });
    }
  }
}

// Gated units at H = 4096 (one row of a d_ff = 4096 FFN; the arrays stay in L1). value and gate
// are two regions of the same [-8, 8] input, d_gate a second region of the output buffer.
constexpr std::int64_t kGatedWidth = 4096;

template <class F, class T = float>
void add_gated(char const* name) {
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

// The peers' gated kernels (peer::gated) on the same arrays as add_gated, under the peer's name.
void add_peers_gated() {
  using T = float;
  constexpr auto un = static_cast<std::size_t>(kGatedWidth);
  for (nonlin::peers::peer const& peer : nonlin::peers::all()) {
    for (nonlin::peers::gated_kernels const& g : peer.gated) {
      if (auto const fwd = g.forward) {
        add(row_name("fwd", g.unit.c_str(), type_name<T>(), peer.name.c_str(), kGatedWidth),
            [fwd](benchmark::State& st) {
              T const* value = input_x<T>() + un;
              T const* gate = input_x<T>();
              T* y = output<T>();
              timed(st, un, 3, sizeof(T), [&] { fwd(value, gate, y, un); });
            });
      }
      if (auto const bwd = g.backward) {
        add(row_name("bwd", g.unit.c_str(), type_name<T>(), peer.name.c_str(), kGatedWidth),
            [bwd](benchmark::State& st) {
              T const* value = input_x<T>() + un;
              T const* gate = input_x<T>();
              T const* dy = input_dy<T>();
              T* d_value = output<T>();
              T* d_gate = output<T>() + un;
              timed(st, un, 5, sizeof(T), [&] { bwd(value, gate, dy, d_value, d_gate, un); });
            });
      }
    }
  }
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

// The fast tier (nonlin/fast.hpp) under the variant "fast": the span kernels, float and double.
template <class F, class T>
void add_fast(std::string_view name) {
  for (std::int64_t const n : kSizes) {
    auto const un = static_cast<std::size_t>(n);
    add(row_name("fwd", name, type_name<T>(), "fast", n), [un](benchmark::State& st) {
      std::span<T const> const x(input_x<T>(), un);
      std::span<T> const y(output<T>(), un);
      timed(st, un, 2, sizeof(T), [&] { nonlin::forward(F{}, x, y); });
    });
    if constexpr (std::is_same_v<T, float>) {
      add(row_name("bwd", name, type_name<T>(), "fast", n), [un](benchmark::State& st) {
        std::span<T const> const x(input_x<T>(), un);
        std::span<T const> const dy(input_dy<T>(), un);
        std::span<T> const dx(output<T>(), un);
        timed(st, un, 3, sizeof(T), [&] { nonlin::backward(F{}, x, dy, dx); });
      });
    }
  }
}

void add_fast_tier() {
  nonlin::test::catalog::for_each_row([]<class Row>() {
    if constexpr (Row::level == nonlin::test::catalog::tier::fast) {
      add_fast<typename Row::functor, float>(Row::exact_row::name);
      add_fast<typename Row::functor, double>(Row::exact_row::name);
    }
  });
}

// The second ceiling: two arrays read, one written (what a backward pass moves), as a loop the
// compiler vectorizes: dx = x + dy.
template <class T>
void add_read2_write1() {
  for (std::int64_t const n : kSizes) {
    auto const un = static_cast<std::size_t>(n);
    add(std::string("read2write1/") + type_name<T>() + "/" + std::to_string(n),
        [un](benchmark::State& st) {
          T const* x = input_x<T>();
          T const* dy = input_dy<T>();
          T* dx = output<T>();
          timed(st, un, 3, sizeof(T), [&] {
            for (std::size_t i = 0; i < un; ++i) {
              dx[i] = x[i] + dy[i];
            }
          });
        });
  }
}

// Every peer's kernels (bench/peers/), float, under the peer's name as the variant. bwdy rows
// get nonlin's y = f(x) of the same input.
void add_peers() {
  using T = float;
  for (nonlin::peers::peer const& peer : nonlin::peers::all()) {
    nonlin::peers::textbook::for_each_function([&]<class Ref>() {
      nonlin::peers::function_kernels const* k = peer.find(std::string(Ref::name));
      if (k == nullptr) {
        return;
      }
      for (std::int64_t const n : kSizes) {
        auto const un = static_cast<std::size_t>(n);
        if (auto const fwd = k->forward) {
          add(row_name("fwd", Ref::name, "float", peer.name.c_str(), n),
              [un, fwd](benchmark::State& st) {
                T const* x = input_x<T>();
                T* y = output<T>();
                timed(st, un, 2, sizeof(T), [&] { fwd(x, y, un); });
              });
        }
        if (auto const bwd = k->backward) {
          add(row_name("bwd", Ref::name, "float", peer.name.c_str(), n),
              [un, bwd](benchmark::State& st) {
                T const* x = input_x<T>();
                T const* dy = input_dy<T>();
                T* dx = output<T>();
                timed(st, un, 3, sizeof(T), [&] { bwd(x, dy, dx, un); });
              });
        }
        if (auto const bwdy = k->backward_from_output) {
          add(row_name("bwdy", Ref::name, "float", peer.name.c_str(), n),
              [un, bwdy](benchmark::State& st) {
                T const* y = saved_y<T>(typename Ref::functor{}, Ref::name);
                T const* dy = input_dy<T>();
                T* dx = output<T>();
                timed(st, un, 3, sizeof(T), [&] { bwdy(y, dy, dx, un); });
              });
        }
      }
    });
  }
}

// The peers' bf16 kernels (peer::functions_bf16: oneDNN) on the bf16 rows' arrays, under the
// peer's name, beside nonlin's bf16 rows.
void add_peers_bf16() {
  using T = nonlin::bfloat16;
  auto bits = [](T const* p) { return reinterpret_cast<std::uint16_t const*>(p); };
  auto out_bits = [](T* p) { return reinterpret_cast<std::uint16_t*>(p); };
  for (nonlin::peers::peer const& peer : nonlin::peers::all()) {
    nonlin::peers::textbook::for_each_function([&]<class Ref>() {
      nonlin::peers::function_kernels16 const* k = peer.find_bf16(std::string(Ref::name));
      if (k == nullptr) {
        return;
      }
      for (std::int64_t const n : kSizes) {
        auto const un = static_cast<std::size_t>(n);
        if (auto const fwd = k->forward) {
          add(row_name("fwd", Ref::name, "bf16", peer.name.c_str(), n),
              [un, fwd, bits, out_bits](benchmark::State& st) {
                timed(st, un, 2, sizeof(T),
                      [&] { fwd(bits(input_x<T>()), out_bits(output<T>()), un); });
              });
        }
        if (auto const bwd = k->backward) {
          add(row_name("bwd", Ref::name, "bf16", peer.name.c_str(), n),
              [un, bwd, bits, out_bits](benchmark::State& st) {
                timed(st, un, 3, sizeof(T), [&] {
                  bwd(bits(input_x<T>()), bits(input_dy<T>()), out_bits(output<T>()), un);
                });
              });
        }
        if (auto const bwdy = k->backward_from_output) {
          add(row_name("bwdy", Ref::name, "bf16", peer.name.c_str(), n),
              [un, bwdy, bits, out_bits](benchmark::State& st) {
                T const* y = saved_y<T>(typename Ref::functor{}, Ref::name);
                timed(st, un, 3, sizeof(T),
                      [&] { bwdy(bits(y), bits(input_dy<T>()), out_bits(output<T>()), un); });
              });
        }
      }
    });
  }
}

void register_all() {
  add_memcpy<float>();
  add_memcpy<double>();
  add_read2_write1<float>();
  add_read2_write1<double>();
  nonlin::peers::textbook::for_each_function([]<class Ref>() { add_function<Ref>(); });
  add_memcpy<nonlin::bfloat16>();
  nonlin::peers::textbook::for_each_function([]<class Ref>() {
    add_function16<Ref, nonlin::bfloat16>();
    add_function16<Ref, nonlin::float16>();
  });
  add_fast_tier();
  add_peers();
  add_peers_bf16();
  add_gated<nonlin::glu>("glu");
  add_gated<nonlin::reglu>("reglu");
  add_gated<nonlin::geglu>("geglu");
  add_gated<nonlin::swiglu>("swiglu");
  // The 16-bit gated kernels (bfloat16, the LLM FFN's storage) beside the float rows.
  add_gated<nonlin::glu, nonlin::bfloat16>("glu");
  add_gated<nonlin::reglu, nonlin::bfloat16>("reglu");
  add_gated<nonlin::geglu, nonlin::bfloat16>("geglu");
  add_gated<nonlin::swiglu, nonlin::bfloat16>("swiglu");
  add_peers_gated();
}

// The processor the run measured, from /proc/cpuinfo where there is one: "model name" and, on
// x86, family and model. The ratios move with it (docs/design.md: the same code measured on
// Zen 4, Zen 5 and an Intel Xeon), and Google Benchmark's context has only the clock and caches.
std::string cpu_description() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  std::string name;
  std::string family;
  std::string model;
  // "key<tabs>: value"; the first processor's lines only (they end at the first empty line).
  auto const value = [&](std::string_view key, std::string& out) {
    auto const colon = line.find(':');
    if (out.empty() && colon != std::string::npos &&
        std::string_view(line).substr(0, line.find_last_not_of(" \t", colon - 1) + 1) == key) {
      auto const start = line.find_first_not_of(' ', colon + 1);
      out = start == std::string::npos ? "" : line.substr(start);
    }
  };
  while (std::getline(cpuinfo, line) && !line.empty()) {
    value("model name", name);
    value("cpu family", family);
    value("model", model);
  }
  if (name.empty()) {
    return "unknown";
  }
  return family.empty() || model.empty() ? name
                                         : name + " (family " + family + ", model " + model + ")";
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
  benchmark::AddCustomContext("nonlin_cpu", cpu_description());
#if defined(__OPTIMIZE__) && defined(NDEBUG)
  benchmark::AddCustomContext("nonlin_build", "optimized, NDEBUG");
#elif defined(__OPTIMIZE__)
  benchmark::AddCustomContext("nonlin_build", "optimized, assertions on");
#else
  benchmark::AddCustomContext("nonlin_build", "NOT optimized");
#endif
  benchmark::AddCustomContext("nonlin_reference_max_size", std::to_string(reference_max_size));
  // The catalog's order, for bench/report.py's tables.
  std::string order;
  nonlin::peers::textbook::for_each_function(
      [&]<class Row>() { order += (order.empty() ? "" : ",") + std::string(Row::name); });
  benchmark::AddCustomContext("nonlin_function_order", order);

  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) {
    return 1;
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
