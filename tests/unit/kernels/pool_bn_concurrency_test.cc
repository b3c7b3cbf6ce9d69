// The float32 oneDNN paths of the pooling and batch-norm kernels run from several threads at once
// on one shape (so oneDNN's primitive cache hands every thread the same primitive; each call
// passes its own scratchpad): every result must equal the one computed alone, bit for bit.
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "kernel_test_util.h"

namespace tensorflux {
namespace {

using test::KernelRunner;
using test::ToDoubles;

Tensor Pattern(const TensorShape& shape, uint32_t seed) {
  std::vector<double> v(shape.num_elements());
  uint32_t s = seed;
  for (double& e : v) {
    s = s * 1664525u + 1013904223u;
    e = static_cast<double>(s >> 8) / 16777216.0 * 4 - 2;
  }
  return test::FromDoubles(DT_FLOAT, shape, v);
}

// Runs op on fixed inputs; returns every output flattened.
std::vector<double> RunOnce(const std::string& op) {
  const TensorShape x({8, 14, 14, 32}), pooled({8, 7, 7, 32}), c({32});
  KernelRunner r(op);
  const std::vector<int64_t> k = {1, 2, 2, 1};
  if (op == "MaxPool" || op == "AvgPool") {
    r.Input(Pattern(x, 1)).Attr("ksize", k).Attr("strides", k).Attr("padding", std::string("VALID"));
  } else if (op == "MaxPoolGrad") {
    r.Input(Pattern(x, 1)).Input(Pattern(pooled, 2)).Input(Pattern(pooled, 3))
        .Attr("ksize", k).Attr("strides", k).Attr("padding", std::string("VALID"));
  } else if (op == "AvgPoolGrad") {
    r.Input(test::AsTensor<int32_t>({8, 14, 14, 32}, TensorShape({4}))).Input(Pattern(pooled, 3))
        .Attr("ksize", k).Attr("strides", k).Attr("padding", std::string("VALID"));
  } else if (op == "FusedBatchNormV3") {
    r.Input(Pattern(x, 1)).Input(Pattern(c, 4)).Input(Pattern(c, 5))
        .Input(Tensor(DT_FLOAT, TensorShape({0}))).Input(Tensor(DT_FLOAT, TensorShape({0})));
  } else {  // FusedBatchNormGradV3
    Tensor var = Pattern(c, 7);
    for (int i = 0; i < 32; ++i) var.data<float>()[i] += 3;  // positive
    r.Input(Pattern(x, 2)).Input(Pattern(x, 1)).Input(Pattern(c, 4)).Input(Pattern(c, 6))
        .Input(var).Input(Tensor(DT_FLOAT, TensorShape({})));
  }
  auto out = r.Run();
  if (!out.ok()) {
    ADD_FAILURE() << op << ": " << out.status();
    return {};
  }
  std::vector<double> all;
  for (const Tensor& t : *out) {
    std::vector<double> v = ToDoubles(t);
    all.insert(all.end(), v.begin(), v.end());
  }
  return all;
}

TEST(PoolBnConcurrency, SameResultsFromConcurrentThreads) {
  for (const char* op : {"MaxPool", "AvgPool", "MaxPoolGrad", "AvgPoolGrad", "FusedBatchNormV3",
                         "FusedBatchNormGradV3"}) {
    const std::vector<double> alone = RunOnce(op);
    ASSERT_FALSE(alone.empty()) << op;
    constexpr int kThreads = 4, kIters = 8;
    std::vector<int> mismatches(kThreads, 0);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        for (int i = 0; i < kIters; ++i) mismatches[t] += RunOnce(op) != alone;
      });
    }
    for (auto& th : threads) th.join();
    for (int t = 0; t < kThreads; ++t) EXPECT_EQ(mismatches[t], 0) << op << " thread " << t;
  }
}

}  // namespace
}  // namespace tensorflux
