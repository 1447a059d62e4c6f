// SPDX-License-Identifier: MIT
// nonlin_accuracy: max-ULP table of every functor against the MPFR reference, denser than
// tests/accuracy_test.cpp (same reference and scanner: tests/support/accuracy_scan.hpp).
//
//   float:  every 16th bit pattern of the whole float range (the low 4 bits cycling through all
//           16 values, so no residue class is left out), computed with the span kernels,
//           screened against the same functor in double (see float_chunk) and the largest
//           candidates of every row verified with MPFR; --exhaustive: all 2^32 patterns.
//   double: 10^6 samples (--samples N): half over [-40, 40] with full mantissas, half random
//           bit patterns of finite doubles, every one against MPFR.
// Work is split into chunks over --threads threads (default 2). Prints a markdown table; the
// from-output column gives the bounded excess (see accuracy_scan.hpp) and the raw error.
//
// The peers (bench/peers/: the -ffast-math loop, Eigen, SLEEF, xsimd, oneDNN, as built) are
// measured the same way on every --peer-stride-th float pattern (default 1024; 0 skips them):
// forward and derivative (their backward with dy = 1), against the same reference, screened and
// MPFR-verified like nonlin's; a second table.
//
// --gelu-curve FILE writes the GELU approximations' errors over [-6, 6] (step 0.01) for the
// plot of scripts/bench.sh: x, gelu_tanh - gelu_exact, gelu_quick - gelu_exact, in double
// (gelu_exact in double is within a few 1e-16 of the truth, far below the curves' 1e-4 scale).
//
// --storage16 measures instead the span kernels on bfloat16 and float16 arrays over all 65536
// inputs of every row (tests/support/storage16_scan.hpp): the results that are not correctly
// rounded, forward and derivative, and how many results have their double exactly on a midpoint
// (the true value there, or a tie that double's rounding made and the functor's side decides),
// beside the count had the float results only been rounded once; a markdown table
// (docs/accuracy.md, the README's 16-bit section).
//
//   nonlin_accuracy [--exhaustive] [--samples N] [--stride S] [--peer-stride S] [--threads T]
//                   [--only NAME] [--gelu-curve FILE] [--storage16]

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "../tests/support/accuracy_scan.hpp"
#include "../tests/support/storage16_scan.hpp"
#include "catalog/catalog.hpp"
#include "peer.hpp"

