// XOR with a 2-4-2 multilayer perceptron: why a network needs a non-linearity.
//
//   x (4 x 2) -> affine W1, b1 -> h = act(z1) (4 x 4) -> affine W2, b2 -> logits (4 x 2)
//            -> softmax cross-entropy against the XOR labels
//
// A stack of affine layers is one affine layer: with act = identity,
//   logits = (x W1 + b1) W2 + b2 = x (W1 W2) + (b1 W2 + b2),
// and one affine map followed by argmax draws a single straight line through the plane. No line
// puts (0,0), (1,1) on one side and (0,1), (1,0) on the other, so at most 3 of the 4 points
// can be right. Any non-linear act bends the line, and the network learns XOR.
//
// Training is plain full-batch gradient descent; the activation's forward and backward are
// nonlin's span kernels, the loss and its gradient are nonlin::softmax_cross_entropy.
//
//   example_xor_mlp --activation tanh [--seed 1] [--epochs 2000] [--lr 0.5] [--every 250]

#include <nonlin/nonlin.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace {

using matrix = std::vector<float>;  // row-major

// c (n x m) = a (n x k) * b (k x m)
void matmul(matrix const& a, matrix const& b, matrix& c, std::size_t n, std::size_t k,
            std::size_t m) {
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < m; ++j) {
      float sum = 0;
      for (std::size_t p = 0; p < k; ++p) {
        sum += a[i * k + p] * b[p * m + j];
      }
      c[i * m + j] = sum;
    }
  }
}

// c (k x m) = a^T b with a (n x k), b (n x m): the weight gradient of an affine layer.
void matmul_at_b(matrix const& a, matrix const& b, matrix& c, std::size_t n, std::size_t k,
                 std::size_t m) {
  for (std::size_t p = 0; p < k; ++p) {
    for (std::size_t j = 0; j < m; ++j) {
      float sum = 0;
      for (std::size_t i = 0; i < n; ++i) {
        sum += a[i * k + p] * b[i * m + j];
      }
      c[p * m + j] = sum;
    }
  }
}

// c (n x k) = a b^T with a (n x m), b (k x m): the input gradient of an affine layer.
void matmul_a_bt(matrix const& a, matrix const& b, matrix& c, std::size_t n, std::size_t m,
                 std::size_t k) {
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t p = 0; p < k; ++p) {
      float sum = 0;
      for (std::size_t j = 0; j < m; ++j) {
        sum += a[i * m + j] * b[p * m + j];
      }
      c[i * k + p] = sum;
    }
  }
}

void add_bias(matrix& z, matrix const& b, std::size_t n, std::size_t m) {
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < m; ++j) {
      z[i * m + j] += b[j];
    }
  }
}

// The bias gradient: the column sums of dz.
void column_sums(matrix const& dz, matrix& db, std::size_t n, std::size_t m) {
  for (std::size_t j = 0; j < m; ++j) {
    db[j] = 0;
    for (std::size_t i = 0; i < n; ++i) {
      db[j] += dz[i * m + j];
    }
  }
}

void sgd_step(matrix& w, matrix const& dw, float lr) {
  for (std::size_t i = 0; i < w.size(); ++i) {
    w[i] -= lr * dw[i];
  }
}

// The hidden activations to choose from: every one is a nonlin functor.
using activation = std::variant<nonlin::relu, nonlin::leaky_relu, nonlin::tanh, nonlin::sigmoid,
                                nonlin::gelu_exact, nonlin::gelu_tanh, nonlin::silu, nonlin::elu,
                                nonlin::mish, nonlin::identity>;

bool parse_activation(std::string_view name, activation& act) {
  if (name == "relu")
    act = nonlin::relu{};
  else if (name == "leaky_relu")
    act = nonlin::leaky_relu{};
  else if (name == "tanh")
    act = nonlin::tanh{};
  else if (name == "sigmoid")
    act = nonlin::sigmoid{};
  else if (name == "gelu_exact")
    act = nonlin::gelu_exact{};
  else if (name == "gelu_tanh")
    act = nonlin::gelu_tanh{};
  else if (name == "silu")
    act = nonlin::silu{};
  else if (name == "elu")
    act = nonlin::elu{};
  else if (name == "mish")
    act = nonlin::mish{};
  else if (name == "identity")
    act = nonlin::identity{};
  else
    return false;
  return true;
}

