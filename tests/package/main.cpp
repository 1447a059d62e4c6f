// SPDX-License-Identifier: MIT
// Consumer program shared by the package tests: it only has to compile, link and run.
#include <nonlin/version.hpp>

#include <cstdio>

#if __has_include(<nonlin/nonlin.hpp>)
#include <nonlin/nonlin.hpp>
#define NONLIN_TEST_HAVE_UMBRELLA 1
#endif
#ifdef NONLIN_TEST_DISPATCH
#include <nonlin/dispatch.hpp>

#include <cmath>
#include <limits>
#include <vector>
#endif

int main() {
  std::printf("nonlin %d.%d.%d\n", NONLIN_VERSION_MAJOR, NONLIN_VERSION_MINOR,
              NONLIN_VERSION_PATCH);
#ifdef NONLIN_TEST_HAVE_UMBRELLA
  const float y = nonlin::sigmoid{}(0.0f);
  if (y != 0.5f) {
    std::printf("sigmoid(0) = %g, expected 0.5\n", static_cast<double>(y));
    return 1;
  }
#endif
#ifdef NONLIN_TEST_DISPATCH
  // The dispatched kernel (the best level this CPU runs) against the functor of this TU, which is
  // built for the compiler's default target: each is within 2 ulp of sigmoid, so within 4 of each
  // other (they differ where the targets' FMA and reciprocal seeds do).
  std::vector<float> x = {-3.0f, 0.0f, 0.25f, 7.0f}, z(x.size());
  nonlin::dispatch::forward(nonlin::sigmoid{}, x, z);
  std::printf("dispatch level v%d\n", static_cast<int>(nonlin::dispatch::active_level()));
  for (std::size_t i = 0; i < x.size(); ++i) {
    float const here = nonlin::sigmoid{}(x[i]);
    if (std::fabs(z[i] - here) > 4 * std::numeric_limits<float>::epsilon() * here) {
      std::printf("dispatched sigmoid(%g) = %.9g, the functor %.9g\n", static_cast<double>(x[i]),
                  static_cast<double>(z[i]), static_cast<double>(nonlin::sigmoid{}(x[i])));
      return 1;
    }
  }
#endif
  return 0;
}
