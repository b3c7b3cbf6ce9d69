// _Send / _Recv / _HostSend / _HostRecv on GPU devices: the device-independent kernels of
// kernels/shared/sendrecv_kernels.h. The rendezvous copies between GPU and host memory
// (runtime/rendezvous.h, through CudaDevice's copies on the GPU's copy streams); _HostSend /
// _HostRecv keep their tensor in host memory.
#include "tensorflux/framework/device_base.h"
#include "tensorflux/kernels/shared/sendrecv_kernels.h"

namespace tensorflux {
namespace {

[[maybe_unused]] const bool kRegistered = [] {
  RegisterSendRecvKernels(DEVICE_GPU);
  return true;
}();

}  // namespace
}  // namespace tensorflux
