// _Send / _Recv (and _HostSend / _HostRecv; ops/sendrecv_ops.cc) kernels, the same classes on
// every device: they hand tensors to the step's rendezvous (framework/rendezvous.h) and never
// read their elements. The key is built and checked once, when the kernel is made (bad attrs are
// INVALID_ARGUMENT there). _Send is cheap and never blocks. _Recv is asynchronous: it registers
// with the step's rendezvous and returns, so no executor thread waits for a tensor; when the
// tensor arrives on another thread (the sender's), the rest of the receiving partition is handed
// to the inter-op runner rather than run on the sender's thread.
//
// Memory: the rendezvous moves the tensor between the two devices' memories
// (runtime/rendezvous.h: shared between host-memory devices, copied otherwise). _HostSend /
// _HostRecv tell it that the tensor is, or must be, in host memory although the device has its
// own (a GPU kernel's HostMemory args, placed by the partitioner); on a CPU device they are
// _Send / _Recv.
//
// Deadness: the rendezvous carries is_dead, but the executor has no dead tensors (TensorFlux has
// no Switch/Merge), so _Send always sends live tensors and a _Recv that receives a dead one
// fails with UNIMPLEMENTED.
#pragma once

#include <string>

namespace tensorflux {

class OpKernel;
class OpKernelConstruction;

OpKernel* NewSendOp(OpKernelConstruction* ctx);  // _Send, _HostSend
OpKernel* NewRecvOp(OpKernelConstruction* ctx);  // _Recv, _HostRecv

// Registers the four ops' kernels for `device_type`, _HostSend's and _HostRecv's tensor as
// HostMemory (done for CPU here, for GPU by the CUDA module, and by tests for their devices).
void RegisterSendRecvKernels(const std::string& device_type);

}  // namespace tensorflux
