// Array ops that rearrange whole tensors: Transpose, InvertPermutation, ConcatV2 (and TF1's
// Concat), ConcatOffset, Split, SplitV, Pack, Unpack, ExpandDims, Squeeze, Tile, Pad, PadV2,
// BroadcastTo, BroadcastGradientArgs, ShapeN, StopGradient. Names, input order, attrs and defaults
// follow TensorFlow's registrations. Shape functions use constant inputs (perm, axis, multiples,
// paddings, ...) when the graph provides them and otherwise infer what the ranks allow.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tensorflux/framework/op.h"
#include "tensorflux/framework/shape_inference.h"
#include "tensorflux/ops/array_shape_util.h"

namespace tensorflux {
namespace {

using array_util::IntScalar;
using array_util::IntValues;
using array_util::IntVector;
using array_util::NormalizeAxis;

PartialTensorShape Shape(const std::vector<int64_t>& dims) {
  return PartialTensorShape(absl::Span<const int64_t>(dims));
}

std::vector<int64_t> Dims(const PartialTensorShape& s) {
  return std::vector<int64_t>(s.dim_sizes().begin(), s.dim_sizes().end());
}

// A shape of known rank `rank` with every dim unknown (unknown rank when rank < 0).
PartialTensorShape UnknownDims(int64_t rank) {
  if (rank < 0 || rank > TensorShape::kMaxDims) return PartialTensorShape::UnknownRank();
  return Shape(std::vector<int64_t>(rank, -1));
}

// The rank given by a 1-D input's length (e.g. the perm or multiples vector), -1 if unknown.
int64_t RankFromVectorInput(const InferenceContext* c, int i) {
  const PartialTensorShape& s = c->input(i);
  return s.dims() == 1 ? s.dim_size(0) : -1;
}

Status TransposeShape(InferenceContext* c) {
  const PartialTensorShape& x = c->input(0);
  TX_RETURN_IF_ERROR(c->WithRank(1, 1));
  const Tensor* perm_t = c->input_tensor(1);
  if (perm_t == nullptr) {
    c->set_output(0, UnknownDims(x.unknown_rank() ? RankFromVectorInput(c, 1) : x.dims()));
    return OkStatus();
  }
  std::vector<int64_t> perm;
  TX_RETURN_IF_ERROR(IntVector(*perm_t, "Transpose's perm", &perm));
  const int64_t n = static_cast<int64_t>(perm.size());
  if (!x.unknown_rank() && x.dims() != n) {
    return errors::InvalidArgument("transpose expects a vector of size ", x.dims(),
                                   ". But input(1) is a vector of size ", n);
  }
  if (n > TensorShape::kMaxDims) {
    return errors::InvalidArgument("Transpose: perm has ", n, " entries, at most ",
                                   TensorShape::kMaxDims, " are supported");
  }
  std::vector<bool> seen(n, false);
  std::vector<int64_t> out(n, -1);
  for (int64_t i = 0; i < n; ++i) {
    if (perm[i] < 0 || perm[i] >= n) {
      return errors::InvalidArgument("perm[", i, "] = ", perm[i], " is out of range [0, ", n,
                                     ")");
    }
    if (seen[perm[i]]) return errors::InvalidArgument(perm[i], " is duplicated in perm");
    seen[perm[i]] = true;
    if (!x.unknown_rank()) out[i] = x.dim_size(perm[i]);
  }
  c->set_output(0, Shape(out));
  return OkStatus();
}

// Concatenation of inputs [first, first + count) along the constant axis in input `axis_input`.
Status ConcatShapeImpl(InferenceContext* c, int first, int count, int axis_input) {
  TX_RETURN_IF_ERROR(c->WithRank(axis_input, 0));
  int64_t rank = -1;
  for (int k = first; k < first + count; ++k) {
    const PartialTensorShape& s = c->input(k);
    if (s.unknown_rank()) continue;
    if (s.dims() == 0) {
      return errors::InvalidArgument("Can't concatenate scalars (use tx.stack instead)");
    }
    if (rank >= 0 && s.dims() != rank) {
      return errors::InvalidArgument("Shape of input ", k - first, " (", s.DebugString(),
                                     ") has a different rank than input 0 (rank ", rank, ")");
    }
    rank = s.dims();
  }
  const Tensor* axis_t = c->input_tensor(axis_input);
  if (axis_t == nullptr || rank < 0) {
    c->set_output(0, UnknownDims(rank));
    return OkStatus();
  }
  int64_t axis = 0;
  TX_RETURN_IF_ERROR(IntScalar(*axis_t, "concat axis", &axis));
  TX_RETURN_IF_ERROR(NormalizeAxis(axis, rank, "ConcatV2 axis", &axis));
  std::vector<int64_t> out(rank, -1);
  int64_t axis_sum = 0;
  for (int k = first; k < first + count; ++k) {
    const PartialTensorShape& s = c->input(k);
    if (s.unknown_rank()) {
      axis_sum = -1;
      continue;
    }
    for (int64_t d = 0; d < rank; ++d) {
      const int64_t v = s.dim_size(d);
      if (d == axis) {
        if (axis_sum < 0 || v < 0 || __builtin_add_overflow(axis_sum, v, &axis_sum)) {
          axis_sum = -1;
        }
      } else if (v >= 0) {
        if (out[d] >= 0 && out[d] != v) {
          return errors::InvalidArgument(
              "Dimension ", d, " in both shapes must be equal, but are ", out[d], " and ", v,
              ". Shapes are ", c->input(first).DebugString(), " and ", s.DebugString());
        }
        out[d] = v;
      }
    }
  }
  out[axis] = axis_sum;
  c->set_output(0, Shape(out));
  return OkStatus();
}

Status ConcatV2Shape(InferenceContext* c) {
  return ConcatShapeImpl(c, 0, c->num_inputs() - 1, c->num_inputs() - 1);
}
Status ConcatShape(InferenceContext* c) { return ConcatShapeImpl(c, 1, c->num_inputs() - 1, 0); }

Status ConcatOffsetShape(InferenceContext* c) {
  for (int i = 1; i < c->num_inputs(); ++i) c->set_output(i - 1, c->input(i));
  return OkStatus();
}

// Split / SplitV: `value` input index, axis input index, sizes (nullptr for Split: even).
Status SplitShapeImpl(InferenceContext* c, int value_input, int axis_input, int sizes_input) {
  const PartialTensorShape& v = c->input(value_input);
  const int n = c->num_outputs();
  const Tensor* axis_t = c->input_tensor(axis_input);
  if (axis_t == nullptr || v.unknown_rank()) {
    for (int i = 0; i < n; ++i) c->set_output(i, UnknownDims(v.dims()));
    return OkStatus();
  }
  int64_t axis = 0;
  TX_RETURN_IF_ERROR(IntScalar(*axis_t, "split_dim", &axis));
  TX_RETURN_IF_ERROR(NormalizeAxis(axis, v.dims(), "split_dim", &axis));
  const int64_t dim = v.dim_size(axis);
  std::vector<int64_t> sizes(n, -1);
  if (sizes_input < 0) {
    if (dim >= 0) {
      if (dim % n != 0) {
        return errors::InvalidArgument("Number of ways to split should evenly divide the split "
                                       "dimension, but got split_dim ", axis, " (size = ", dim,
                                       ") and num_split ", n);
      }
      std::fill(sizes.begin(), sizes.end(), dim / n);
    }
  } else if (const Tensor* sizes_t = c->input_tensor(sizes_input)) {
    std::vector<int64_t> given;
    if (sizes_t->dims() > 1) {
      return errors::InvalidArgument("size_splits must be a vector, got shape ",
                                     sizes_t->shape().DebugString());
    }
    // Tlen may be int8 too (TF 2.15's own shape function aborts on a constant int8 one).
    TX_RETURN_IF_ERROR(array_util::IntegerValues(*sizes_t, "size_splits", &given));
    if (static_cast<int>(given.size()) != n) {
      return errors::InvalidArgument("Length of size_splits should be equal to num_split (", n,
                                     "), got ", given.size());
    }
    int unknown = -1;
    int64_t total = 0;
    for (int i = 0; i < n; ++i) {
      if (given[i] == -1) {
        if (unknown >= 0) {
          return errors::InvalidArgument("Only one dimensions can have a value of -1; got -1 at ",
                                         unknown, " and ", i);
        }
        unknown = i;
      } else if (given[i] < 0) {
        return errors::InvalidArgument("size_splits[", i, "] = ", given[i], " must be >= 0");
      } else {
        total += given[i];
      }
    }
    sizes = given;
    if (dim >= 0) {
      if ((unknown < 0 && total != dim) || (unknown >= 0 && total > dim)) {
        return errors::InvalidArgument("Determined shape must either match input shape along "
                                       "split_dim exactly if fully specified, or be less than "
                                       "the size of the input along split_dim if not fully "
                                       "specified. Got: ", total, " vs. ", dim);
      }
      if (unknown >= 0) sizes[unknown] = dim - total;
    }
  }
  std::vector<int64_t> out = Dims(v);
  for (int i = 0; i < n; ++i) {
    out[axis] = sizes[i];
    c->set_output(i, Shape(out));
  }
  return OkStatus();
}

Status PackShape(InferenceContext* c) {
  PartialTensorShape merged;
  for (int i = 0; i < c->num_inputs(); ++i) {
    auto m = merged.MergeWith(c->input(i));
    if (!m.ok()) {
      return errors::InvalidArgument("Shapes of all inputs must match: values[0].shape = ",
                                     c->input(0).DebugString(), " != values[", i,
                                     "].shape = ", c->input(i).DebugString());
    }
    merged = *m;
  }
  if (merged.unknown_rank()) {
    c->set_output(0, PartialTensorShape::UnknownRank());
    return OkStatus();
  }
  int64_t axis = 0;
  TX_RETURN_IF_ERROR(c->GetAttr("axis", &axis));
  const int64_t rank = merged.dims() + 1;
  TX_RETURN_IF_ERROR(NormalizeAxis(axis, rank, "Pack axis", &axis));
  std::vector<int64_t> out = Dims(merged);
  out.insert(out.begin() + axis, c->num_inputs());
  if (static_cast<int>(out.size()) > TensorShape::kMaxDims) {
    return errors::InvalidArgument("Pack output would have rank ", out.size());
  }
  c->set_output(0, Shape(out));
  return OkStatus();
}

Status UnpackShape(InferenceContext* c) {
  const PartialTensorShape& v = c->input(0);
  if (v.unknown_rank()) return shape_inference::UnknownShape(c);
  int64_t axis = 0, num = 0;
  TX_RETURN_IF_ERROR(c->GetAttr("axis", &axis));
  TX_RETURN_IF_ERROR(c->GetAttr("num", &num));
  TX_RETURN_IF_ERROR(NormalizeAxis(axis, v.dims(), "Unpack axis", &axis));
  if (v.dim_size(axis) >= 0 && v.dim_size(axis) != num) {
    return errors::InvalidArgument("Dimension must be ", num, " but is ", v.dim_size(axis),
                                   " for Unpack with input shape ", v.DebugString());
  }
  std::vector<int64_t> out = Dims(v);
  out.erase(out.begin() + axis);
  for (int i = 0; i < c->num_outputs(); ++i) c->set_output(i, Shape(out));
  return OkStatus();
}

Status ExpandDimsShape(InferenceContext* c) {
  const PartialTensorShape& in = c->input(0);
  const Tensor* dim_t = c->input_tensor(1);
  // Unknown without a constant dim, as TF (not even the rank).
  if (in.unknown_rank() || dim_t == nullptr) return shape_inference::UnknownShape(c);
  int64_t dim = 0;
  TX_RETURN_IF_ERROR(IntScalar(*dim_t, "ExpandDims' dim", &dim));
  TX_RETURN_IF_ERROR(NormalizeAxis(dim, in.dims() + 1, "ExpandDims' dim", &dim));
  std::vector<int64_t> out = Dims(in);
  out.insert(out.begin() + dim, 1);
  if (static_cast<int>(out.size()) > TensorShape::kMaxDims) {
    return errors::InvalidArgument("ExpandDims output would have rank ", out.size());
  }
  c->set_output(0, Shape(out));
  return OkStatus();
}

Status SqueezeShape(InferenceContext* c) {
  const PartialTensorShape& in = c->input(0);
  if (in.unknown_rank()) return shape_inference::UnknownShape(c);
  std::vector<int64_t> squeeze;
  TX_RETURN_IF_ERROR(c->GetAttr("squeeze_dims", &squeeze));
  const int rank = in.dims();
  std::vector<bool> drop(rank, false);
  for (int64_t d : squeeze) {
    int64_t a = 0;
    TX_RETURN_IF_ERROR(NormalizeAxis(d, rank, "squeeze_dims entry", &a));
    if (in.dim_size(a) >= 0 && in.dim_size(a) != 1) {
      return errors::InvalidArgument("Can not squeeze dim[", a,
                                     "], expected a dimension of 1, got ", in.dim_size(a));
    }
    drop[a] = true;
  }
  std::vector<int64_t> out;
  for (int d = 0; d < rank; ++d) {
    const int64_t v = in.dim_size(d);
    if (squeeze.empty()) {
      if (v < 0) return shape_inference::UnknownShape(c);  // might be 1 or not
      if (v == 1) continue;
    } else if (drop[d]) {
      continue;
    }
    out.push_back(v);
  }
  c->set_output(0, Shape(out));
  return OkStatus();
}

Status TileShape(InferenceContext* c) {
  const PartialTensorShape& in = c->input(0);
  TX_RETURN_IF_ERROR(c->WithRank(1, 1));
  const int64_t rank = in.unknown_rank() ? RankFromVectorInput(c, 1) : in.dims();
  const Tensor* m_t = c->input_tensor(1);
  if (m_t == nullptr || rank < 0) {
    c->set_output(0, UnknownDims(rank));
    return OkStatus();
  }
  std::vector<int64_t> m;
  TX_RETURN_IF_ERROR(IntVector(*m_t, "Tile's multiples", &m));
  if (static_cast<int64_t>(m.size()) != rank) {
    return errors::InvalidArgument("Expected multiples argument to be a vector of length ", rank,
                                   " but got length ", m.size());
  }
  std::vector<int64_t> out(rank, -1);
  for (int64_t d = 0; d < rank; ++d) {
    if (m[d] < 0) {
      return errors::InvalidArgument("Expected multiples[", d, "] >= 0, but got ", m[d]);
    }
    const int64_t v = in.unknown_rank() ? -1 : in.dim_size(d);
    if (v >= 0 && (v == 0 || m[d] <= INT64_MAX / v)) out[d] = v * m[d];
    if (m[d] == 0) out[d] = 0;
  }
  c->set_output(0, Shape(out));
  return OkStatus();
}

Status PadShape(InferenceContext* c) {
  const PartialTensorShape& in = c->input(0);
  TX_RETURN_IF_ERROR(c->WithRank(1, 2));
  const PartialTensorShape& p = c->input(1);
  if (p.dims() == 2 && p.dim_size(1) >= 0 && p.dim_size(1) != 2) {
    return errors::InvalidArgument("paddings must be a matrix with 2 columns, got shape ",
                                   p.DebugString());
  }
  if (c->num_inputs() > 2) TX_RETURN_IF_ERROR(c->WithRank(2, 0));
  int64_t rank = in.unknown_rank() ? -1 : in.dims();
  if (rank < 0 && p.dims() == 2) rank = p.dim_size(0);
  if (rank >= 0 && p.dims() == 2 && p.dim_size(0) >= 0 && p.dim_size(0) != rank) {
    return errors::InvalidArgument("The first dimension of paddings must be the rank of inputs ",
                                   rank, ", got paddings shape ", p.DebugString());
  }
  const Tensor* p_t = c->input_tensor(1);
  if (p_t == nullptr || rank < 0) {
    c->set_output(0, UnknownDims(rank));
    return OkStatus();
  }
  std::vector<int64_t> pads;
  TX_RETURN_IF_ERROR(IntValues(*p_t, "paddings", &pads));
  std::vector<int64_t> out(rank, -1);
  for (int64_t d = 0; d < rank; ++d) {
    const int64_t before = pads[2 * d], after = pads[2 * d + 1];
    if (before < 0 || after < 0) {
      return errors::InvalidArgument("Paddings must be non-negative: ", before, " ", after);
    }
    const int64_t v = in.unknown_rank() ? -1 : in.dim_size(d);
    int64_t sum = 0;
    if (v >= 0 && (__builtin_add_overflow(v, before, &sum) ||
                   __builtin_add_overflow(sum, after, &out[d]))) {
      return errors::InvalidArgument("Padded dim ", d, " overflows int64");
    }
  }
  c->set_output(0, Shape(out));
  return OkStatus();
}

Status BroadcastToShape(InferenceContext* c) {
  TX_RETURN_IF_ERROR(c->WithRank(1, 1));
  const PartialTensorShape& in = c->input(0);
  const Tensor* s_t = c->input_tensor(1);
  if (s_t == nullptr) {
    // As TF: the rank from the shape vector's length; a dim is known where the input's aligned
    // dim is known and > 1 (it can only broadcast to itself).
    const int64_t rank = RankFromVectorInput(c, 1);
    if (rank < 0 || rank > TensorShape::kMaxDims || in.unknown_rank()) {
      c->set_output(0, UnknownDims(rank));
      return OkStatus();
    }
    if (in.dims() > rank) {
      return errors::InvalidArgument("Shape must be at most rank ", rank, " but is rank ",
                                     in.dims(), ": BroadcastTo's input has shape ",
                                     in.DebugString());
    }
    std::vector<int64_t> dims(rank, -1);
    for (int k = 0; k < in.dims(); ++k) {
      const int64_t a = in.dim_size(in.dims() - 1 - k);
      if (a > 1) dims[rank - 1 - k] = a;
    }
    c->set_output(0, Shape(dims));
    return OkStatus();
  }
  TX_ASSIGN_OR_RETURN(PartialTensorShape target, shape_inference::ShapeFromTensor(*s_t));
  if (!in.unknown_rank() && !target.unknown_rank()) {
    if (in.dims() > target.dims()) {
      return errors::InvalidArgument("Rank of input (", in.dims(),
                                     ") must be no greater than rank of output shape (",
                                     target.dims(), ").");
    }
    for (int k = 0; k < in.dims(); ++k) {
      const int64_t a = in.dim_size(in.dims() - 1 - k);
      const int64_t b = target.dim_size(target.dims() - 1 - k);
      if (a >= 0 && b >= 0 && a != 1 && a != b) {
        return errors::InvalidArgument("Incompatible shapes: ", in.DebugString(), " vs. ",
                                       target.DebugString());
      }
    }
  }
  c->set_output(0, target);
  return OkStatus();
}

Status BroadcastGradientArgsShape(InferenceContext* c) {
  TX_RETURN_IF_ERROR(c->WithRank(0, 1));
  TX_RETURN_IF_ERROR(c->WithRank(1, 1));
  c->set_output(0, PartialTensorShape({-1}));
  c->set_output(1, PartialTensorShape({-1}));
  return OkStatus();
}

Status ShapeNShape(InferenceContext* c) {
  for (int i = 0; i < c->num_outputs() && i < c->num_inputs(); ++i) {
    const PartialTensorShape& s = c->input(i);
    c->set_output(i, PartialTensorShape({s.unknown_rank() ? -1 : int64_t{s.dims()}}));
  }
  return OkStatus();
}

Status VectorInputShape(InferenceContext* c) {
  TX_RETURN_IF_ERROR(c->WithRank(0, 1));
  c->set_output(0, c->input(0));
  return OkStatus();
}

}  // namespace

REGISTER_OP("Transpose")
    .Input("x: T")
    .Input("perm: Tperm")
    .Output("y: T")
    .Attr("T: type")
    .Attr("Tperm: {int32, int64} = DT_INT32")
    .SetShapeFn(TransposeShape)
    .Doc("y.shape[i] = x.shape[perm[i]]; perm is a permutation of [0, rank).");

REGISTER_OP("InvertPermutation")
    .Input("x: T")
    .Output("y: T")
    .Attr("T: {int32, int64} = DT_INT32")
    .SetShapeFn(VectorInputShape)
    .Doc("y[x[i]] = i for a permutation x of [0, n).");

REGISTER_OP("ConcatV2")
    .Input("values: N * T")
    .Input("axis: Tidx")
    .Output("output: T")
    .Attr("N: int >= 2")
    .Attr("T: type")
    .Attr("Tidx: {int32, int64} = DT_INT32")
    .SetShapeFn(ConcatV2Shape)
    .Doc("Joins `values` along `axis` (the last input; negative counts from the end).");

REGISTER_OP("Concat")
    .Input("concat_dim: int32")
    .Input("values: N * T")
    .Output("output: T")
    .Attr("N: int >= 2")
    .Attr("T: type")
    .SetShapeFn(ConcatShape)
    .Doc("TF1's concat with the axis first; otherwise ConcatV2.");

REGISTER_OP("ConcatOffset")
    .Input("concat_dim: int32")
    .Input("shape: N * shape_type")
    .Output("offset: N * shape_type")
    .Attr("N: int >= 2")
    .Attr("shape_type: {int32, int64} = DT_INT32")
    .SetShapeFn(ConcatOffsetShape)
    .Doc("offset[i]: where input i of a concat along concat_dim starts in the output (for "
         "ConcatV2's gradient).");

REGISTER_OP("Split")
    .Input("split_dim: int32")
    .Input("value: T")
    .Output("output: num_split * T")
    .Attr("num_split: int >= 1")
    .Attr("T: type")
    .SetShapeFn([](InferenceContext* c) { return SplitShapeImpl(c, 1, 0, -1); })
    .Doc("Splits `value` along split_dim into num_split equal parts.");

REGISTER_OP("SplitV")
    .Input("value: T")
    .Input("size_splits: Tlen")
    .Input("split_dim: int32")
    .Output("output: num_split * T")
    .Attr("num_split: int >= 1")
    .Attr("T: type")
    .Attr("Tlen: {int8, int32, int64} = DT_INT64")
    .SetShapeFn([](InferenceContext* c) { return SplitShapeImpl(c, 0, 2, 1); })
    .Doc("Splits `value` along split_dim into parts of size_splits (one entry may be -1).");

REGISTER_OP("Pack")
    .Input("values: N * T")
    .Output("output: T")
    .Attr("N: int >= 1")
    .Attr("T: type")
    .Attr("axis: int = 0")
    .SetShapeFn(PackShape)
    .Doc("Stacks N tensors of one shape into one of rank + 1 along `axis` (tf.stack).");

REGISTER_OP("Unpack")
    .Input("value: T")
    .Output("output: num * T")
    .Attr("num: int >= 0")
    .Attr("T: type")
    .Attr("axis: int = 0")
    .SetShapeFn(UnpackShape)
    .Doc("Splits `value` along `axis` into `num` tensors of rank - 1 (tf.unstack).");

REGISTER_OP("ExpandDims")
    .Input("input: T")
    .Input("dim: Tdim")
    .Output("output: T")
    .Attr("T: type")
    .Attr("Tdim: {int32, int64} = DT_INT32")
    .SetShapeFn(ExpandDimsShape)
    .Doc("Inserts a dim of size 1 at `dim` in [-rank - 1, rank]; shares memory.");

REGISTER_OP("Squeeze")
    .Input("input: T")
    .Output("output: T")
    .Attr("T: type")
    .Attr("squeeze_dims: list(int) >= 0 = []")
    .SetShapeFn(SqueezeShape)
    .Doc("Removes the size-1 dims listed in squeeze_dims (all of them when empty).");

REGISTER_OP("Tile")
    .Input("input: T")
    .Input("multiples: Tmultiples")
    .Output("output: T")
    .Attr("T: type")
    .Attr("Tmultiples: {int32, int64} = DT_INT32")
    .SetShapeFn(TileShape)
    .Doc("Repeats `input` multiples[d] times along each dim d.");

REGISTER_OP("Pad")
    .Input("input: T")
    .Input("paddings: Tpaddings")
    .Output("output: T")
    .Attr("T: type")
    .Attr("Tpaddings: {int32, int64} = DT_INT32")
    .SetShapeFn(PadShape)
    .Doc("Pads with zeros: paddings is [rank, 2] (before, after) per dim, all >= 0.");

REGISTER_OP("PadV2")
    .Input("input: T")
    .Input("paddings: Tpaddings")
    .Input("constant_values: T")
    .Output("output: T")
    .Attr("T: type")
    .Attr("Tpaddings: {int32, int64} = DT_INT32")
    .SetShapeFn(PadShape)
    .Doc("Pad with the scalar constant_values.");

REGISTER_OP("BroadcastTo")
    .Input("input: T")
    .Input("shape: Tidx")
    .Output("output: T")
    .Attr("T: type")
    .Attr("Tidx: {int32, int64} = DT_INT32")
    .SetShapeFn(BroadcastToShape)
    .Doc("Broadcasts `input` to `shape` by NumPy rules.");

REGISTER_OP("BroadcastGradientArgs")
    .Input("s0: T")
    .Input("s1: T")
    .Output("r0: T")
    .Output("r1: T")
    .Attr("T: {int32, int64} = DT_INT32")
    .SetShapeFn(BroadcastGradientArgsShape)
    .Doc("For z = x (op) y with shapes s0, s1 broadcast: the axes of z to sum over for x's (r0) "
         "and y's (r1) gradient.");

REGISTER_OP("ShapeN")
    .Input("input: N * T")
    .Output("output: N * out_type")
    .Attr("N: int")
    .Attr("T: type")
    .Attr("out_type: {int32, int64} = DT_INT32")
    .SetShapeFn(ShapeNShape)
    .Doc("The shapes of N tensors.");

REGISTER_OP("StopGradient")
    .Input("input: T")
    .Output("output: T")
    .Attr("T: type")
    .SetShapeFn(shape_inference::UnchangedShape)
    .Doc("output = input; no gradient flows back through it.");

}  // namespace tensorflux
