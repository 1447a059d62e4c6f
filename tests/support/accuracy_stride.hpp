// SPDX-License-Identifier: MIT
#pragma once
// NONLIN_ACCURACY_STRIDE=k in the environment (CMake's NONLIN_ACCURACY_STRIDE sets it for ctest):
// the accuracy screens keep every k-th input, for builds where each evaluation is slow (the
// aarch64 stage under qemu, where MPFR and the binary128 long double are emulated too, and the
// unoptimised clang and v2 stages).
//   accuracy_test             every k-th point of its grids and random patterns (the
//                             neighbours of the special places stay dense)
//   storage16_accuracy_test   every k-th of the 65536 bit patterns
//   math_test                 every k-th batch of its every-float loops, every 97k-th float of
//                             the table exp's screen
//   softmax_test              the gradient bound at 10 and 1000 classes, not 10^5, when k > 1
//   float16_test              every k-th x and second operand of the fast-twin checks
//   glu_test                  every 3k-th value of the exactness check
// Every ctest entry gets the variable (tests/CMakeLists.txt); scripts/test.sh sets 8 for the
// aarch64 stage and for the clang and v2 stages (-O0).
// 1 (everything) where it is unset or empty.

#include <cstdlib>
#include <stdexcept>
#include <string>

namespace nonlin::test {

inline int accuracy_stride() {
  static int const stride = [] {
    char const* text = std::getenv("NONLIN_ACCURACY_STRIDE");
    if (text == nullptr || *text == '\0') {
      return 1;
    }
    char* end = nullptr;
    long const k = std::strtol(text, &end, 10);
    if (*end != '\0' || k < 1 || k > 1000) {
      throw std::invalid_argument(std::string("NONLIN_ACCURACY_STRIDE=") + text +
                                  ": want an integer in [1, 1000]");
    }
    return static_cast<int>(k);
  }();
  return stride;
}

}  // namespace nonlin::test
