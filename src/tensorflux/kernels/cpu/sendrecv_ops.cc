// _Send / _Recv (and _HostSend / _HostRecv) on CPU devices: ops/sendrecv_ops.cc. The key is
// built and checked once, when the kernel is made (bad attrs are INVALID_ARGUMENT there).
// _Send is cheap and never blocks. _Recv is asynchronous: it registers with the step's
// rendezvous and returns, so no executor thread waits for a tensor; when the tensor arrives on
// another thread (the sender's), the rest of the receiving partition is handed to the inter-op
// runner rather than run on the sender's thread. Between CPU devices the received tensor shares
// the sent tensor's buffer.
//
// Deadness: the rendezvous carries is_dead, but the executor has no dead tensors (TensorFlux has
// no Switch/Merge), so _Send always sends live tensors and a _Recv that receives a dead one
// fails with UNIMPLEMENTED.
#include <atomic>
#include <memory>
#include <string>
#include <thread>

#include "tensorflux/core/allocation_tracker.h"
#include "tensorflux/framework/op_kernel.h"
#include "tensorflux/framework/rendezvous.h"

namespace tensorflux {
namespace {

// Reads the attrs shared by both ops and returns the parsed key for frame 0:0.
StatusOr<Rendezvous::ParsedKey> ParseKeyAttrs(OpKernelConstruction* ctx) {
  std::string send_device, recv_device, tensor_name;
  int64_t incarnation = 0;
  TX_RETURN_IF_ERROR(ctx->GetAttr("send_device", &send_device));
  TX_RETURN_IF_ERROR(ctx->GetAttr("recv_device", &recv_device));
  TX_RETURN_IF_ERROR(ctx->GetAttr("tensor_name", &tensor_name));
  TX_RETURN_IF_ERROR(ctx->GetAttr("send_device_incarnation", &incarnation));
  return Rendezvous::ParseKey(Rendezvous::CreateKey(send_device,
                                                    static_cast<uint64_t>(incarnation),
                                                    recv_device, tensor_name, FrameAndIter()));
}

// The key, or an empty one after recording the error in `ctx`.
Rendezvous::ParsedKey KeyFromAttrs(OpKernelConstruction* ctx) {
  auto key = ParseKeyAttrs(ctx);
  if (key.ok()) return *std::move(key);
  ctx->SetStatus(key.status());
  return {};
}

Status NoRendezvous(const OpKernel& k) {
  return errors::FailedPrecondition(k.type_string(), " '", k.name(),
                                    "' needs the step's rendezvous; it runs only inside a "
                                    "session step");
}

class SendOp : public OpKernel {
 public:
  explicit SendOp(OpKernelConstruction* ctx) : OpKernel(ctx), key_(KeyFromAttrs(ctx)) {
    set_expensive(false);
  }

  void Compute(OpKernelContext* ctx) override {
    Rendezvous* rendezvous = ctx->rendezvous();
    OP_REQUIRES(ctx, rendezvous != nullptr, NoRendezvous(*this));
    Rendezvous::Args args;
    args.device = ctx->device();
    OP_REQUIRES_OK(ctx, rendezvous->Send(key_, args, ctx->release_input(0), /*is_dead=*/false));
  }

 private:
  Rendezvous::ParsedKey key_;
};

class RecvOp : public AsyncOpKernel {
 public:
  explicit RecvOp(OpKernelConstruction* ctx) : AsyncOpKernel(ctx), key_(KeyFromAttrs(ctx)) {}

  void ComputeAsync(OpKernelContext* ctx, DoneCallback done) override {
    Rendezvous* rendezvous = ctx->rendezvous();
    OP_REQUIRES_ASYNC(ctx, rendezvous != nullptr, NoRendezvous(*this), done);
    Rendezvous::Args args;
    args.device = ctx->device();
    args.cancellation_manager = ctx->cancellation_manager();
    // The callback finishes the node inline only when it runs inside RecvAsync on this thread
    // (the tensor was already there); otherwise it hands `done` to the runner.
    struct Caller {
      std::thread::id thread = std::this_thread::get_id();
      std::atomic<bool> returned{false};
    };
    auto caller = std::make_shared<Caller>();
    auto* runner = ctx->runner();
    // Bound to this node's allocation tracker: what the callback allocates, on whichever
    // thread the sender calls it, counts in the _Recv's step stats.
    rendezvous->RecvAsync(
        key_, args,
        BindAllocationTracker([this, ctx, done, caller, runner](
                                  const Status& s, const Rendezvous::Args&,
                                  const Rendezvous::Args&, const Tensor& value, bool is_dead) {
          if (!s.ok()) {
            ctx->SetStatus(s);
          } else if (is_dead) {
            ctx->SetStatus(errors::Unimplemented(
                "received a dead tensor under ", key_.full_key,
                "; the executor has no dead tensors (no control-flow ops)"));
          } else if (value.dtype() != output_type(0)) {
            ctx->SetStatus(errors::InvalidArgument(
                "expected a ", DataTypeString(output_type(0)), " tensor under ", key_.full_key,
                ", received ", DataTypeString(value.dtype())));
          } else {
            ctx->set_output(0, value);
          }
          const bool inline_call = std::this_thread::get_id() == caller->thread &&
                                   !caller->returned.load(std::memory_order_acquire);
          if (inline_call || runner == nullptr) {
            done();
          } else {
            (*runner)(done);
          }
        }));
    caller->returned.store(true, std::memory_order_release);
  }

 private:
  Rendezvous::ParsedKey key_;
};

REGISTER_KERNEL_BUILDER(Name("_Send").Device(DEVICE_CPU), SendOp);
REGISTER_KERNEL_BUILDER(Name("_HostSend").Device(DEVICE_CPU), SendOp);
REGISTER_KERNEL_BUILDER(Name("_Recv").Device(DEVICE_CPU), RecvOp);
REGISTER_KERNEL_BUILDER(Name("_HostRecv").Device(DEVICE_CPU), RecvOp);

}  // namespace
}  // namespace tensorflux