namespace {

using namespace nonlin::test;
using accuracy::member;

struct settings {
  bool exhaustive = false;
  std::int64_t samples = 1000000;
  std::uint64_t stride = 16;
  std::uint64_t peer_stride = 1024;
  unsigned threads = 2;
  std::string only;
  std::string gelu_curve;
  bool storage16 = false;
};

struct row_results {
  accuracy::result f32;
  accuracy::result f64;
  bool from_output = false;
  bool has_f32 = false;
  bool has_f64 = false;
};

std::mutex results_mutex;
std::map<std::string, row_results> results;
std::vector<std::string> order;        // every instance measured, in catalog order
std::vector<std::string> order_other;  // of them, the rows' other instances ("elu(0.5)", ...)

// Serialises the kernels of peers that are not thread-safe.
std::mutex peer_mutex;
// peer name -> function -> float result (forward, derivative).
std::map<std::string, std::map<std::string, accuracy::result>> peer_results;

constexpr std::uint64_t float_chunks = 256;
constexpr std::int64_t double_chunks = 32;

// Walks chunk `chunk` of the 2^32 float bit patterns, every stride-th one (the low bits cycling
// through all residues, so none is left out), and hands the finite ones to flush a block at a
// time.
constexpr std::size_t block = 4096;

template <class Flush>
void for_each_float_block(std::uint64_t chunk, std::uint64_t stride, Flush const& flush) {
  std::uint64_t const per_chunk = (std::uint64_t{1} << 32) / float_chunks;
  std::uint64_t const begin = chunk * per_chunk;
  std::uint64_t const end = begin + per_chunk;
  std::vector<float> x;
  x.reserve(block);
  for (std::uint64_t base = begin, i = 0; base < end; base += stride, ++i) {
    auto const bits = static_cast<std::uint32_t>(base + (stride > 1 ? i % stride : 0));
    float v;
    std::memcpy(&v, &bits, sizeof v);
    if (std::isfinite(v)) {
      x.push_back(v);
      if (x.size() == block) {
        flush(std::span<float const>(x));
        x.clear();
      }
    }
  }
  flush(std::span<float const>(x));
}

// One chunk of float patterns: the results come from nonlin's span kernels (the SIMD code a
// user runs; scalar calls give the same bits, tests/kernels_test.cpp), the screening estimates
// from the same functor's double span kernels. Those are within 4 ulp of double (the f64
// columns, against MPFR), i.e. within 2^-27 ulp of float: they can only mis-rank points whose
// errors agree to that, and the candidates of every row are then measured with MPFR.
template <class F>
void float_chunk(std::string const& name, F const& f, settings const& s, std::uint64_t chunk) {
  accuracy::scanner<F, float, double> scan(f, {});
  constexpr bool from_output = accuracy::has_from_output<F, float>;
  std::uint64_t const stride = s.exhaustive ? 1 : s.stride;
  std::vector<float> y(block), d(block), dfo(block);
  std::vector<double> xd(block), yd(block), ye(block), de(block), ge(block);
  std::vector<float> const ones(block, 1.0F);
  std::vector<double> const ones_d(block, 1.0);
  auto flush = [&](std::span<float const> x) {
    std::size_t const n = x.size();
    std::span<float const> const xs = x;
    nonlin::forward(f, xs, std::span<float>(y.data(), n));
    nonlin::backward(f, xs, std::span<float const>(ones.data(), n), std::span<float>(d.data(), n));
    for (std::size_t i = 0; i < n; ++i) {
      xd[i] = static_cast<double>(x[i]);
      yd[i] = static_cast<double>(y[i]);
    }
    std::span<double const> const xds(xd.data(), n);
    nonlin::forward(f, xds, std::span<double>(ye.data(), n));
    nonlin::backward(f, xds, std::span<double const>(ones_d.data(), n),
                     std::span<double>(de.data(), n));
    if constexpr (from_output) {
      nonlin::backward_from_output(f, std::span<float const>(y.data(), n),
                                   std::span<float const>(ones.data(), n),
                                   std::span<float>(dfo.data(), n));
      nonlin::backward_from_output(f, std::span<double const>(yd.data(), n),
                                   std::span<double const>(ones_d.data(), n),
                                   std::span<double>(ge.data(), n));
    }
    for (std::size_t i = 0; i < n; ++i) {
      scan.add_screened(x[i], y[i], d[i], from_output ? dfo[i] : 0.0F, ye[i], de[i],
                        from_output ? ge[i] : 0.0);
    }
  };
  for_each_float_block(chunk, stride, flush);
  std::lock_guard<std::mutex> lock(results_mutex);
  auto& r = results[name];
  r.f32.merge(scan.get());
  r.has_f32 = true;
}

// A peer's kernels over one chunk of every stride-th float pattern: forward, and backward with
// dy = 1 (exactly the derivative), a block at a time.
template <class F>
void peer_chunk(nonlin::peers::peer const& peer, nonlin::peers::function_kernels const& k,
                std::string const& name, F const& f, std::uint64_t stride, std::uint64_t chunk) {
  accuracy::scanner<F, float, double> scan(f, {});
  std::vector<float> y(block), d(block);
  std::vector<float> const ones(block, 1.0F);
  auto flush = [&](std::span<float const> x) {
    std::unique_lock<std::mutex> serial(peer_mutex, std::defer_lock);
    if (!peer.thread_safe) {
      serial.lock();
    }
    if (k.forward != nullptr) {
      k.forward(x.data(), y.data(), x.size());
    }
    if (k.backward != nullptr) {
      k.backward(x.data(), ones.data(), d.data(), x.size());
    }
    if (serial.owns_lock()) {
      serial.unlock();
    }
    for (std::size_t i = 0; i < x.size(); ++i) {
      // A missing kernel's zeros are measured but not printed ("-" below).
      scan.add_given(x[i], k.forward != nullptr ? y[i] : 0.0F, k.backward != nullptr ? d[i] : 0.0F);
    }
  };
  for_each_float_block(chunk, stride, flush);
  std::lock_guard<std::mutex> lock(results_mutex);
  peer_results[peer.name][name].merge(scan.get());
}

template <class F>
void double_chunk(std::string const& name, F const& f, settings const& s, std::int64_t chunk) {
  accuracy::scanner<F, double> scan(f, {});
  std::int64_t const grid = s.samples / 2;
  std::int64_t const begin = grid * chunk / double_chunks;
  std::int64_t const end = grid * (chunk + 1) / double_chunks;
  for (std::int64_t k = begin; k < end; ++k) {
    scan.add(-40.0 +
             (static_cast<double>(k) + 0.3819660112501051) * (80.0 / static_cast<double>(grid)));
  }
  std::int64_t const random = s.samples - grid;
  accuracy::bit_source bits(0x5eedf64ULL + static_cast<std::uint64_t>(chunk));
  for (std::int64_t k = random * chunk / double_chunks; k < random * (chunk + 1) / double_chunks;
       ++k) {
    scan.add(bits.finite<double>());
  }
  std::lock_guard<std::mutex> lock(results_mutex);
  auto& r = results[name];
  r.f64.merge(scan.get());
  r.has_f64 = true;
}

// "2.35 at -8.475": the maximum and where (x to 4 digits; the exact x is in the scan's output
// of the test). Huge raw from-output errors print in %g form.
std::string cell(accuracy::maximum const& m) {
  if (m.value < 0) {
    return "-";
  }
  char buf[96];
  if (m.value < 1e4) {
    std::snprintf(buf, sizeof buf, "%.2f at %.4g", m.value, m.at);
  } else {
    std::snprintf(buf, sizeof buf, "%.2g at %.4g", m.value, m.at);
  }
  return buf;
}

std::string cell_double(accuracy::maximum const& m) { return cell(m); }

// The README's function table: every default-tier catalog row with what its row says (f(x),
// parameters, f' at the kinks, the from-output derivative) and the max ULP this run measured
// beside the bound the tests hold it to (catalog/row.hpp). Rows not measured (--only) are left
// out. Printed after a "### Functions" line, which scripts/update-readme.sh splits at.
void print_function_table(std::map<std::string, row_results> const& measured) {
  std::printf(
      "\n### Functions\n\n"
      "| functor | f(x) | parameters | f′ at kinks | from y | max ULP f32: f / f′ | f64: f / f′ "
      "| bound f / f′ |\n|---|---|---|---|---|---|---|---|\n");
  auto brief = [](accuracy::result const& r, member m) {
    accuracy::maximum const v = r.rows[static_cast<std::size_t>(m)].all();
    char buf[32];
    std::snprintf(buf, sizeof buf, v.value < 0 ? "-" : "%.2f", v.value);
    return std::string(buf);
  };
  catalog::for_each_row([&]<class Row>() {
    if constexpr (Row::level == catalog::tier::default_tier) {
      auto const found = measured.find(std::string(Row::name));
      if (found == measured.end()) {
        return;
      }
      row_results const& r = found->second;
      auto bound = [](catalog::ulp_bound const& b) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%g", b.ulp);
        return std::string(buf);
      };
      std::string const name(Row::name);
      std::printf("| `%s` | %s | %s | %s | %s | %s / %s | %s / %s | %s / %s |\n", name.c_str(),
                  std::string(Row::formula).c_str(), std::string(Row::parameters).c_str(),
                  std::string(Row::at_kinks).c_str(), std::string(Row::from_output).c_str(),
                  brief(r.f32, member::forward).c_str(), brief(r.f32, member::derivative).c_str(),
                  brief(r.f64, member::forward).c_str(), brief(r.f64, member::derivative).c_str(),
                  bound(Row::bounds.forward).c_str(), bound(Row::bounds.derivative).c_str());
    }
  });
}

