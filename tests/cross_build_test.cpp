// SPDX-License-Identifier: MIT
// The same bits across builds: every catalog instance's span kernels (forward, backward and
// backward_from_output; float, double, bfloat16, float16) on one fixed set of inputs, each
// result array hashed, against tests/cross_build_hashes.txt, which holds the hashes of the
// x86-64-v2, -v3 and -v4 builds (scripts/update-cross-build-hashes.sh writes it from those
// three builds). A build compares itself with its class's column: -v4 (AVX-512) with v4,
// -v3 (AVX2 + FMA) with v3, -v2 (no FMA) with v2, and aarch64 (NEON, FMA, no vrcp14) with v3:
// the README's claim that the FMA builds without an approximate reciprocal give the very same
// bits. The file itself must keep the README's other claims: v3 and v4 agree on every double
// result of the default tier and on every 16-bit result (the float results of the quotients
// seeded by vrcp14 and the fast tier may differ there).
//
// With NONLIN_CROSS_BUILD_HASHES_OUT=<file> the test writes this build's hashes to <file>
// ("<instance> <type> <op> <hash>" lines) instead of comparing them.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <span>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include <nonlin/nonlin.hpp>

#include "catalog/catalog.hpp"
#include "support/grid_inputs.hpp"

namespace {

// The column of tests/cross_build_hashes.txt this build must match ("" when none does).
std::string build_class() {
#if defined(__aarch64__)
  return NONLIN_HAS_FMA ? "v3" : "";
#elif defined(__AVX512F__) && defined(__AVX512VL__) && defined(__AVX512BW__) && \
    defined(__AVX512DQ__)
  return "v4";
#elif defined(__AVX2__) && defined(__FMA__)
  return "v3";
#elif defined(__SSE4_2__) && !defined(__AVX__)
  return "v2";
#else
  return "";
#endif
}

// dy: a fixed LCG in [-2, 2).
template <class T>
std::vector<T> gradients(std::size_t n) {
  std::vector<T> dy(n);
  std::uint64_t state = 0x63726f7373ULL;
  for (auto& v : dy) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    v = nonlin::test::from_float<T>(
        static_cast<float>(static_cast<double>(state >> 40) * 0x1p-24 * 4.0 - 2.0));
  }
  return dy;
}

// FNV-1a over the results' bits, every NaN counted as one pattern (x86 and ARM make different
// default NaNs; that NaN stays NaN is the special-value tests' business).
template <class T>
std::uint64_t hash(std::vector<T> const& values) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (T const& v : values) {
    unsigned char bytes[sizeof(T)];
    if (std::isnan(static_cast<double>(static_cast<float>(v)))) {
      std::memset(bytes, 0xff, sizeof(T));
    } else {
      std::memcpy(bytes, &v, sizeof(T));
    }
    for (unsigned char b : bytes) {
      h = (h ^ b) * 0x100000001b3ULL;
    }
  }
  return h;
}

template <class T>
char const* type_name() {
  if constexpr (std::is_same_v<T, float>) {
    return "float";
  } else if constexpr (std::is_same_v<T, double>) {
    return "double";
  } else if constexpr (std::is_same_v<T, nonlin::bfloat16>) {
    return "bfloat16";
  } else {
    return "float16";
  }
}

std::string hex(std::uint64_t h) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(h));
  return text;
}

// "<instance> <type> <op>" -> hash of this build's results.
std::map<std::string, std::string> this_build() {
  std::map<std::string, std::string> hashes;
  nonlin::test::catalog::for_each_instance([&]<class Row>(auto const& i) {
    auto const& f = i.f;
    using F = std::remove_cvref_t<decltype(f)>;
    auto one_type = [&]<class T>() {
      auto const x = nonlin::test::grid_inputs<T>();
      auto const dy = gradients<T>(x.size());
      std::vector<T> out(x.size());
      std::string const key = std::string(i.label) + " " + type_name<T>() + " ";
      nonlin::forward(f, std::span<T const>(x), std::span<T>(out));
      hashes[key + "forward"] = hex(hash(out));
      nonlin::backward(f, std::span<T const>(x), std::span<T const>(dy), std::span<T>(out));
      hashes[key + "backward"] = hex(hash(out));
      if constexpr (nonlin::output_differentiable<F, nonlin::detail::compute_t<T>>) {
        // y: the grid again (any y in the function's range and beyond: the bits are what counts).
        nonlin::backward_from_output(f, std::span<T const>(x), std::span<T const>(dy),
                                     std::span<T>(out));
        hashes[key + "from_output"] = hex(hash(out));
      }
    };
    one_type.template operator()<float>();
    one_type.template operator()<double>();
    one_type.template operator()<nonlin::bfloat16>();
    one_type.template operator()<nonlin::float16>();
  });
  return hashes;
}

