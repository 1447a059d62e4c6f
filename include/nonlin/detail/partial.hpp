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
#include "../math/ops.hpp"

namespace nonlin::detail {

NONLIN_INTRINSIC_DIAGNOSTICS_PUSH
template <class B>
inline B load_partial(scalar_t<B> const* p, std::size_t count, scalar_t<B> fill) {
  using T = scalar_t<B>;
#if defined(__AVX512F__) && defined(__AVX512VL__)
  constexpr bool is_float = std::is_same_v<T, float>;
  auto const mask = static_cast<unsigned>((1u << count) - 1u);
  if constexpr (sizeof(B) == 64 && is_float) {
    return B(_mm512_mask_loadu_ps(_mm512_set1_ps(fill), static_cast<__mmask16>(mask), p));
  } else if constexpr (sizeof(B) == 64) {
    return B(_mm512_mask_loadu_pd(_mm512_set1_pd(fill), static_cast<__mmask8>(mask), p));
  } else if constexpr (sizeof(B) == 32 && is_float) {
    return B(_mm256_mask_loadu_ps(_mm256_set1_ps(fill), static_cast<__mmask8>(mask), p));
  } else if constexpr (sizeof(B) == 32) {
    return B(_mm256_mask_loadu_pd(_mm256_set1_pd(fill), static_cast<__mmask8>(mask), p));
  } else if constexpr (sizeof(B) == 16 && is_float) {
    return B(_mm_mask_loadu_ps(_mm_set1_ps(fill), static_cast<__mmask8>(mask), p));
  } else if constexpr (sizeof(B) == 16) {
    return B(_mm_mask_loadu_pd(_mm_set1_pd(fill), static_cast<__mmask8>(mask), p));
  }
#endif
  alignas(64) std::array<T, B::size> buffer;
  buffer.fill(fill);
  std::copy_n(p, count, buffer.begin());
  return B::load_aligned(buffer.data());
}

template <class B>
inline void store_partial(B const& value, scalar_t<B>* p, std::size_t count) {
  using T = scalar_t<B>;
#if defined(__AVX512F__) && defined(__AVX512VL__)
  constexpr bool is_float = std::is_same_v<T, float>;
  auto const mask = static_cast<unsigned>((1u << count) - 1u);
  if constexpr (sizeof(B) == 64 && is_float) {
    _mm512_mask_storeu_ps(p, static_cast<__mmask16>(mask), value);
    return;
  } else if constexpr (sizeof(B) == 64) {
    _mm512_mask_storeu_pd(p, static_cast<__mmask8>(mask), value);
    return;
  } else if constexpr (sizeof(B) == 32 && is_float) {
    _mm256_mask_storeu_ps(p, static_cast<__mmask8>(mask), value);
    return;
  } else if constexpr (sizeof(B) == 32) {
    _mm256_mask_storeu_pd(p, static_cast<__mmask8>(mask), value);
    return;
  } else if constexpr (sizeof(B) == 16 && is_float) {
    _mm_mask_storeu_ps(p, static_cast<__mmask8>(mask), value);
    return;
  } else if constexpr (sizeof(B) == 16) {
    _mm_mask_storeu_pd(p, static_cast<__mmask8>(mask), value);
    return;
  }
#endif
  alignas(64) std::array<T, B::size> buffer;
  value.store_aligned(buffer.data());
  std::copy_n(buffer.begin(), count, p);
}
NONLIN_INTRINSIC_DIAGNOSTICS_POP

}  // namespace nonlin::detail
