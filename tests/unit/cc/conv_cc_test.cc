// The generated C++ wrappers of the convolution ops (ops::Conv2D, ops::Conv2DBackpropInput,
// ops::Conv2DBackpropFilter, ops::DepthwiseConv2dNative), run with ClientSession on hand-worked
// examples.
#include <gtest/gtest.h>

#include <vector>

#include "tensorflux/cc/client_session.h"
#include "tensorflux/cc/ops/ops.h"

namespace tensorflux {
namespace {

std::vector<float> Values(const Tensor& t) {
  return std::vector<float>(t.data<float>(), t.data<float>() + t.NumElements());
}

Tensor Floats(std::vector<float> v, TensorShape s) {
  return Tensor::FromVector<float>(absl::Span<const float>(v), s);
}

Tensor Sizes(std::vector<int32_t> v) {
  return Tensor::FromVector<int32_t>(absl::Span<const int32_t>(v), TensorShape({4}));
}

TEST(ConvCcTest, Conv2DAndBackprops) {
  Scope root = Scope::NewRootScope();
  // x [1, 3, 3, 1] = 1..9, w [2, 2, 1, 1] = {1, 0, 0, -1}: y[i, j] = x[i, j] - x[i+1, j+1].
  Tensor x = Floats({1, 2, 3, 4, 5, 6, 7, 8, 9}, {1, 3, 3, 1});
  Tensor w = Floats({1, 0, 0, -1}, {2, 2, 1, 1});
  const std::vector<int64_t> ones = {1, 1, 1, 1};
  auto valid = ops::Conv2D(root, x, w, ones, "VALID");
  // SAME: total pad 1 per dim, 0 before, 1 after: the last row/col sees zeros below/right.
  auto same = ops::Conv2D(root, x, w, ones, "SAME");
  // EXPLICIT 1 before on both dims, stride 2: windows start at -1 and 1.
  auto expl = ops::Conv2D(root, x, w, {1, 2, 2, 1}, "EXPLICIT",
                          ops::Conv2D::ExplicitPaddings({0, 0, 1, 0, 1, 0, 0, 0}));
  // dy = 1 everywhere on the VALID output [1, 2, 2, 1].
  Tensor dy = Floats({1, 1, 1, 1}, {1, 2, 2, 1});
  auto dx = ops::Conv2DBackpropInput(root, Sizes({1, 3, 3, 1}), w, dy, ones, "VALID");
  auto dw = ops::Conv2DBackpropFilter(root, x, Sizes({2, 2, 1, 1}), dy, ones, "VALID");
  ClientSession session(root);
  std::vector<Tensor> out;
  Status s = session.Run({valid, same, expl, dx, dw}, &out);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(Values(out[0]), (std::vector<float>{-4, -4, -4, -4}));
  EXPECT_EQ(Values(out[1]), (std::vector<float>{-4, -4, 3, -4, -4, 6, 7, 8, 9}));
  // Output [1, 2, 2, 1], windows starting at (-1,-1), (-1,1), (1,-1), (1,1): -x[0,0], -x[0,2],
  // -x[2,0], x[1,1] - x[2,2].
  EXPECT_EQ(Values(out[2]), (std::vector<float>{-1, -3, -7, 5 - 9}));
  // dx = sum over the 4 windows of w placed at each: +1 at the top-left 2x2, -1 at bottom-right.
  EXPECT_EQ(Values(out[3]), (std::vector<float>{1, 1, 0, 1, 0, -1, 0, -1, -1}));
  // dw[a, b] = sum of x over the 2x2 block starting at (a, b).
  EXPECT_EQ(Values(out[4]), (std::vector<float>{1 + 2 + 4 + 5, 2 + 3 + 5 + 6, 4 + 5 + 7 + 8,
                                                 5 + 6 + 8 + 9}));
}

TEST(ConvCcTest, DepthwiseWrapper) {
  Scope root = Scope::NewRootScope();
  // x [1, 1, 2, 2]: pixel 0 = (1, 10), pixel 1 = (2, 20); w [1, 2, 2, 1]: channel 0 taps (1, 1),
  // channel 1 taps (1, -1). VALID: one output pixel, (1 + 2, 10 - 20).
  Tensor x = Floats({1, 10, 2, 20}, {1, 1, 2, 2});
  Tensor w = Floats({1, 1, 1, -1}, {1, 2, 2, 1});
  auto y = ops::DepthwiseConv2dNative(root, x, w, {1, 1, 1, 1}, "VALID");
  ClientSession session(root);
  std::vector<Tensor> out;
  Status s = session.Run({y}, &out);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(out[0].shape(), TensorShape({1, 1, 1, 2}));
  EXPECT_EQ(Values(out[0]), (std::vector<float>{3, -10}));
}

}  // namespace
}  // namespace tensorflux
