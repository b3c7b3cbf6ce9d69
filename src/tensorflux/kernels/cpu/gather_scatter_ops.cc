// CPU kernels that move slices by index: GatherV2 (batch_dims), Gather (TF1), GatherNd,
// DynamicStitch (every dtype; slices copied as storage-type runs), and ScatterNd,
// UnsortedSegmentSum (numeric dtypes; duplicates add). Every index is checked before anything is
// read: an index out of range is INVALID_ARGUMENT naming its position, e.g.
// "indices[3] = 7 is not in [0, 5)".
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tensorflux/framework/op_kernel.h"
#include "tensorflux/kernels/cpu/array_copy.h"
#include "tensorflux/ops/array_shape_util.h"

namespace tensorflux {
namespace {

using array_util::MultiIndexString;

int64_t Product(absl::Span<const int64_t> dims, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t d = begin; d < end; ++d) p *= dims[d];
  return p;
}

// Copies `rows` runs of `inner` elements: dst row r <- src row src_row(r). Parallel over rows.
template <typename S, typename SrcRow>
void GatherRows(ThreadPool* pool, const S* src, S* dst, int64_t rows, int64_t inner,
                SrcRow src_row) {
  auto run = [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) std::copy_n(src + src_row(r) * inner, inner, dst + r * inner);
  };
  if (pool == nullptr) {
    run(0, rows);
  } else {
    pool->ParallelFor(rows, std::max<int64_t>(1, inner * static_cast<int64_t>(sizeof(S)) / 8),
                      run);
  }
}

// GatherV2 (axis input, batch_dims attr) and Gather (axis 0).
class GatherOp : public OpKernel {
 public:
  GatherOp(OpKernelConstruction* ctx, bool v2) : OpKernel(ctx), v2_(v2) {
    if (v2_) OP_REQUIRES_OK(ctx, ctx->GetAttr("batch_dims", &batch_dims_));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& params = ctx->input(0);
    const Tensor& indices = ctx->input(1);
    int64_t axis = 0;
    if (v2_) {
      const Tensor& axis_t = ctx->input(2);
      OP_REQUIRES(ctx, axis_t.dims() == 0,
                  errors::InvalidArgument("axis must be scalar, got shape ",
                                          axis_t.shape().DebugString()));
      OP_REQUIRES_OK(ctx, array_util::IntScalar(axis_t, "axis", &axis));
    }
    OP_REQUIRES(ctx, params.dims() >= 1,
                errors::InvalidArgument("params must be at least 1 dimensional"));
    OP_REQUIRES_OK(ctx, array_util::NormalizeAxis(axis, params.dims(), "axis", &axis));
    int64_t batch_dims = batch_dims_;
    if (batch_dims < 0) batch_dims += indices.dims();
    OP_REQUIRES(ctx, batch_dims >= 0 && batch_dims <= indices.dims(),
                errors::InvalidArgument("Expected batch_dims in the range [", -indices.dims(),
                                        ", ", indices.dims(), "], but got ", batch_dims_));
    OP_REQUIRES(ctx, batch_dims <= axis,
                errors::InvalidArgument("batch_dims (", batch_dims,
                                        ") must be less than or equal to axis (", axis, ")."));
    const auto pd = params.shape().dim_sizes();
    const auto id = indices.shape().dim_sizes();
    for (int64_t d = 0; d < batch_dims; ++d) {
      OP_REQUIRES(ctx, pd[d] == id[d],
                  errors::InvalidArgument("params.shape[", d, "]: ", pd[d],
                                          " should be equal to indices.shape[", d, "]: ", id[d]));
    }
    std::vector<int64_t> out_dims(pd.begin(), pd.begin() + axis);
    out_dims.insert(out_dims.end(), id.begin() + batch_dims, id.end());
    out_dims.insert(out_dims.end(), pd.begin() + axis + 1, pd.end());
    auto shape = TensorShape::Make(out_dims);
    OP_REQUIRES_OK(ctx, shape.status());

    std::vector<int64_t> idx;
    OP_REQUIRES_OK(ctx, array_util::IntegerValues(indices, "indices", &idx));
    const int64_t limit = pd[axis];
    for (size_t i = 0; i < idx.size(); ++i) {
      OP_REQUIRES(ctx, idx[i] >= 0 && idx[i] < limit,
                  errors::InvalidArgument("indices", MultiIndexString(id, i), " = ", idx[i],
                                          " is not in [0, ", limit, ")"));
    }
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, *shape, &out));
    if (out->NumElements() == 0) return;
    const int64_t outer = Product(pd, batch_dims, axis);
    const int64_t inner = Product(pd, axis + 1, pd.size());
    const int64_t n = Product(id, batch_dims, id.size());  // indices per batch
    // Output row r = ((b * outer + o) * n + i) reads params row (b * outer + o) * limit + idx.
    auto src_row = [&](int64_t r) {
      const int64_t i = r % n, bo = r / n, b = bo / outer;
      return bo * limit + idx[b * n + i];
    };
    OP_REQUIRES_OK(ctx, array_copy::VisitElementType(params.dtype(), type_string(), [&](auto tag) {
      using S = typename decltype(tag)::type;
      GatherRows<S>(ctx->intra_op_thread_pool(), array_copy::Elements<S>(params),
                    array_copy::Elements<S>(*out), out->NumElements() / inner, inner, src_row);
      return OkStatus();
    }));
  }

 private:
  bool v2_;
  int64_t batch_dims_ = 0;
};
struct GatherV2Op : GatherOp {
  explicit GatherV2Op(OpKernelConstruction* c) : GatherOp(c, true) {}
};
struct GatherV1Op : GatherOp {
  explicit GatherV1Op(OpKernelConstruction* c) : GatherOp(c, false) {}
};
REGISTER_KERNEL_BUILDER(Name("GatherV2").Device(DEVICE_CPU), GatherV2Op);
REGISTER_KERNEL_BUILDER(Name("Gather").Device(DEVICE_CPU), GatherV1Op);

