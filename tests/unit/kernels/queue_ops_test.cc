// FIFOQueueV2 and its ops through LocalSession: FIFO order, EnqueueMany/DequeueMany, blocking on
// a full or empty queue until another step acts, close semantics, cancellation of a blocked op
// (timeout, an error elsewhere in the step, Session::Close), and the errors for bad input.
#include <algorithm>
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "data_flow_test_util.h"
#include "gtest/gtest.h"
#include "poll_util.h"

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

Tensor Vec2(float a, float b) { return Tensor::FromVector<float>({a, b}, TensorShape({2})); }

// q: (float [2], int32 []) queue of capacity `capacity`; enq/enq_many/deq/deq_many (n = 2)/
// size/close/close_cancel. `unshaped` leaves the shapes attr empty.
GraphDef QueueGraph(int64_t capacity, bool unshaped = false) {
  GraphDef g;
  NodeDef* q = AddOp(&g, "q", "FIFOQueueV2");
  AddNodeAttr("component_types", std::vector<DataType>{DT_FLOAT, DT_INT32}, q);
  if (!unshaped) {
    AddNodeAttr("shapes", std::vector<PartialTensorShape>{PartialTensorShape({2}),
                                                          PartialTensorShape::Scalar()},
                q);
  }
  AddNodeAttr("capacity", capacity, q);
  AddPlaceholder(&g, "x", DT_FLOAT);
  AddPlaceholder(&g, "i", DT_INT32);
  const std::vector<DataType> types{DT_FLOAT, DT_INT32};
  AddNodeAttr("Tcomponents", types, AddOp(&g, "enq", "QueueEnqueueV2", {"q", "x", "i"}));
  AddNodeAttr("Tcomponents", types,
              AddOp(&g, "enq_many", "QueueEnqueueManyV2", {"q", "x", "i"}));
  AddNodeAttr("component_types", types, AddOp(&g, "deq", "QueueDequeueV2", {"q"}));
  AddConstNode(&g, "two", Tensor::Scalar<int32_t>(2));
  AddNodeAttr("component_types", types, AddOp(&g, "deq_many", "QueueDequeueManyV2", {"q", "two"}));
  AddOp(&g, "size", "QueueSizeV2", {"q"});
  AddOp(&g, "close", "QueueCloseV2", {"q"});
  AddNodeAttr("cancel_pending_enqueues", true, AddOp(&g, "close_cancel", "QueueCloseV2", {"q"}));
  return g;
}

Feeds One(float a, float b, int32_t i) { return {{"x", Vec2(a, b)}, {"i", Tensor::Scalar(i)}}; }

int32_t Size(Session* s) {
  std::vector<Tensor> out;
  Status st = s->Run({}, {"size:0"}, {}, &out);
  EXPECT_TRUE(st.ok()) << st;
  return st.ok() ? out[0].scalar<int32_t>() : -1;
}

TEST(FIFOQueueTest, FirstInFirstOutAcrossEnqueueManyAndDequeueMany) {
  auto s = NewSession(QueueGraph(-1));
  std::vector<Tensor> out;
  ASSERT_TRUE(s->Run(One(1, 2, 10), {}, {"enq"}, &out).ok());
  Feeds many{{"x", Tensor::FromVector<float>({3, 4, 5, 6, 7, 8}, TensorShape({3, 2}))},
             {"i", Tensor::FromVector<int32_t>({11, 12, 13}, TensorShape({3}))}};
  ASSERT_TRUE(s->Run(many, {}, {"enq_many"}, &out).ok());
  EXPECT_EQ(Size(s.get()), 4);

  ASSERT_TRUE(s->Run({}, {"deq:0", "deq:1"}, {}, &out).ok());
  EXPECT_EQ(Floats(out[0]), (std::vector<float>{1, 2}));
  EXPECT_EQ(out[1].scalar<int32_t>(), 10);

  ASSERT_TRUE(s->Run({}, {"deq_many:0", "deq_many:1"}, {}, &out).ok());
  EXPECT_EQ(out[0].shape(), TensorShape({2, 2}));
  EXPECT_EQ(Floats(out[0]), (std::vector<float>{3, 4, 5, 6}));
  EXPECT_EQ(out[1].shape(), TensorShape({2}));
  EXPECT_EQ(out[1].flat<int32_t>()[0], 11);
  EXPECT_EQ(out[1].flat<int32_t>()[1], 12);

  ASSERT_TRUE(s->Run({}, {"deq:0", "deq:1"}, {}, &out).ok());
  EXPECT_EQ(Floats(out[0]), (std::vector<float>{7, 8}));
  EXPECT_EQ(out[1].scalar<int32_t>(), 13);
  EXPECT_EQ(Size(s.get()), 0);
  // DequeueMany of 0 elements returns empty stacks at once, even from an empty queue.
  ASSERT_TRUE(s->Run({{"two", Tensor::Scalar<int32_t>(0)}}, {"deq_many:0", "deq_many:1"}, {},
                     &out)
                  .ok());
  EXPECT_EQ(out[0].shape(), TensorShape({0, 2}));
  EXPECT_EQ(out[1].shape(), TensorShape({0}));
}

