// CUDA, cuBLAS and cuDNN return codes as Status (internal to the CUDA build: devices/cuda_*,
// kernels/cuda). Every call into those libraries goes through one of these, so a failure
// becomes an error naming the call, never a crash:
//
//   TX_RETURN_IF_CUDA_ERROR(cudaMemcpyAsync(...));
//   OP_REQUIRES_OK(ctx, CudaStatus(cublasSgemm(...), "cublasSgemm"));
//
// Codes: out-of-memory results (cudaErrorMemoryAllocation, CUBLAS_STATUS_ALLOC_FAILED, cuDNN's
// allocation failures) are RESOURCE_EXHAUSTED; no device or no usable driver UNAVAILABLE;
// "not supported" results UNIMPLEMENTED; everything else INTERNAL. The message names the call
// and the library's own name and text for the code.
#pragma once

#include <string_view>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>

#include "tensorflux/core/status.h"

namespace tensorflux {

Status CudaStatus(cudaError_t e, std::string_view call);
Status CudaStatus(cublasStatus_t s, std::string_view call);
Status CudaStatus(cudnnStatus_t s, std::string_view call);

}  // namespace tensorflux

// Returns the Status of a CUDA/cuBLAS/cuDNN call when it failed; the call's text names it.
#define TX_RETURN_IF_CUDA_ERROR(...)                                       \
  do {                                                                     \
    ::tensorflux::Status _cuda_s = ::tensorflux::CudaStatus((__VA_ARGS__), #__VA_ARGS__); \
    if (!_cuda_s.ok()) return _cuda_s;                                     \
  } while (0)