// For indices [..., K] into a tensor of `shape`: the flat slice number of each index tuple
// (row-major over shape[:K]), or INVALID_ARGUMENT naming the first bad tuple.
Status SliceNumbers(const Tensor& indices, absl::Span<const int64_t> shape, std::string_view what,
                    std::vector<int64_t>* out) {
  std::vector<int64_t> idx;
  TX_RETURN_IF_ERROR(array_util::IntegerValues(indices, "indices", &idx));
  const int64_t k = indices.dim_size(indices.dims() - 1);
  const int64_t count = Product(indices.shape().dim_sizes(), 0, indices.dims() - 1);
  out->assign(count, 0);
  for (int64_t t = 0; t < count; ++t) {
    int64_t flat = 0;
    for (int64_t j = 0; j < k; ++j) {
      const int64_t v = idx[t * k + j];
      if (v < 0 || v >= shape[j]) {
        std::vector<int64_t> tuple(idx.begin() + t * k, idx.begin() + (t + 1) * k);
        auto outer = indices.shape().dim_sizes().subspan(0, indices.dims() - 1);
        return errors::InvalidArgument(
            "indices", MultiIndexString(outer, t), " = [", absl::StrJoin(tuple, ", "),
            "] does not index into ", what, " shape ",
            TensorShape(shape).DebugString());
      }
      flat = flat * shape[j] + v;
    }
    (*out)[t] = flat;
  }
  return OkStatus();
}

class GatherNdOp : public OpKernel {
 public:
  explicit GatherNdOp(OpKernelConstruction* ctx) : OpKernel(ctx) {}

