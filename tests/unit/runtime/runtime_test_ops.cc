// Test-only ops and kernels (see runtime_test_ops.h).
#include "runtime_test_ops.h"

#include <chrono>
#include <thread>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "poll_util.h"
#include "tensorflux/core/allocation_tracker.h"
#include "tensorflux/core/allocator.h"
#include "tensorflux/framework/cancellation.h"
#include "tensorflux/framework/op.h"
#include "tensorflux/framework/op_kernel.h"

namespace tensorflux {
namespace rt_test {

std::atomic<int64_t> g_probe_bytes{0};
std::atomic<int> g_ref_one{0};
std::atomic<int> g_ref_many{0};
std::atomic<int> g_barrier_arrived{0};
std::atomic<int> g_cancel_waiters{0};

namespace {
absl::Mutex g_count_mu(absl::kConstInit);
absl::flat_hash_map<std::string, int>& Counts() {
  static auto* m = new absl::flat_hash_map<std::string, int>;
  return *m;
}
}  // namespace

int CountOf(const std::string& name) {
  absl::MutexLock l(&g_count_mu);
  auto it = Counts().find(name);
  return it == Counts().end() ? 0 : it->second;
}

void ResetCounts() {
  absl::MutexLock l(&g_count_mu);
  Counts().clear();
}

namespace {
absl::Mutex g_threads_mu(absl::kConstInit);
std::set<std::thread::id>& ThreadSet() {
  static auto* s = new std::set<std::thread::id>;
  return *s;
}
}  // namespace

std::set<std::thread::id> ThreadsSeen() {
  absl::MutexLock l(&g_threads_mu);
  return ThreadSet();
}

void ResetThreadsSeen() {
  absl::MutexLock l(&g_threads_mu);
  ThreadSet().clear();
}

namespace {

REGISTER_OP("TxRtTestConst").Output("y: float").Attr("value: float");
REGISTER_OP("TxRtTestAdd").Input("a: float").Input("b: float").Output("sum: float");
REGISTER_OP("TxRtTestFail").Input("x: float").Output("y: float");
REGISTER_OP("TxRtTestSleep").Input("x: float").Output("y: float").Attr("ms: int = 1");
REGISTER_OP("TxRtTestCount").Input("x: float").Output("y: float");
REGISTER_OP("TxRtTestBig").Output("y: float").Attr("n: int");
REGISTER_OP("TxRtTestSum").Input("x: float").Output("y: float");
REGISTER_OP("TxRtTestProbe").Input("x: float").Output("y: float");
REGISTER_OP("TxRtTestRefCheck").Input("x: float").Output("y: float");
REGISTER_OP("TxRtTestNoOutput").Output("y: float");
REGISTER_OP("TxRtTestAsyncAddOne")
    .Input("x: float")
    .Output("y: float")
    .Attr("on_thread: bool = false");
REGISTER_OP("TxRtTestBarrier").Input("x: float").Output("y: float").Attr("n: int");
REGISTER_OP("TxRtTestNoKernel").Output("y: float");
REGISTER_OP("TxRtTestThreadId").Input("x: float").Output("y: float");
REGISTER_OP("TxRtTestWaitForCancel").Input("x: float").Output("y: float");

class ConstOp : public OpKernel {
 public:
  explicit ConstOp(OpKernelConstruction* c) : OpKernel(c) {
    set_expensive(false);
    c->SetStatus(c->GetAttr("value", &value_));
  }
  void Compute(OpKernelContext* ctx) override { ctx->set_output(0, Tensor::Scalar<float>(value_)); }

