// SPDX-License-Identifier: MIT
// nonlin::parallel: the threaded kernels equal the serial ones bit for bit, at every split
// (tasks 1-7, chunks down to one cache line), in place, for elementwise functors and softmax rows;
// chunks start on cache lines (or whole rows); bad arguments throw before any task runs.

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <random>
#include <span>
#include <stdexcept>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include <nonlin/nonlin.hpp>
#include <nonlin/parallel.hpp>

#include "support/value_types.hpp"

namespace nonlin::test {
namespace {

template <class T>
class Parallel : public ::testing::Test {};
using scalar_types = ::testing::Types<float, double>;
TYPED_TEST_SUITE(Parallel, scalar_types);

template <class T>
bool same_bits(std::vector<T> const& a, std::vector<T> const& b) {
  // memcmp of an empty vector's data() (null) is undefined, even for 0 bytes.
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

template <class T>
std::vector<T> values(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-12, 12);
  std::vector<T> v(n);
  for (T& x : v) {
    if constexpr (storage16<T>) {
      x = T::from_float(static_cast<float>(u(rng)));
    } else {
      x = static_cast<T>(u(rng));
    }
  }
  return v;
}

// Runs the tasks one after another and records where each chunk began.
struct recording_executor {
  std::vector<std::size_t>* counts;
  template <class Task>
  void operator()(std::size_t count, Task const& task) const {
    counts->push_back(count);
    for (std::size_t i = count; i-- > 0;) task(i);  // out of order, on purpose
  }
};

// Serial == threaded at every split, in place, and from the output (also for the 16-bit types).
template <class T>
void expect_elementwise_equals_serial() {
  for (std::size_t n : {0u, 1u, 17u, 1000u, 4099u, 100003u}) {
    std::vector<T> const x = values<T>(n, 1);
    std::vector<T> const dy = values<T>(n, 2);
    auto check = [&](auto const& f) {
      std::vector<T> y(n), dx(n), y_serial(n), dx_serial(n);
      forward(f, std::span<T const>(x), std::span<T>(y_serial));
      backward(f, std::span<T const>(x), std::span<T const>(dy), std::span<T>(dx_serial));
      for (std::size_t tasks : {1u, 2u, 3u, 7u}) {
        parallel::options<> const o{.tasks = tasks, .min_chunk = 16};
        parallel::forward(f, std::span<T const>(x), std::span<T>(y), o);
        parallel::backward(f, std::span<T const>(x), std::span<T const>(dy), std::span<T>(dx), o);
        EXPECT_TRUE(same_bits(y, y_serial)) << n << " " << tasks;
        EXPECT_TRUE(same_bits(dx, dx_serial)) << n << " " << tasks;
        std::vector<T> in_place = x;
        parallel::forward(f, std::span<T const>(in_place), std::span<T>(in_place), o);
        EXPECT_TRUE(same_bits(in_place, y_serial)) << n << " " << tasks;
      }
    };
    check(sigmoid{});
    check(gelu_tanh{});
    check(relu{});
    check(fast::silu{});
    // From the output.
    std::vector<T> y(n), dx(n), dx_serial(n);
    forward(tanh{}, std::span<T const>(x), std::span<T>(y));
    backward_from_output(tanh{}, std::span<T const>(y), std::span<T const>(dy),
                         std::span<T>(dx_serial));
    parallel::backward_from_output(tanh{}, std::span<T const>(y), std::span<T const>(dy),
                                   std::span<T>(dx),
                                   parallel::options<>{.tasks = 3, .min_chunk = 16});
    EXPECT_TRUE(same_bits(dx, dx_serial)) << n;
  }
}

TYPED_TEST(Parallel, ElementwiseEqualsSerialAtEverySplit) {
  expect_elementwise_equals_serial<TypeParam>();
}

TYPED_TEST(Parallel, ChunksStartOnCacheLinesAndSmallWorkStaysOnOneTask) {
  using T = TypeParam;
  constexpr std::size_t line = 64 / sizeof(T);
  std::vector<std::size_t> counts;
  parallel::options<recording_executor> const o{
      .tasks = 4, .min_chunk = 100, .executor = recording_executor{&counts}};
  // The split itself: chunks cover [0, n) once, in order, each starting on a cache line.
  for (std::size_t n : {101u, 1000u, 10007u}) {
    std::vector<std::pair<std::size_t, std::size_t>> chunks;
    parallel::detail::split(n, line, o.min_chunk, o, [&](std::size_t begin, std::size_t end) {
      chunks.emplace_back(begin, end);
    });
    std::sort(chunks.begin(), chunks.end());
    std::size_t next = 0;
    for (auto const& [begin, end] : chunks) {
      EXPECT_EQ(begin, next) << n;
      EXPECT_EQ(begin % line, 0u) << n;
      EXPECT_LT(begin, end) << n;
      next = end;
    }
    EXPECT_EQ(next, n);
    EXPECT_LE(chunks.size(), 4u);
  }
  // Through the kernel: four tasks for 10007 elements, the result that of the serial call.
  counts.clear();
  std::vector<T> const x = values<T>(10007, 3);
  std::vector<T> y(x.size());
  parallel::forward(identity{}, std::span<T const>(x), std::span<T>(y), o);
  ASSERT_EQ(counts.size(), 1u);
  EXPECT_EQ(counts[0], 4u);
  EXPECT_TRUE(same_bits(x, y));
  // Below min_chunk per task: one task on the calling thread, the executor not called.
  counts.clear();
  std::vector<T> const small(50, T(1));
  std::vector<T> small_y(50);
  parallel::forward(identity{}, std::span<T const>(small), std::span<T>(small_y), o);
  EXPECT_TRUE(counts.empty());
  EXPECT_TRUE(same_bits(small, small_y));
}

TYPED_TEST(Parallel, SoftmaxRowsEqualSerial) {
  using T = TypeParam;
  for (std::size_t cols : {1u, 7u, 1000u}) {
    std::size_t const rows = 37;
    std::vector<T> const x = values<T>(rows * cols, 4);
    std::vector<T> y(x.size()), y_serial(x.size()), ly(x.size()), ly_serial(x.size());
    forward(softmax{.temperature = 0.7}, std::span<T const>(x), std::span<T>(y_serial), cols);
    forward(log_softmax{}, std::span<T const>(x), std::span<T>(ly_serial), cols);
    for (std::size_t tasks : {1u, 2u, 5u}) {
      parallel::options<> const o{.tasks = tasks, .min_chunk = 1};
      parallel::forward(softmax{.temperature = 0.7}, std::span<T const>(x), std::span<T>(y), cols,
                        o);
      parallel::forward(log_softmax{}, std::span<T const>(x), std::span<T>(ly), cols, o);
      EXPECT_TRUE(same_bits(y, y_serial)) << cols << " " << tasks;
      EXPECT_TRUE(same_bits(ly, ly_serial)) << cols << " " << tasks;
    }
  }
}

TYPED_TEST(Parallel, BadArgumentsThrowBeforeAnyTask) {
  using T = TypeParam;
  std::vector<T> const x(100, T(1));
  std::vector<T> y(99, T(7));
  std::vector<std::size_t> counts;
  parallel::options<recording_executor> const o{
      .tasks = 4, .min_chunk = 1, .executor = recording_executor{&counts}};
  EXPECT_THROW(parallel::forward(sigmoid{}, std::span<T const>(x), std::span<T>(y), o),
               std::invalid_argument);
  EXPECT_THROW(
      parallel::forward(softmax{.temperature = 0.0}, std::span<T const>(x), std::span<T>(y), 10, o),
      std::invalid_argument);
  std::vector<T> overlap(150, T(1));
  EXPECT_THROW(parallel::forward(sigmoid{}, std::span<T const>(overlap).subspan(0, 100),
                                 std::span<T>(overlap).subspan(50, 100), o),
               std::invalid_argument);
  EXPECT_TRUE(counts.empty());
  EXPECT_TRUE(std::all_of(y.begin(), y.end(), [](T v) { return v == T(7); }));
}

}  // namespace
}  // namespace nonlin::test

namespace nonlin::test {
namespace {

// 16-bit arrays: the threaded driver gives the serial kernels' bits at every split (chunks on
// 32-element cache lines), elementwise and softmax rows, in place.
template <class T>
class Parallel16 : public ::testing::Test {};
using storage_types = ::testing::Types<bfloat16, float16>;
TYPED_TEST_SUITE(Parallel16, storage_types);

TYPED_TEST(Parallel16, EqualsSerialAtEverySplit) {
  using T = TypeParam;
  expect_elementwise_equals_serial<T>();
  std::size_t const cols = 129;
  std::vector<T> const x = values<T>(cols * 40, 3);
  std::vector<T> y(x.size()), y_serial(x.size());
  forward(softmax{}, std::span<T const>(x), std::span<T>(y_serial), cols);
  for (std::size_t tasks : {1u, 2u, 5u}) {
    parallel::forward(softmax{}, std::span<T const>(x), std::span<T>(y), cols,
                      parallel::options<>{.tasks = tasks, .min_chunk = 16});
    EXPECT_TRUE(same_bits(y, y_serial)) << tasks;
  }
}

}  // namespace
}  // namespace nonlin::test
