// FIFOQueueV2 and its ops (definitions and semantics: ops/data_flow_ops.cc). The queue is a
// BlockingResource (kernels/cpu/blocking_resource.h) with two attempt lists, enqueues and
// dequeues: a blocked op waits as a queued attempt, never as a blocked thread, and ends with
// CANCELLED when its step is cancelled or aborted.
//
// Elements are tuples of tensors. Enqueue keeps the input tensors (sharing their buffers: the
// queue's reference keeps a kernel from writing into them); EnqueueMany keeps the dim-0 slices
// of its inputs; DequeueMany copies its n elements into new stacked tensors. An EnqueueMany or
// DequeueMany that cannot finish at once makes partial progress, as TF's: an enqueue keeps the
// elements it already enqueued when cancelled; a dequeue puts the elements it took back at the
// front of the queue when it fails or is cancelled.
#include <algorithm>
#include <deque>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tensorflux/framework/op_kernel.h"
#include "tensorflux/framework/resource_mgr.h"
#include "tensorflux/kernels/cpu/array_copy.h"
#include "tensorflux/kernels/cpu/blocking_resource.h"

namespace tensorflux {
namespace {

using Tuple = std::vector<Tensor>;
using Progress = BlockingResource::Progress;

std::string ShapesString(const std::vector<TensorShape>& shapes) {
  std::string s = "[";
  for (size_t i = 0; i < shapes.size(); ++i) {
    absl::StrAppend(&s, i ? ", " : "", shapes[i].DebugString());
  }
  return s + "]";
}

std::string TypesString(const DataTypeVector& types) {
  std::string s = "[";
  for (size_t i = 0; i < types.size(); ++i) {
    absl::StrAppend(&s, i ? ", " : "", DataTypeString(types[i]));
  }
  return s + "]";
}

class FIFOQueue : public BlockingResource {
 public:
  static constexpr const char* kTypeName = "FIFOQueue";
  enum List { kEnqueue = 0, kDequeue = 1 };

  FIFOQueue(DataTypeVector types, std::vector<TensorShape> shapes, int64_t capacity,
            std::string name)
      : BlockingResource(2),
        types_(std::move(types)),
        shapes_(std::move(shapes)),
        capacity_(capacity),
        name_(std::move(name)) {}

  std::string DebugString() const override { return absl::StrCat("FIFOQueue '", name_, "'"); }
  const DataTypeVector& types() const { return types_; }
  const std::vector<TensorShape>& shapes() const { return shapes_; }
  int64_t capacity() const { return capacity_; }
  const std::string& name() const { return name_; }

  // A second node sharing this queue must describe it the same way.
  Status MatchesSpec(const DataTypeVector& types, const std::vector<TensorShape>& shapes,
                     int64_t capacity) const {
    if (types != types_) {
      return errors::InvalidArgument("Shared queue '", name_, "' has component types ",
                                     TypesString(types_), " but requested component types were ",
                                     TypesString(types));
    }
    if (shapes != shapes_) {
      return errors::InvalidArgument("Shared queue '", name_, "' has component shapes ",
                                     ShapesString(shapes_),
                                     " but requested component shapes were ",
                                     ShapesString(shapes));
    }
    if (capacity != capacity_) {
      return errors::InvalidArgument("Shared queue '", name_, "' has capacity ", capacity_,
                                     " but requested capacity was ", capacity);
    }
    return OkStatus();
  }

  // Enqueues `elements` (validated), blocking while full. An enqueue that finds the queue
  // closed when it first runs fails with CANCELLED; one already waiting when the queue is
  // closed keeps waiting unless the close cancels pending enqueues.
  void Enqueue(OpKernelContext* ctx, std::vector<Tuple> elements,
               AsyncOpKernel::DoneCallback done) {
    auto state = std::make_shared<std::pair<std::vector<Tuple>, size_t>>(std::move(elements), 0);
    auto first = std::make_shared<bool>(true);
    Run(ctx, std::move(done), kEnqueue, [this, state, first](OpKernelContext* c) {
      if (*first && closed_) {
        c->SetStatus(ClosedError());
        return Progress::kFinished;
      }
      *first = false;
      auto& [elems, next] = *state;
      const size_t before = next;
      while (next < elems.size() && (capacity_ < 0 || static_cast<int64_t>(queue_.size()) <
                                                          capacity_)) {
        queue_.push_back(std::move(elems[next++]));
      }
      if (next == elems.size()) return Progress::kFinished;
      return next > before ? Progress::kProgressed : Progress::kBlocked;
    });
  }

