// SPDX-License-Identifier: MIT
// One translation unit of isa_mix_test, compiled once per x86-64 level (x86-64-v2, -v3, -v4) and
// linked into one program, built with -O0 so that nothing is inlined and every inline function
// of nonlin becomes a weak symbol. ISA_MIX_ENTRY names this copy's entry point. It checks, for
// every catalog instance in float and double, that this TU's own scalar results (f(x),
// f.backward(x, dy)) equal its own span kernels bit for bit. Were a symbol with a
// target-dependent body shared between the copies, the linker would keep one body for all
// three, and a copy would run another's scalar math next to its own kernels (or instructions its
// target lacks).

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <span>
#include <vector>

#include "catalog/catalog.hpp"

#ifndef ISA_MIX_ENTRY
#error "ISA_MIX_ENTRY names this copy's entry point"
#endif

namespace {

template <class T>
std::vector<T> mix_inputs() {
  std::vector<T> x;
  constexpr int n = 40000;
  for (int i = 0; i <= n; ++i) {
    x.push_back(static_cast<T>(-40.0 + 80.0 * i / n));
  }
  for (T v : {T(0), -T(0), std::numeric_limits<T>::infinity(), -std::numeric_limits<T>::infinity(),
              std::numeric_limits<T>::quiet_NaN(), std::numeric_limits<T>::denorm_min(),
              std::numeric_limits<T>::max(), -std::numeric_limits<T>::max(), T(-120), T(-800)}) {
    x.push_back(v);
  }
  return x;
}

template <class T>
bool same(T a, T b) {
  return (std::isnan(a) && std::isnan(b)) ||
         std::bit_cast<std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>>(a) ==
             std::bit_cast<std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>>(b);
}

template <class T, class F>
long check(char const* name, std::string_view label, F const& f) {
  auto const x = mix_inputs<T>();
  std::vector<T> dy(x.size()), y(x.size()), dx(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    dy[i] = static_cast<T>(1.0 + 0.001 * static_cast<double>(i % 17));
  }
  nonlin::forward(f, std::span<T const>(x), std::span<T>(y));
  nonlin::backward(f, std::span<T const>(x), std::span<T const>(dy), std::span<T>(dx));
  long bad = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    T const scalar_y = f(x[i]);
    T const scalar_dx = f.backward(x[i], dy[i]);
    bool const ok_y = same(scalar_y, y[i]);
    bool const ok_dx = same(scalar_dx, dx[i]);
    if ((!ok_y || !ok_dx) && bad++ == 0) {
      std::printf(
          "%s: %.*s (%s) at x = %.9g: scalar f %.9g, kernel %.9g; scalar backward %.9g, "
          "kernel %.9g\n",
          name, static_cast<int>(label.size()), label.data(), sizeof(T) == 4 ? "float" : "double",
          static_cast<double>(x[i]), static_cast<double>(scalar_y), static_cast<double>(y[i]),
          static_cast<double>(scalar_dx), static_cast<double>(dx[i]));
    }
  }
  return bad;
}

}  // namespace

#define ISA_MIX_STRING2(x) #x
#define ISA_MIX_STRING(x) ISA_MIX_STRING2(x)

// The number of inputs, over every instance and both types, where a result differs.
extern "C" long ISA_MIX_ENTRY() {
  char const* name = ISA_MIX_STRING(ISA_MIX_ENTRY);
  long bad = 0;
  nonlin::test::catalog::for_each_instance([&]<class Row>(auto const& instance) {
    bad += check<float>(name, instance.label, instance.f);
    bad += check<double>(name, instance.label, instance.f);
  });
  std::printf("%s: %ld mismatches\n", name, bad);
  return bad;
}
