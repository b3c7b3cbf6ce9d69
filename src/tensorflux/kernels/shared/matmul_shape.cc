#include "tensorflux/kernels/shared/matmul_shape.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "tensorflux/framework/op_kernel.h"

namespace tensorflux {

bool MatMulPlan::Broadcasts() const {
  return std::any_of(x_stride.begin(), x_stride.end(), [](int64_t s) { return s == 0; }) ||
         std::any_of(y_stride.begin(), y_stride.end(), [](int64_t s) { return s == 0; });
}

void MatMulPlan::Operands(int64_t b, int64_t* xi, int64_t* yi) const {
  *xi = *yi = 0;
  for (int i = static_cast<int>(dims.size()) - 1; i >= 0; --i) {
    const int64_t idx = b % dims[i];
    b /= dims[i];
    *xi += idx * x_stride[i];
    *yi += idx * y_stride[i];
  }
}

bool MatMulPlan::CanFoldBatchIntoRows() const {
  return batch > 1 && y_matrices == 1 && x_matrices == batch && !ta;
}

void MatMulPlan::FoldBatchIntoRows() {
  m *= batch;
  batch = 1;
  dims.clear();
  x_stride.clear();
  y_stride.clear();
}

Status MatMulShape(const TensorShape& a, const TensorShape& b, bool transpose_a, bool transpose_b,
                   MatMulPlan* p) {
  if (a.dims() != 2) {
    return errors::InvalidArgument("In[0] is not a matrix. Instead it has shape ",
                                    a.DebugString());
  }
  if (b.dims() != 2) {
    return errors::InvalidArgument("In[1] is not a matrix. Instead it has shape ",
                                   b.DebugString());
  }
  *p = MatMulPlan();
  p->ta = transpose_a;
  p->tb = transpose_b;
  p->m = a.dim_size(p->ta ? 1 : 0);
  p->k = a.dim_size(p->ta ? 0 : 1);
  p->n = b.dim_size(p->tb ? 0 : 1);
  if (p->k != b.dim_size(p->tb ? 1 : 0)) {
    return errors::InvalidArgument("Matrix size-incompatible: In[0]: ", a.DebugString(),
                                   ", In[1]: ", b.DebugString());
  }
  p->out_shape = TensorShape({p->m, p->n});
  return OkStatus();
}

Status BatchMatMulShape(const OpKernel& k, const TensorShape& x, const TensorShape& y, bool adj_x,
                        bool adj_y, MatMulPlan* p) {
  const std::string where = absl::StrCat(" (", k.type_string(), " node '", k.name(), "')");
  if (x.dims() < 2) {
    return errors::InvalidArgument("In[0] ndims must be >= 2: ", x.dims(), where);
  }
  if (y.dims() < 2) {
    return errors::InvalidArgument("In[1] ndims must be >= 2: ", y.dims(), where);
  }
  *p = MatMulPlan();
  p->ta = adj_x;
  p->tb = adj_y;
  const int rx = x.dims(), ry = y.dims();
  p->m = x.dim_size(rx - (p->ta ? 1 : 2));
  p->k = x.dim_size(rx - (p->ta ? 2 : 1));
  p->n = y.dim_size(ry - (p->tb ? 2 : 1));
  if (p->k != y.dim_size(ry - (p->tb ? 1 : 2))) {
    return errors::InvalidArgument("Matrix size-incompatible: In[0]: ", x.DebugString(),
                                   ", In[1]: ", y.DebugString(), where);
  }
  // Broadcast batch dims, right-aligned; strides in matrices. The running products wrap
  // (unsigned) rather than overflow when x or y is empty; they are only used when the output
  // is not, and then they are at most its batch size.
  const int bx = rx - 2, by = ry - 2, rank = std::max(bx, by);
  p->dims.assign(rank, 1);
  p->x_stride.assign(rank, 0);
  p->y_stride.assign(rank, 0);
  uint64_t sx = 1, sy = 1;
  for (int i = rank - 1; i >= 0; --i) {
    const int ix = i - (rank - bx), iy = i - (rank - by);
    const int64_t dx = ix >= 0 ? x.dim_size(ix) : 1;
    const int64_t dy = iy >= 0 ? y.dim_size(iy) : 1;
    if (dx != dy && dx != 1 && dy != 1) {
      return errors::InvalidArgument("In[0] and In[1] must have compatible batch dimensions: ",
                                     x.DebugString(), " vs. ", y.DebugString(), where);
    }
    p->dims[i] = dx == 1 ? dy : dx;
    p->x_stride[i] = dx == 1 ? 0 : static_cast<int64_t>(sx);
    p->y_stride[i] = dy == 1 ? 0 : static_cast<int64_t>(sy);
    sx *= static_cast<uint64_t>(dx);
    sy *= static_cast<uint64_t>(dy);
  }
  p->x_matrices = static_cast<int64_t>(sx);
  p->y_matrices = static_cast<int64_t>(sy);
  std::vector<int64_t> out_dims = p->dims;
  out_dims.push_back(p->m);
  out_dims.push_back(p->n);
  auto out_shape = TensorShape::Make(out_dims);
  if (!out_shape.ok()) return errors::InvalidArgument(out_shape.status().message(), where);
  p->out_shape = *std::move(out_shape);
  const int64_t mn = p->m * p->n;
  p->batch = mn == 0 ? 0 : p->out_shape.num_elements() / mn;
  return OkStatus();
}

}  // namespace tensorflux