  // Dequeues n elements (n < 0: one element, its components output as they are; n >= 0: n
  // elements stacked along a new dim 0), blocking while there are too few.
  void Dequeue(OpKernelContext* ctx, int n, AsyncOpKernel::DoneCallback done) {
    auto taken = std::make_shared<std::vector<Tuple>>();
    const size_t need = n < 0 ? 1 : static_cast<size_t>(n);
    Run(
        ctx, std::move(done), kDequeue,
        [this, taken, need, n](OpKernelContext* c) {
          const size_t before = taken->size();
          while (taken->size() < need && !queue_.empty()) {
            taken->push_back(std::move(queue_.front()));
            queue_.pop_front();
          }
          if (taken->size() == need) {
            SetDequeueOutputs(c, n, taken.get());
            return Progress::kFinished;
          }
          if (closed_) {
            c->SetStatus(errors::OutOfRange(
                "FIFOQueue '", name_, "' is closed and has insufficient elements (requested ",
                need, ", current size ", queue_.size() + taken->size(), ")"));
            PutBack(taken.get());
            return Progress::kFinished;
          }
          return taken->size() > before ? Progress::kProgressed : Progress::kBlocked;
        },
        [this, taken] { PutBack(taken.get()); });
  }

  int64_t Size() {
    std::lock_guard<std::mutex> l(mu_);
    return static_cast<int64_t>(queue_.size());
  }

  // Closing a closed queue is CANCELLED ("Queue 'q' is already closed.", as TF), after
  // cancelling the pending enqueues when asked.
  Status Close(bool cancel_pending_enqueues) {
    std::vector<Attempt> finished;
    bool was_closed;
    {
      std::lock_guard<std::mutex> l(mu_);
      was_closed = closed_;
      closed_ = true;
      if (cancel_pending_enqueues) FailListLocked(kEnqueue, ClosedError(), &finished);
      FlushLocked(&finished);  // waiting dequeues now fail or drain what is left
    }
    Complete(&finished);
    if (was_closed) return errors::Cancelled("Queue '", name_, "' is already closed.");
    return OkStatus();
  }

 private:
  Status ClosedError() const {
    return errors::Cancelled("FIFOQueue '", name_, "' is closed.");
  }

  // mu_ held: the taken elements go back to the front, in order.
  void PutBack(std::vector<Tuple>* taken) {
    for (auto it = taken->rbegin(); it != taken->rend(); ++it) queue_.push_front(std::move(*it));
    taken->clear();
  }

  // mu_ held.
  void SetDequeueOutputs(OpKernelContext* c, int n, std::vector<Tuple>* taken) {
    if (n < 0) {
      for (size_t i = 0; i < types_.size(); ++i) c->set_output(static_cast<int>(i), (*taken)[0][i]);
      return;
    }
    for (size_t i = 0; i < types_.size(); ++i) {
      TensorShape shape = shapes_[i];
      shape.InsertDim(0, n);
      Tensor* out = nullptr;
      Status s = c->allocate_output(static_cast<int>(i), shape, &out);
      if (!s.ok()) {
        c->SetStatus(s);
        PutBack(taken);
        return;
      }
      const int64_t row = shapes_[i].num_elements();
      s = array_copy::VisitElementType(types_[i], "FIFOQueue", [&](auto tag) {
        using S = typename decltype(tag)::type;
        S* dst = array_copy::Elements<S>(*out);
        for (int j = 0; j < n; ++j) {
          std::copy_n(array_copy::Elements<S>((*taken)[static_cast<size_t>(j)][i]), row,
                      dst + j * row);
        }
        return OkStatus();
      });
      if (!s.ok()) {
        c->SetStatus(s);
        PutBack(taken);
        return;
      }
    }
    taken->clear();
  }

