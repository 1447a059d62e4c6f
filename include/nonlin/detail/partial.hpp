// SPDX-License-Identifier: MIT
#pragma once
// The first `count` lanes of a batch (count < the batch's size): the tails of the span kernels
// and of softmax's rows run the same batch code as a full batch, on a batch whose other lanes
// hold `fill`. With AVX-512 one masked load or store (masked-off lanes neither fault nor are
// written); elsewhere a padded copy. Same lane values either way, so the same results. The
// copies cost a softmax row of 1000 floats ~15% (three tails per row, each two memcpy calls).

#include <algorithm>
#include <array>
#include <cstddef>

#include <xsimd/xsimd.hpp>

#include "../concepts.hpp"
#include "../isa.hpp"
#include "../math/arch.hpp"

namespace nonlin::detail {
inline namespace NONLIN_ISA {

template <class B>
inline B load_partial(scalar_t<B> const* p, std::size_t count, scalar_t<B> fill) {
  if constexpr (math::arch::has_masked_load_store<B>) {
    return math::arch::load_masked<B>(p, count, fill);
  } else {
    alignas(64) std::array<scalar_t<B>, B::size> buffer;
    buffer.fill(fill);
    std::copy_n(p, count, buffer.begin());
    return B::load_aligned(buffer.data());
  }
}

// The mask of the first `count` lanes (count <= the batch's size): lane numbers compared with
// count, exact in the lane type.
template <class B>
inline auto first_lanes(std::size_t count) {
  using T = scalar_t<B>;
  alignas(64) static constexpr std::array<T, B::size> numbers = [] {
    std::array<T, B::size> v{};
    for (std::size_t k = 0; k < B::size; ++k) {
      v[k] = static_cast<T>(k);
    }
    return v;
  }();
  return B::load_aligned(numbers.data()) < B(static_cast<T>(count));
}

template <class B>
inline void store_partial(B const& value, scalar_t<B>* p, std::size_t count) {
  if constexpr (math::arch::has_masked_load_store<B>) {
    math::arch::store_masked(value, p, count);
  } else {
    alignas(64) std::array<scalar_t<B>, B::size> buffer;
    value.store_aligned(buffer.data());
    std::copy_n(buffer.begin(), count, p);
  }
}

}  // namespace NONLIN_ISA
}  // namespace nonlin::detail
