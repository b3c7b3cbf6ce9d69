// Gradients of the reductions (the formulas of TensorFlow's math_grad.py):
// - Sum: the incoming gradient reshaped to the keep-dims shape and broadcast to x's shape;
// - Mean: Sum's gradient divided by the number of reduced elements, Size(x) // max(Size(y), 1)
//   (int32 FloorDiv, as TF's _safe_shape_div: TensorFlow has no int32 CPU kernel for RealDiv, so
//   a graph with RealDiv there would not run in TensorFlow);
// - Max/Min: the gradient goes to the elements equal to the result, split evenly between ties
//   (needs the Equal op);
// - Prod: no gradient yet (AddSymbolicGradients reports NOT_FOUND naming the op);
// - All, Any, ArgMax, ArgMin: no gradient.
#include <vector>

#include "tensorflux/core/tensor.h"
#include "tensorflux/gradients/gradients.h"

namespace tensorflux {
namespace {

using GradList = std::vector<GradOutput>;

bool ConstValue(GradOutput in, Tensor* out) {
  if (!in.valid() || !in.node->IsConstant()) return false;
  return GetNodeAttr(in.node->def(), "value", out).ok();
}

// The shape of the forward output with keep_dims = true (x's shape with the reduced dims set to
// 1), as an int32 tensor. Built from constants when x's rank and the axes are known statically;
// otherwise read off Shape(Sum(x, axes, keep_dims=true)).
StatusOr<GradOutput> KeepDimsShape(GradContext* c, GradOutput x_shape) {
  const GradOutput x = c->input(0), axes = c->input(1);
  const PartialTensorShape xs = c->StaticShape(x);
  Tensor axes_t;
  if (!xs.unknown_rank() && ConstValue(axes, &axes_t) &&
      (axes_t.dtype() == DT_INT32 || axes_t.dtype() == DT_INT64)) {
    const int rank = xs.dims();
    std::vector<bool> reduce(rank, false);
    bool ok = true;
    for (int64_t i = 0; i < axes_t.NumElements(); ++i) {
      const int64_t a = axes_t.dtype() == DT_INT32 ? int64_t{axes_t.data<int32_t>()[i]}
                                                   : axes_t.data<int64_t>()[i];
      if (a < -rank || a >= rank) {
        ok = false;  // the forward kernel reports this
        break;
      }
      reduce[a < 0 ? a + rank : a] = true;
    }
    if (ok) {
      std::vector<int32_t> keep(rank), ones(rank);
      for (int d = 0; d < rank; ++d) {
        keep[d] = reduce[d] ? 0 : 1;
        ones[d] = reduce[d] ? 1 : 0;
      }
      const TensorShape vec({rank});
      TX_ASSIGN_OR_RETURN(GradOutput keep_c,
                          c->Const(Tensor::FromVector<int32_t>(absl::Span<const int32_t>(keep), vec)));
      TX_ASSIGN_OR_RETURN(GradOutput ones_c,
                          c->Const(Tensor::FromVector<int32_t>(absl::Span<const int32_t>(ones), vec)));
      TX_ASSIGN_OR_RETURN(GradOutput kept, c->Op("Mul", {x_shape, keep_c}));
      return c->Op("AddV2", {kept, ones_c});
    }
  }
  TX_ASSIGN_OR_RETURN(GradOutput sum, c->Op("Sum", {x, axes}, {{"keep_dims", MakeAttr(true)}}));
  return c->Op("Shape", {sum});
}

// Reshapes the incoming gradient to the keep-dims shape (divided by `divisor` when valid) and
// broadcasts it to x's shape.
Status BroadcastGrad(GradContext* c, GradOutput divisor, GradList* dx) {
  TX_ASSIGN_OR_RETURN(GradOutput x_shape, c->Op("Shape", {c->input(0)}));
  TX_ASSIGN_OR_RETURN(GradOutput keep, KeepDimsShape(c, x_shape));
  TX_ASSIGN_OR_RETURN(GradOutput g, c->Op("Reshape", {c->grad(0), keep}));
  if (divisor.valid()) {
    TX_ASSIGN_OR_RETURN(g, c->Op("RealDiv", {g, divisor}));
  }
  TX_ASSIGN_OR_RETURN((*dx)[0], c->Op("BroadcastTo", {g, x_shape}));
  return OkStatus();
}

Status SumGrad(GradContext* c, GradList* dx) { return BroadcastGrad(c, GradOutput(), dx); }
REGISTER_GRADIENT("Sum", SumGrad);

Status MeanGrad(GradContext* c, GradList* dx) {
  TX_ASSIGN_OR_RETURN(GradOutput size_x, c->Op("Size", {c->input(0)}));
  TX_ASSIGN_OR_RETURN(GradOutput size_y, c->Op("Size", {c->output(0)}));
  TX_ASSIGN_OR_RETURN(GradOutput one, c->Const(1.0, DT_INT32));
  TX_ASSIGN_OR_RETURN(GradOutput size_y1, c->Op("Maximum", {size_y, one}));
  TX_ASSIGN_OR_RETURN(GradOutput count, c->Op("FloorDiv", {size_x, size_y1}));
  TX_ASSIGN_OR_RETURN(GradOutput count_t,
                      c->Op("Cast", {count}, {{"DstT", MakeAttr(BaseType(c->grad(0).dtype()))}}));
  return BroadcastGrad(c, count_t, dx);
}
REGISTER_GRADIENT("Mean", MeanGrad);

// dx = g * (x == y) / (number of elements equal to y in the reduced group).
Status ExtremeGrad(GradContext* c, GradList* dx) {
  const GradOutput x = c->input(0);
  TX_ASSIGN_OR_RETURN(GradOutput x_shape, c->Op("Shape", {x}));
  TX_ASSIGN_OR_RETURN(GradOutput keep, KeepDimsShape(c, x_shape));
  TX_ASSIGN_OR_RETURN(GradOutput y, c->Op("Reshape", {c->output(0), keep}));
  TX_ASSIGN_OR_RETURN(GradOutput g, c->Op("Reshape", {c->grad(0), keep}));
  TX_ASSIGN_OR_RETURN(GradOutput eq, c->Op("Equal", {x, y}));
  TX_ASSIGN_OR_RETURN(GradOutput mask,
                      c->Op("Cast", {eq}, {{"DstT", MakeAttr(BaseType(x.dtype()))}}));
  TX_ASSIGN_OR_RETURN(GradOutput ties,
                      c->Op("Sum", {mask, c->input(1)}, {{"keep_dims", MakeAttr(true)}}));
  TX_ASSIGN_OR_RETURN(GradOutput share, c->Op("RealDiv", {mask, ties}));
  TX_ASSIGN_OR_RETURN((*dx)[0], c->Op("Mul", {share, g}));
  return OkStatus();
}
REGISTER_GRADIENT("Max", ExtremeGrad);
REGISTER_GRADIENT("Min", ExtremeGrad);

REGISTER_NO_GRADIENT("All");
REGISTER_NO_GRADIENT("Any");
REGISTER_NO_GRADIENT("ArgMax");
REGISTER_NO_GRADIENT("ArgMin");

}  // namespace
}  // namespace tensorflux
