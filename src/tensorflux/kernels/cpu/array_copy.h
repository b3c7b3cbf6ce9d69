// Kernel-private: the one copying path of the array kernels (Transpose, Concat/Split, Slice,
// StridedSlice, Tile, Pad, BroadcastTo, Gather, ...).
//
// Array kernels move elements without looking at them, so they are templated on the element's
// storage type chosen by size, not on the dtype: every 4-byte dtype (float, int32, uint32) runs
// the same uint32_t instantiation. Strings and resource handles get their own (non-trivially
// copyable) instantiation. VisitElementType picks it:
//
//   VisitElementType(t.dtype(), "Transpose", [&](auto tag) {
//     using T = typename decltype(tag)::type;      // uint8_t..uint64_t, std::string, ResourceHandle
//     BoxCopy<T>(pool, src, dst, spec);
//     return OkStatus();
//   });
//
// BoxCopy copies an N-d box of elements given element strides on both sides (strides may be
// negative, and 0 on the source side to repeat an element). Dims of size 1 are dropped, adjacent
// dims that are contiguous on both sides are merged, contiguous innermost runs become memcpy
// (std::copy_n), and when the source's contiguous dim is not the innermost one (a transpose) the
// two dims are walked in cache-sized tiles. Large boxes are split over the intra-op pool by rows.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>

#include "absl/container/inlined_vector.h"
#include "tensorflux/core/status.h"
#include "tensorflux/core/tensor.h"
#include "tensorflux/core/threadpool.h"
#include "tensorflux/core/types.h"

namespace tensorflux {
namespace array_copy {

// Calls fn(TypeTag<S>{}) with the storage type S for dtype `dt`: uintN_t for POD elements of N
// bytes, std::string for DT_STRING, ResourceHandle for DT_RESOURCE. UNIMPLEMENTED naming `what`
// for other dtypes.
template <typename Fn>
Status VisitElementType(DataType dt, std::string_view what, Fn&& fn) {
  switch (BaseType(dt)) {
    case DT_STRING: return fn(TypeTag<std::string>{});
    case DT_RESOURCE: return fn(TypeTag<ResourceHandle>{});
    default: break;
  }
  if (DataTypeIsSupported(dt)) {
    switch (DataTypeSize(dt)) {
      case 1: return fn(TypeTag<uint8_t>{});
      case 2: return fn(TypeTag<uint16_t>{});
      case 4: return fn(TypeTag<uint32_t>{});
      case 8: return fn(TypeTag<uint64_t>{});
      default: break;
    }
  }
  return errors::Unimplemented(what, " does not support dtype ", DataTypeString(dt));
}

using Dims = absl::InlinedVector<int64_t, 8>;

// An N-d box: element (k_0, ..., k_{r-1}) with 0 <= k_d < sizes[d] is read from
// src + sum(k_d * src_strides[d]) and written to dst + sum(k_d * dst_strides[d]). Every
// destination element must be written at most once (dst strides describe an injective map).
struct BoxSpec {
  Dims sizes, src_strides, dst_strides;