  void Compute(OpKernelContext* ctx) override {
    const Tensor& params = ctx->input(0);
    const Tensor& indices = ctx->input(1);
    OP_REQUIRES(ctx, indices.dims() >= 1,
                errors::InvalidArgument("indices must be at least a vector, got shape ",
                                        indices.shape().DebugString()));
    const int64_t k = indices.dim_size(indices.dims() - 1);
    OP_REQUIRES(ctx, k <= params.dims(),
                errors::InvalidArgument("indices.shape[-1] must be <= params.rank, but saw "
                                        "indices shape: ", indices.shape().DebugString(),
                                        " and params shape: ", params.shape().DebugString()));
    const auto pd = params.shape().dim_sizes();
    const auto id = indices.shape().dim_sizes();
    std::vector<int64_t> out_dims(id.begin(), id.end() - 1);
    out_dims.insert(out_dims.end(), pd.begin() + k, pd.end());
    auto shape = TensorShape::Make(out_dims);
    OP_REQUIRES_OK(ctx, shape.status());
    const int64_t rows = Product(id, 0, id.size() - 1);
    std::vector<int64_t> slices;
    OP_REQUIRES_OK(ctx, SliceNumbers(indices, pd, "param", &slices));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, *shape, &out));
    if (out->NumElements() == 0) return;
    const int64_t inner = Product(pd, k, pd.size());
    OP_REQUIRES_OK(ctx, array_copy::VisitElementType(params.dtype(), type_string(), [&](auto tag) {
      using S = typename decltype(tag)::type;
      GatherRows<S>(ctx->intra_op_thread_pool(), array_copy::Elements<S>(params),
                    array_copy::Elements<S>(*out), rows, inner,
                    [&](int64_t r) { return slices[r]; });
      return OkStatus();
    }));
  }
};
REGISTER_KERNEL_BUILDER(Name("GatherNd").Device(DEVICE_CPU), GatherNdOp);

// a += b for every numeric storage type (half and bfloat16 add in float).
template <typename T>
inline void AddTo(T* a, const T& b) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    *a = T(static_cast<float>(*a) + static_cast<float>(b));
  } else if constexpr (std::is_same_v<T, bool>) {
    *a = *a || b;
  } else {
    *a = static_cast<T>(*a + b);
  }
}

// out[slot[r]] += data row r for rows with slot >= 0; out zero-filled first.
Status ScatterAddRows(const Tensor& data, const std::vector<int64_t>& slot, int64_t inner,
                      Tensor* out, std::string_view what) {
  return VisitPodType(data.dtype(), what, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* dst = out->data<T>();
    std::fill_n(dst, out->NumElements(), T{});
    const T* src = data.data<T>();
    for (size_t r = 0; r < slot.size(); ++r) {
      if (slot[r] < 0) continue;
      T* d = dst + slot[r] * inner;
      const T* s = src + static_cast<int64_t>(r) * inner;
      for (int64_t j = 0; j < inner; ++j) AddTo(&d[j], s[j]);
    }
    return OkStatus();
  });
}

class ScatterNdOp : public OpKernel {
 public:
  explicit ScatterNdOp(OpKernelConstruction* ctx) : OpKernel(ctx) {}

