#include "tensorflux/framework/call_frame.h"

#include <atomic>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace tensorflux {
namespace {

TEST(SimpleCallFrameTest, ArgsAndRetvals) {
  SimpleCallFrame frame({Tensor::Scalar<float>(1.5f), Tensor::Scalar<int32_t>(3)}, 2);
  EXPECT_EQ(frame.num_args(), 2);
  EXPECT_EQ(frame.num_retvals(), 2);
  const Tensor* arg = nullptr;
  ASSERT_TRUE(frame.GetArg(1, &arg).ok());
  EXPECT_EQ(arg->scalar<int32_t>(), 3);

  ASSERT_TRUE(frame.SetRetval(1, Tensor::Scalar<float>(9.0f)).ok());
  std::vector<Tensor> out;
  Status s = frame.ConsumeRetvals(&out);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("0"), std::string::npos);

  ASSERT_TRUE(frame.SetRetval(0, Tensor::Scalar<float>(8.0f)).ok());
  ASSERT_TRUE(frame.ConsumeRetvals(&out).ok());
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].scalar<float>(), 8.0f);
  EXPECT_EQ(out[1].scalar<float>(), 9.0f);
}

// _Retval kernels on different inter-op threads set distinct indices at once. With a bit-packed
// flag vector this lost updates (ConsumeRetvals then reported a set value as unset).
TEST(SimpleCallFrameTest, ConcurrentSetRetvalOnDistinctIndices) {
  constexpr int kThreads = 8;
  for (int round = 0; round < 2000; ++round) {
    SimpleCallFrame frame({}, kThreads);
    std::vector<std::thread> threads;
    std::atomic<int> arrived{0};
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&frame, &arrived, t] {
        arrived.fetch_add(1);
        while (arrived.load() < kThreads) std::this_thread::yield();  // start together
        ASSERT_TRUE(frame.SetRetval(t, Tensor::Scalar<int32_t>(t * 10)).ok());
      });
    }
    for (auto& th : threads) th.join();
    std::vector<Tensor> out;
    Status s = frame.ConsumeRetvals(&out);
    ASSERT_TRUE(s.ok()) << "round " << round << ": " << s;
    for (int t = 0; t < kThreads; ++t) ASSERT_EQ(out[t].scalar<int32_t>(), t * 10);
  }
}

TEST(SimpleCallFrameTest, RetvalSharesBuffer) {
  Tensor t = Tensor::Scalar<float>(1.0f);
  SimpleCallFrame frame({}, 1);
  ASSERT_TRUE(frame.SetRetval(0, t).ok());
  std::vector<Tensor> out;
  ASSERT_TRUE(frame.ConsumeRetvals(&out).ok());
  EXPECT_TRUE(out[0].SharesBufferWith(t));
}

TEST(SimpleCallFrameTest, Errors) {
  SimpleCallFrame frame({Tensor::Scalar<float>(1.0f)}, 1);
  const Tensor* arg = nullptr;
  EXPECT_EQ(frame.GetArg(1, &arg).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(frame.GetArg(-1, &arg).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(frame.SetRetval(1, Tensor()).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(frame.SetRetval(-1, Tensor()).code(), absl::StatusCode::kInvalidArgument);
  ASSERT_TRUE(frame.SetRetval(0, Tensor::Scalar<float>(2.0f)).ok());
  Status again = frame.SetRetval(0, Tensor::Scalar<float>(3.0f));
  EXPECT_EQ(again.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(again.message().find("already"), std::string::npos);
}

}  // namespace
}  // namespace tensorflux
