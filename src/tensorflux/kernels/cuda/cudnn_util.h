// cuDNN helpers of the GPU kernels (host code, kernels/cuda/*.cc): descriptors that destroy
// themselves, and the "not supported" class of cuDNN 9 status codes.
#pragma once

#include <cudnn.h>

#include "tensorflux/devices/cuda_status.h"

namespace tensorflux {
namespace gpu {

template <typename D, cudnnStatus_t (*Create)(D*), cudnnStatus_t (*Destroy)(D)>
class CudnnDesc {
 public:
  CudnnDesc() = default;
  ~CudnnDesc() {
    if (d_ != nullptr) (void)Destroy(d_);
  }
  CudnnDesc(const CudnnDesc&) = delete;
  CudnnDesc& operator=(const CudnnDesc&) = delete;
  Status Init() { return CudaStatus(Create(&d_), "cudnnCreate*Descriptor"); }
  D get() const { return d_; }

 private:
  D d_ = nullptr;
};
using TensorDesc =
    CudnnDesc<cudnnTensorDescriptor_t, cudnnCreateTensorDescriptor, cudnnDestroyTensorDescriptor>;
using FilterDesc =
    CudnnDesc<cudnnFilterDescriptor_t, cudnnCreateFilterDescriptor, cudnnDestroyFilterDescriptor>;
using ConvDesc = CudnnDesc<cudnnConvolutionDescriptor_t, cudnnCreateConvolutionDescriptor,
                           cudnnDestroyConvolutionDescriptor>;

// cuDNN 9's 3xxx codes: the operation is not supported (for these operands or this build).
inline bool IsNotSupported(cudnnStatus_t s) {
  const int code = static_cast<int>(s);
  return code >= 3000 && code < 4000;
}

}  // namespace gpu
}  // namespace tensorflux
