// Array ops: constants and placeholders, identities, and the shape family (Reshape, Shape, Size,
// Rank, Fill, ZerosLike, OnesLike). Names, input order, attrs and defaults follow TensorFlow's
// registrations (spec/tf-wire.md §3.1). Shape functions use constant inputs when the graph
// provides them (Reshape's `shape`, Fill's `dims`).
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tensorflux/framework/op.h"
#include "tensorflux/framework/shape_inference.h"

namespace tensorflux {
namespace {

using shape_inference::UnchangedShape;

// Reads a 0-D or 1-D int32/int64 constant as a list of int64 values.
Status ConstantIntList(const Tensor& t, std::string_view what, std::vector<int64_t>* out) {
  if (t.dims() > 1) {
    return errors::InvalidArgument(what, " must be a vector, got shape ", t.shape().DebugString());
  }
  out->clear();
  if (t.dtype() == DT_INT32) {
    for (int32_t v : t.flat<int32_t>()) out->push_back(v);
  } else if (t.dtype() == DT_INT64) {
    for (int64_t v : t.flat<int64_t>()) out->push_back(v);
  } else {
    return errors::InvalidArgument(what, " must be int32 or int64, got ",
                                   DataTypeString(t.dtype()));
  }
  return OkStatus();
}

// Output 0 is the (partial) shape in attr `attr_name`.
Status ShapeFromShapeAttr(InferenceContext* c, std::string_view attr_name) {
  PartialTensorShape shape;
  TX_RETURN_IF_ERROR(c->GetAttr(attr_name, &shape));
  c->set_output(0, shape);
  return OkStatus();
}

Status ConstShape(InferenceContext* c) {
  const AttrValue* value = FindAttr(c->node_def(), "value");
  if (value == nullptr || value->value_case() != AttrValue::kTensor) {
    return errors::InvalidArgument("Const node '", c->node_def().name(),
                                   "' needs a tensor attr 'value'");
  }
  TX_ASSIGN_OR_RETURN(TensorShape shape, TensorShape::FromProto(value->tensor().tensor_shape()));
  c->set_output(0, shape);
  return OkStatus();
}

Status PlaceholderWithDefaultShape(InferenceContext* c) {
  PartialTensorShape shape;
  TX_RETURN_IF_ERROR(c->GetAttr("shape", &shape));
  if (!c->input(0).IsCompatibleWith(shape)) {
    return errors::InvalidArgument("PlaceholderWithDefault '", c->node_def().name(),
                                   "': input shape ", c->input(0).DebugString(),
                                   " is not compatible with the shape attr ",
                                   shape.DebugString());
  }
  c->set_output(0, shape);
  return OkStatus();
}

Status IdentityNShape(InferenceContext* c) {
  for (int i = 0; i < c->num_outputs() && i < c->num_inputs(); ++i) c->set_output(i, c->input(i));
  return OkStatus();
}

Status NoOutputs(InferenceContext* c) { return OkStatus(); }

// Reshape: with a constant `shape`, the output is that shape with its one -1 inferred from the
// input's element count when that is known; mismatches are reported before the graph runs.
Status ReshapeShape(InferenceContext* c) {
  const PartialTensorShape& sizes_shape = c->input(1);
  if (sizes_shape.dims() > 1) {
    return errors::InvalidArgument("Reshape '", c->node_def().name(),
                                   "': shape must be a vector, got shape ",
                                   sizes_shape.DebugString());
  }
  const Tensor* sizes_t = c->input_tensor(1);
  if (sizes_t == nullptr) {
    if (sizes_shape.dims() == 1 && sizes_shape.dim_size(0) >= 0) {
      std::vector<int64_t> dims(sizes_shape.dim_size(0), -1);
      if (dims.size() > TensorShape::kMaxDims) {
        return errors::InvalidArgument("Reshape '", c->node_def().name(), "': ", dims.size(),
                                       " > max ", TensorShape::kMaxDims, " output dims");
      }
      c->set_output(0, PartialTensorShape(absl::Span<const int64_t>(dims)));
    } else {
      c->set_output(0, PartialTensorShape::UnknownRank());
    }
    return OkStatus();
  }
  std::vector<int64_t> sizes;
  TX_RETURN_IF_ERROR(ConstantIntList(*sizes_t, "Reshape's shape input", &sizes));
  if (sizes.size() > TensorShape::kMaxDims) {
    return errors::InvalidArgument("Reshape '", c->node_def().name(), "': ", sizes.size(),
                                   " > max ", TensorShape::kMaxDims, " output dims");
  }
  int unknown = -1;
  int64_t product = 1;  // of the known non-zero sizes
  bool has_zero = false;
  for (int d = 0; d < static_cast<int>(sizes.size()); ++d) {
    if (sizes[d] == -1) {
      if (unknown != -1) {
        return errors::InvalidArgument("Only one input size may be -1, not both ", unknown,
                                       " and ", d);
      }
      unknown = d;
    } else if (sizes[d] < 0) {
      return errors::InvalidArgument("Size ", d, " must be non-negative, not ", sizes[d]);
    } else if (sizes[d] == 0) {
      has_zero = true;
    } else {
      if (product > (int64_t{1} << 62) / sizes[d]) {
        return errors::InvalidArgument("Reshape '", c->node_def().name(),
                                       "': requested shape has too many elements");
      }
      product *= sizes[d];
    }
  }
  const PartialTensorShape& in = c->input(0);
  const int64_t in_elems = in.num_elements();  // -1 when unknown
  if (unknown != -1) {
    if (in_elems >= 0 && !has_zero) {
      if (in_elems % product != 0) {
        return errors::InvalidArgument("Cannot reshape a tensor with ", in_elems,
                                       " elements to shape ",
                                       PartialTensorShape(absl::Span<const int64_t>(sizes))
                                           .DebugString(),
                                       ": the requested shape requires a multiple of ", product);
      }
      sizes[unknown] = in_elems / product;
    } else if (in_elems == 0 && has_zero) {
      sizes[unknown] = -1;  // any size works; TF's kernel decides at run time
    }
  } else if (in_elems >= 0) {
    const int64_t want = has_zero ? 0 : product;
    if (want != in_elems) {
      return errors::InvalidArgument("Cannot reshape a tensor with ", in_elems,
                                     " elements to shape ",
                                     PartialTensorShape(absl::Span<const int64_t>(sizes))
                                         .DebugString(),
                                     " (", want, " elements)");
    }
  }
  c->set_output(0, PartialTensorShape(absl::Span<const int64_t>(sizes)));
  return OkStatus();
}

Status ShapeShape(InferenceContext* c) {
  const PartialTensorShape& in = c->input(0);
  c->set_output(0, PartialTensorShape({in.unknown_rank() ? -1 : int64_t{in.dims()}}));
  return OkStatus();
}

// Fill: with constant `dims`, the output has exactly those dims.
Status FillShape(InferenceContext* c) {
  const PartialTensorShape& dims_shape = c->input(0);
  if (dims_shape.dims() > 1) {
    return errors::InvalidArgument("Fill '", c->node_def().name(),
                                   "': dims must be a vector, got shape ",
                                   dims_shape.DebugString());
  }
  if (c->input(1).dims() > 0) {
    return errors::InvalidArgument("Fill '", c->node_def().name(),
                                   "': value must be a scalar, got shape ",
                                   c->input(1).DebugString());
  }
  const Tensor* dims_t = c->input_tensor(0);
  if (dims_t != nullptr) {
    std::vector<int64_t> dims;
    TX_RETURN_IF_ERROR(ConstantIntList(*dims_t, "Fill's dims input", &dims));
    for (int64_t d : dims) {
      if (d < 0) {
        return errors::InvalidArgument("Fill '", c->node_def().name(),
                                       "': dimensions must be >= 0, got ", d);
      }
    }
    TX_ASSIGN_OR_RETURN(TensorShape shape, TensorShape::Make(dims));
    c->set_output(0, shape);
    return OkStatus();
  }
  if (dims_shape.dims() == 1 && dims_shape.dim_size(0) >= 0 &&
      dims_shape.dim_size(0) <= TensorShape::kMaxDims) {
    std::vector<int64_t> dims(dims_shape.dim_size(0), -1);
    c->set_output(0, PartialTensorShape(absl::Span<const int64_t>(dims)));
  } else {
    c->set_output(0, PartialTensorShape::UnknownRank());
  }
  return OkStatus();
}

}  // namespace

REGISTER_OP("Const")
    .Output("output: dtype")
    .Attr("value: tensor")
    .Attr("dtype: type")
    .SetShapeFn(ConstShape)
    .Doc("A constant tensor: output = value (decoded once when the kernel is built).");

REGISTER_OP("Placeholder")
    .Output("output: dtype")
    .Attr("dtype: type")
    .Attr("shape: shape = { unknown_rank: true }")
    .SetShapeFn([](InferenceContext* c) { return ShapeFromShapeAttr(c, "shape"); })
    .Doc("A value the caller must feed; running it unfed is INVALID_ARGUMENT.");

REGISTER_OP("PlaceholderWithDefault")
    .Input("input: dtype")
    .Output("output: dtype")
    .Attr("dtype: type")
    .Attr("shape: shape")
    .SetShapeFn(PlaceholderWithDefaultShape)
    .Doc("Forwards `input` unless fed; the input must be compatible with `shape`.");

REGISTER_OP("Identity")
    .Input("input: T")
    .Output("output: T")
    .Attr("T: type")
    .SetShapeFn(UnchangedShape)
    .Doc("output = input, sharing its buffer.");

REGISTER_OP("IdentityN")
    .Input("input: T")
    .Output("output: T")
    .Attr("T: list(type) >= 1")
    .SetShapeFn(IdentityNShape)
    .Doc("output[i] = input[i] for a list of tensors of any types.");

REGISTER_OP("NoOp").SetShapeFn(NoOutputs).Doc("Does nothing; used for control dependencies.");

REGISTER_OP("Reshape")
    .Input("tensor: T")
    .Input("shape: Tshape")
    .Output("output: T")
    .Attr("T: type")
    .Attr("Tshape: {int32, int64} = DT_INT32")
    .SetShapeFn(ReshapeShape)
    .Doc("output has `tensor`'s elements in `shape` (one -1 entry is inferred); shares memory.");

REGISTER_OP("Shape")
    .Input("input: T")
    .Output("output: out_type")
    .Attr("T: type")
    .Attr("out_type: {int32, int64} = DT_INT32")
    .SetShapeFn(ShapeShape)
    .Doc("The 1-D shape of `input`.");

REGISTER_OP("Size")
    .Input("input: T")
    .Output("output: out_type")
    .Attr("T: type")
    .Attr("out_type: {int32, int64} = DT_INT32")
    .SetShapeFn(shape_inference::ScalarShape)
    .Doc("The number of elements of `input`, a scalar.");

REGISTER_OP("Rank")
    .Input("input: T")
    .Output("output: int32")
    .Attr("T: type")
    .SetShapeFn(shape_inference::ScalarShape)
    .Doc("The rank of `input`, an int32 scalar.");

REGISTER_OP("Fill")
    .Input("dims: index_type")
    .Input("value: T")
    .Output("output: T")
    .Attr("T: type")
    .Attr("index_type: {int32, int64} = DT_INT32")
    .SetShapeFn(FillShape)
    .Doc("A tensor of shape `dims` (1-D) with every element the scalar `value`.");

REGISTER_OP("ZerosLike")
    .Input("x: T")
    .Output("y: T")
    .Attr("T: type")
    .SetShapeFn(UnchangedShape)
    .Doc("Zeros with the shape and dtype of x.");

REGISTER_OP("OnesLike")
    .Input("x: T")
    .Output("y: T")
    .Attr("T: {bfloat16, half, float, double, int8, uint8, int16, uint16, int32, uint32, int64, "
          "uint64, bool}")
    .SetShapeFn(UnchangedShape)
    .Doc("Ones with the shape and dtype of x.");

}  // namespace tensorflux
