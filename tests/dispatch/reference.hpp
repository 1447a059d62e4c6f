// SPDX-License-Identifier: MIT
#pragma once
// dispatch_test's reference: the span kernels called directly, defined in each level's TU
// (levels.cpp, built with -march=x86-64-vN; REFERENCE_ENTRY and REFERENCE_KERNELS name its
// functions); the dispatched calls capped at that level must give the same bits. In the level's
// own TU the direct calls are the same template instances as its entry points, so they cost the
// build next to nothing: as three TUs of their own (reference.cpp until 2026-12) they took
// ~117 of the test stage's ~900 CPU seconds of compilation. Whether each level's TU holds its
// level's code (and not a copy the linker kept from another) is isa_mix_test's to check.

#include <cstddef>
#include <span>

#include "common.hpp"

#if !defined(REFERENCE_ENTRY) || !defined(REFERENCE_KERNELS)
#error "REFERENCE_ENTRY and REFERENCE_KERNELS name this copy's functions"
#endif

namespace {
template <class T>
void run(auto const& f, dispatch_test::op o, void const* a, void const* b, void* out,
         std::size_t n) {
  std::span<T const> const first(static_cast<T const*>(a), n);
  std::span<T const> const second(static_cast<T const*>(b), n);
  std::span<T> const result(static_cast<T*>(out), n);
  using F = std::remove_cvref_t<decltype(f)>;
  switch (o) {
    case dispatch_test::op::forward:
      nonlin::forward(f, first, result);
      break;
    case dispatch_test::op::backward:
      nonlin::backward(f, first, second, result);
      break;
    case dispatch_test::op::from_output:
      if constexpr (nonlin::output_differentiable<F, nonlin::detail::compute_t<T>>) {
        nonlin::backward_from_output(f, first, second, result);
      }
      break;
  }
}
}  // namespace

// Catalog instance `instance`, operation `o` on element type `type` (float, double, bfloat16).
extern "C" void REFERENCE_ENTRY(std::size_t instance, int o, int type, void const* a, void const* b,
                                void* out, std::size_t n) {
  dispatch_test::with_instance(instance, [&](auto const& f) {
    auto const which = static_cast<dispatch_test::op>(o);
    if (type == 0) {
      run<float>(f, which, a, b, out, n);
    } else if (type == 1) {
      run<double>(f, which, a, b, out, n);
    } else {
      run<nonlin::bfloat16>(f, which, a, b, out, n);
    }
  });
}

// Kernel k (dispatch_test::kernel) with gated unit `unit` on element type `type`.
extern "C" void REFERENCE_KERNELS(int k, int unit, int type, void const* a, void const* b,
                                  void const* c, void* out, void* out2) {
  auto run = [&]<class T>() {
    std::size_t const n = dispatch_test::kernel_size;
    dispatch_test::run_kernel<dispatch_test::api<false>, T>(
        static_cast<dispatch_test::kernel>(k), unit, {static_cast<T const*>(a), n},
        {static_cast<T const*>(b), n}, {static_cast<T const*>(c), n}, {static_cast<T*>(out), n},
        {static_cast<T*>(out2), n});
  };
  if (type == 0) {
    run.template operator()<float>();
  } else if (type == 1) {
    run.template operator()<double>();
  } else {
    run.template operator()<nonlin::bfloat16>();
  }
}