TEST(FIFOQueueTest, DequeueWaitsForAnEnqueueOfAnotherStep) {
  auto s = NewSession(QueueGraph(-1));
  Pending deq(s.get(), {}, {"deq:0", "deq:1"}, {});
  EXPECT_TRUE(deq.StillBlockedAfter(50));
  std::vector<Tensor> out;
  ASSERT_TRUE(s->Run(One(5, 6, 7), {}, {"enq"}, &out).ok());
  ASSERT_TRUE(deq.Wait().ok());
  EXPECT_EQ(Floats(deq.out[0]), (std::vector<float>{5, 6}));
  EXPECT_EQ(deq.out[1].scalar<int32_t>(), 7);
}

TEST(FIFOQueueTest, EnqueueWaitsWhileFullAndEnqueueManyFillsInParts) {
  auto s = NewSession(QueueGraph(2));
  std::vector<Tensor> out;
  ASSERT_TRUE(s->Run(One(1, 1, 1), {}, {"enq"}, &out).ok());
  // Three elements into one free slot: one goes in now, the rest as dequeues make room.
  Feeds many{{"x", Tensor::FromVector<float>({2, 2, 3, 3, 4, 4}, TensorShape({3, 2}))},
             {"i", Tensor::FromVector<int32_t>({2, 3, 4}, TensorShape({3}))}};
  Pending enq(s.get(), many, {}, {"enq_many"});
  // Wait for the first element to go in (the step's thread may start late on a loaded
  // machine), then the queue stays full and the enqueue waits.
  ASSERT_TRUE(test::PollUntil([&] { return Size(s.get()) == 2; })) << Size(s.get());
  EXPECT_TRUE(enq.StillBlockedAfter(50));
  EXPECT_EQ(Size(s.get()), 2);
  std::vector<int32_t> got;
  for (int k = 0; k < 2; ++k) {
    ASSERT_TRUE(s->Run({}, {"deq:1"}, {}, &out).ok());
    got.push_back(out[0].scalar<int32_t>());
  }
  ASSERT_TRUE(enq.Wait().ok());
  for (int k = 0; k < 2; ++k) {
    ASSERT_TRUE(s->Run({}, {"deq:1"}, {}, &out).ok());
    got.push_back(out[0].scalar<int32_t>());
  }
  EXPECT_EQ(got, (std::vector<int32_t>{1, 2, 3, 4}));
}

TEST(FIFOQueueTest, CloseFailsLaterEnqueuesAndDrainsThenEndsDequeues) {
  auto s = NewSession(QueueGraph(-1));
  std::vector<Tensor> out;
  ASSERT_TRUE(s->Run(One(1, 2, 3), {}, {"enq"}, &out).ok());
  Pending waiting_many(s.get(), {}, {"deq_many:0"}, {});  // takes the one element, waits
  ASSERT_TRUE(test::PollUntil([&] { return Size(s.get()) == 0; })) << Size(s.get());
  EXPECT_TRUE(waiting_many.StillBlockedAfter(50));
  ASSERT_TRUE(s->Run({}, {}, {"close"}, &out).ok());
  Status st = waiting_many.Wait();
  EXPECT_EQ(st.code(), absl::StatusCode::kOutOfRange) << st;
  EXPECT_TRUE(HasText(st, "is closed and has insufficient elements (requested 2, current size 1)"))
      << st;
  // The element it had taken went back; a single dequeue still gets it, then OUT_OF_RANGE.
  EXPECT_EQ(Size(s.get()), 1);
  ASSERT_TRUE(s->Run({}, {"deq:1"}, {}, &out).ok());
  EXPECT_EQ(out[0].scalar<int32_t>(), 3);
  EXPECT_EQ(s->Run({}, {"deq:1"}, {}, &out).code(), absl::StatusCode::kOutOfRange);
  st = s->Run(One(1, 2, 3), {}, {"enq"}, &out);
  EXPECT_EQ(st.code(), absl::StatusCode::kCancelled) << st;
  EXPECT_TRUE(HasText(st, "FIFOQueue 'q' is closed.")) << st;
  // Closing it again is CANCELLED, as in TF.
  st = s->Run({}, {}, {"close"}, &out);
  EXPECT_EQ(st.code(), absl::StatusCode::kCancelled) << st;
  EXPECT_TRUE(HasText(st, "Queue 'q' is already closed.")) << st;
}

