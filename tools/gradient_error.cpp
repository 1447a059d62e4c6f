// SPDX-License-Identifier: MIT
// The softmax, log_softmax and cross-entropy gradients' worst error in units of the condition
// of their sums (u * sum of the magnitudes that make up each element; see
// tests/support/gradient_error.hpp), over random rows: logits U(-8, 8), dy U(-1/4, 1), soft
// targets normalised |U(-1/4, 1)|. Prints a markdown table: op, layout, dtype, then one column per
// (cols, T). softmax_test asserts the bound that this table shows.
//   nonlin_gradient_error [--rows N]

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "support/gradient_error.hpp"

int main(int argc, char** argv) {
  using namespace nonlin::test::gradient_error;
  std::size_t rows = 4;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--rows") == 0) {
      rows = std::strtoul(argv[i + 1], nullptr, 10);
    }
  }
  std::size_t const cols[] = {10, 1000, 100000};
  double const temperatures[] = {0.1, 1.0, 10.0};
  std::printf("| op | layout | dtype |");
  for (std::size_t c : cols) {
    for (double t : temperatures) {
      std::printf(" C=%zu T=%g |", c, t);
    }
  }
  std::printf("\n|---|---|---|");
  for (std::size_t k = 0; k < 9; ++k) {
    std::printf("--:|");
  }
  std::printf("\n");
  for (op o : {op::softmax_backward, op::log_softmax_backward, op::cross_entropy}) {
    for (std::size_t inner : {std::size_t{1}, std::size_t{3}}) {
      if (o == op::cross_entropy && inner != 1) {
        continue;
      }
      for (int variant = 0; variant < 4; ++variant) {
        int const dtype = variant % 2;
        bool const fast = variant >= 2;
        if (fast && o == op::cross_entropy) {
          continue;  // no fast tier of the loss
        }
        std::printf("| %s%s | %s | %s |", fast ? "fast::" : "", name(o),
                    inner == 1 ? "rows" : "(outer, C, 3)", dtype == 0 ? "float" : "double");
        for (std::size_t c : cols) {
          for (double t : temperatures) {
            setup const s{o, c, t, inner, c >= 100000 ? 1 : rows, 7, fast};
            double const w = dtype == 0 ? worst<float>(s) : worst<double>(s);
            std::printf(" %.2f |", w);
          }
        }
        std::printf("\n");
        std::fflush(stdout);
      }
    }
  }
  return 0;
}
