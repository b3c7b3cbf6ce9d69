// The per-kernel oneDNN primitive cache of the float32 convolution path (kernels/cpu/conv_impl.h,
// conv_dnnl.cc): a repeated geometry reuses its primitive, each direction and geometry gets its
// own, results agree with the float64 direct loops, and concurrent calls from several threads on
// one cache (as concurrent Session::Run steps on one kernel do) give the same results (with
// oneDNN's library-managed scratchpad they did not: wrong values, or a hang in a barrier).
#include <cmath>
#include <cstdint>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "tensorflux/framework/op_kernel.h"
#include "tensorflux/kernels/cpu/conv_impl.h"
#include "tensorflux/ops/conv_geometry.h"

namespace tensorflux {
namespace {

using conv::ConvGeometry;
using conv::Direction;

ConvGeometry Geometry(int64_t batch, int64_t depth) {
  NodeDef def;
  def.set_name("c");
  def.set_op("Conv2D");
  AddNodeAttr("strides", std::vector<int64_t>{1, 2, 1, 1}, &def);
  AddNodeAttr("padding", "SAME", &def);
  auto attrs = conv::ConvAttrs::FromNodeDef(def);
  EXPECT_TRUE(attrs.ok()) << attrs.status();
  auto g = conv::ComputeConvGeometry(*attrs, TensorShape({batch, 7, 6, depth}),
                                     TensorShape({3, 3, depth, 5}), false);
  EXPECT_TRUE(g.ok()) << g.status();
  return *g;
}

std::vector<float> Values(int64_t n, uint32_t seed) {
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& x : v) {
    seed = seed * 1664525u + 1013904223u;
    x = static_cast<float>(seed >> 8) / static_cast<float>(1 << 24) - 0.5f;
  }
  return v;
}

// Runs `dir` through the cache on fresh operands and checks against ReferenceConv in float64.
void RunAndCheck(conv::DnnlConvCache* cache, Direction dir, const ConvGeometry& g, uint32_t seed) {
  OpKernelContext::Params params;
  OpKernelContext ctx(&params);
  std::vector<float> buf[3] = {Values(g.InputShape().num_elements(), seed),
                               Values(g.FilterShape().num_elements(), seed + 1),
                               Values(g.OutputShape().num_elements(), seed + 2)};
  std::vector<double> ref[3];
  for (int i = 0; i < 3; ++i) ref[i].assign(buf[i].begin(), buf[i].end());
  ASSERT_TRUE(cache->Run(&ctx, dir, g, buf[0].data(), buf[1].data(), buf[2].data()).ok());
  conv::ReferenceConv(dir, g, ref[0].data(), ref[1].data(), ref[2].data());
  const int out = dir == Direction::kForward ? 2 : dir == Direction::kBackwardInput ? 0 : 1;
  for (size_t j = 0; j < buf[out].size(); ++j) {
    ASSERT_NEAR(buf[out][j], ref[out][j], 1e-4) << "element " << j;
  }
}

TEST(ConvDnnlCacheTest, ReusesPrimitivesPerGeometryAndDirection) {
  auto cache = conv::NewDnnlConvCache();
  if (cache == nullptr) GTEST_SKIP() << "built without oneDNN";
  const ConvGeometry a = Geometry(2, 3), b = Geometry(3, 3);
  RunAndCheck(cache.get(), Direction::kForward, a, 1);
  EXPECT_EQ(cache->CachedPrimitives(), 1);
  RunAndCheck(cache.get(), Direction::kForward, a, 2);  // same geometry: reused
  EXPECT_EQ(cache->CachedPrimitives(), 1);
  RunAndCheck(cache.get(), Direction::kBackwardInput, a, 3);
  RunAndCheck(cache.get(), Direction::kBackwardFilter, a, 4);
  EXPECT_EQ(cache->CachedPrimitives(), 3);
  RunAndCheck(cache.get(), Direction::kForward, b, 5);  // another batch size: a new primitive
  EXPECT_EQ(cache->CachedPrimitives(), 4);
  RunAndCheck(cache.get(), Direction::kBackwardFilter, a, 6);
  EXPECT_EQ(cache->CachedPrimitives(), 4);
}

TEST(ConvDnnlCacheTest, ConcurrentCallsOnOneCache) {
  auto cache = conv::NewDnnlConvCache();
  if (cache == nullptr) GTEST_SKIP() << "built without oneDNN";
  const ConvGeometry g[2] = {Geometry(2, 4), Geometry(1, 4)};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 6; ++i) {
        RunAndCheck(cache.get(), static_cast<Direction>((t + i) % 3), g[t % 2], 10 * t + i);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_LE(cache->CachedPrimitives(), 6);
  EXPECT_GE(cache->CachedPrimitives(), 1);
}

}  // namespace
}  // namespace tensorflux
