// SPDX-License-Identifier: MIT
// nonlin::dispatch: with the level capped at each of x86-64-v2, -v3 and -v4 that this CPU runs,
// every catalog instance's forward, backward and backward_from_output on float, double and
// bfloat16 spans, and softmax, log_softmax and two gated units (separate and fused), dispatched,
// equal bit for bit the kernels called directly in the TU built for that level (reference.hpp); and
// the levels are not all the same code (v2, without FMA, differs from v4 somewhere), and v3 and v4
// agree wherever the README says they do (all but float results and the fast tier in double). With
// --expect vN: NONLIN_DISPATCH (set by ctest) caps the level.

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nonlin/dispatch.hpp>

#include "common.hpp"
#include "support/grid_inputs.hpp"

extern "C" std::size_t dispatch_test_entries_v2();
extern "C" std::size_t dispatch_test_entries_v3();
extern "C" std::size_t dispatch_test_entries_v4();
using reference_fn = void(std::size_t, int, int, void const*, void const*, void*, std::size_t);
extern "C" reference_fn dispatch_reference_v2;
extern "C" reference_fn dispatch_reference_v3;
extern "C" reference_fn dispatch_reference_v4;
using kernels_fn = void(int, int, int, void const*, void const*, void const*, void*, void*);
extern "C" kernels_fn dispatch_kernels_reference_v2;
extern "C" kernels_fn dispatch_kernels_reference_v3;
extern "C" kernels_fn dispatch_kernels_reference_v4;

namespace {

using nonlin::dispatch::level;

reference_fn* reference_of(level l) {
  return l == level::v4   ? &dispatch_reference_v4
         : l == level::v3 ? &dispatch_reference_v3
                          : &dispatch_reference_v2;
}

using nonlin::test::grid_inputs;
template <class T>
bool same_bits(std::vector<T> const& a, std::vector<T> const& b) {
  for (std::size_t k = 0; k < a.size(); ++k) {
    auto const u = static_cast<double>(static_cast<float>(a[k]));
    auto const v = static_cast<double>(static_cast<float>(b[k]));
    bool const both_nan = std::isnan(u) && std::isnan(v);
    if (!both_nan && std::memcmp(&a[k], &b[k], sizeof(T)) != 0) {
      return false;
    }
  }
  return true;
}

template <class T>
constexpr int type_index() {
  return std::is_same_v<T, float> ? 0 : std::is_same_v<T, double> ? 1 : 2;
}

struct tally {
  long checked = 0;
  long mismatched = 0;
  long v2_differs_from_v4 = 0;
  // v3 and v4 results that differ where the README says they agree (every bfloat16 result, every
  // double result of the default tier): only float and the fast tier's reciprocal may differ.
  long v3_v4_unexpected = 0;
  // Per pair of levels (v2-v3, v3-v4, v2-v4): the results that differ, as "label/type/op".
  std::map<std::string, std::set<std::string>> differing;
};

// One instance, one element type: the dispatched calls at level l against l's reference.
template <class T, class F>
void check(F const& f, std::size_t instance, std::string_view label, level l, bool compare_v2_v4,
           tally& t) {
  auto const x = grid_inputs<T>();
  std::vector<T> dy(x.size(), nonlin::test::from_float<T>(0.75f)), got(x.size()), want(x.size());
  auto const op_count = nonlin::output_differentiable<F, nonlin::detail::compute_t<T>> ? 3 : 2;
  for (int o = 0; o < op_count; ++o) {
    switch (static_cast<dispatch_test::op>(o)) {
      case dispatch_test::op::forward:
        nonlin::dispatch::forward(f, x, got);
        break;
      case dispatch_test::op::backward:
        nonlin::dispatch::backward(f, x, dy, got);
        break;
      case dispatch_test::op::from_output:
        if constexpr (nonlin::output_differentiable<F, nonlin::detail::compute_t<T>>) {
          nonlin::dispatch::backward_from_output(f, x, dy, got);
        }
        break;
    }
    reference_of(l)(instance, o, type_index<T>(), x.data(), dy.data(), want.data(), x.size());
    ++t.checked;
    if (!same_bits(got, want)) {
      ++t.mismatched;
      std::printf("level v%d: %.*s, type %d, op %d: dispatched != the direct call built for it\n",
                  static_cast<int>(l), static_cast<int>(label.size()), label.data(),
                  type_index<T>(), o);
    }
    if (compare_v2_v4) {
      std::vector<T> v2(x.size()), v3(x.size());
      dispatch_reference_v2(instance, o, type_index<T>(), x.data(), dy.data(), v2.data(), x.size());
      dispatch_reference_v3(instance, o, type_index<T>(), x.data(), dy.data(), v3.data(), x.size());
      t.v2_differs_from_v4 += !same_bits(v2, want);
      constexpr char const* types[] = {"float", "double", "bfloat16"};
      constexpr char const* ops[] = {"forward", "backward", "from_output"};
      std::string const what = std::string(label) + " " + types[type_index<T>()] + " " + ops[o];
      if (!same_bits(v2, v3)) {
        t.differing["v2-v3"].insert(what);
      }
      if (!same_bits(v3, want)) {
        t.differing["v3-v4"].insert(what);
        bool const may_differ =
            std::is_same_v<T, float> || (std::is_same_v<T, double> && label.starts_with("fast::"));
        if (!may_differ) {
          ++t.v3_v4_unexpected;
          std::printf("v3 and v4 differ in %s, which the README says they agree on\n",
                      what.c_str());
        }
      }
      if (!same_bits(v2, want)) {
        t.differing["v2-v4"].insert(what);
      }
    }
  }
}

kernels_fn* kernels_reference_of(level l) {
  return l == level::v4   ? &dispatch_kernels_reference_v4
         : l == level::v3 ? &dispatch_kernels_reference_v3
                          : &dispatch_kernels_reference_v2;
}

// softmax, log_softmax and the gated units on T at level l: dispatched against l's direct calls
// (both outputs), and at v4 also v2 against v4.
template <class T>
void check_kernels(level l, tally& t) {
  using dispatch_test::kernel;
  std::size_t const n = dispatch_test::kernel_size;
  std::vector<T> a(n), b(n), c(n);
  std::uint64_t state = 0x6b65726e656c73ULL;
  for (auto* v : {&a, &b, &c}) {
    for (T& e : *v) {
      state = state * 6364136223846793005ULL + 1442695040888963407ULL;
      e = nonlin::test::from_float<T>(
          static_cast<float>(static_cast<double>(state >> 40) * 0x1p-24 * 24.0 - 12.0));
    }
  }
  for (int k = 0; k < dispatch_test::kernel_count; ++k) {
    bool const gated = k >= static_cast<int>(kernel::gated);
    for (int unit = 0; unit < (gated ? dispatch_test::gated_count : 1); ++unit) {
      std::vector<T> got(n, T{}), got2(n, T{}), want(n, T{}), want2(n, T{});
      dispatch_test::run_kernel<dispatch_test::api<true>, T>(static_cast<kernel>(k), unit, a, b, c,
                                                             got, got2);
      kernels_reference_of(l)(k, unit, type_index<T>(), a.data(), b.data(), c.data(), want.data(),
                              want2.data());
      ++t.checked;
      if (!same_bits(got, want) || !same_bits(got2, want2)) {
        ++t.mismatched;
        std::printf("level v%d: kernel %d, unit %d, type %d: dispatched != the direct call\n",
                    static_cast<int>(l), k, unit, type_index<T>());
      }
      if (l == level::v4) {
        std::vector<T> v2(n, T{}), v2_second(n, T{});
        dispatch_kernels_reference_v2(k, unit, type_index<T>(), a.data(), b.data(), c.data(),
                                      v2.data(), v2_second.data());
        t.v2_differs_from_v4 += !same_bits(v2, want) || !same_bits(v2_second, want2);
      }
    }
  }
}

level parse(std::string_view s) {
  return s == "v4" ? level::v4 : s == "v3" ? level::v3 : s == "v2" ? level::v2 : level::none;
}

}  // namespace

