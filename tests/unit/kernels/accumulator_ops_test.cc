// ConditionalAccumulator ops (ref and resource forms) through LocalSession: the mean and sum of
// applied gradients, stale gradients dropped, the global step a take advances, a take that
// waits for gradients of other steps, cancellation of a waiting take, and bad input.
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "data_flow_test_util.h"
#include "gtest/gtest.h"

namespace tensorflux {
namespace {

using flow_test::AddPlaceholder;
using flow_test::Feeds;
using flow_test::Floats;
using flow_test::NewSession;
using flow_test::Pending;
using flow_test::RunWithTimeout;
using var_test::AddConstNode;
using var_test::AddOp;
using var_test::HasText;

// acc: a float accumulator of shape [2] (`prefix` "" = ref form, "Resource" = resource form);
// apply(g, step), take (num_required fed as "n"), num, set_step(step).
GraphDef AccumulatorGraph(const std::string& prefix, const std::string& reduction = "MEAN",
                          DataType dtype = DT_FLOAT) {
  GraphDef g;
  NodeDef* a = AddOp(&g, "acc", prefix + "ConditionalAccumulator");
  AddNodeAttr("dtype", dtype, a);
  AddNodeAttr("shape", PartialTensorShape({2}), a);
  AddNodeAttr("reduction_type", reduction, a);
  AddPlaceholder(&g, "g", dtype);
  AddPlaceholder(&g, "step", DT_INT64);
  AddPlaceholder(&g, "n", DT_INT32);
  AddNodeAttr("dtype", dtype,
              AddOp(&g, "apply", prefix + "AccumulatorApplyGradient", {"acc", "step", "g"}));
  AddNodeAttr("dtype", dtype, AddOp(&g, "take", prefix + "AccumulatorTakeGradient", {"acc", "n"}));
  AddOp(&g, "num", prefix + "AccumulatorNumAccumulated", {"acc"});
  AddOp(&g, "set_step", prefix + "AccumulatorSetGlobalStep", {"acc", "step"});
  return g;
}

Feeds Grad(float a, float b, int64_t step) {
  return {{"g", Tensor::FromVector<float>({a, b}, TensorShape({2}))},
          {"step", Tensor::Scalar<int64_t>(step)}};
}
Feeds Need(int32_t n) { return {{"n", Tensor::Scalar<int32_t>(n)}}; }

int32_t Num(Session* s) {
  std::vector<Tensor> out;
  Status st = s->Run({}, {"num:0"}, {}, &out);
  EXPECT_TRUE(st.ok()) << st;
  return st.ok() ? out[0].scalar<int32_t>() : -1;
}

class AccumulatorTest : public ::testing::TestWithParam<std::string> {};

TEST_P(AccumulatorTest, MeanOfFreshGradientsAndStaleOnesDropped) {
  auto s = NewSession(AccumulatorGraph(GetParam()));
  std::vector<Tensor> out;
  ASSERT_TRUE(s->Run(Grad(1, 10, 0), {}, {"apply"}, &out).ok());
  ASSERT_TRUE(s->Run(Grad(2, 20, 0), {}, {"apply"}, &out).ok());
  ASSERT_TRUE(s->Run(Grad(6, 0, 5), {}, {"apply"}, &out).ok());  // newer steps count too
  EXPECT_EQ(Num(s.get()), 3);
  ASSERT_TRUE(s->Run(Need(3), {"take:0"}, {}, &out).ok());
  EXPECT_EQ(Floats(out[0]), (std::vector<float>{3, 10}));  // (1+2+6)/3, (10+20+0)/3
  EXPECT_EQ(Num(s.get()), 0);
  // The take moved the global step to 1: a gradient of step 0 is now stale and dropped.
  ASSERT_TRUE(s->Run(Grad(100, 100, 0), {}, {"apply"}, &out).ok());
  EXPECT_EQ(Num(s.get()), 0);
  ASSERT_TRUE(s->Run(Grad(4, 8, 1), {}, {"apply"}, &out).ok());
  ASSERT_TRUE(s->Run(Need(1), {"take:0"}, {}, &out).ok());
  EXPECT_EQ(Floats(out[0]), (std::vector<float>{4, 8}));
  // SetGlobalStep moves it anywhere, also back.
  ASSERT_TRUE(s->Run({{"step", Tensor::Scalar<int64_t>(7)}}, {}, {"set_step"}, &out).ok());
  ASSERT_TRUE(s->Run(Grad(1, 1, 6), {}, {"apply"}, &out).ok());
  EXPECT_EQ(Num(s.get()), 0);
  ASSERT_TRUE(s->Run({{"step", Tensor::Scalar<int64_t>(0)}}, {}, {"set_step"}, &out).ok());
  ASSERT_TRUE(s->Run(Grad(1, 1, 6), {}, {"apply"}, &out).ok());
  EXPECT_EQ(Num(s.get()), 1);
}

TEST_P(AccumulatorTest, TakeWaitsForGradientsFromOtherSteps) {
  auto s = NewSession(AccumulatorGraph(GetParam()));
  Pending take(s.get(), Need(2), {"take:0"}, {});
  EXPECT_TRUE(take.StillBlockedAfter(50));
  std::vector<Tensor> out;
  ASSERT_TRUE(s->Run(Grad(1, 2, 0), {}, {"apply"}, &out).ok());
  EXPECT_TRUE(take.StillBlockedAfter(20));
  ASSERT_TRUE(s->Run(Grad(3, 4, 0), {}, {"apply"}, &out).ok());
  ASSERT_TRUE(take.Wait().ok());
  EXPECT_EQ(Floats(take.out[0]), (std::vector<float>{2, 3}));
}

TEST_P(AccumulatorTest, WaitingTakeEndsWhenTheStepTimesOut) {
  auto s = NewSession(AccumulatorGraph(GetParam()));
  std::vector<Tensor> out;
  ASSERT_TRUE(s->Run(Grad(1, 2, 0), {}, {"apply"}, &out).ok());
  Status st = RunWithTimeout(s.get(), Need(2), {"take:0"}, {}, &out, 100);
  EXPECT_EQ(st.code(), absl::StatusCode::kDeadlineExceeded) << st;
  // The aggregate is untouched: one more gradient completes it.
  ASSERT_TRUE(s->Run(Grad(3, 4, 0), {}, {"apply"}, &out).ok());
  ASSERT_TRUE(s->Run(Need(2), {"take:0"}, {}, &out).ok());
  EXPECT_EQ(Floats(out[0]), (std::vector<float>{2, 3}));
}

INSTANTIATE_TEST_SUITE_P(RefAndResource, AccumulatorTest, ::testing::Values("", "Resource"));

TEST(AccumulatorSumTest, SumReductionAndDoubleAndIntegerDtypes) {
  auto s = NewSession(AccumulatorGraph("", "SUM"));
  std::vector<Tensor> out;
  ASSERT_TRUE(s->Run(Grad(1, 10, 0), {}, {"apply"}, &out).ok());
  ASSERT_TRUE(s->Run(Grad(2, 20, 0), {}, {"apply"}, &out).ok());
  ASSERT_TRUE(s->Run(Need(2), {"take:0"}, {}, &out).ok());
  EXPECT_EQ(Floats(out[0]), (std::vector<float>{3, 30}));

  s = NewSession(AccumulatorGraph("", "MEAN", DT_INT32));
  for (int32_t v : {1, 2, 4}) {
    ASSERT_TRUE(s->Run({{"g", Tensor::FromVector<int32_t>({v, -v}, TensorShape({2}))},
                        {"step", Tensor::Scalar<int64_t>(0)}},
                       {}, {"apply"}, &out)
                    .ok());
  }
  ASSERT_TRUE(s->Run(Need(3), {"take:0"}, {}, &out).ok());
  EXPECT_EQ(out[0].flat<int32_t>()[0], 2);   // 7 / 3, integer division as TF
  EXPECT_EQ(out[0].flat<int32_t>()[1], -2);  // -7 / 3 truncates toward zero

  s = NewSession(AccumulatorGraph("Resource", "MEAN", DT_DOUBLE));
  const double a = 0.1, b = 1e-9;  // a float sum would lose b
  for (double v : {a, b}) {
    ASSERT_TRUE(s->Run({{"g", Tensor::FromVector<double>({v, 2 * v}, TensorShape({2}))},
                        {"step", Tensor::Scalar<int64_t>(0)}},
                       {}, {"apply"}, &out)
                    .ok());
  }
  ASSERT_TRUE(s->Run(Need(2), {"take:0"}, {}, &out).ok());
  EXPECT_EQ(out[0].flat<double>()[0], (a + b) / 2);
  EXPECT_EQ(out[0].flat<double>()[1], (2 * a + 2 * b) / 2);
}

// Appliers racing a taker: a take returns the sum of everything accumulated so far (at least
// num_required) and resets it, so every gradient lands in exactly one aggregate (integer
// values: the float sums are exact). Each applier waits at its half-way point until the taker
// has taken once, so at least two takes interleave with the applies however the threads are
// scheduled (an idle core can otherwise finish every apply before the first take).
TEST(AccumulatorConcurrencyTest, ConcurrentAppliesAndTakesLoseNothing) {
  auto s = NewSession(AccumulatorGraph("", "SUM"));
  constexpr int kThreads = 4, kEach = 50;
  std::atomic<int> failures{0};
  std::atomic<bool> applied{false};
  std::atomic<int> takes{0};
  std::thread appliers([&] {
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        std::vector<Tensor> out;
        for (int k = 0; k < kEach; ++k) {
          while (k == kEach / 2 && takes.load() == 0) {
            std::this_thread::sleep_for(std::chrono::microseconds(200));
          }
          if (!s->Run(Grad(t + 1, k, int64_t{1} << 40), {}, {"apply"}, &out).ok()) failures++;
        }
      });
    }
    for (auto& th : threads) th.join();
    applied = true;
  });
  double sum0 = 0, sum1 = 0;
  std::vector<Tensor> out;
  while (true) {
    const bool all_applied = applied;  // read before Num: then Num == 0 means all were taken
    if (Num(s.get()) == 0) {
      if (all_applied) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      continue;
    }
    // Something is there and only this thread takes: the take cannot wait for long.
    Status st = RunWithTimeout(s.get(), Need(1), {"take:0"}, {}, &out, 20000);
    ASSERT_TRUE(st.ok()) << st;
    sum0 += out[0].flat<float>()[0];
    sum1 += out[0].flat<float>()[1];
    ++takes;
  }
  appliers.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_GT(takes.load(), 1);
  EXPECT_EQ(sum0, kEach * (1 + 2 + 3 + 4));
  EXPECT_EQ(sum1, kThreads * (kEach * (kEach - 1) / 2));
}

