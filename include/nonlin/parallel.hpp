// SPDX-License-Identifier: MIT
#pragma once
// Threaded span kernels for large arrays: the same results as the serial calls, bit for bit.
//
//   nonlin::parallel::forward(f, x, y)                     y  = f(x)
//   nonlin::parallel::backward(f, x, dy, dx)               dx = dy * f'(x)
//   nonlin::parallel::backward_from_output(f, y, dy, dx)   from y = f(x)
//   nonlin::parallel::forward(softmax{...}, x, y, cols)    softmax / log_softmax rows
//
// An element's result does not depend on where a span starts or ends (kernels.hpp), so the
// arrays are cut into one contiguous chunk per task and each chunk runs the serial kernel:
// chunks start on 64-byte boundaries of the element index (whole cache lines when the array is
// aligned: no line is written by two threads), softmax chunks on whole rows. Work below
// `min_chunk` elements per task stays on fewer tasks (one for small arrays: no thread is
// started for them). The arguments are checked once, on the whole arrays, before any task runs,
// with the serial kernels' rules and messages.
//
// The tasks run on an executor: any callable executor(count, task) that calls task(i) for every
// i in [0, count), possibly concurrently, and returns when all have returned (a thread pool's
// parallel-for, an OpenMP loop, TBB's parallel_for). The default, thread_executor, starts
// count - 1 std::threads for each call and runs task 0 itself.

#include <algorithm>
#include <cstddef>
#include <span>
#include <thread>
#include <vector>

#include <xsimd/xsimd.hpp>

#include "concepts.hpp"
#include "detail/checks.hpp"
#include "isa.hpp"
#include "kernels.hpp"
#include "softmax.hpp"

