// Kernel-private: a resource whose ops may have to wait (FIFOQueueV2, ConditionalAccumulator),
// in TF's style of queued attempts rather than blocked threads.
//
// A kernel that may wait (an AsyncOpKernel: enqueue into a full queue, dequeue from an empty
// one, take from an accumulator without enough gradients) calls Run(ctx, done, list, attempt).
// The attempt runs under the resource's lock and says whether it finished (its status and
// outputs set on ctx), made progress without finishing (an EnqueueMany that enqueued part of
// its elements), or is blocked. A blocked attempt is queued on its list (attempts of one list
// run in arrival order: the first blocked one holds back the later ones) and is tried again
// after every change of the resource (Flush). No thread waits: the kernel's `done` runs when the
// attempt finishes, on the step's runner (the inter-op pool) when another thread finished it.
//
// Cancellation: a queued attempt registers with its step's CancellationManager; when the step is
// cancelled or aborted (an error elsewhere in the step, Session::Close, a timeout) the attempt
// leaves its list, its `on_cancel` undoes any partial work, and the kernel ends with CANCELLED.
// Every queued attempt is eventually finished exactly once: by a Flush, by its step's
// cancellation, by the owner failing it (a queue's close), or by the resource's destruction
// (Session::Close drops the device's resources). Attempt functions may capture the resource's
// raw `this`: they live inside it.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "tensorflux/framework/op_kernel.h"
#include "tensorflux/framework/resource_mgr.h"

namespace tensorflux {

class BlockingResource : public ResourceBase,
                         public std::enable_shared_from_this<BlockingResource> {
 public:
  enum class Progress { kFinished, kProgressed, kBlocked };
  using DoneCallback = AsyncOpKernel::DoneCallback;
  // Runs under mu_. kFinished: the attempt set ctx's outputs or status.
  using AttemptFn = std::function<Progress(OpKernelContext* ctx)>;
  // Runs under mu_ when a queued attempt is cancelled (undo partial work).
  using CancelFn = std::function<void()>;

  explicit BlockingResource(int num_lists) : lists_(static_cast<size_t>(num_lists)) {}
  // Fails the attempts still queued (CANCELLED): a dropped resource never strands a step.
  ~BlockingResource() override;

  // Runs `attempt` now, or queues it on `list` when it blocks (or when older attempts of that
  // list are waiting). `done` runs exactly once, after ctx's outputs/status are set.
  void Run(OpKernelContext* ctx, DoneCallback done, int list, AttemptFn attempt,
           CancelFn on_cancel = nullptr);

 protected:
  // Retries the queued attempts after a state change, under mu_: the finished ones are moved
  // to *finished, to be completed with Complete() after mu_ is released.
  struct Attempt {
    int64_t id = 0;
    OpKernelContext* ctx = nullptr;
    DoneCallback done;
    AttemptFn run;
    CancelFn on_cancel;
    std::function<void(std::function<void()>)>* runner = nullptr;
  };
  void FlushLocked(std::vector<Attempt>* finished);
  // Fails every queued attempt of `list` with `status` (under mu_), e.g. on Close.
  void FailListLocked(int list, const Status& status, std::vector<Attempt>* finished);
  // Calls each attempt's done on its step's runner (mu_ not held).
  static void Complete(std::vector<Attempt>* finished);

  std::mutex mu_;

 private:
  void Cancel(int64_t id);
  // Removes queued attempt `id` (undoing its partial work) into *finished as CANCELLED; false
  // when it is no longer queued.
  bool CancelLocked(int64_t id, std::vector<Attempt>* finished);

  std::vector<std::deque<Attempt>> lists_;
  int64_t next_id_ = 0;
};

// The creating kernel of a shared blocking resource (FIFOQueueV2, ConditionalAccumulator):
// looks up (container, name) in the kernel's device's ResourceMgr, creating it with make(name)
// when missing, checks that an existing one matches this node's spec (matches: INVALID_ARGUMENT
// otherwise) and sets output 0 to the resource's handle.
template <typename T>
void CreateResourceAndOutputHandle(OpKernelContext* ctx, const std::string& container,
                                   const std::string& name,
                                   const std::function<std::shared_ptr<T>(const std::string&)>& make,
                                   const std::function<Status(const T&)>& matches) {
  const ResourceHandle h = MakeResourceHandle<T>(ctx, container, name);
  auto rm = GetResourceMgr(ctx);
  OP_REQUIRES_OK(ctx, rm.status());
  auto made = (*rm)->template LookupOrCreate<T>(
      h.container, h.name, [&] { return StatusOr<std::shared_ptr<T>>(make(h.name)); });
  OP_REQUIRES_OK(ctx, made.status());
  OP_REQUIRES_OK(ctx, matches(**made));
  ctx->set_output(0, Tensor::Scalar<ResourceHandle>(h));
}

}  // namespace tensorflux
