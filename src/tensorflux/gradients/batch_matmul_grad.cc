// Gradient of BatchMatMulV2 (TensorFlow's _BatchMatMulV2 in math_grad.py).
//
// Z = op(X) op(Y) per batch matrix, op = optional adjoint (transpose for real types). With
// G = dZ:
//   (adj_x, adj_y) = (F, F): dX = G Y^T,     dY = X^T G
//   (F, T):                  dX = G Y,       dY = G^T X
//   (T, F):                  dX = Y G^T,     dY = X G
//   (T, T):                  dX = Y^T G^T,   dY = G^T X^T
// each a BatchMatMulV2 over the broadcast batch. When the batch dims of X and Y are not
// statically known to be equal, dX and dY are summed over the batch axes that X or Y were
// broadcast along: BroadcastGradientArgs(shape(X)[:-2], shape(Y)[:-2]) gives the axes (the
// batch dims lead, so the axes index dX and dY directly), then Sum and Reshape to X's and Y's
// shapes.
#include <vector>

#include "tensorflux/core/tensor.h"
#include "tensorflux/gradients/gradients.h"

namespace tensorflux {
namespace {

using GradList = std::vector<GradOutput>;

// shape(t)[:-2] (StridedSlice with begin_mask; end -2).
StatusOr<GradOutput> BatchShape(GradContext* c, GradOutput shape) {
  TX_ASSIGN_OR_RETURN(GradOutput begin, c->Const(Tensor::FromVector<int32_t>({0}, TensorShape({1}))));
  TX_ASSIGN_OR_RETURN(GradOutput end, c->Const(Tensor::FromVector<int32_t>({-2}, TensorShape({1}))));
  TX_ASSIGN_OR_RETURN(GradOutput stride,
                      c->Const(Tensor::FromVector<int32_t>({1}, TensorShape({1}))));
  return c->Op("StridedSlice", {shape, begin, end, stride}, {{"begin_mask", MakeAttr(int64_t{1})}});
}

// True when the batch dims (all but the last two) of x and y are statically known and equal,
// or when neither has any.
bool SameBatchShapes(const PartialTensorShape& x, const PartialTensorShape& y) {
  if (x.unknown_rank() || y.unknown_rank()) return false;
  if (x.dims() == 2 && y.dims() == 2) return true;
  if (x.dims() != y.dims()) return false;
  for (int i = 0; i < x.dims() - 2; ++i) {
    if (x.dim_size(i) < 0 || x.dim_size(i) != y.dim_size(i)) return false;
  }
  return true;
}

Status BatchMatMulV2Grad(GradContext* c, GradList* dx) {
  bool adj_x = false, adj_y = false;
  TX_RETURN_IF_ERROR(c->GetAttr("adj_x", &adj_x));
  TX_RETURN_IF_ERROR(c->GetAttr("adj_y", &adj_y));
  GradOutput g = c->grad(0), x = c->input(0), y = c->input(1);
  auto mm = [&](GradOutput l, GradOutput r, bool al, bool ar) {
    return c->Op("BatchMatMulV2", {l, r}, {{"adj_x", MakeAttr(al)}, {"adj_y", MakeAttr(ar)}});
  };
  GradOutput gx, gy;
  if (!adj_x && !adj_y) {
    TX_ASSIGN_OR_RETURN(gx, mm(g, y, false, true));
    TX_ASSIGN_OR_RETURN(gy, mm(x, g, true, false));
  } else if (!adj_x && adj_y) {
    TX_ASSIGN_OR_RETURN(gx, mm(g, y, false, false));
    TX_ASSIGN_OR_RETURN(gy, mm(g, x, true, false));
  } else if (adj_x && !adj_y) {
    TX_ASSIGN_OR_RETURN(gx, mm(y, g, false, true));
    TX_ASSIGN_OR_RETURN(gy, mm(x, g, false, false));
  } else {
    TX_ASSIGN_OR_RETURN(gx, mm(y, g, true, true));
    TX_ASSIGN_OR_RETURN(gy, mm(g, x, true, true));
  }
  if (SameBatchShapes(c->StaticShape(x), c->StaticShape(y))) {
    (*dx)[0] = gx;
    (*dx)[1] = gy;
    return OkStatus();
  }
  TX_ASSIGN_OR_RETURN(GradOutput sx, c->Op("Shape", {x}));
  TX_ASSIGN_OR_RETURN(GradOutput sy, c->Op("Shape", {y}));
  TX_ASSIGN_OR_RETURN(GradOutput bx, BatchShape(c, sx));
  TX_ASSIGN_OR_RETURN(GradOutput by, BatchShape(c, sy));
  TX_ASSIGN_OR_RETURN(std::vector<GradOutput> r, c->OpN("BroadcastGradientArgs", {bx, by}));
  if (r.size() != 2) return errors::Internal("BroadcastGradientArgs must have two outputs");
  auto reduce = [&](GradOutput t, GradOutput axes, GradOutput shape) -> StatusOr<GradOutput> {
    TX_ASSIGN_OR_RETURN(GradOutput s, c->Op("Sum", {t, axes}, {{"keep_dims", MakeAttr(false)}}));
    return c->Op("Reshape", {s, shape});
  };
  TX_ASSIGN_OR_RETURN((*dx)[0], reduce(gx, r[0], sx));
  TX_ASSIGN_OR_RETURN((*dx)[1], reduce(gy, r[1], sy));
  return OkStatus();
}
REGISTER_GRADIENT("BatchMatMulV2", BatchMatMulV2Grad);

}  // namespace
}  // namespace tensorflux