namespace nonlin::parallel {

// std::threads started per call: count - 1 of them, task 0 on the calling thread.
struct thread_executor {
  template <class Task>
  NONLIN_ISA_TAG void operator()(std::size_t count, Task const& task) const {
    std::vector<std::jthread> workers;
    workers.reserve(count > 0 ? count - 1 : 0);
    for (std::size_t i = 1; i < count; ++i) {
      workers.emplace_back([&task, i] { task(i); });
    }
    if (count > 0) {
      task(0);
    }
  }
};

// How a call is split: at most `tasks` chunks (0: std::thread::hardware_concurrency()), each of
// at least `min_chunk` elements (softmax: of whole rows holding at least that many).
template <class Executor = thread_executor>
struct options {
  std::size_t tasks = 0;
  std::size_t min_chunk = std::size_t{1} << 16;
  Executor executor{};
};

namespace detail {
inline namespace NONLIN_ISA {

inline std::size_t task_limit(std::size_t tasks) {
  if (tasks != 0) {
    return tasks;
  }
  return std::max<std::size_t>(1, std::thread::hardware_concurrency());
}

// run(begin, end) over [0, n) cut into chunks whose starts are multiples of `granule` units.
template <class Executor, class Run>
void split(std::size_t n, std::size_t granule, std::size_t min_units, options<Executor> const& o,
           Run const& run) {
  std::size_t const wanted = std::max<std::size_t>(1, n / std::max<std::size_t>(1, min_units));
  std::size_t const count = std::min(task_limit(o.tasks), wanted);
  if (count <= 1) {
    run(std::size_t{0}, n);
    return;
  }
  std::size_t const per_task = (n + count - 1) / count;
  std::size_t const step = (per_task + granule - 1) / granule * granule;
  std::size_t const used = (n + step - 1) / step;
  o.executor(used, [&](std::size_t i) {
    std::size_t const begin = i * step;
    run(begin, std::min(n, begin + step));
  });
}

template <class T>
inline constexpr std::size_t line_elements = std::max<std::size_t>(1, 64 / sizeof(T));

}  // namespace NONLIN_ISA
}  // namespace detail

inline namespace NONLIN_ISA {

// y = f(x), as nonlin::forward.
template <class Arch = xsimd::default_arch, class F, nonlin::detail::span_element T,
          class Executor = thread_executor>
requires unary_activation<F, nonlin::detail::compute_t<T>>
void forward(F const& f, std::span<T const> x, std::span<T> y, options<Executor> const& o = {}) {
  nonlin::detail::require_same_size<T>("nonlin::parallel::forward", "x", x, "y", y);
  nonlin::detail::require_no_partial_overlap<T>("nonlin::parallel::forward", "y", y, "x", x);
  detail::split(
      x.size(), detail::line_elements<T>, o.min_chunk, o, [&](std::size_t begin, std::size_t end) {
        nonlin::forward<Arch>(f, x.subspan(begin, end - begin), y.subspan(begin, end - begin));
      });
}

// dx = dy * f'(x), as nonlin::backward.
template <class Arch = xsimd::default_arch, class F, nonlin::detail::span_element T,
          class Executor = thread_executor>
requires unary_activation<F, nonlin::detail::compute_t<T>>
void backward(F const& f, std::span<T const> x, std::span<T const> dy, std::span<T> dx,
              options<Executor> const& o = {}) {
  char const* where = "nonlin::parallel::backward";
  nonlin::detail::require_same_size<T>(where, "x", x, "dy", dy);
  nonlin::detail::require_same_size<T>(where, "x", x, "dx", dx);
  nonlin::detail::require_no_partial_overlap<T>(where, "dx", dx, "x", x);
  nonlin::detail::require_no_partial_overlap<T>(where, "dx", dx, "dy", dy);
  detail::split(
      x.size(), detail::line_elements<T>, o.min_chunk, o, [&](std::size_t begin, std::size_t end) {
        std::size_t const n = end - begin;
        nonlin::backward<Arch>(f, x.subspan(begin, n), dy.subspan(begin, n), dx.subspan(begin, n));
      });
}

// dx = dy * f'(x) from y = f(x), as nonlin::backward_from_output.
template <class Arch = xsimd::default_arch, class F, nonlin::detail::span_element T,
          class Executor = thread_executor>
requires output_differentiable<F, nonlin::detail::compute_t<T>>
void backward_from_output(F const& f, std::span<T const> y, std::span<T const> dy, std::span<T> dx,
                          options<Executor> const& o = {}) {
  char const* where = "nonlin::parallel::backward_from_output";
  nonlin::detail::require_same_size<T>(where, "y", y, "dy", dy);
  nonlin::detail::require_same_size<T>(where, "y", y, "dx", dx);
  nonlin::detail::require_no_partial_overlap<T>(where, "dx", dx, "y", y);
  nonlin::detail::require_no_partial_overlap<T>(where, "dx", dx, "dy", dy);
  nonlin::detail::require_output_backward_defined(f);
  detail::split(y.size(), detail::line_elements<T>, o.min_chunk, o,
                [&](std::size_t begin, std::size_t end) {
                  std::size_t const n = end - begin;
                  nonlin::backward_from_output<Arch>(f, y.subspan(begin, n), dy.subspan(begin, n),
                                                     dx.subspan(begin, n));
                });
}

// softmax or log_softmax over rows of `cols`, as nonlin::forward(f, x, y, cols): whole rows per
// task.
template <class Arch = xsimd::default_arch, normalization F, nonlin::detail::span_element T,
          class Executor = thread_executor>
void forward(F const& f, std::span<T const> x, std::span<T> y, std::size_t cols,
             options<Executor> const& o = {}) {
  char const* where = nonlin::detail::parallel_forward_where<F>();
  nonlin::detail::require_temperature<nonlin::detail::compute_t<T>>(where, f.temperature);
  axis_layout const shape = nonlin::detail::rows_layout(where, "x", x.size(), cols);
  nonlin::detail::require_same_size<T>(where, "x", x, "y", y);
  nonlin::detail::require_no_partial_overlap<T>(where, "y", y, "x", x);
  std::size_t const min_rows =
      std::max<std::size_t>(1, o.min_chunk / std::max<std::size_t>(1, cols));
  detail::split(shape.outer, 1, min_rows, o, [&](std::size_t begin, std::size_t end) {
    std::size_t const rows = end - begin;
    nonlin::forward<Arch>(f, x.subspan(begin * cols, rows * cols),
                          y.subspan(begin * cols, rows * cols), cols);
  });
}

}  // namespace NONLIN_ISA
}  // namespace nonlin::parallel