 private:
  float value_ = 0;
};

class AddOp : public OpKernel {
 public:
  explicit AddOp(OpKernelConstruction* c) : OpKernel(c) { set_expensive(false); }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& a = ctx->input(0);
    const Tensor& b = ctx->input(1);
    OP_REQUIRES(ctx, b.NumElements() == 1 || b.NumElements() == a.NumElements(),
                errors::InvalidArgument("TxRtTestAdd: sizes ", a.NumElements(), " and ",
                                        b.NumElements()));
    const float* pa = a.data<float>();
    const float* pb = b.data<float>();
    const bool b_scalar = b.NumElements() == 1;
    const int64_t n = a.NumElements();
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output({0}, 0, a.shape(), &out));
    float* po = out->data<float>();
    for (int64_t i = 0; i < n; ++i) po[i] = pa[i] + (b_scalar ? pb[0] : pb[i]);
  }
};

class FailOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    ctx->SetStatus(errors::InvalidArgument("TxRtTestFail failed as asked"));
  }
};

class SleepOp : public OpKernel {
 public:
  explicit SleepOp(OpKernelConstruction* c) : OpKernel(c) { c->SetStatus(c->GetAttr("ms", &ms_)); }
  void Compute(OpKernelContext* ctx) override {
    std::this_thread::sleep_for(std::chrono::milliseconds(ms_));
    ctx->set_output(0, ctx->input(0));
  }

 private:
  int64_t ms_ = 1;
};

class CountOp : public OpKernel {
 public:
  explicit CountOp(OpKernelConstruction* c) : OpKernel(c) { set_expensive(false); }
  void Compute(OpKernelContext* ctx) override {
    {
      absl::MutexLock l(&g_count_mu);
      ++Counts()[name()];
    }
    ctx->set_output(0, ctx->input(0));
  }
};

class BigOp : public OpKernel {
 public:
  explicit BigOp(OpKernelConstruction* c) : OpKernel(c) {
    set_expensive(false);
    c->SetStatus(c->GetAttr("n", &n_));
  }
  void Compute(OpKernelContext* ctx) override {
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({n_}), &out));
    float* p = out->data<float>();
    for (int64_t i = 0; i < n_; ++i) p[i] = 1.0f;
  }

 private:
  int64_t n_ = 0;
};

class SumOp : public OpKernel {
 public:
  explicit SumOp(OpKernelConstruction* c) : OpKernel(c) { set_expensive(false); }
  void Compute(OpKernelContext* ctx) override {
    double s = 0;
    for (float v : ctx->input(0).flat<float>()) s += v;
    ctx->set_output(0, Tensor::Scalar<float>(static_cast<float>(s)));
  }
};

class ProbeOp : public OpKernel {
 public:
  explicit ProbeOp(OpKernelConstruction* c) : OpKernel(c) { set_expensive(false); }
  void Compute(OpKernelContext* ctx) override {
    g_probe_bytes.store(cpu_allocator()->GetStats().bytes_in_use);
    ctx->set_output(0, ctx->input(0));
  }
};

class RefCheckOp : public OpKernel {
 public:
  explicit RefCheckOp(OpKernelConstruction* c) : OpKernel(c) { set_expensive(false); }
  void Compute(OpKernelContext* ctx) override {
    (ctx->input(0).RefCountIsOne() ? g_ref_one : g_ref_many).fetch_add(1);
    ctx->set_output(0, Tensor::Scalar<float>(0.0f));
  }
};

class NoOutputOp : public OpKernel {
 public:
  explicit NoOutputOp(OpKernelConstruction* c) : OpKernel(c) { set_expensive(false); }
  void Compute(OpKernelContext* ctx) override {}
};

class AsyncAddOneOp : public AsyncOpKernel {
 public:
  explicit AsyncAddOneOp(OpKernelConstruction* c) : AsyncOpKernel(c) {
    c->SetStatus(c->GetAttr("on_thread", &on_thread_));
  }
  void ComputeAsync(OpKernelContext* ctx, DoneCallback done) override {
    auto work = [ctx, done = std::move(done)] {
      Tensor* out = nullptr;
      OP_REQUIRES_OK_ASYNC(ctx, ctx->allocate_output(0, ctx->input(0).shape(), &out), done);
      for (int64_t i = 0; i < out->NumElements(); ++i) {
        out->data<float>()[i] = ctx->input(0).data<float>()[i] + 1.0f;
      }
      done();
    };
    if (!on_thread_) {
      work();
      return;
    }
    // Bound to the node's allocation tracker, so the output counts in its step stats.
    std::thread(BindAllocationTracker([work = std::move(work)] {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      work();
    })).detach();
  }

