// The generated C++ wrappers of the pooling and batch-norm ops (ops::MaxPool, ops::AvgPool,
// ops::FusedBatchNormV3), run with ClientSession on hand-worked examples.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "tensorflux/cc/client_session.h"
#include "tensorflux/cc/ops/ops.h"

namespace tensorflux {
namespace {

std::vector<float> Values(const Tensor& t) {
  return std::vector<float>(t.data<float>(), t.data<float>() + t.NumElements());
}

TEST(PoolBnCcTest, PoolingWrappers) {
  Scope root = Scope::NewRootScope();
  // x [1, 2, 4, 1]: rows {1, 5, 2, 0} and {3, 4, 8, 7}.
  std::vector<float> xv = {1, 5, 2, 0, 3, 4, 8, 7};
  Tensor x = Tensor::FromVector<float>(absl::Span<const float>(xv), TensorShape({1, 2, 4, 1}));
  const std::vector<int64_t> k = {1, 2, 2, 1};
  auto mp = ops::MaxPool(root, x, k, k, "VALID");
  auto ap = ops::AvgPool(root, x, k, k, "VALID");
  // SAME, 3x3 window, stride 2: means over the valid elements only (worked below).
  auto as = ops::AvgPool(root, x, {1, 3, 3, 1}, {1, 2, 2, 1}, "SAME");
  ClientSession session(root);
  std::vector<Tensor> out;
  Status s = session.Run({mp, ap, as}, &out);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(out[0].shape(), TensorShape({1, 1, 2, 1}));
  EXPECT_EQ(Values(out[0]), (std::vector<float>{5, 8}));
  EXPECT_EQ(Values(out[1]), (std::vector<float>{13.f / 4, 17.f / 4}));
  // Rows: out 1 row, pad total (1-1)*2+3-2 = 1, before 0: rows 0-1. Cols: window 0 = cols 0-2,
  // window 1 = cols 2-3 (col 4 is padding).
  EXPECT_EQ(out[2].shape(), TensorShape({1, 1, 2, 1}));
  EXPECT_FLOAT_EQ(Values(out[2])[0], (1 + 5 + 2 + 3 + 4 + 8) / 6.f);
  EXPECT_FLOAT_EQ(Values(out[2])[1], (2 + 0 + 8 + 7) / 4.f);
}

TEST(PoolBnCcTest, FusedBatchNormWrapper) {
  Scope root = Scope::NewRootScope();
  // One channel, x = {1, 2, 3, 6}: mean 3, biased variance 3.5, unbiased 14/3.
  std::vector<float> xv = {1, 2, 3, 6};
  Tensor x = Tensor::FromVector<float>(absl::Span<const float>(xv), TensorShape({1, 2, 2, 1}));
  Tensor empty(DT_FLOAT, TensorShape({0}));
  auto bn = ops::FusedBatchNormV3(root, x, {2.f}, {1.f}, empty, empty,
                                  ops::FusedBatchNormV3::Epsilon(0.5f));
  ClientSession session(root);
  std::vector<Tensor> out;
  Status s = session.Run({bn.y, bn.batch_mean, bn.batch_variance, bn.reserve_space_2}, &out);
  ASSERT_TRUE(s.ok()) << s;
  // y = (x - 3) / sqrt(3.5 + 0.5) * 2 + 1 = x - 2.
  const std::vector<float> want = {-1, 0, 1, 4};
  for (int i = 0; i < 4; ++i) EXPECT_FLOAT_EQ(Values(out[0])[i], want[i]) << i;
  EXPECT_FLOAT_EQ(Values(out[1])[0], 3.f);
  EXPECT_FLOAT_EQ(Values(out[2])[0], 14.f / 3);
  EXPECT_FLOAT_EQ(Values(out[3])[0], 3.5f);
}

}  // namespace
}  // namespace tensorflux