  void Compute(OpKernelContext* ctx) override {
    const Tensor& indices = ctx->input(0);
    const Tensor& updates = ctx->input(1);
    const Tensor& shape_t = ctx->input(2);
    OP_REQUIRES(ctx, shape_t.dims() == 1 && shape_t.NumElements() >= 1,
                errors::InvalidArgument("shape must be a vector with at least one element, got ",
                                        shape_t.shape().DebugString()));
    std::vector<int64_t> dims;
    OP_REQUIRES_OK(ctx, array_util::IntegerValues(shape_t, "shape", &dims));
    auto shape = TensorShape::Make(dims);
    OP_REQUIRES_OK(ctx, shape.status());
    OP_REQUIRES(ctx, indices.dims() >= 1,
                errors::InvalidArgument("indices must be at least a vector, got shape ",
                                        indices.shape().DebugString()));
    const int64_t k = indices.dim_size(indices.dims() - 1);
    OP_REQUIRES(ctx, k <= shape->dims(),
                errors::InvalidArgument("indices.shape[-1] = ", k, " must be <= rank of shape ",
                                        shape->DebugString()));
    // updates.shape must be indices.shape[:-1] + shape[k:].
    std::vector<int64_t> want(indices.shape().dim_sizes().begin(),
                              indices.shape().dim_sizes().end() - 1);
    want.insert(want.end(), dims.begin() + k, dims.end());
    OP_REQUIRES(ctx, updates.shape() == TensorShape(want),
                errors::InvalidArgument("updates.shape ", updates.shape().DebugString(),
                                        " must be indices.shape[:-1] + shape[indices.shape[-1]:]"
                                        " = ", TensorShape(want).DebugString()));
    OP_REQUIRES(ctx, shape->num_elements() > 0 || updates.NumElements() == 0,
                errors::InvalidArgument("Indices and updates specified for empty output shape ",
                                        shape->DebugString()));
    std::vector<int64_t> slots;
    OP_REQUIRES_OK(ctx, SliceNumbers(indices, dims, "output", &slots));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, *shape, &out));
    if (out->NumElements() == 0) return;
    const int64_t inner = Product(dims, k, dims.size());
    if (updates.dtype() == DT_STRING) {
      // As TF: strings "add" by concatenation, in the order of the updates.
      const std::string* src = updates.data<std::string>();
      std::string* dst = out->data<std::string>();
      for (size_t r = 0; r < slots.size(); ++r) {
        for (int64_t j = 0; j < inner; ++j) dst[slots[r] * inner + j] += src[r * inner + j];
      }
      return;
    }
    OP_REQUIRES_OK(ctx, ScatterAddRows(updates, slots, inner, out, "ScatterNd"));
  }
};
// Numeric and bool element types (bool "adds" as logical or), and strings (concatenation).
const std::vector<DataType> kAddableTypes = {DT_FLOAT,  DT_DOUBLE, DT_HALF,   DT_BFLOAT16, DT_INT8,
                                             DT_INT16,  DT_INT32,  DT_INT64,  DT_UINT8,    DT_UINT16,
                                             DT_UINT32, DT_UINT64, DT_BOOL,   DT_STRING};
REGISTER_KERNEL_BUILDER(Name("ScatterNd").Device(DEVICE_CPU).TypeConstraint("T", kAddableTypes),
                        ScatterNdOp);

class UnsortedSegmentSumOp : public OpKernel {
 public:
  explicit UnsortedSegmentSumOp(OpKernelConstruction* ctx) : OpKernel(ctx) {}

  void Compute(OpKernelContext* ctx) override {
    const Tensor& data = ctx->input(0);
    const Tensor& ids_t = ctx->input(1);
    int64_t num = 0;
    OP_REQUIRES_OK(ctx, array_util::IntScalar(ctx->input(2), "num_segments", &num));
    OP_REQUIRES(ctx, num >= 0, errors::InvalidArgument("num_segments must be >= 0, got ", num));
    const auto dd = data.shape().dim_sizes();
    const auto id = ids_t.shape().dim_sizes();
    bool prefix = id.size() <= dd.size();
    for (size_t d = 0; prefix && d < id.size(); ++d) prefix = id[d] == dd[d];
    OP_REQUIRES(ctx, prefix,
                errors::InvalidArgument("data.shape = ", data.shape().DebugString(),
                                        " does not start with segment_ids.shape = ",
                                        ids_t.shape().DebugString()));
    std::vector<int64_t> out_dims = {num};
    out_dims.insert(out_dims.end(), dd.begin() + id.size(), dd.end());
    auto shape = TensorShape::Make(out_dims);
    OP_REQUIRES_OK(ctx, shape.status());
    std::vector<int64_t> ids;
    OP_REQUIRES_OK(ctx, array_util::IntegerValues(ids_t, "segment_ids", &ids));
    for (size_t i = 0; i < ids.size(); ++i) {
      OP_REQUIRES(ctx, ids[i] < num,
                  errors::InvalidArgument("segment_ids", MultiIndexString(id, i), " = ", ids[i],
                                          " is out of range [0, ", num, ")"));
    }
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, *shape, &out));
    if (out->NumElements() == 0) return;
    OP_REQUIRES_OK(ctx, ScatterAddRows(data, ids, Product(dd, id.size(), dd.size()), out,
                                       "UnsortedSegmentSum"));
  }
};
REGISTER_KERNEL_BUILDER(Name("UnsortedSegmentSum").Device(DEVICE_CPU), UnsortedSegmentSumOp);

