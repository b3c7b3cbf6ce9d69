// Array ops that select or place elements by index: Slice, StridedSlice, StridedSliceGrad,
// GatherV2 (and TF1's Gather), GatherNd, ScatterNd, DynamicStitch, UnsortedSegmentSum, OneHot,
// Range. Names, input order, attrs and defaults follow TensorFlow's registrations.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tensorflux/framework/op.h"
#include "tensorflux/framework/shape_inference.h"
#include "tensorflux/ops/array_shape_util.h"
#include "tensorflux/ops/strided_slice_spec.h"

namespace tensorflux {
namespace {

using array_util::IntScalar;
using array_util::IntValues;
using array_util::IntVector;
using array_util::NormalizeAxis;

PartialTensorShape Shape(const std::vector<int64_t>& dims) {
  return PartialTensorShape(absl::Span<const int64_t>(dims));
}
template <typename V>
PartialTensorShape Shape(const V& dims) {
  return PartialTensorShape(absl::Span<const int64_t>(dims.data(), dims.size()));
}
std::vector<int64_t> Dims(const PartialTensorShape& s) {
  return std::vector<int64_t>(s.dim_sizes().begin(), s.dim_sizes().end());
}
PartialTensorShape UnknownDims(int64_t rank) {
  if (rank < 0 || rank > TensorShape::kMaxDims) return PartialTensorShape::UnknownRank();
  return Shape(std::vector<int64_t>(rank, -1));
}
// Output shape with rank checking: INVALID_ARGUMENT above kMaxDims.
Status SetOutput(InferenceContext* c, int i, const std::vector<int64_t>& dims) {
  if (dims.size() > TensorShape::kMaxDims) {
    return errors::InvalidArgument(c->node_def().op(), " output would have rank ", dims.size(),
                                   ", more than ", TensorShape::kMaxDims);
  }
  c->set_output(i, Shape(dims));
  return OkStatus();
}

Status SliceShape(InferenceContext* c) {
  const PartialTensorShape& in = c->input(0);
  TX_RETURN_IF_ERROR(c->WithRank(1, 1));
  TX_RETURN_IF_ERROR(c->WithRank(2, 1));
  int64_t rank = in.unknown_rank() ? -1 : in.dims();
  for (int i : {1, 2}) {
    const PartialTensorShape& s = c->input(i);
    if (s.dims() == 1 && s.dim_size(0) >= 0) {
      if (rank >= 0 && s.dim_size(0) != rank) {
        return errors::InvalidArgument("Expected ", i == 1 ? "begin" : "size",
                                       " to be a vector of length ", rank, ", got shape ",
                                       s.DebugString());
      }
      rank = s.dim_size(0);
    }
  }
  const Tensor* begin_t = c->input_tensor(1);
  const Tensor* size_t_ = c->input_tensor(2);
  if (rank < 0 || size_t_ == nullptr) {
    c->set_output(0, UnknownDims(rank));
    return OkStatus();
  }
  std::vector<int64_t> begin, size;
  TX_RETURN_IF_ERROR(IntVector(*size_t_, "Slice's size", &size));
  if (begin_t != nullptr) TX_RETURN_IF_ERROR(IntVector(*begin_t, "Slice's begin", &begin));
  if (static_cast<int64_t>(size.size()) != rank ||
      (begin_t != nullptr && static_cast<int64_t>(begin.size()) != rank)) {
    return errors::InvalidArgument("Expected begin and size arguments to be 1-D tensors of size ",
                                   rank);
  }
  std::vector<int64_t> out(rank, -1);
  for (int64_t d = 0; d < rank; ++d) {
    const int64_t dim = in.unknown_rank() ? -1 : in.dim_size(d);
    if (size[d] >= 0) {
      out[d] = size[d];
    } else if (size[d] != -1) {
      return errors::InvalidArgument("Expected size[", d, "] >= -1, got ", size[d]);
    } else if (begin_t != nullptr && dim >= 0) {
      out[d] = dim - begin[d];
    }
    if (begin_t != nullptr && dim >= 0) {
      if (begin[d] < 0 || begin[d] > dim || out[d] < 0 || out[d] > dim - begin[d]) {
        return errors::InvalidArgument("Expected begin[", d, "] in [0, ", dim, "] and size[", d,
                                       "] in [0, ", dim, " - begin], but got begin ", begin[d],
                                       " and size ", size[d]);
      }
    }
  }
  c->set_output(0, Shape(out));
  return OkStatus();
}

// Reads StridedSlice's begin/end/strides inputs (at `first`, `first + 1`, `first + 2`) and attrs.
Status StridedSliceArgsFromContext(InferenceContext* c, int first, StridedSliceArgs* a,
                                   bool* length_known) {
  *length_known = false;
  for (int i = first; i < first + 3; ++i) {
    TX_RETURN_IF_ERROR(c->WithRank(i, 1));
    const PartialTensorShape& s = c->input(i);
    if (s.dims() == 1 && s.dim_size(0) >= 0) {
      if (*length_known && s.dim_size(0) != a->num_entries) {
        return errors::InvalidArgument(
            "Expected begin, end, and strides to be 1D equal size tensors, but got shapes ",
            c->input(first).DebugString(), ", ", c->input(first + 1).DebugString(), ", and ",
            c->input(first + 2).DebugString(), " instead.");
      }
      a->num_entries = s.dim_size(0);
      *length_known = true;
    }
  }
  std::optional<std::vector<int64_t>>* values[3] = {&a->begin, &a->end, &a->strides};
  for (int k = 0; k < 3; ++k) {
    if (const Tensor* t = c->input_tensor(first + k)) {
      std::vector<int64_t> v;
      TX_RETURN_IF_ERROR(IntVector(*t, "StridedSlice's begin/end/strides", &v));
      *values[k] = std::move(v);
    }
  }
  TX_RETURN_IF_ERROR(c->GetAttr("begin_mask", &a->begin_mask));
  TX_RETURN_IF_ERROR(c->GetAttr("end_mask", &a->end_mask));
  TX_RETURN_IF_ERROR(c->GetAttr("ellipsis_mask", &a->ellipsis_mask));
  TX_RETURN_IF_ERROR(c->GetAttr("new_axis_mask", &a->new_axis_mask));
  TX_RETURN_IF_ERROR(c->GetAttr("shrink_axis_mask", &a->shrink_axis_mask));
  return OkStatus();
}

Status StridedSliceShape(InferenceContext* c) {
  StridedSliceArgs args;
  bool length_known = false;
  TX_RETURN_IF_ERROR(StridedSliceArgsFromContext(c, 1, &args, &length_known));
  const PartialTensorShape& in = c->input(0);
  // Without constant strides even the rank is unknown (as TF: the masks' meaning depends on
  // the strides' signs).
  if (!length_known || in.unknown_rank() || !args.strides.has_value()) {
    return shape_inference::UnknownShape(c);
  }
  StridedSliceSpec spec;
  TX_RETURN_IF_ERROR(ComputeStridedSlice(in, args, &spec));
  c->set_output(0, Shape(spec.final_shape));
  return OkStatus();
}

Status StridedSliceGradShape(InferenceContext* c) {
  TX_RETURN_IF_ERROR(c->WithRank(0, 1));
  if (const Tensor* s = c->input_tensor(0)) {
    TX_ASSIGN_OR_RETURN(PartialTensorShape shape, shape_inference::ShapeFromTensor(*s));
    c->set_output(0, shape);
  } else {
    const PartialTensorShape& ss = c->input(0);
    c->set_output(0, UnknownDims(ss.dims() == 1 ? ss.dim_size(0) : -1));
  }
  return OkStatus();
}

// params[:axis] + indices[batch_dims:] + params[axis + 1:]
Status GatherShapeImpl(InferenceContext* c, bool has_axis) {
  const PartialTensorShape& params = c->input(0);
  const PartialTensorShape& indices = c->input(1);
  int64_t batch_dims = 0;
  if (has_axis) {
    TX_RETURN_IF_ERROR(c->GetAttr("batch_dims", &batch_dims));
    TX_RETURN_IF_ERROR(c->WithRank(2, 0));
  }
  const Tensor* axis_t = has_axis ? c->input_tensor(2) : nullptr;
  if (params.unknown_rank() || indices.unknown_rank()) {
    return shape_inference::UnknownShape(c);
  }
  if (batch_dims < 0) batch_dims += indices.dims();
  if (batch_dims < 0 || batch_dims > indices.dims()) {
    return errors::InvalidArgument("batch_dims must be in [-", indices.dims(), ", ",
                                   indices.dims(), "], got ", batch_dims);
  }
  if (params.dims() < 1) {
    return errors::InvalidArgument("params must be at least 1 dimensional");
  }
  if (has_axis && axis_t == nullptr) {
    // As TF: only the rank, params.rank + indices.rank - 1 - batch_dims.
    c->set_output(0, UnknownDims(params.dims() + indices.dims() - 1 - batch_dims));
    return OkStatus();
  }
  int64_t axis = 0;
  if (axis_t != nullptr) TX_RETURN_IF_ERROR(IntScalar(*axis_t, "GatherV2's axis", &axis));
  TX_RETURN_IF_ERROR(NormalizeAxis(axis, params.dims(), "GatherV2's axis", &axis));
  if (batch_dims > axis) {
    return errors::InvalidArgument("batch_dims (", batch_dims, ") must be less than or equal to ",
                                   "axis (", axis, ")");
  }
  for (int64_t d = 0; d < batch_dims; ++d) {
    const int64_t a = params.dim_size(d), b = indices.dim_size(d);
    if (a >= 0 && b >= 0 && a != b) {
      return errors::InvalidArgument("params.shape[", d, "]: ", a,
                                     " should be equal to indices.shape[", d, "]: ", b);
    }
  }
  std::vector<int64_t> out(params.dim_sizes().begin(), params.dim_sizes().begin() + axis);
  out.insert(out.end(), indices.dim_sizes().begin() + batch_dims, indices.dim_sizes().end());
  out.insert(out.end(), params.dim_sizes().begin() + axis + 1, params.dim_sizes().end());
  return SetOutput(c, 0, out);
}

// indices.shape[:-1] + params.shape[indices.shape[-1]:]
Status GatherNdShape(InferenceContext* c) {
  const PartialTensorShape& params = c->input(0);
  const PartialTensorShape& indices = c->input(1);
  TX_RETURN_IF_ERROR(c->WithRankAtLeast(1, 1));
  if (params.unknown_rank() || indices.unknown_rank()) return shape_inference::UnknownShape(c);
  const int64_t k = indices.dim_size(indices.dims() - 1);
  if (k < 0) return shape_inference::UnknownShape(c);
  if (k > params.dims()) {
    return errors::InvalidArgument("indices.shape[-1] must be <= params.rank, but saw indices "
                                   "shape: ", indices.DebugString(), " and params shape: ",
                                   params.DebugString());
  }
  std::vector<int64_t> out(indices.dim_sizes().begin(), indices.dim_sizes().end() - 1);
  out.insert(out.end(), params.dim_sizes().begin() + k, params.dim_sizes().end());
  return SetOutput(c, 0, out);
}

Status ScatterNdShape(InferenceContext* c) {
  TX_RETURN_IF_ERROR(c->WithRankAtLeast(0, 1));
  TX_RETURN_IF_ERROR(c->WithRank(2, 1));
  const Tensor* s = c->input_tensor(2);
  if (s == nullptr) {
    const PartialTensorShape& ss = c->input(2);
    c->set_output(0, UnknownDims(ss.dims() == 1 ? ss.dim_size(0) : -1));
    return OkStatus();
  }
  TX_ASSIGN_OR_RETURN(PartialTensorShape shape, shape_inference::ShapeFromTensor(*s));
  if (shape.dims() == 0) {
    return errors::InvalidArgument("ScatterNd's shape must have at least one dim");
  }
  for (int64_t d : shape.dim_sizes()) {
    if (d < 0) return errors::InvalidArgument("ScatterNd's shape must be non-negative, got ",
                                              shape.DebugString());
  }
  const PartialTensorShape& indices = c->input(0);
  const PartialTensorShape& updates = c->input(1);
  if (!indices.unknown_rank() && !updates.unknown_rank()) {
    const int64_t k = indices.dim_size(indices.dims() - 1);
    const int64_t outer = indices.dims() - 1;
    if (k > shape.dims()) {
      return errors::InvalidArgument("indices.shape[-1] = ", k, " must be <= rank of shape ",
                                     shape.dims());
    }
    if (k >= 0) {
      const int64_t want_rank = outer + shape.dims() - k;
      bool ok = updates.dims() == want_rank;
      for (int64_t d = 0; ok && d < updates.dims(); ++d) {
        const int64_t u = updates.dim_size(d);
        const int64_t w = d < outer ? indices.dim_size(d) : shape.dim_size(k + d - outer);
        if (u >= 0 && w >= 0 && u != w) ok = false;
      }
      if (!ok) {
        return errors::InvalidArgument("updates.shape ", updates.DebugString(),
                                       " must be indices.shape[:-1] + shape[indices.shape[-1]:]"
                                       " for indices.shape ", indices.DebugString(),
                                       " and shape ", shape.DebugString());
      }
    }
  }
  c->set_output(0, shape);
  return OkStatus();
}

Status DynamicStitchShape(InferenceContext* c) {
  const int n = c->num_inputs() / 2;
  int64_t max_index = -1;
  bool all_const = true;
  PartialTensorShape inner = PartialTensorShape::UnknownRank();
  for (int i = 0; i < n; ++i) {
    const PartialTensorShape& idx = c->input(i);
    const PartialTensorShape& data = c->input(n + i);
    if (const Tensor* t = c->input_tensor(i)) {
      std::vector<int64_t> v;
      TX_RETURN_IF_ERROR(IntValues(*t, "DynamicStitch's indices", &v));
      for (int64_t x : v) max_index = std::max(max_index, x);
    } else {
      all_const = false;
    }
    if (idx.unknown_rank() || data.unknown_rank()) continue;
    if (data.dims() < idx.dims()) {
      return errors::InvalidArgument("data[", i, "].shape ", data.DebugString(),
                                     " must start with indices[", i, "].shape ",
                                     idx.DebugString());
    }
    std::vector<int64_t> rest(data.dim_sizes().begin() + idx.dims(), data.dim_sizes().end());
    auto merged = inner.MergeWith(Shape(rest));
    if (!merged.ok()) {
      return errors::InvalidArgument("Need data[0].shape[", c->input(0).dims(),
                                     ":] = data[", i, "].shape[", idx.dims(), ":], got ",
                                     inner.DebugString(), " and ", Shape(rest).DebugString());
    }
    inner = *merged;
  }
  if (inner.unknown_rank()) return shape_inference::UnknownShape(c);
  std::vector<int64_t> out = {all_const ? max_index + 1 : -1};
  out.insert(out.end(), inner.dim_sizes().begin(), inner.dim_sizes().end());
  return SetOutput(c, 0, out);
}

Status UnsortedSegmentSumShape(InferenceContext* c) {
  TX_RETURN_IF_ERROR(c->WithRank(2, 0));
  const PartialTensorShape& data = c->input(0);
  const PartialTensorShape& ids = c->input(1);
  if (data.unknown_rank() || ids.unknown_rank()) return shape_inference::UnknownShape(c);
  if (data.dims() < ids.dims()) {
    return errors::InvalidArgument("data.shape ", data.DebugString(),
                                   " must start with segment_ids.shape ", ids.DebugString());
  }
  int64_t num = -1;
  if (const Tensor* t = c->input_tensor(2)) {
    TX_RETURN_IF_ERROR(IntScalar(*t, "num_segments", &num));
    if (num < 0) return errors::InvalidArgument("num_segments must be >= 0, got ", num);
  }
  std::vector<int64_t> out = {num};
  out.insert(out.end(), data.dim_sizes().begin() + ids.dims(), data.dim_sizes().end());
  return SetOutput(c, 0, out);
}

Status OneHotShape(InferenceContext* c) {
  TX_RETURN_IF_ERROR(c->WithRank(1, 0));
  TX_RETURN_IF_ERROR(c->WithRank(2, 0));
  TX_RETURN_IF_ERROR(c->WithRank(3, 0));
  const PartialTensorShape& indices = c->input(0);
  if (indices.unknown_rank()) return shape_inference::UnknownShape(c);
  int64_t axis = -1;
  TX_RETURN_IF_ERROR(c->GetAttr("axis", &axis));
  if (axis < -1 || axis > indices.dims()) {
    return errors::InvalidArgument("Expected axis to be -1 or between [0, ", indices.dims(),
                                   "].  But received: ", axis);
  }
  int64_t depth = -1;
  if (const Tensor* t = c->input_tensor(1)) {
    TX_RETURN_IF_ERROR(IntScalar(*t, "depth", &depth));
    if (depth < 0) return errors::InvalidArgument("depth must be non-negative, got: ", depth);
  }
  std::vector<int64_t> out = Dims(indices);
  out.insert(axis == -1 ? out.end() : out.begin() + axis, depth);
  return SetOutput(c, 0, out);
}

Status RangeShape(InferenceContext* c) {
  for (int i = 0; i < 3; ++i) TX_RETURN_IF_ERROR(c->WithRank(i, 0));
  const Tensor* t[3] = {c->input_tensor(0), c->input_tensor(1), c->input_tensor(2)};
  if (t[0] == nullptr || t[1] == nullptr || t[2] == nullptr) {
    c->set_output(0, PartialTensorShape({-1}));
    return OkStatus();
  }
  int64_t size = 0;
  const DataType dt = t[0]->dtype();
  if (DataTypeIsInteger(dt)) {
    std::vector<int64_t> v[3];
    Status s = OkStatus();
    for (int i = 0; i < 3 && s.ok(); ++i) {
      s = VisitPodType(dt, "Range", [&](auto tag) {
        using T = typename decltype(tag)::type;
        if constexpr (std::is_integral_v<T>) v[i].push_back(static_cast<int64_t>(*t[i]->data<T>()));
        return OkStatus();
      });
    }
    TX_RETURN_IF_ERROR(s);
    TX_RETURN_IF_ERROR(array_util::RangeSize<int64_t>(v[0][0], v[1][0], v[2][0], &size));
  } else {
    double v[3];
    for (int i = 0; i < 3; ++i) {
      TX_RETURN_IF_ERROR(VisitPodType(dt, "Range", [&](auto tag) {
        using T = typename decltype(tag)::type;
        v[i] = static_cast<double>(static_cast<float>(*t[i]->data<T>()));
        if constexpr (std::is_same_v<T, double>) v[i] = *t[i]->data<T>();
        return OkStatus();
      }));
    }
    TX_RETURN_IF_ERROR(array_util::RangeSize<double>(v[0], v[1], v[2], &size));
  }
  c->set_output(0, PartialTensorShape({size}));
  return OkStatus();
}

}  // namespace

REGISTER_OP("Slice")
    .Input("input: T")
    .Input("begin: Index")
    .Input("size: Index")
    .Output("output: T")
    .Attr("T: type")
    .Attr("Index: {int32, int64}")
    .SetShapeFn(SliceShape)
    .Doc("output = input[begin[d] : begin[d] + size[d]] per dim; size[d] = -1 takes the rest.");

REGISTER_OP("StridedSlice")
    .Input("input: T")
    .Input("begin: Index")
    .Input("end: Index")
    .Input("strides: Index")
    .Output("output: T")
    .Attr("T: type")
    .Attr("Index: {int32, int64}")
    .Attr("begin_mask: int = 0")
    .Attr("end_mask: int = 0")
    .Attr("ellipsis_mask: int = 0")
    .Attr("new_axis_mask: int = 0")
    .Attr("shrink_axis_mask: int = 0")
    .SetShapeFn(StridedSliceShape)
    .Doc("Python-style slicing input[b:e:s, ..., tf.newaxis, i] (see strided_slice_spec.h).");

REGISTER_OP("StridedSliceGrad")
    .Input("shape: Index")
    .Input("begin: Index")
    .Input("end: Index")
    .Input("strides: Index")
    .Input("dy: T")
    .Output("output: T")
    .Attr("T: type")
    .Attr("Index: {int32, int64}")
    .Attr("begin_mask: int = 0")
    .Attr("end_mask: int = 0")
    .Attr("ellipsis_mask: int = 0")
    .Attr("new_axis_mask: int = 0")
    .Attr("shrink_axis_mask: int = 0")
    .SetShapeFn(StridedSliceGradShape)
    .Doc("Zeros of `shape` with dy written where StridedSlice(same args) reads.");

REGISTER_OP("GatherV2")
    .Input("params: Tparams")
    .Input("indices: Tindices")
    .Input("axis: Taxis")
    .Output("output: Tparams")
    .Attr("batch_dims: int = 0")
    .Attr("Tparams: type")
    .Attr("Tindices: {int16, int32, int64}")
    .Attr("Taxis: {int32, int64}")
    .SetShapeFn([](InferenceContext* c) { return GatherShapeImpl(c, true); })
    .Doc("Gathers slices of params along axis: params[:axis] + indices[batch_dims:] + "
         "params[axis+1:]. An index outside [0, params.shape[axis]) is INVALID_ARGUMENT.");

REGISTER_OP("Gather")
    .Input("params: Tparams")
    .Input("indices: Tindices")
    .Output("output: Tparams")
    .Attr("validate_indices: bool = true")
    .Attr("Tparams: type")
    .Attr("Tindices: {int32, int64}")
    .SetShapeFn([](InferenceContext* c) { return GatherShapeImpl(c, false); })
    .Doc("TF1's gather along axis 0.");

REGISTER_OP("GatherNd")
    .Input("params: Tparams")
    .Input("indices: Tindices")
    .Output("output: Tparams")
    .Attr("Tparams: type")
    .Attr("Tindices: {int16, int32, int64}")
    .SetShapeFn(GatherNdShape)
    .Doc("output[i...] = params[indices[i..., :]] (slices when indices.shape[-1] < rank).");

REGISTER_OP("ScatterNd")
    .Input("indices: Tindices")
    .Input("updates: T")
    .Input("shape: Tindices")
    .Output("output: T")
    .Attr("T: type")
    .Attr("Tindices: {int16, int32, int64}")
    .SetShapeFn(ScatterNdShape)
    .Doc("Zeros of `shape` with updates added at indices (duplicates sum).");

REGISTER_OP("DynamicStitch")
    .Input("indices: N * int32")
    .Input("data: N * T")
    .Output("merged: T")
    .Attr("N : int >= 1")
    .Attr("T : type")
    .SetShapeFn(DynamicStitchShape)
    .Doc("merged[indices[m][i...], ...] = data[m][i..., ...]; later entries win.");

REGISTER_OP("UnsortedSegmentSum")
    .Input("data: T")
    .Input("segment_ids: Tindices")
    .Input("num_segments: Tnumsegments")
    .Output("output: T")
    .Attr("T: {float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, uint32, "
          "uint64}")
    .Attr("Tindices: {int32, int64}")
    .Attr("Tnumsegments: {int32, int64} = DT_INT32")
    .SetShapeFn(UnsortedSegmentSumShape)
    .Doc("output[s, ...] = sum of data[i..., ...] with segment_ids[i...] == s; negative ids are "
         "dropped, ids >= num_segments are INVALID_ARGUMENT.");

REGISTER_OP("OneHot")
    .Input("indices: TI")
    .Input("depth: int32")
    .Input("on_value: T")
    .Input("off_value: T")
    .Output("output: T")
    .Attr("axis: int = -1")
    .Attr("T: type")
    .Attr("TI: {uint8, int8, int32, int64} = DT_INT64")
    .SetShapeFn(OneHotShape)
    .Doc("on_value where the new depth axis equals the index, off_value elsewhere.");

REGISTER_OP("Range")
    .Input("start: Tidx")
    .Input("limit: Tidx")
    .Input("delta: Tidx")
    .Output("output: Tidx")
    .Attr("Tidx: {bfloat16, half, float, double, int8, int16, int32, int64, uint16, uint32} = "
          "DT_INT32")
    .SetShapeFn(RangeShape)
    .Doc("[start, start + delta, ...) up to but excluding limit.");

}  // namespace tensorflux