  const DataTypeVector types_;
  const std::vector<TensorShape> shapes_;  // empty: unconstrained
  const int64_t capacity_;                 // -1: unbounded
  const std::string name_;
  std::deque<Tuple> queue_;
  bool closed_ = false;
};

StatusOr<std::shared_ptr<FIFOQueue>> GetQueue(OpKernelContext* ctx) {
  TX_ASSIGN_OR_RETURN(HandleInput in, ResolveHandleInput(ctx, 0));
  return in.mgr->Lookup<FIFOQueue>(in.handle->container, in.handle->name);
}

// ---------------------------------------------------------------- FIFOQueueV2

class FIFOQueueOp : public OpKernel {
 public:
  explicit FIFOQueueOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    set_expensive(false);
    OP_REQUIRES_OK(ctx, ctx->GetAttr("component_types", &types_));
    std::vector<PartialTensorShape> shapes;
    OP_REQUIRES_OK(ctx, ctx->GetAttr("shapes", &shapes));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("capacity", &capacity_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("container", &container_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("shared_name", &name_));
    if (name_.empty()) name_ = ctx->def().name();
    OP_REQUIRES(ctx, capacity_ == -1 || capacity_ > 0,
                errors::InvalidArgument("capacity must be -1 (unbounded) or positive, got ",
                                        capacity_));
    OP_REQUIRES(ctx, shapes.empty() || shapes.size() == types_.size(),
                errors::InvalidArgument("shapes has ", shapes.size(), " entries for ",
                                        types_.size(), " component types"));
    for (const PartialTensorShape& p : shapes) {
      auto full = p.AsTensorShape();
      OP_REQUIRES(ctx, full.ok(),
                  errors::InvalidArgument("FIFOQueue component shapes must be fully defined, "
                                          "got ", p.DebugString()));
      shapes_.push_back(*full);
    }
  }

  void Compute(OpKernelContext* ctx) override {
    CreateResourceAndOutputHandle<FIFOQueue>(
        ctx, container_, name_,
        [this](const std::string& name) {
          return std::make_shared<FIFOQueue>(types_, shapes_, capacity_, name);
        },
        [this](const FIFOQueue& q) { return q.MatchesSpec(types_, shapes_, capacity_); });
  }

 private:
  DataTypeVector types_;
  std::vector<TensorShape> shapes_;
  int64_t capacity_ = -1;
  std::string container_, name_;
};

// ---------------------------------------------------------------- enqueue

class EnqueueOp : public AsyncOpKernel {
 public:
  explicit EnqueueOp(OpKernelConstruction* ctx) : AsyncOpKernel(ctx) {
    many_ = ctx->def().op() == "QueueEnqueueManyV2";
  }

  void ComputeAsync(OpKernelContext* ctx, DoneCallback done) override {
    auto queue = GetQueue(ctx);
    OP_REQUIRES_OK_ASYNC(ctx, queue.status(), done);
    std::vector<Tuple> elements;
    OP_REQUIRES_OK_ASYNC(ctx, Elements(ctx, **queue, &elements), done);
    (*queue)->Enqueue(ctx, std::move(elements), std::move(done));
  }

 private:
  // The inputs as validated elements: TF's component-count, dtype and shape checks.
  Status Elements(OpKernelContext* ctx, const FIFOQueue& q, std::vector<Tuple>* out) const {
    const int n = ctx->num_inputs() - 1;
    if (n != static_cast<int>(q.types().size())) {
      return errors::InvalidArgument("Expected ", q.types().size(), " components for ",
                                     q.DebugString(), ", got ", n);
    }
    int64_t count = 1;
    for (int i = 0; i < n; ++i) {
      const Tensor& t = ctx->input(i + 1);
      if (t.dtype() != q.types()[static_cast<size_t>(i)]) {
        return errors::InvalidArgument("Type mismatch in tuple component ", i, ". Expected ",
                                       DataTypeString(q.types()[static_cast<size_t>(i)]),
                                       ", got ", DataTypeString(t.dtype()));
      }
      if (many_) {
        if (t.dims() < 1) {
          return errors::InvalidArgument("EnqueueMany component ", i,
                                         " must have at least one dimension, got shape ",
                                         t.shape().DebugString());
        }
        if (i == 0) count = t.dim_size(0);
        if (t.dim_size(0) != count) {
          return errors::InvalidArgument(
              "EnqueueMany requires the same dimension 0 for every component: component 0 has ",
              count, ", component ", i, " has ", t.dim_size(0));
        }
      }
      if (!q.shapes().empty()) {
        TensorShape elem = t.shape();
        if (many_) elem.RemoveDim(0);
        if (elem != q.shapes()[static_cast<size_t>(i)]) {
          return errors::InvalidArgument(
              "Shape mismatch in tuple component ", i, ". Expected ",
              q.shapes()[static_cast<size_t>(i)].DebugString(), ", got ",
              many_ ? absl::StrCat("elements of shape ", elem.DebugString())
                    : t.shape().DebugString());
        }
      }
    }
    out->assign(static_cast<size_t>(count), Tuple(static_cast<size_t>(n)));
    for (int i = 0; i < n; ++i) {
      const Tensor& t = ctx->input(i + 1);
      if (!many_) {
        (*out)[0][static_cast<size_t>(i)] = t;
        continue;
      }
      TensorShape elem = t.shape();
      elem.RemoveDim(0);
      for (int64_t j = 0; j < count; ++j) {
        Tensor row;
        row.CopyFrom(t.Slice(j, j + 1), elem);
        (*out)[static_cast<size_t>(j)][static_cast<size_t>(i)] = std::move(row);
      }
    }
    return OkStatus();
  }