// worker() on `threads` threads, this one included, until each returns.
template <class Worker>
void run_on_threads(unsigned threads, Worker const& worker) {
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) {
    pool.emplace_back(worker);
  }
  worker();
  for (auto& t : pool) {
    t.join();
  }
}

// "0", or "0 (3 on a tie in double)" where double landed on a midpoint 3 times.
std::string count_cell(accuracy::storage16_count const& c) {
  std::string out = std::to_string(c.wrong);
  if (c.double_on_midpoint > 0) {
    out += " (" + std::to_string(c.double_on_midpoint) + " on a tie in double)";
  }
  return out;
}

// The 16-bit table: every instance of every row (elu(0.5) beside elu, ...), bfloat16 and
// float16, the 65536 inputs in 16 parts over the threads.
int run_storage16(settings const& s) {
  auto const start = std::chrono::steady_clock::now();
  std::printf(
      "nonlin %d.%d.%d, span kernels on 16-bit arrays: results not correctly rounded, of all "
      "65536 inputs, against MPFR (%d bits); derivative = backward with dy = 1; in parentheses "
      "the results whose double lands exactly on a midpoint (the true value, or where double "
      "rounded onto it, a tie the functor's side decides); "
      "in brackets the count had each float result been rounded once (no recomputation)\n\n",
      NONLIN_VERSION_MAJOR, NONLIN_VERSION_MINOR, NONLIN_VERSION_PATCH,
      static_cast<int>(reference::precision));
  std::printf(
      "| function (instance) | bf16 forward | bf16 derivative | fp16 forward | fp16 derivative |\n"
      "|---|---|---|---|---|\n");
  catalog::for_each_row([&]<class Row>() {
    if (!s.only.empty() && s.only != Row::name) {
      return;
    }
    for (auto const& instance : Row::instances()) {
      auto const& f = instance.f;
      auto measure = [&]<class T>() {
        constexpr std::uint32_t parts = 16;
        std::vector<accuracy::storage16_result> part(parts);
        std::atomic<std::uint32_t> next{0};
        auto worker = [&] {
          for (std::uint32_t p; (p = next++) < parts;) {
            part[p] =
                accuracy::scan_storage16<T>(f, p * (0x10000 / parts), (p + 1) * (0x10000 / parts));
          }
        };
        run_on_threads(s.threads, worker);
        accuracy::storage16_result all;
        for (auto const& r : part) {
          accuracy::merge(all, r);
        }
        return all;
      };
      accuracy::storage16_result const b = measure.template operator()<nonlin::bfloat16>();
      accuracy::storage16_result const h = measure.template operator()<nonlin::float16>();
      auto both = [](accuracy::storage16_count const& c, accuracy::storage16_count const& once) {
        return count_cell(c) + " [" + std::to_string(once.wrong) + "]";
      };
      std::printf("| %s | %s | %s | %s | %s |\n", std::string(instance.label).c_str(),
                  both(b.forward, b.forward_float_only).c_str(),
                  both(b.derivative, b.derivative_float_only).c_str(),
                  both(h.forward, h.forward_float_only).c_str(),
                  both(h.derivative, h.derivative_float_only).c_str());
    }
  });
  double const secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("\n%.0f s\n", secs);
  return 0;
}