TEST(AccumulatorErrorsTest, BadInputIsInvalidArgumentNamingTheNode) {
  GraphDef g = AccumulatorGraph("Resource");
  AddNodeAttr("dtype", DT_DOUBLE,
              AddOp(&g, "take_double", "ResourceAccumulatorTakeGradient", {"acc", "n"}));
  NodeDef* other = AddOp(&g, "acc2", "ResourceConditionalAccumulator");
  AddNodeAttr("dtype", DT_FLOAT, other);
  AddNodeAttr("shape", PartialTensorShape({3}), other);
  AddNodeAttr("shared_name", std::string("acc"), other);
  AddOp(&g, "num2", "ResourceAccumulatorNumAccumulated", {"acc2"});
  auto s = NewSession(g);
  std::vector<Tensor> out;
  Status st = s->Run(Need(0), {"take:0"}, {}, &out);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
  EXPECT_TRUE(HasText(st, "num_required must be positive, but was 0")) << st;
  EXPECT_TRUE(HasText(st, "take")) << st;
  st = s->Run({{"g", Tensor::FromVector<float>({1, 2, 3}, TensorShape({3}))},
               {"step", Tensor::Scalar<int64_t>(0)}},
              {}, {"apply"}, &out);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
  EXPECT_TRUE(HasText(st, "Shape mismatch: expected [2], got [3]")) << st;
  st = s->Run({{"g", Tensor::FromVector<float>({1, 2}, TensorShape({2}))},
               {"step", Tensor::FromVector<int64_t>({0, 1}, TensorShape({2}))}},
              {}, {"apply"}, &out);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
  EXPECT_TRUE(HasText(st, "local_step must be a scalar")) << st;
  EXPECT_EQ(Num(s.get()), 0);
  st = s->Run(Need(1), {"take_double:0"}, {}, &out);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
  EXPECT_TRUE(HasText(st, "holds float gradients, this op's dtype is double")) << st;
  st = s->Run({}, {"num2:0"}, {}, &out);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
  EXPECT_TRUE(HasText(st, "Shared accumulator 'acc'")) << st;
}

}  // namespace
}  // namespace tensorflux