struct expected {
  std::map<std::string, std::map<std::string, std::string>> columns;  // column -> key -> hash
};

expected read_file() {
  std::ifstream in(NONLIN_SOURCE_DIR "/tests/cross_build_hashes.txt");
  expected e;
  std::vector<std::string> names;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) {
      continue;
    }
    std::istringstream fields(line);
    if (line[0] == '#') {
      std::string word;
      fields >> word >> word;
      if (word == "columns:") {
        while (fields >> word) {
          names.push_back(word);
        }
      }
      continue;
    }
    std::string instance, type, op;
    fields >> instance >> type >> op;
    for (auto const& name : names) {
      std::string h;
      fields >> h;
      e.columns[name][instance + " " + type + " " + op] = h;
    }
  }
  return e;
}

TEST(CrossBuild, ResultsHaveTheBitsOfTheirBuildClass) {
  auto const mine = this_build();
  if (char const* out = std::getenv("NONLIN_CROSS_BUILD_HASHES_OUT")) {
    std::ofstream file(out);
    for (auto const& [key, h] : mine) {
      file << key << ' ' << h << '\n';
    }
    GTEST_SKIP() << "wrote " << mine.size() << " hashes to " << out;
  }
  std::string const column = build_class();
  if (column.empty()) {
    GTEST_SKIP() << "no column of tests/cross_build_hashes.txt is this build's";
  }
  auto const file = read_file();
  ASSERT_TRUE(file.columns.count(column))
      << "tests/cross_build_hashes.txt has no column " << column;
  auto const& want = file.columns.at(column);
  EXPECT_EQ(want.size(), mine.size()) << "rows in the file / results of this build";
  int differ = 0;
  for (auto const& [key, h] : mine) {
    auto it = want.find(key);
    if (it == want.end()) {
      ADD_FAILURE() << key << ": not in tests/cross_build_hashes.txt";
    } else if (it->second != h) {
      ++differ;
      ADD_FAILURE() << key << ": " << h << ", the " << column << " builds' " << it->second;
    }
  }
  EXPECT_EQ(differ, 0) << "results whose bits differ from column " << column
                       << " (an intended change: scripts/update-cross-build-hashes.sh)";
}

TEST(CrossBuild, TheFileKeepsTheReadmesClaims) {
  auto const file = read_file();
  for (char const* name : {"v2", "v3", "v4"}) {
    ASSERT_TRUE(file.columns.count(name)) << name;
  }
  auto const& v3 = file.columns.at("v3");
  auto const& v4 = file.columns.at("v4");
  auto const& v2 = file.columns.at("v2");
  int v3_v4 = 0, v2_v3 = 0, claimed_equal = 0;
  for (auto const& [key, h] : v3) {
    bool const same = v4.at(key) == h;
    v3_v4 += same ? 0 : 1;
    v2_v3 += v2.at(key) == h ? 0 : 1;
    bool const fast = key.rfind("fast::", 0) == 0;
    bool const sixteen =
        key.find(" bfloat16 ") != std::string::npos || key.find(" float16 ") != std::string::npos;
    bool const default_double = !fast && key.find(" double ") != std::string::npos;
    if (sixteen || default_double) {
      ++claimed_equal;
      EXPECT_TRUE(same) << key << ": the README says v3 and v4 agree here";
    }
  }
  // What the README's table says differs: some float results between v3 and v4, more without FMA.
  EXPECT_GT(claimed_equal, 0);
  EXPECT_GT(v3_v4, 0) << "v3 = v4 everywhere: the README's table is out of date";
  EXPECT_GT(v2_v3, v3_v4);
  std::printf("results: %zu; v3 vs v4 differ: %d, v2 vs v3: %d\n", v3.size(), v3_v4, v2_v3);
}

}  // namespace