int usage() {
  std::fprintf(stderr,
               "usage: example_xor_mlp --activation NAME [--seed N] [--epochs N] [--lr X] "
               "[--every N]\n  NAME: relu leaky_relu tanh sigmoid gelu_exact gelu_tanh silu "
               "elu mish identity\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string name = "tanh";
  std::uint32_t seed = 1;
  int epochs = 2000;
  float lr = 0.5f;
  int every = 250;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string_view const flag = argv[i];
    char const* value = argv[i + 1];
    if (flag == "--activation")
      name = value;
    else if (flag == "--seed")
      seed = static_cast<std::uint32_t>(std::strtoul(value, nullptr, 10));
    else if (flag == "--epochs")
      epochs = std::atoi(value);
    else if (flag == "--lr")
      lr = std::strtof(value, nullptr);
    else if (flag == "--every")
      every = std::atoi(value);
    else
      return usage();
  }
  activation act;
  if (argc % 2 == 0 || !parse_activation(name, act) || epochs < 0 || every <= 0) {
    return usage();
  }

  // The four XOR points and their classes.
  constexpr std::size_t n = 4, in = 2, hidden = 4, classes = 2;
  matrix const x = {0, 0, 0, 1, 1, 0, 1, 1};
  std::vector<std::int64_t> const labels = {0, 1, 1, 0};

  // Glorot-uniform weights, zero biases. std::mt19937's output is fixed by the standard, so a
  // seed gives the same network everywhere (the bits are scaled by hand, not by a distribution).
  std::mt19937 rng(seed);
  auto uniform = [&](float limit) {
    float const u = static_cast<float>(rng() >> 8) * 0x1p-24f;  // [0, 1)
    return (2 * u - 1) * limit;
  };
  matrix w1(in * hidden), b1(hidden, 0.1f), w2(hidden * classes), b2(classes, 0.f);
  for (float& w : w1) w = uniform(std::sqrt(6.f / (in + hidden)));
  for (float& w : w2) w = uniform(std::sqrt(6.f / (hidden + classes)));

  // Forward state and gradients.
  matrix z1(n * hidden), h(n * hidden), logits(n * classes), dlogits(n * classes);
  matrix dh(n * hidden), dz1(n * hidden);
  matrix dw1(w1.size()), db1(b1.size()), dw2(w2.size()), db2(b2.size());
  nonlin::softmax const softmax{};

  std::printf("XOR with a 2-%zu-2 MLP, hidden activation %s, seed %u, lr %g\n", hidden,
              name.c_str(), seed, static_cast<double>(lr));
  auto forward = [&] {
    matmul(x, w1, z1, n, in, hidden);  // z1 = x W1 + b1
    add_bias(z1, b1, n, hidden);
    std::visit([&](auto const& f) { nonlin::forward(f, z1, h); }, act);  // h = act(z1)
    matmul(h, w2, logits, n, hidden, classes);                           // logits = h W2 + b2
    add_bias(logits, b2, n, classes);
  };
  float loss = 0;
  for (int epoch = 0; epoch <= epochs; ++epoch) {
    forward();
    // Mean cross-entropy of softmax(logits) and d loss / d logits = (p - onehot) / n.
    loss = nonlin::softmax_cross_entropy(softmax, std::span<float const>(logits),
                                         std::span<std::int64_t const>(labels),
                                         std::span<float>(dlogits), classes);
    if (epoch % every == 0) {
      std::printf("epoch %5d  loss %.6f\n", epoch, static_cast<double>(loss));
    }
    if (epoch == epochs) {
      break;
    }
    // Backward, layer by layer from the loss.
    matmul_at_b(h, dlogits, dw2, n, hidden, classes);  // dW2 = h^T dlogits
    column_sums(dlogits, db2, n, classes);
    matmul_a_bt(dlogits, w2, dh, n, classes, hidden);                           // dh = dlogits W2^T
    std::visit([&](auto const& f) { nonlin::backward(f, z1, dh, dz1); }, act);  // dz1 = dh act'
    matmul_at_b(x, dz1, dw1, n, in, hidden);                                    // dW1 = x^T dz1
    column_sums(dz1, db1, n, hidden);
    sgd_step(w1, dw1, lr);
    sgd_step(b1, db1, lr);
    sgd_step(w2, dw2, lr);
    sgd_step(b2, db2, lr);
  }

  int correct = 0;
  for (std::size_t i = 0; i < n; ++i) {
    float const margin = logits[i * classes + 1] - logits[i * classes];
    int const predicted = margin > 0 ? 1 : 0;
    correct += predicted == labels[i] ? 1 : 0;
    std::printf("  x = (%g, %g)  label %d  predicted %d  (logit margin %+.4f)\n",
                static_cast<double>(x[i * in]), static_cast<double>(x[i * in + 1]),
                static_cast<int>(labels[i]), predicted, static_cast<double>(margin));
  }
  std::printf("accuracy: %d%% (%d of %zu)\n", correct * 100 / static_cast<int>(n), correct, n);

  if (correct < static_cast<int>(n) && !std::holds_alternative<nonlin::identity>(act)) {
    // With only 4 hidden units some initialisations land in a poor local minimum (for relu,
    // units that start dead on every point stay dead): the network can, this start did not.
    std::printf("this start ended in a local minimum; try another --seed\n");
  }
  if (std::holds_alternative<nonlin::identity>(act)) {
    // The whole network collapses to one affine map W = W1 W2, b = b1 W2 + b2: show it.
    matrix w(in * classes), b(classes), collapsed(n * classes);
    matmul(w1, w2, w, in, hidden, classes);
    matmul(b1, w2, b, 1, hidden, classes);
    add_bias(b, b2, 1, classes);
    matmul(x, w, collapsed, n, in, classes);
    add_bias(collapsed, b, n, classes);
    float largest = 0;
    for (std::size_t i = 0; i < logits.size(); ++i) {
      largest = std::max(largest, std::abs(collapsed[i] - logits[i]));
    }
    std::printf(
        "why identity fails: without a non-linearity the two layers are one affine map,\n"
        "  logits = x (W1 W2) + (b1 W2 + b2)   (max |difference| from the network: %.1e)\n"
        "  and one affine map + argmax separates the plane by a single line; no line splits\n"
        "  XOR, so at most 3 of 4 points can be right. The loss stalls near ln 2 = %.4f.\n",
        static_cast<double>(largest), std::log(2.0));
  }
  return 0;
}