  bool many_ = false;
};

// ---------------------------------------------------------------- dequeue

class DequeueOp : public AsyncOpKernel {
 public:
  explicit DequeueOp(OpKernelConstruction* ctx) : AsyncOpKernel(ctx) {
    many_ = ctx->def().op() == "QueueDequeueManyV2";
  }

  void ComputeAsync(OpKernelContext* ctx, DoneCallback done) override {
    auto queue = GetQueue(ctx);
    OP_REQUIRES_OK_ASYNC(ctx, queue.status(), done);
    const FIFOQueue& q = **queue;
    OP_REQUIRES_ASYNC(ctx, static_cast<size_t>(num_outputs()) == q.types().size(),
                      errors::InvalidArgument("Expected ", q.types().size(), " components for ",
                                              q.DebugString(), ", the op has ", num_outputs()),
                      done);
    for (int i = 0; i < num_outputs(); ++i) {
      OP_REQUIRES_ASYNC(
          ctx, output_type(i) == q.types()[static_cast<size_t>(i)],
          errors::InvalidArgument("Type mismatch in tuple component ", i, ". Expected ",
                                  DataTypeString(q.types()[static_cast<size_t>(i)]), ", got ",
                                  DataTypeString(output_type(i))),
          done);
    }
    int n = -1;
    if (many_) {
      const Tensor& nt = ctx->input(1);
      OP_REQUIRES_ASYNC(ctx, nt.dims() == 0,
                        errors::InvalidArgument("n must be a scalar, got shape ",
                                                nt.shape().DebugString()),
                        done);
      n = nt.scalar<int32_t>();
      OP_REQUIRES_ASYNC(ctx, n >= 0,
                        errors::InvalidArgument("DequeueMany requested ", n, " < 0 elements"),
                        done);
      OP_REQUIRES_ASYNC(ctx, !q.shapes().empty(),
                        errors::InvalidArgument(q.DebugString(),
                                                "'s DequeueMany requires the components to have "
                                                "specified shapes."),
                        done);
    }
    (*queue)->Dequeue(ctx, n, std::move(done));
  }

 private:
  bool many_ = false;
};

// ---------------------------------------------------------------- size, close

class QueueSizeOp : public OpKernel {
 public:
  explicit QueueSizeOp(OpKernelConstruction* ctx) : OpKernel(ctx) { set_expensive(false); }
  void Compute(OpKernelContext* ctx) override {
    auto queue = GetQueue(ctx);
    OP_REQUIRES_OK(ctx, queue.status());
    ctx->set_output(0, Tensor::Scalar<int32_t>(static_cast<int32_t>((*queue)->Size())));
  }
};

class QueueCloseOp : public OpKernel {
 public:
  explicit QueueCloseOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    set_expensive(false);
    OP_REQUIRES_OK(ctx, ctx->GetAttr("cancel_pending_enqueues", &cancel_pending_enqueues_));
  }
  void Compute(OpKernelContext* ctx) override {
    auto queue = GetQueue(ctx);
    OP_REQUIRES_OK(ctx, queue.status());
    OP_REQUIRES_OK(ctx, (*queue)->Close(cancel_pending_enqueues_));
  }

 private:
  bool cancel_pending_enqueues_ = false;
};

REGISTER_KERNEL_BUILDER(Name("FIFOQueueV2").Device(DEVICE_CPU), FIFOQueueOp);
REGISTER_KERNEL_BUILDER(Name("QueueEnqueueV2").Device(DEVICE_CPU), EnqueueOp);
REGISTER_KERNEL_BUILDER(Name("QueueEnqueueManyV2").Device(DEVICE_CPU), EnqueueOp);
REGISTER_KERNEL_BUILDER(Name("QueueDequeueV2").Device(DEVICE_CPU), DequeueOp);
REGISTER_KERNEL_BUILDER(Name("QueueDequeueManyV2").Device(DEVICE_CPU), DequeueOp);
REGISTER_KERNEL_BUILDER(Name("QueueSizeV2").Device(DEVICE_CPU), QueueSizeOp);
REGISTER_KERNEL_BUILDER(Name("QueueCloseV2").Device(DEVICE_CPU), QueueCloseOp);

}  // namespace
}  // namespace tensorflux