TEST(FIFOQueueTest, CloseWithCancelPendingEnqueuesFailsTheBlockedEnqueue) {
  auto s = NewSession(QueueGraph(1));
  std::vector<Tensor> out;
  ASSERT_TRUE(s->Run(One(1, 2, 3), {}, {"enq"}, &out).ok());
  Pending blocked(s.get(), One(4, 5, 6), {}, {"enq"});
  EXPECT_TRUE(blocked.StillBlockedAfter(50));
  ASSERT_TRUE(s->Run({}, {}, {"close_cancel"}, &out).ok());
  EXPECT_EQ(blocked.Wait().code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(Size(s.get()), 1);
}

TEST(FIFOQueueTest, BlockedDequeueEndsWhenTheStepTimesOutAndPutsBackWhatItTook) {
  auto s = NewSession(QueueGraph(-1));
  std::vector<Tensor> out;
  ASSERT_TRUE(s->Run(One(1, 2, 3), {}, {"enq"}, &out).ok());
  Status st = RunWithTimeout(s.get(), {}, {"deq_many:0"}, {}, &out, 100);
  EXPECT_EQ(st.code(), absl::StatusCode::kDeadlineExceeded) << st;
  EXPECT_EQ(Size(s.get()), 1);  // the element taken by the cancelled DequeueMany is back
  st = RunWithTimeout(s.get(), {}, {"deq:1"}, {}, &out, 60000);  // an element is there
  ASSERT_TRUE(st.ok()) << st;
  EXPECT_EQ(out[0].scalar<int32_t>(), 3);
  // An empty queue: the plain dequeue is cancelled too, and the queue works afterwards.
  EXPECT_EQ(RunWithTimeout(s.get(), {}, {"deq:1"}, {}, &out, 50).code(),
            absl::StatusCode::kDeadlineExceeded);
  ASSERT_TRUE(s->Run(One(1, 2, 9), {}, {"enq"}, &out).ok());
  ASSERT_TRUE(s->Run({}, {"deq:1"}, {}, &out).ok());
  EXPECT_EQ(out[0].scalar<int32_t>(), 9);
}

TEST(FIFOQueueTest, BlockedDequeueEndsWhenAnotherNodeOfTheStepFails) {
  GraphDef g = QueueGraph(-1);
  AddPlaceholder(&g, "unfed", DT_FLOAT);
  auto s = NewSession(g);
  std::vector<Tensor> out;
  // The unfed placeholder fails the step; the step's dequeue must not keep it waiting.
  Status st = RunWithTimeout(s.get(), {}, {"deq:0", "unfed:0"}, {}, &out, 10000);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
}

TEST(FIFOQueueTest, BlockedDequeueEndsWhenTheSessionCloses) {
  auto s = NewSession(QueueGraph(-1));
  Pending deq(s.get(), {}, {"deq:0"}, {});
  EXPECT_TRUE(deq.StillBlockedAfter(50));
  ASSERT_TRUE(s->Close().ok());
  EXPECT_EQ(deq.Wait().code(), absl::StatusCode::kCancelled);
}

// Producers and consumers racing on a small queue (every enqueue and dequeue waits at times):
// every element comes out exactly once, and each producer's elements in its order.
TEST(FIFOQueueTest, ConcurrentProducersAndConsumersLoseNothing) {
  auto s = NewSession(QueueGraph(3));
  constexpr int kThreads = 4, kEach = 150;
  std::vector<std::thread> threads;
  std::vector<std::vector<int32_t>> got(kThreads);
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::vector<Tensor> out;
      for (int k = 0; k < kEach; ++k) {
        if (!s->Run(One(t, k, t * 1000 + k), {}, {"enq"}, &out).ok()) failures++;
      }
    });
    threads.emplace_back([&, t] {
      std::vector<Tensor> out;
      for (int k = 0; k < kEach; ++k) {
        if (!s->Run({}, {"deq:1"}, {}, &out).ok()) {
          failures++;
          continue;
        }
        got[t].push_back(out[0].scalar<int32_t>());
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  std::vector<int32_t> all;
  for (int t = 0; t < kThreads; ++t) {
    // A consumer sees each producer's elements in the order they were enqueued.
    std::vector<int32_t> last(kThreads, -1);
    for (int32_t v : got[t]) {
      EXPECT_GT(v % 1000, last[v / 1000]) << v;
      last[v / 1000] = v % 1000;
    }
    all.insert(all.end(), got[t].begin(), got[t].end());
  }
  std::sort(all.begin(), all.end());
  std::vector<int32_t> want;
  for (int t = 0; t < kThreads; ++t) {
    for (int k = 0; k < kEach; ++k) want.push_back(t * 1000 + k);
  }
  EXPECT_EQ(all, want);
  EXPECT_EQ(Size(s.get()), 0);
}

TEST(FIFOQueueTest, BadInputIsInvalidArgumentNamingTheNode) {
  auto s = NewSession(QueueGraph(-1));
  std::vector<Tensor> out;
  Status st = s->Run({{"x", Vec2(1, 2)}, {"i", Tensor::FromVector<int32_t>({1, 2}, TensorShape({2}))}},
                     {}, {"enq"}, &out);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
  EXPECT_TRUE(HasText(st, "Shape mismatch in tuple component 1")) << st;
  EXPECT_TRUE(HasText(st, "enq")) << st;
  st = s->Run({{"x", Tensor::FromVector<float>({1, 2, 3, 4}, TensorShape({2, 2}))},
               {"i", Tensor::FromVector<int32_t>({1, 2, 3}, TensorShape({3}))}},
              {}, {"enq_many"}, &out);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
  EXPECT_TRUE(HasText(st, "same dimension 0")) << st;
  st = s->Run({{"x", Vec2(1, 2)}, {"i", Tensor::Scalar<int32_t>(1)}}, {}, {"enq_many"}, &out);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
  EXPECT_EQ(Size(s.get()), 0);  // nothing half-enqueued

  // A node whose component types differ from the queue's.
  GraphDef g = QueueGraph(-1);
  AddNodeAttr("component_types", std::vector<DataType>{DT_FLOAT},
              AddOp(&g, "deq_wrong", "QueueDequeueV2", {"q"}));
  NodeDef* q2 = AddOp(&g, "q2", "FIFOQueueV2");
  AddNodeAttr("component_types", std::vector<DataType>{DT_INT32}, q2);
  AddNodeAttr("shared_name", std::string("q"), q2);
  AddOp(&g, "size2", "QueueSizeV2", {"q2"});
  AddConstNode(&g, "minus", Tensor::Scalar<int32_t>(-1));
  AddNodeAttr("component_types", std::vector<DataType>{DT_FLOAT, DT_INT32},
              AddOp(&g, "deq_neg", "QueueDequeueManyV2", {"q", "minus"}));
  s = NewSession(g);
  ASSERT_TRUE(s->Run({}, {"size:0"}, {}, &out).ok());  // creates q
  st = s->Run({}, {"deq_wrong:0"}, {}, &out);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
  st = s->Run({}, {"size2:0"}, {}, &out);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
  EXPECT_TRUE(HasText(st, "Shared queue 'q' has component types")) << st;
  st = s->Run({}, {"deq_neg:0"}, {}, &out);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;

  // DequeueMany needs the shapes; capacity 0 is refused.
  s = NewSession(QueueGraph(-1, /*unshaped=*/true));
  st = s->Run({}, {"deq_many:0"}, {}, &out);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
  EXPECT_TRUE(HasText(st, "requires the components to have specified shapes")) << st;
  s = NewSession(QueueGraph(0));
  st = s->Run({}, {"size:0"}, {}, &out);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
  EXPECT_TRUE(HasText(st, "capacity must be -1 (unbounded) or positive")) << st;
}

}  // namespace
}  // namespace tensorflux
