// Shape checks and the batch plan of MatMul and BatchMatMulV2, shared by the CPU kernels
// (kernels/cpu/matmul_op.cc) and the GPU kernels (kernels/cuda/matmul_ops.cc):
//
//   MatMul:        product[M, N] = op(a) x op(b), a and b matrices, op = transpose_a/_b.
//   BatchMatMulV2: output[..., M, N] = op(x[..., :, :]) x op(y[..., :, :]), op = adj_x/adj_y
//                  (the adjoint is the transpose for real types); rank >= 2 each; the batch
//                  dims (all but the last two) broadcast by NumPy rules.
//
// Errors are INVALID_ARGUMENT with TF's texts ("In[0] is not a matrix...", "Matrix
// size-incompatible: In[0]: [2,3], In[1]: [4,5]", "In[0] and In[1] must have compatible batch
// dimensions: ..."), BatchMatMulV2's naming the node.
#pragma once

#include <cstdint>
#include <vector>

#include "tensorflux/core/status.h"
#include "tensorflux/core/tensor_shape.h"

namespace tensorflux {

class OpKernel;

struct MatMulPlan {
  // op(x) is [m, k], op(y) is [k, n]; x stored [k, m] when ta, y stored [n, k] when tb.
  int64_t m = 0, n = 0, k = 0;
  bool ta = false, tb = false;
  TensorShape out_shape;
  // Output matrices, and the broadcast batch dims with, per dim, the stride (in matrices) of x
  // and y (0 where that operand is broadcast). MatMul: batch 1, no dims.
  int64_t batch = 1;
  std::vector<int64_t> dims, x_stride, y_stride;
  // Matrices stored in x and in y (their batch dims' products).
  int64_t x_matrices = 1, y_matrices = 1;

  bool Broadcasts() const;
  // The x and y matrix indices of output matrix b.
  void Operands(int64_t b, int64_t* xi, int64_t* yi) const;
  // One y for every x matrix and x not transposed: the batch folds into one [batch * m, k] x
  // [k, n] product. Call on a non-empty output.
  bool CanFoldBatchIntoRows() const;
  // Applies that fold (m *= batch, batch = 1, no dims).
  void FoldBatchIntoRows();
};

// MatMul's plan for matrices a and b.
Status MatMulShape(const TensorShape& a, const TensorShape& b, bool transpose_a, bool transpose_b,
                   MatMulPlan* plan);

// BatchMatMulV2's plan for x and y; errors name node `k`.
Status BatchMatMulShape(const OpKernel& k, const TensorShape& x, const TensorShape& y, bool adj_x,
                        bool adj_y, MatMulPlan* plan);

}  // namespace tensorflux