bool parse(int argc, char** argv, settings& s) {
  for (int i = 1; i < argc; ++i) {
    std::string const a = argv[i];
    auto value = [&]() -> char const* { return i + 1 < argc ? argv[++i] : nullptr; };
    if (a == "--exhaustive") {
      s.exhaustive = true;
    } else if (a == "--storage16") {
      s.storage16 = true;
    } else if (a == "--samples") {
      char const* v = value();
      if (v == nullptr) return false;
      s.samples = std::max<std::int64_t>(2 * double_chunks, std::strtoll(v, nullptr, 10));
    } else if (a == "--stride") {
      char const* v = value();
      if (v == nullptr) return false;
      s.stride = std::max<std::uint64_t>(1, std::strtoull(v, nullptr, 10));
    } else if (a == "--gelu-curve") {
      char const* v = value();
      if (v == nullptr) return false;
      s.gelu_curve = v;
    } else if (a == "--peer-stride") {
      char const* v = value();
      if (v == nullptr) return false;
      s.peer_stride = std::strtoull(v, nullptr, 10);
    } else if (a == "--threads") {
      char const* v = value();
      if (v == nullptr) return false;
      s.threads = static_cast<unsigned>(std::max(1L, std::strtol(v, nullptr, 10)));
    } else if (a == "--only") {
      char const* v = value();
      if (v == nullptr) return false;
      s.only = v;
    } else {
      return false;
    }
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  settings s;
  if (!parse(argc, argv, s)) {
    std::fprintf(
        stderr,
        "usage: %s [--exhaustive] [--samples N] [--stride S] [--peer-stride S] [--threads T] "
        "[--only NAME] [--gelu-curve FILE] [--storage16]\n",
        argv[0]);
    return 2;
  }
  if ((std::uint64_t{1} << 32) / float_chunks % s.stride != 0 ||
      (s.peer_stride != 0 && (std::uint64_t{1} << 32) / float_chunks % s.peer_stride != 0)) {
    std::fprintf(stderr, "--stride and --peer-stride must divide 2^24\n");
    return 2;
  }

  if (s.storage16) {
    return run_storage16(s);
  }

  if (!s.gelu_curve.empty()) {
    std::FILE* out = std::fopen(s.gelu_curve.c_str(), "w");
    if (out == nullptr) {
      std::perror(s.gelu_curve.c_str());
      return 1;
    }
    std::fprintf(out, "# x\tgelu_tanh - gelu_exact\tgelu_quick - gelu_exact\n");
    for (int i = -600; i <= 600; ++i) {
      double const x = i / 100.0;
      double const exact = nonlin::gelu_exact{}(x);
      std::fprintf(out, "%.2f\t%.9e\t%.9e\n", x, nonlin::gelu_tanh{}(x)-exact,
                   nonlin::gelu_quick{}(x)-exact);
    }
    std::fclose(out);
  }

  // Longest tasks first (double chunks of the slow references), then the float chunks.
  std::vector<std::function<void()>> tasks;
  accuracy::for_each_measured([&](auto const& e) {
    std::string const name(e.name);
    if (!s.only.empty() && s.only != e.row) {
      return;
    }
    (e.is_default ? order : order_other).push_back(name);
    results[name].from_output = accuracy::has_from_output<decltype(e.f), float>;
    for (std::int64_t c = 0; c < double_chunks; ++c) {
      tasks.emplace_back([name, f = e.f, &s, c] { double_chunk(name, f, s, c); });
    }
  });
  accuracy::for_each_measured([&](auto const& e) {
    std::string const name(e.name);
    if (!s.only.empty() && s.only != e.row) {
      return;
    }
    for (std::uint64_t c = 0; c < float_chunks; ++c) {
      tasks.emplace_back([name, f = e.f, &s, c] { float_chunk(name, f, s, c); });
    }
  });

  if (s.peer_stride != 0) {
    for (nonlin::peers::peer const& peer : nonlin::peers::all()) {
      accuracy::for_each_measured([&](auto const& e) {
        std::string const name(e.name);
        // The peers offer each function with its default parameters only.
        nonlin::peers::function_kernels const* k = e.is_default ? peer.find(name) : nullptr;
        if ((!s.only.empty() && s.only != e.row) || k == nullptr) {
          return;
        }
        for (std::uint64_t c = 0; c < float_chunks; ++c) {
          tasks.emplace_back([&peer, k, name, f = e.f, &s, c] {
            peer_chunk(peer, *k, name, f, s.peer_stride, c);
          });
        }
      });
    }
  }

  auto const start = std::chrono::steady_clock::now();
  std::atomic<std::size_t> next{0};
  std::atomic<std::size_t> done{0};
  auto worker = [&] {
    for (std::size_t i; (i = next++) < tasks.size();) {
      tasks[i]();
      std::size_t const d = ++done;
      if (d % 64 == 0 || d == tasks.size()) {
        double const secs =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        std::fprintf(stderr, "\r%zu / %zu tasks, %.0f s", d, tasks.size(), secs);
      }
    }
  };
  run_on_threads(s.threads, worker);
  double const secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::fprintf(stderr, "\n");

  std::printf(
      "nonlin %d.%d.%d, max ULP against MPFR (%d bits); float: %s, double: %lld samples; %.0f "
      "s\n\n",
      NONLIN_VERSION_MAJOR, NONLIN_VERSION_MINOR, NONLIN_VERSION_PATCH,
      static_cast<int>(reference::precision),
      s.exhaustive ? "all 2^32 bit patterns"
                   : ("every " + std::to_string(s.stride) + "th bit pattern").c_str(),
      static_cast<long long>(s.samples), secs);
  auto print_rows = [&](char const* first_column, std::vector<std::string> const& names) {
    std::printf(
        "| %s | fwd f32 max ULP | deriv f32 | fwd f64 | deriv f64 | "
        "from output f32: excess; raw | from output f64: excess; raw |\n",
        first_column);
    std::printf("|---|---|---|---|---|---|---|\n");
    for (std::string const& name : names) {
      row_results const& r = results[name];
      auto at = [](accuracy::result const& res, member m) {
        return res.rows[static_cast<std::size_t>(m)].all();
      };
      std::string dfo32 = "n/a";
      std::string dfo64 = "n/a";
      if (r.from_output) {
        dfo32 = cell(at(r.f32, member::from_output)) + "; " + cell(r.f32.raw_from_output);
        dfo64 =
            cell_double(at(r.f64, member::from_output)) + "; " + cell_double(r.f64.raw_from_output);
      }
      std::printf("| %s | %s | %s | %s | %s | %s | %s |\n", name.c_str(),
                  cell(at(r.f32, member::forward)).c_str(),
                  cell(at(r.f32, member::derivative)).c_str(),
                  cell_double(at(r.f64, member::forward)).c_str(),
                  cell_double(at(r.f64, member::derivative)).c_str(), dfo32.c_str(), dfo64.c_str());
    }
  };
  print_rows("function", order);
  if (!order_other.empty()) {
    std::printf(
        "\nThe catalog's other instances (parameters in the name; the tests hold each to its "
        "row's bound), the same inputs and reference:\n\n");
    print_rows("instance", order_other);
  }
  if (s.peer_stride != 0 && !nonlin::peers::all().empty()) {
    std::printf(
        "\nPeers, float, every %llu-th bit pattern, the same reference: max ULP forward / "
        "derivative (backward with dy = 1); \"-\": not offered by the library. nonlin's table "
        "above was measured on these inputs and more.\n\n",
        static_cast<unsigned long long>(s.peer_stride));
    std::printf("| function |");
    for (auto const& peer : nonlin::peers::all()) {
      std::printf(" %s |", peer.name.c_str());
    }
    std::printf("\n|---|");
    for (std::size_t i = 0; i < nonlin::peers::all().size(); ++i) {
      std::printf("---|");
    }
    std::printf("\n");
    for (std::string const& name : order) {
      std::printf("| %s |", name.c_str());
      for (auto const& peer : nonlin::peers::all()) {
        auto const found = peer_results[peer.name].find(name);
        if (found == peer_results[peer.name].end()) {
          std::printf(" - |");
          continue;
        }
        accuracy::result const& r = found->second;
        nonlin::peers::function_kernels const* k = peer.find(name);
        auto brief = [&](member m) {
          accuracy::maximum const v = r.rows[static_cast<std::size_t>(m)].all();
          bool const offered =
              m == member::forward ? k->forward != nullptr : k->backward != nullptr;
          if (v.value < 0 || !offered) {
            return std::string("-");
          }
          char buf[48];
          std::snprintf(buf, sizeof buf, v.value < 1e4 ? "%.2f" : "%.2g", v.value);
          return std::string(buf);
        };
        std::printf(" %s / %s |", brief(member::forward).c_str(),
                    brief(member::derivative).c_str());
      }
      std::printf("\n");
    }
    std::printf("\nPeer versions:");
    for (auto const& peer : nonlin::peers::all()) {
      std::printf(" %s: %s;", peer.name.c_str(), peer.version.c_str());
    }
    std::printf("\n");
  }
  std::printf("\nfloat points per function: %lld, MPFR-verified: ",
              static_cast<long long>(results[order.front()].f32.points));
  for (std::string const& name : order) {
    std::printf("%s %lld ", name.c_str(), static_cast<long long>(results[name].f32.mpfr_points));
  }
  std::printf("\n");
  print_function_table(results);
  return 0;
}
