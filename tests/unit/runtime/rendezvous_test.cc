// Rendezvous keys (TF's CreateKey/ParseKey format) and LocalRendezvous: send before and after
// recv, zero-copy, a device without copies, deadness, duplicates, abort, cancellation, blocking
// Recv with a timeout, destruction with a pending receiver, and many threads at once.
#include "tensorflux/runtime/rendezvous.h"

#include <atomic>
#include <optional>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "tensorflux/devices/device.h"

namespace tensorflux {
namespace {

constexpr char kDev0[] = "/job:localhost/replica:0/task:0/device:CPU:0";
constexpr char kDev1[] = "/job:localhost/replica:0/task:0/device:CPU:1";

Rendezvous::ParsedKey Key(const std::string& name) {
  auto k = Rendezvous::ParseKey(Rendezvous::CreateKey(kDev0, 0x2a, kDev1, name, {}));
  EXPECT_TRUE(k.ok()) << k.status();
  return *k;
}

// What a RecvAsync callback saw.
struct Received {
  bool called = false;
  Status status;
  Tensor value;
  bool is_dead = false;
};

Rendezvous::DoneCallback Into(Received* r) {
  return [r](const Status& s, const Rendezvous::Args&, const Rendezvous::Args&, const Tensor& t,
             bool dead) {
    r->called = true;
    r->status = s;
    r->value = t;
    r->is_dead = dead;
  };
}

Tensor Scalar(float v) { return Tensor::FromVector<float>({v}, TensorShape({})); }

// A device with its own memory and no copy functions (Device's UNIMPLEMENTED defaults); the
// copies themselves are tested in device_copy_test.cc.
class FakeGpu : public Device {
 public:
  FakeGpu() : Device("/job:localhost/replica:0/task:0/device:GPU:0", 0, "") {}
  Allocator* GetAllocator() override { return cpu_allocator(); }
  bool tensors_in_host_memory() const override { return false; }
};

TEST(RendezvousKeyTest, CreateKeyIsTfFormat) {
  EXPECT_EQ(Rendezvous::CreateKey(kDev0, 0x2a, kDev1, "edge_7_a", {}),
            std::string(kDev0) + ";000000000000002a;" + kDev1 + ";edge_7_a;0:0");
  EXPECT_EQ(Rendezvous::CreateKey("/d:0", ~uint64_t{0}, "/d:1", "t", {3, 12}),
            "/d:0;ffffffffffffffff;/d:1;t;3:12");
}

TEST(RendezvousKeyTest, ParseKeyRoundTrip) {
  const std::string key = Rendezvous::CreateKey(kDev0, 0xfedcba9876543210ull, kDev1, "x:0",
                                                {2, 5});
  auto p = Rendezvous::ParseKey(key);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->full_key, key);
  EXPECT_EQ(p->src_device, kDev0);
  EXPECT_EQ(p->src_incarnation, 0xfedcba9876543210ull);
  EXPECT_EQ(p->dst_device, kDev1);
  EXPECT_EQ(p->edge_name, "x:0");
  EXPECT_EQ(p->frame_iter.frame_id, 2);
  EXPECT_EQ(p->frame_iter.iter_id, 5);
}

TEST(RendezvousKeyTest, ParseKeyRejectsMalformedKeys) {
  for (const char* bad : {"", "/a;1;/b;t", "/a;1;/b;t;0:0;extra", "a;1;/b;t;0:0",
                          "/a;1;b;t;0:0", "/a;xyz;/b;t;0:0", "/a;;/b;t;0:0",
                          "/a;11112222333344445;/b;t;0:0", "/a;1;/b;;0:0", "/a;1;/b;t;0",
                          "/a;1;/b;t;0:x", "/a;1;/b;t;:"}) {
    auto p = Rendezvous::ParseKey(bad);
    ASSERT_FALSE(p.ok()) << bad;
    EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(std::string(p.status().message()).find("Invalid rendezvous key"),
              std::string::npos);
  }
}

TEST(LocalRendezvousTest, SendThenRecvSharesTheBuffer) {
  LocalRendezvous r;
  Tensor big(DT_FLOAT, TensorShape({1 << 16}));
  big.flat<float>()[123] = 4.5f;
  ASSERT_TRUE(r.Send(Key("a"), {}, big, false).ok());
  Received got;
  r.RecvAsync(Key("a"), {}, Into(&got));  // already sent: called before returning
  ASSERT_TRUE(got.called);
  ASSERT_TRUE(got.status.ok()) << got.status;
  EXPECT_FALSE(got.is_dead);
  EXPECT_TRUE(got.value.SharesBufferWith(big));
  EXPECT_EQ(got.value.data<float>(), big.data<float>());
  EXPECT_EQ(got.value.flat<float>()[123], 4.5f);
}

TEST(LocalRendezvousTest, RecvThenSendCarriesDeadness) {
  LocalRendezvous r;
  Received got;
  r.RecvAsync(Key("a"), {}, Into(&got));
  EXPECT_FALSE(got.called);
  Tensor v = Scalar(3.0f);
  ASSERT_TRUE(r.Send(Key("a"), {}, v, /*is_dead=*/true).ok());
  ASSERT_TRUE(got.called);
  ASSERT_TRUE(got.status.ok());
  EXPECT_TRUE(got.is_dead);
  EXPECT_TRUE(got.value.SharesBufferWith(v));
}

TEST(LocalRendezvousTest, KeysAreIndependent) {
  LocalRendezvous r;
  Received a, b;
  r.RecvAsync(Key("a"), {}, Into(&a));
  ASSERT_TRUE(r.Send(Key("b"), {}, Scalar(2.0f), false).ok());
  EXPECT_FALSE(a.called);
  r.RecvAsync(Key("b"), {}, Into(&b));
  ASSERT_TRUE(b.called);
  EXPECT_EQ(b.value.scalar<float>(), 2.0f);
  // Same name, other incarnation: another key.
  auto other = Rendezvous::ParseKey(Rendezvous::CreateKey(kDev0, 0x2b, kDev1, "a", {}));
  ASSERT_TRUE(r.Send(*other, {}, Scalar(9.0f), false).ok());
  EXPECT_FALSE(a.called);
  ASSERT_TRUE(r.Send(Key("a"), {}, Scalar(1.0f), false).ok());
  ASSERT_TRUE(a.called);
  EXPECT_EQ(a.value.scalar<float>(), 1.0f);
}

TEST(LocalRendezvousTest, DuplicateSendAndRecvAreAborted) {
  LocalRendezvous r;
  ASSERT_TRUE(r.Send(Key("a"), {}, Scalar(1.0f), false).ok());
  Status s = r.Send(Key("a"), {}, Scalar(2.0f), false);
  EXPECT_EQ(s.code(), absl::StatusCode::kAborted);
  EXPECT_NE(std::string(s.message()).find("Duplicated send"), std::string::npos);
  Received first, second;
  r.RecvAsync(Key("b"), {}, Into(&first));
  r.RecvAsync(Key("b"), {}, Into(&second));
  ASSERT_TRUE(second.called);
  EXPECT_EQ(second.status.code(), absl::StatusCode::kAborted);
  EXPECT_FALSE(first.called);
  ASSERT_TRUE(r.Send(Key("b"), {}, Scalar(5.0f), false).ok());
  EXPECT_TRUE(first.called);
  EXPECT_EQ(first.value.scalar<float>(), 5.0f);
}

TEST(LocalRendezvousTest, AbortFailsPendingAndLaterCalls) {
  LocalRendezvous r;
  Received pending1, pending2;
  r.RecvAsync(Key("a"), {}, Into(&pending1));
  r.RecvAsync(Key("b"), {}, Into(&pending2));
  ASSERT_TRUE(r.Send(Key("c"), {}, Scalar(1.0f), false).ok());
  const Status why = errors::InvalidArgument("{{node bad}} (op Fail): boom");
  r.StartAbort(why);
  for (Received* p : {&pending1, &pending2}) {
    ASSERT_TRUE(p->called);
    EXPECT_EQ(p->status, why);
  }
  EXPECT_EQ(r.Send(Key("d"), {}, Scalar(1.0f), false), why);
  Received later;  // even a key that was sent before the abort
  r.RecvAsync(Key("c"), {}, Into(&later));
  ASSERT_TRUE(later.called);
  EXPECT_EQ(later.status, why);
  r.StartAbort(errors::Cancelled("second"));  // the first status sticks
  EXPECT_EQ(r.abort_status(), why);
}

TEST(LocalRendezvousTest, CancellingAPendingRecv) {
  LocalRendezvous r;
  CancellationManager cm;
  Rendezvous::Args args;
  args.cancellation_manager = &cm;
  Received got, other;
  r.RecvAsync(Key("a"), args, Into(&got));
  r.RecvAsync(Key("b"), {}, Into(&other));  // no manager: not cancelled
  cm.StartCancel();
  ASSERT_TRUE(got.called);
  EXPECT_EQ(got.status.code(), absl::StatusCode::kCancelled);
  EXPECT_FALSE(other.called);
  // The key is free again; a late send waits for a new receiver.
  ASSERT_TRUE(r.Send(Key("a"), {}, Scalar(1.0f), false).ok());
  Received again;
  r.RecvAsync(Key("a"), args, Into(&again));  // value present: delivered despite the manager
  ASSERT_TRUE(again.called);
  EXPECT_TRUE(again.status.ok());
  Received after;
  r.RecvAsync(Key("c"), args, Into(&after));  // already cancelled: fails at once
  ASSERT_TRUE(after.called);
  EXPECT_EQ(after.status.code(), absl::StatusCode::kCancelled);
}

TEST(LocalRendezvousTest, DeliveredRecvIsDeregistered) {
  LocalRendezvous r;
  CancellationManager cm;
  Rendezvous::Args args;
  args.cancellation_manager = &cm;
  Received got;
  int calls = 0;
  r.RecvAsync(Key("a"), args, [&](const Status& s, const Rendezvous::Args&,
                                  const Rendezvous::Args&, const Tensor& t, bool dead) {
    ++calls;
    Into(&got)(s, {}, {}, t, dead);
  });
  ASSERT_TRUE(r.Send(Key("a"), {}, Scalar(7.0f), false).ok());
  cm.StartCancel();  // must not call the callback a second time
  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(got.status.ok());
}

TEST(LocalRendezvousTest, BlockingRecvWithTimeout) {
  LocalRendezvous r;
  Tensor t;
  bool dead = true;
  Status s = r.Recv(Key("late"), {}, &t, &dead, /*timeout_ms=*/20);
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_NE(std::string(s.message()).find(";late;0:0"), std::string::npos) << s;
  std::thread sender([&] { EXPECT_TRUE(r.Send(Key("x"), {}, Scalar(6.0f), false).ok()); });
  ASSERT_TRUE(r.Recv(Key("x"), {}, &t, &dead).ok());
  sender.join();
  EXPECT_EQ(t.scalar<float>(), 6.0f);
  EXPECT_FALSE(dead);
  // The timed-out receiver is still registered; a late send must not crash.
  EXPECT_TRUE(r.Send(Key("late"), {}, Scalar(1.0f), false).ok());
}

TEST(LocalRendezvousTest, DestructionAbortsPendingReceivers) {
  Received got;
  {
    LocalRendezvous r;
    r.RecvAsync(Key("a"), {}, Into(&got));
  }
  ASSERT_TRUE(got.called);
  EXPECT_EQ(got.status.code(), absl::StatusCode::kAborted);
}

TEST(LocalRendezvousTest, CancelAfterDestructionIsSafe) {
  CancellationManager cm;
  Rendezvous::Args args;
  args.cancellation_manager = &cm;
  int calls = 0;
  {
    LocalRendezvous r;
    r.RecvAsync(Key("a"), args, [&](const Status&, const Rendezvous::Args&,
                                    const Rendezvous::Args&, const Tensor&, bool) { ++calls; });
  }
  cm.StartCancel();
  EXPECT_EQ(calls, 1);  // only the destruction's ABORTED
}

TEST(LocalRendezvousTest, DeviceWithoutCopiesIsUnimplemented) {
  LocalRendezvous r;
  FakeGpu gpu;
  Rendezvous::Args on_gpu;
  on_gpu.device = &gpu;
  ASSERT_TRUE(r.Send(Key("a"), {}, Scalar(1.0f), false).ok());
  Received got;
  r.RecvAsync(Key("a"), on_gpu, Into(&got));
  ASSERT_TRUE(got.called);
  EXPECT_EQ(got.status.code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(std::string(got.status.message()).find("GPU:0"), std::string::npos);
}

TEST(LocalRendezvousTest, ManyThreads) {
  LocalRendezvous r;
  constexpr int kThreads = 4, kKeys = 200;
  std::atomic<int> ok{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    // Even threads send keys t*kKeys.., odd threads receive the keys of thread t-1.
    threads.emplace_back([&, t] {
      const int base = (t / 2) * kKeys;
      for (int k = 0; k < kKeys; ++k) {
        const auto key = Key("k" + std::to_string(base + k));
        if (t % 2 == 0) {
          EXPECT_TRUE(r.Send(key, {}, Scalar(static_cast<float>(base + k)), false).ok());
        } else {
          r.RecvAsync(key, {}, [&ok, v = base + k](const Status& s, const Rendezvous::Args&,
                                                    const Rendezvous::Args&, const Tensor& x,
                                                    bool) {
            if (s.ok() && x.scalar<float>() == static_cast<float>(v)) ok.fetch_add(1);
          });
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(ok.load(), kThreads / 2 * kKeys);
}

}  // namespace
}  // namespace tensorflux
