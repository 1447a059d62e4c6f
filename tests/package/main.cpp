// SPDX-License-Identifier: MIT
// Consumer program shared by the package tests: it only has to compile, link and run.
#include <nonlin/version.hpp>

#include <cstdio>

#if __has_include(<nonlin/nonlin.hpp>)
#include <nonlin/nonlin.hpp>
#define NONLIN_TEST_HAVE_UMBRELLA 1
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
  return 0;
}
