#include "tensorflux/kernels/shared/conv_shapes.h"

#include <vector>

#include "tensorflux/framework/op_kernel.h"
#include "tensorflux/ops/array_shape_util.h"

namespace tensorflux {
namespace conv {
namespace {

Status ReadSizes(const ConvAttrs& attrs, const Tensor& t, const char* what,
                 std::vector<int64_t>* out) {
  if (t.dims() != 1) {
    return errors::InvalidArgument(attrs.Prefix(), what, " must be 1-dimensional, got shape ",
                                   t.shape().DebugString());
  }
  return array_util::IntValues(t, what, out);
}

}  // namespace

Status ReadConvOperands(OpKernelContext* ctx, const ConvAttrs& attrs, Direction dir,
                        bool depthwise, ConvOperands* o) {
  *o = ConvOperands();
  if (dir == Direction::kForward) {
    o->input = &ctx->input(0);
    o->filter = &ctx->input(1);
    o->input_shape = o->input->shape();
    o->filter_shape = o->filter->shape();
  } else if (dir == Direction::kBackwardInput) {
    o->filter = &ctx->input(1);
    o->out_backprop = &ctx->input(2);
    o->filter_shape = o->filter->shape();
    std::vector<int64_t> sizes;
    TX_RETURN_IF_ERROR(ReadSizes(attrs, ctx->input(0), "input_sizes", &sizes));
    const int64_t depth = o->filter_shape.dims() == 4 ? o->filter_shape.dim_size(2) : 0;
    TX_ASSIGN_OR_RETURN(o->input_shape,
                        InputSizesToShape(attrs, sizes, o->out_backprop->shape(), depth));
  } else {
    o->input = &ctx->input(0);
    o->out_backprop = &ctx->input(2);
    o->input_shape = o->input->shape();
    std::vector<int64_t> sizes;
    TX_RETURN_IF_ERROR(ReadSizes(attrs, ctx->input(1), "filter_sizes", &sizes));
    TX_ASSIGN_OR_RETURN(o->filter_shape, SizesToShape(attrs, sizes, "filter_sizes"));
  }
  TX_ASSIGN_OR_RETURN(o->g, ComputeConvGeometry(attrs, o->input_shape, o->filter_shape, depthwise));
  if (o->out_backprop != nullptr) {
    TX_RETURN_IF_ERROR(CheckOutBackpropShape(attrs, o->g, o->out_backprop->shape()));
  }
  o->result_shape = dir == Direction::kForward         ? o->g.OutputShape()
                    : dir == Direction::kBackwardInput ? o->input_shape
                                                       : o->filter_shape;
  return OkStatus();
}

}  // namespace conv
}  // namespace tensorflux