 private:
  bool on_thread_ = false;
};

class BarrierOp : public OpKernel {
 public:
  explicit BarrierOp(OpKernelConstruction* c) : OpKernel(c) { c->SetStatus(c->GetAttr("n", &n_)); }
  void Compute(OpKernelContext* ctx) override {
    g_barrier_arrived.fetch_add(1);
    OP_REQUIRES(ctx, test::PollUntil([this] { return g_barrier_arrived.load() >= n_; }),
                errors::DeadlineExceeded("barrier ", name(), " saw ", g_barrier_arrived.load(),
                                         " of ", n_, " kernels running at once"));
    ctx->set_output(0, ctx->input(0));
  }

 private:
  int64_t n_ = 0;
};

class ThreadIdOp : public OpKernel {
 public:
  explicit ThreadIdOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    {
      absl::MutexLock l(&g_threads_mu);
      ThreadSet().insert(std::this_thread::get_id());
    }
    ctx->set_output(0, ctx->input(0));
  }
};

// Returns (with its input) only once its step is cancelled, so a test need not guess how long
// a step must run for a cancellation or timeout to land in the middle of it.
class WaitForCancelOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    CancellationManager* cm = ctx->cancellation_manager();
    OP_REQUIRES(ctx, cm != nullptr, errors::Internal(name(), ": the step has no cancellation"));
    g_cancel_waiters.fetch_add(1);
    OP_REQUIRES(ctx, test::PollUntil([cm] { return cm->IsCancelled(); }),
                errors::Internal(name(), ": the step was never cancelled"));
    ctx->set_output(0, ctx->input(0));
  }
};

REGISTER_KERNEL_BUILDER(Name("TxRtTestBarrier").Device(DEVICE_CPU), BarrierOp);
REGISTER_KERNEL_BUILDER(Name("TxRtTestConst").Device(DEVICE_CPU), ConstOp);
REGISTER_KERNEL_BUILDER(Name("TxRtTestAdd").Device(DEVICE_CPU), AddOp);
REGISTER_KERNEL_BUILDER(Name("TxRtTestFail").Device(DEVICE_CPU), FailOp);
REGISTER_KERNEL_BUILDER(Name("TxRtTestSleep").Device(DEVICE_CPU), SleepOp);
REGISTER_KERNEL_BUILDER(Name("TxRtTestCount").Device(DEVICE_CPU), CountOp);
REGISTER_KERNEL_BUILDER(Name("TxRtTestBig").Device(DEVICE_CPU), BigOp);
REGISTER_KERNEL_BUILDER(Name("TxRtTestSum").Device(DEVICE_CPU), SumOp);
REGISTER_KERNEL_BUILDER(Name("TxRtTestProbe").Device(DEVICE_CPU), ProbeOp);
REGISTER_KERNEL_BUILDER(Name("TxRtTestRefCheck").Device(DEVICE_CPU), RefCheckOp);
REGISTER_KERNEL_BUILDER(Name("TxRtTestNoOutput").Device(DEVICE_CPU), NoOutputOp);
REGISTER_KERNEL_BUILDER(Name("TxRtTestAsyncAddOne").Device(DEVICE_CPU), AsyncAddOneOp);
REGISTER_KERNEL_BUILDER(Name("TxRtTestWaitForCancel").Device(DEVICE_CPU), WaitForCancelOp);
REGISTER_KERNEL_BUILDER(Name("TxRtTestThreadId").Device(DEVICE_CPU), ThreadIdOp);

}  // namespace
}  // namespace rt_test
}  // namespace tensorflux
