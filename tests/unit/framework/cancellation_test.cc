#include "tensorflux/framework/cancellation.h"

#include <atomic>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace tensorflux {
namespace {

TEST(CancellationManagerTest, CallbacksRunOnce) {
  CancellationManager cm;
  std::atomic<int> a{0}, b{0};
  auto ta = cm.NewToken();
  auto tb = cm.NewToken();
  EXPECT_NE(ta, tb);
  EXPECT_TRUE(cm.RegisterCallback(ta, [&] { ++a; }));
  EXPECT_TRUE(cm.RegisterCallback(tb, [&] { ++b; }));
  EXPECT_FALSE(cm.IsCancelled());
  cm.StartCancel();
  EXPECT_TRUE(cm.IsCancelled());
  cm.StartCancel();
  EXPECT_EQ(a.load(), 1);
  EXPECT_EQ(b.load(), 1);
}

TEST(CancellationManagerTest, DeregisteredCallbackDoesNotRun) {
  CancellationManager cm;
  int runs = 0;
  auto t = cm.NewToken();
  ASSERT_TRUE(cm.RegisterCallback(t, [&] { ++runs; }));
  EXPECT_TRUE(cm.DeregisterCallback(t));
  EXPECT_FALSE(cm.DeregisterCallback(t));  // already gone
  cm.StartCancel();
  EXPECT_EQ(runs, 0);
}

TEST(CancellationManagerTest, RegisterAfterCancelFails) {
  CancellationManager cm;
  cm.StartCancel();
  int runs = 0;
  EXPECT_FALSE(cm.RegisterCallback(cm.NewToken(), [&] { ++runs; }));
  EXPECT_EQ(runs, 0);
}

TEST(CancellationManagerTest, DeregisterAfterCancelReturnsFalse) {
  CancellationManager cm;
  auto t = cm.NewToken();
  int runs = 0;
  ASSERT_TRUE(cm.RegisterCallback(t, [&] { ++runs; }));
  cm.StartCancel();
  EXPECT_FALSE(cm.DeregisterCallback(t));
  EXPECT_EQ(runs, 1);
}

TEST(CancellationManagerTest, ConcurrentCancelRunsEachCallbackOnce) {
  for (int round = 0; round < 50; ++round) {
    CancellationManager cm;
    std::vector<std::atomic<int>> runs(20);
    for (int i = 0; i < 20; ++i) ASSERT_TRUE(cm.RegisterCallback(cm.NewToken(), [&, i] { ++runs[i]; }));
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) threads.emplace_back([&] { cm.StartCancel(); });
    for (auto& th : threads) th.join();
    for (auto& r : runs) ASSERT_EQ(r.load(), 1);
  }
}

}  // namespace
}  // namespace tensorflux