class DynamicStitchOp : public OpKernel {
 public:
  explicit DynamicStitchOp(OpKernelConstruction* ctx) : OpKernel(ctx) {}

  void Compute(OpKernelContext* ctx) override {
    const int n = ctx->num_inputs() / 2;
    const Tensor& data0 = ctx->input(n);
    const Tensor& idx0 = ctx->input(0);
    OP_REQUIRES(ctx, data0.dims() >= idx0.dims(),
                errors::InvalidArgument("data[0].shape ", data0.shape().DebugString(),
                                        " must start with indices[0].shape ",
                                        idx0.shape().DebugString()));
    const auto inner_dims = data0.shape().dim_sizes().subspan(idx0.dims());
    int64_t max_index = -1;
    std::vector<std::vector<int64_t>> all(n);
    for (int i = 0; i < n; ++i) {
      const Tensor& idx = ctx->input(i);
      const Tensor& data = ctx->input(n + i);
      bool ok = data.dims() == idx.dims() + static_cast<int>(inner_dims.size());
      for (int d = 0; ok && d < idx.dims(); ++d) ok = data.dim_size(d) == idx.dim_size(d);
      for (size_t d = 0; ok && d < inner_dims.size(); ++d) {
        ok = data.dim_size(idx.dims() + static_cast<int>(d)) == inner_dims[d];
      }
      OP_REQUIRES(ctx, ok,
                  errors::InvalidArgument("data[", i, "].shape = ", data.shape().DebugString(),
                                          " does not start with indices[", i, "].shape = ",
                                          idx.shape().DebugString(), " followed by data[0]'s "
                                          "trailing dims ",
                                          TensorShape(inner_dims).DebugString()));
      OP_REQUIRES_OK(ctx, array_util::IntegerValues(idx, "indices", &all[i]));
      for (size_t j = 0; j < all[i].size(); ++j) {
        OP_REQUIRES(ctx, all[i][j] >= 0,
                    errors::InvalidArgument("indices[", i, "]",
                                            MultiIndexString(idx.shape().dim_sizes(), j), " = ",
                                            all[i][j], " is negative"));
        max_index = std::max(max_index, all[i][j]);
      }
    }
    std::vector<int64_t> out_dims = {max_index + 1};
    out_dims.insert(out_dims.end(), inner_dims.begin(), inner_dims.end());
    auto shape = TensorShape::Make(out_dims);
    OP_REQUIRES_OK(ctx, shape.status());
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, *shape, &out));
    if (out->NumElements() == 0) return;
    const int64_t inner = Product(inner_dims, 0, inner_dims.size());
    OP_REQUIRES_OK(ctx, array_copy::VisitElementType(out->dtype(), type_string(), [&](auto tag) {
      using S = typename decltype(tag)::type;
      S* dst = array_copy::Elements<S>(*out);
      std::fill_n(dst, out->NumElements(), S{});  // rows no index names stay zero
      for (int i = 0; i < n; ++i) {
        const S* src = array_copy::Elements<S>(ctx->input(n + i));
        for (size_t j = 0; j < all[i].size(); ++j) {
          std::copy_n(src + static_cast<int64_t>(j) * inner, inner, dst + all[i][j] * inner);
        }
      }
      return OkStatus();
    }));
  }
};
REGISTER_KERNEL_BUILDER(Name("DynamicStitch").Device(DEVICE_CPU), DynamicStitchOp);

}  // namespace
}  // namespace tensorflux
