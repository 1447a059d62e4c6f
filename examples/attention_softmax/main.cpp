// Scaled dot-product attention over a short sequence, with a causal mask, padding, and the
// softmax backward pass taken from the saved probabilities.
//
//   S = Q K^T                                   raw scores, T x T
//   P = softmax(S / sqrt(d)) over each row      = softmax with temperature sqrt(d)
//   O = P V                                     T x d
//
// Masked positions get the score -inf before the softmax: a query may not look at later keys
// (causal) nor at padding. Here the sequence is left-padded, so position 0 is a pad token; with
// the causal mask, query 0 may look only at key 0, which is padding: its whole row is -inf.
// nonlin's policy for such a row is p = 0 and zero gradients (masked attention wants zeros;
// PyTorch's softmax gives NaN there, which then spreads through O = P V into every gradient).
//
// The gradient of the scores comes from nonlin::backward_from_output(softmax, P, dP, dS):
// dS = P (dP - <P, dP>) / T per row. It is checked along random directions by central
// differences of the loss (nonlin::check_gradient), which leaves the -inf scores where they are.

#include <nonlin/nonlin.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <limits>
#include <random>
#include <span>
#include <vector>

namespace {

constexpr std::size_t seq = 6, dim = 8;  // T and d
constexpr std::size_t pad = 1;           // the first `pad` positions are padding
constexpr double minus_inf = -std::numeric_limits<double>::infinity();

using matrix = std::vector<double>;  // row-major

// c (n x m) = a (n x k) b (k x m); b_transposed: b is stored (m x k).
matrix matmul(matrix const& a, matrix const& b, std::size_t n, std::size_t k, std::size_t m,
              bool b_transposed = false) {
  matrix c(n * m);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < m; ++j) {
      double sum = 0;
      for (std::size_t p = 0; p < k; ++p) {
        sum += a[i * k + p] * (b_transposed ? b[j * k + p] : b[p * m + j]);
      }
      c[i * m + j] = sum;
    }
  }
  return c;
}

bool masked(std::size_t query, std::size_t key) { return key > query || key < pad; }

nonlin::softmax const attention_softmax{.temperature = std::sqrt(static_cast<double>(dim))};

// The loss L = sum(O * R) as a function of the scores (R: a fixed random read-out of O).
double loss_of_scores(std::span<double const> scores, matrix const& v, matrix const& r) {
  matrix p(seq * seq);
  nonlin::forward(attention_softmax, scores, p, seq);
  matrix const o = matmul(p, v, seq, seq, dim);
  double sum = 0;
  for (std::size_t i = 0; i < o.size(); ++i) sum += o[i] * r[i];
  return sum;
}

// dL/dS for the same loss, through the saved probabilities.
void scores_gradient(std::span<double const> scores, matrix const& v, matrix const& r,
                     std::span<double> ds) {
  matrix p(seq * seq);
  nonlin::forward(attention_softmax, scores, p, seq);
  matrix const dp = matmul(r, v, seq, dim, seq, /*b_transposed=*/true);  // dP = dO V^T
  nonlin::backward_from_output(attention_softmax, p, dp, ds, seq);
}

}  // namespace

int main() {
  std::mt19937 rng(3);
  auto normal_ish = [&] {  // a sum of uniforms: mean 0, variance 1, the same on every platform
    double sum = 0;
    for (int k = 0; k < 12; ++k) sum += static_cast<double>(rng()) * 0x1p-32;
    return sum - 6;
  };
  matrix q(seq * dim), k(seq * dim), v(seq * dim), r(seq * dim);
  for (matrix* m : {&q, &k, &v, &r}) {
    for (double& x : *m) x = normal_ish();
  }

  // Scores with the mask applied.
  matrix scores = matmul(q, k, seq, dim, seq, /*b_transposed=*/true);  // Q K^T
  for (std::size_t i = 0; i < seq; ++i) {
    for (std::size_t j = 0; j < seq; ++j) {
      if (masked(i, j)) scores[i * seq + j] = minus_inf;
    }
  }

  // Forward: P = softmax(S / sqrt(d)) row by row, then O = P V.
  matrix p(seq * seq);
  nonlin::forward(attention_softmax, scores, p, seq);
  matrix const o = matmul(p, v, seq, seq, dim);

  // Backward: dO = R, dP = dO V^T, dS from the saved P.
  matrix ds(seq * seq);
  scores_gradient(scores, v, r, ds);

  std::printf(
      "attention: T = %zu, d = %zu, temperature sqrt(d) = %.4f, %zu pad position(s), "
      "causal mask\n",
      seq, dim, attention_softmax.temperature, pad);
  std::printf("probabilities (row = query, column = key, '-' = masked):\n");
  double worst_sum = 0;
  for (std::size_t i = 0; i < seq; ++i) {
    double sum = 0;
    std::printf("  q%zu:", i);
    for (std::size_t j = 0; j < seq; ++j) {
      sum += p[i * seq + j];
      if (masked(i, j))
        std::printf("      -");
      else
        std::printf(" %6.4f", p[i * seq + j]);
    }
    std::printf("   sum %.6f\n", sum);
    if (i >= pad) worst_sum = std::max(worst_sum, std::abs(sum - 1));
  }

  // The policy in action. Every entry of a fully masked row, and every masked entry of the other
  // rows, must be exactly zero in P, in dS, and (for the masked row) in the output O.
  bool row_zero = true, entries_zero = true;
  for (std::size_t i = 0; i < seq; ++i) {
    bool const fully_masked = i < pad;
    for (std::size_t j = 0; j < seq; ++j) {
      bool const zero = p[i * seq + j] == 0 && ds[i * seq + j] == 0;
      if (fully_masked)
        row_zero = row_zero && zero;
      else if (masked(i, j))
        entries_zero = entries_zero && zero;
    }
    for (std::size_t c = 0; fully_masked && c < dim; ++c) {
      row_zero = row_zero && o[i * dim + c] == 0;
    }
  }
  std::printf("row 0 is fully masked (query at a pad position; its only visible key is a pad)\n");
  std::printf("  p  =");
  for (std::size_t j = 0; j < seq; ++j) std::printf(" %g", p[j]);
  std::printf("\n  dS =");
  for (std::size_t j = 0; j < seq; ++j) std::printf(" %g", ds[j] + 0.0);  // + 0.0: -0 prints 0
  std::printf("\nmasked row: %s\n", row_zero ? "all zero" : "NOT ZERO");
  std::printf("masked entries: %s\n",
              entries_zero ? "zero probability, zero gradient" : "NOT ZERO");
  std::printf("unmasked rows sum to 1: max |sum - 1| = %.1e\n", worst_sum);

  // dS against central differences along 8 random directions over the finite scores.
  nonlin::gradient_check_options opts;
  opts.directions = 8;
  nonlin::gradient_check_result const check = nonlin::check_gradient(
      [&](std::span<double const> s) { return loss_of_scores(s, v, r); },
      [&](std::span<double const> s, std::span<double> g) { scores_gradient(s, v, r, g); }, scores,
      opts);
  std::printf(
      "directional check of dS: %zu directions, %zu masked scores left at -inf, "
      "max relative error %.2e\n",
      check.checked, check.skipped, check.max_error);
  bool const ok = row_zero && entries_zero && worst_sum < 1e-12 && check.passed;
  std::printf("gradient check: %s\n", check.passed ? "ok" : "FAILED");
  std::printf("attention softmax: %s\n", ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
