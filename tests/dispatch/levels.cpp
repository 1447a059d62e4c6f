// SPDX-License-Identifier: MIT
// dispatch_test's per-level TU, compiled three times by nonlin_add_dispatch: the entry points of
// every catalog functor on float, double and bfloat16 spans at this level, and the direct calls
// they are checked against (reference.hpp). Users list theirs
// with NONLIN_DISPATCH_ELEMENTWISE(F, T); here the catalog gives the functors, so their
// addresses are taken instead (which makes the compiler define them in this TU just the same).

#include <nonlin/dispatch_level.hpp>
#include <vector>

#include "common.hpp"

#define DISPATCH_TEST_JOIN2(a, b) a##b
#define DISPATCH_TEST_JOIN(a, b) DISPATCH_TEST_JOIN2(a, b)
#define REFERENCE_ENTRY DISPATCH_TEST_JOIN(dispatch_reference_v, NONLIN_DISPATCH_LEVEL)
#define REFERENCE_KERNELS DISPATCH_TEST_JOIN(dispatch_kernels_reference_v, NONLIN_DISPATCH_LEVEL)
#include "reference.hpp"

// The kernels of run_kernel, listed as users list theirs.
NONLIN_DISPATCH_SOFTMAX(nonlin::softmax, float)
NONLIN_DISPATCH_SOFTMAX(nonlin::softmax, double)
NONLIN_DISPATCH_SOFTMAX(nonlin::softmax, nonlin::bfloat16)
NONLIN_DISPATCH_SOFTMAX(nonlin::log_softmax, float)
NONLIN_DISPATCH_SOFTMAX(nonlin::log_softmax, double)
NONLIN_DISPATCH_SOFTMAX(nonlin::log_softmax, nonlin::bfloat16)
NONLIN_DISPATCH_GATED(nonlin::swiglu, float)
NONLIN_DISPATCH_GATED(nonlin::swiglu, double)
NONLIN_DISPATCH_GATED(nonlin::swiglu, nonlin::bfloat16)
NONLIN_DISPATCH_GATED(nonlin::geglu, float)
NONLIN_DISPATCH_GATED(nonlin::geglu, double)
NONLIN_DISPATCH_GATED(nonlin::geglu, nonlin::bfloat16)

namespace {
template <class F, class T>
void add_entries(std::vector<void const*>& out) {
  using E = nonlin::dispatch::entry<NONLIN_DISPATCH_THIS_LEVEL, F, T>;
  out.push_back(reinterpret_cast<void const*>(&E::forward));
  out.push_back(reinterpret_cast<void const*>(&E::backward));
  if constexpr (nonlin::output_differentiable<F, nonlin::detail::compute_t<T>>) {
    using O = nonlin::dispatch::output_entry<NONLIN_DISPATCH_THIS_LEVEL, F, T>;
    out.push_back(reinterpret_cast<void const*>(&O::backward_from_output));
  }
}

template <class... Rows>
std::vector<void const*> all_entries(nonlin::test::catalog::rows<Rows...>) {
  std::vector<void const*> out;
  (add_entries<typename Rows::functor, float>(out), ...);
  (add_entries<typename Rows::functor, double>(out), ...);
  (add_entries<typename Rows::functor, nonlin::bfloat16>(out), ...);
  return out;
}
}  // namespace

// The number of entry points this level defines (all non-null).
extern "C" std::size_t DISPATCH_TEST_JOIN(dispatch_test_entries_v, NONLIN_DISPATCH_LEVEL)() {
  std::size_t n = 0;
  for (void const* p : all_entries(nonlin::test::catalog::all_rows{})) {
    n += p != nullptr;
  }
  return n;
}
