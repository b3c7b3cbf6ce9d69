// The device-independent _Send / _Recv kernels of kernels/shared/sendrecv_kernels.h, and their
// CPU registrations.
#include "tensorflux/kernels/shared/sendrecv_kernels.h"

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

// _HostSend / _HostRecv: the tensor is in host memory whatever the device.
bool IsHostOp(const OpKernelConstruction* ctx) {
  return ctx->def().op() == "_HostSend" || ctx->def().op() == "_HostRecv";
}

class SendOp : public OpKernel {
 public:
  explicit SendOp(OpKernelConstruction* ctx)
      : OpKernel(ctx), key_(KeyFromAttrs(ctx)), on_host_(IsHostOp(ctx)) {
    set_expensive(false);
  }

  void Compute(OpKernelContext* ctx) override {
    Rendezvous* rendezvous = ctx->rendezvous();
    OP_REQUIRES(ctx, rendezvous != nullptr, NoRendezvous(*this));
    Rendezvous::Args args;
    args.device = ctx->device();
    args.on_host = on_host_;
    OP_REQUIRES_OK(ctx, rendezvous->Send(key_, args, ctx->release_input(0), /*is_dead=*/false));
  }

 private:
  Rendezvous::ParsedKey key_;
  bool on_host_;
};

class RecvOp : public AsyncOpKernel {
 public:
  explicit RecvOp(OpKernelConstruction* ctx)
      : AsyncOpKernel(ctx), key_(KeyFromAttrs(ctx)), on_host_(IsHostOp(ctx)) {}

  void ComputeAsync(OpKernelContext* ctx, DoneCallback done) override {
    Rendezvous* rendezvous = ctx->rendezvous();
    OP_REQUIRES_ASYNC(ctx, rendezvous != nullptr, NoRendezvous(*this), done);
    Rendezvous::Args args;
    args.device = ctx->device();
    args.on_host = on_host_;
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
  bool on_host_;
};

}  // namespace

OpKernel* NewSendOp(OpKernelConstruction* ctx) { return new SendOp(ctx); }
OpKernel* NewRecvOp(OpKernelConstruction* ctx) { return new RecvOp(ctx); }

void RegisterSendRecvKernels(const std::string& device_type) {
  KernelRegistry* r = KernelRegistry::Global();
  r->Register(KernelDefBuilder("_Send").Device(device_type), NewSendOp);
  r->Register(KernelDefBuilder("_Recv").Device(device_type), NewRecvOp);
  r->Register(KernelDefBuilder("_HostSend").Device(device_type).HostMemory("tensor"), NewSendOp);
  r->Register(KernelDefBuilder("_HostRecv").Device(device_type).HostMemory("tensor"), NewRecvOp);
}

namespace {
[[maybe_unused]] const bool kCpuRegistered = [] {
  RegisterSendRecvKernels(DEVICE_CPU);
  return true;
}();
}  // namespace

}  // namespace tensorflux