  void AddDim(int64_t size, int64_t src_stride, int64_t dst_stride) {
    sizes.push_back(size);
    src_strides.push_back(src_stride);
    dst_strides.push_back(dst_stride);
  }
  int64_t NumElements() const {
    int64_t n = 1;
    for (int64_t s : sizes) n *= s;
    return n;
  }
};

// Row-major element strides of `shape`.
inline Dims RowMajorStrides(absl::Span<const int64_t> shape) {
  Dims strides(shape.size(), 1);
  for (int d = static_cast<int>(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

// Drops size-1 dims and merges neighbours that are contiguous on both sides. An empty box
// (some size 0) becomes sizes == {0}; a single element becomes rank 0.
inline BoxSpec Simplify(const BoxSpec& in) {
  BoxSpec out;
  for (size_t d = 0; d < in.sizes.size(); ++d) {
    if (in.sizes[d] == 0) {
      BoxSpec empty;
      empty.AddDim(0, 0, 0);
      return empty;
    }
  }
  for (size_t d = 0; d < in.sizes.size(); ++d) {
    if (in.sizes[d] == 1) continue;
    if (!out.sizes.empty()) {
      const size_t b = out.sizes.size() - 1;
      if (out.src_strides[b] == in.src_strides[d] * in.sizes[d] &&
          out.dst_strides[b] == in.dst_strides[d] * in.sizes[d]) {
        out.sizes[b] *= in.sizes[d];
        out.src_strides[b] = in.src_strides[d];
        out.dst_strides[b] = in.dst_strides[d];
        continue;
      }
    }
    out.AddDim(in.sizes[d], in.src_strides[d], in.dst_strides[d]);
  }
  return out;
}

namespace internal {

// Copies `n` elements with the given strides.
template <typename T>
inline void CopyRun(const T* src, int64_t ss, T* dst, int64_t ds, int64_t n) {
  if (ss == 1 && ds == 1) {
    std::copy_n(src, n, dst);
  } else if (ss == 0 && ds == 1) {
    std::fill_n(dst, n, *src);
  } else {
    for (int64_t i = 0; i < n; ++i) dst[i * ds] = src[i * ss];
  }
}

constexpr int64_t kTile = 32;

// Copies a 2-d block (a rows, b cols) in kTile x kTile tiles.
template <typename T>
inline void CopyTiled(const T* src, int64_t sa, int64_t sb, T* dst, int64_t da, int64_t db,
                      int64_t a, int64_t b) {
  for (int64_t i0 = 0; i0 < a; i0 += kTile) {
    const int64_t i1 = std::min(a, i0 + kTile);
    for (int64_t j0 = 0; j0 < b; j0 += kTile) {
      const int64_t j1 = std::min(b, j0 + kTile);
      for (int64_t i = i0; i < i1; ++i) {
        const T* s = src + i * sa;
        T* d = dst + i * da;
        for (int64_t j = j0; j < j1; ++j) d[j * db] = s[j * sb];
      }
    }
  }
}

}  // namespace internal

// Copies the box described by `spec` (see BoxSpec). `src` and `dst` point at element (0,...,0).
// `pool` may be null (single-threaded).
template <typename T>
void BoxCopy(ThreadPool* pool, const T* src, T* dst, const BoxSpec& spec) {
  BoxSpec s = Simplify(spec);
  int r = static_cast<int>(s.sizes.size());
  if (r == 1 && s.sizes[0] == 0) return;
  if (r == 0) {
    *dst = *src;
    return;
  }
  // A transpose: the source's unit-stride dim is not innermost. Move it next to the innermost
  // dim and copy those two dims in tiles.
  bool tiled = false;
  if (r >= 2 && s.src_strides[r - 1] != 1 && s.src_strides[r - 1] != 0) {
    for (int d = 0; d < r - 1; ++d) {
      if (s.src_strides[d] == 1 && s.sizes[d] >= 4 && s.sizes[r - 1] >= 4) {
        for (int e = d; e < r - 2; ++e) {
          std::swap(s.sizes[e], s.sizes[e + 1]);
          std::swap(s.src_strides[e], s.src_strides[e + 1]);
          std::swap(s.dst_strides[e], s.dst_strides[e + 1]);
        }
        tiled = true;
        break;
      }
    }
  }
  const int inner_dims = tiled ? 2 : 1;
  const int outer_rank = r - inner_dims;
  int64_t rows = 1;
  for (int d = 0; d < outer_rank; ++d) rows *= s.sizes[d];
  int64_t row_elems = 1;
  for (int d = outer_rank; d < r; ++d) row_elems *= s.sizes[d];

  auto run_rows = [&](int64_t begin, int64_t end) {
    Dims idx(outer_rank, 0);
    int64_t rem = begin, so = 0, dof = 0;
    for (int d = outer_rank - 1; d >= 0; --d) {
      idx[d] = rem % s.sizes[d];
      rem /= s.sizes[d];
      so += idx[d] * s.src_strides[d];
      dof += idx[d] * s.dst_strides[d];
    }
    for (int64_t row = begin; row < end; ++row) {
      if (tiled) {
        internal::CopyTiled(src + so, s.src_strides[r - 2], s.src_strides[r - 1], dst + dof,
                            s.dst_strides[r - 2], s.dst_strides[r - 1], s.sizes[r - 2],
                            s.sizes[r - 1]);
      } else {
        internal::CopyRun(src + so, s.src_strides[r - 1], dst + dof, s.dst_strides[r - 1],
                          s.sizes[r - 1]);
      }
      for (int d = outer_rank - 1; d >= 0; --d) {
        so += s.src_strides[d];
        dof += s.dst_strides[d];
        if (++idx[d] < s.sizes[d]) break;
        so -= s.src_strides[d] * s.sizes[d];
        dof -= s.dst_strides[d] * s.sizes[d];
        idx[d] = 0;
      }
    }
  };
  // About 0.1 ns per byte for a contiguous copy; strings cost far more per element.
  const int64_t bytes_per_row = row_elems * static_cast<int64_t>(sizeof(T));
  const int64_t cost_per_row = std::is_trivially_copyable_v<T>
                                   ? std::max<int64_t>(1, bytes_per_row / (tiled ? 4 : 10))
                                   : row_elems * 20;
  if (pool == nullptr || rows == 1) {
    run_rows(0, rows);
  } else {
    pool->ParallelFor(rows, cost_per_row, run_rows);
  }
}

// Sets `n` elements of dst to `value`, in parallel when large.
template <typename T>
void FillElements(ThreadPool* pool, T* dst, int64_t n, const T& value) {
  constexpr int64_t kBlock = 1 << 14;
  const int64_t blocks = (n + kBlock - 1) / kBlock;
  auto fill = [&](int64_t b, int64_t e) {
    const int64_t lo = b * kBlock, hi = std::min(n, e * kBlock);
    std::fill(dst + lo, dst + hi, value);
  };
  if (pool == nullptr || blocks <= 1) {
    fill(0, blocks);
  } else {
    pool->ParallelFor(blocks, kBlock * static_cast<int64_t>(sizeof(T)) / 10, fill);
  }
}

// Typed element pointer into a tensor's storage (the storage type S chosen by VisitElementType).
template <typename S>
S* Elements(const Tensor& t) {
  return static_cast<S*>(t.raw_data());
}

}  // namespace array_copy
}  // namespace tensorflux