int main(int argc, char** argv) {
  level const detected = nonlin::dispatch::detected_level();
  std::printf("detected level: v%d\n", static_cast<int>(detected));
  if (argc == 3 && std::string_view(argv[1]) == "--expect") {
    level const expected = std::min(parse(argv[2]), detected);
    level const active = nonlin::dispatch::active_level();
    std::printf("NONLIN_DISPATCH=%s: active level v%d (expected v%d)\n", argv[2],
                static_cast<int>(active), static_cast<int>(expected));
    return active == expected ? 0 : 1;
  }

  std::size_t const entries[] = {dispatch_test_entries_v2(), dispatch_test_entries_v3(),
                                 dispatch_test_entries_v4()};
  std::printf("entry points per level: %zu %zu %zu\n", entries[0], entries[1], entries[2]);
  if (entries[0] == 0 || entries[0] != entries[1] || entries[1] != entries[2]) {
    return 1;
  }

  tally t;
  for (level l : {level::v2, level::v3, level::v4}) {
    if (l > detected) {
      std::printf("level v%d: skipped (the CPU does not run it)\n", static_cast<int>(l));
      continue;
    }
    nonlin::dispatch::set_level_cap(l);
    if (nonlin::dispatch::active_level() != l) {
      std::printf("set_level_cap(v%d) left the level at v%d\n", static_cast<int>(l),
                  static_cast<int>(nonlin::dispatch::active_level()));
      return 1;
    }
    std::size_t instance = 0;
    nonlin::test::catalog::for_each_instance([&]<class Row>(auto const& i) {
      check<float>(i.f, instance, i.label, l, l == level::v4, t);
      check<double>(i.f, instance, i.label, l, l == level::v4, t);
      check<nonlin::bfloat16>(i.f, instance, i.label, l, l == level::v4, t);
      ++instance;
    });
    check_kernels<float>(l, t);
    check_kernels<double>(l, t);
    check_kernels<nonlin::bfloat16>(l, t);
  }
  nonlin::dispatch::set_level_cap(level::none);
  for (auto const& [pair, results] : t.differing) {
    std::printf("%s: %zu results differ:", pair.c_str(), results.size());
    for (auto const& r : results) {
      std::printf(" [%s]", r.c_str());
    }
    std::printf("\n");
  }
  std::printf(
      "%ld dispatched calls checked, %ld differ from the direct call of their level; "
      "v2 and v4 differ on %ld\n",
      t.checked, t.mismatched, t.v2_differs_from_v4);
  bool const distinguishable = detected < level::v4 || t.v2_differs_from_v4 > 0;
  return t.mismatched == 0 && t.checked > 0 && distinguishable && t.v3_v4_unexpected == 0 ? 0 : 1;
}
