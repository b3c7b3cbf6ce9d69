#include "tensorflux/devices/cuda_status.h"

#include <string>

namespace tensorflux {
namespace {

// The call's text, cut at its argument list ("cublasSgemm(handle, ...)" -> "cublasSgemm").
std::string_view CallName(std::string_view call) {
  const size_t paren = call.find('(');
  return paren == std::string_view::npos ? call : call.substr(0, paren);
}

const char* CublasName(cublasStatus_t s) {
  switch (s) {
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_MAPPING_ERROR: return "CUBLAS_STATUS_MAPPING_ERROR";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    case CUBLAS_STATUS_LICENSE_ERROR: return "CUBLAS_STATUS_LICENSE_ERROR";
    default: return "unknown cuBLAS status";
  }
}

}  // namespace

Status CudaStatus(cudaError_t e, std::string_view call) {
  if (e == cudaSuccess) return OkStatus();
  const std::string_view name = CallName(call);
  switch (e) {
    case cudaErrorMemoryAllocation:
      return errors::ResourceExhausted(name, ": ", cudaGetErrorName(e), " (",
                                       cudaGetErrorString(e), ")");
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
      return errors::Unavailable(name, ": ", cudaGetErrorName(e), " (", cudaGetErrorString(e),
                                 ")");
    default:
      return errors::Internal(name, ": ", cudaGetErrorName(e), " (", cudaGetErrorString(e), ")");
  }
}

Status CudaStatus(cublasStatus_t s, std::string_view call) {
  if (s == CUBLAS_STATUS_SUCCESS) return OkStatus();
  const std::string_view name = CallName(call);
  switch (s) {
    case CUBLAS_STATUS_ALLOC_FAILED: return errors::ResourceExhausted(name, ": ", CublasName(s));
    case CUBLAS_STATUS_NOT_SUPPORTED:
    case CUBLAS_STATUS_ARCH_MISMATCH: return errors::Unimplemented(name, ": ", CublasName(s));
    default: return errors::Internal(name, ": ", CublasName(s));
  }
}

Status CudaStatus(cudnnStatus_t s, std::string_view call) {
  if (s == CUDNN_STATUS_SUCCESS) return OkStatus();
  const std::string_view name = CallName(call);
  const char* text = cudnnGetErrorString(s);
  // cuDNN 9 groups its codes by thousands: 3xxx not supported, 4xxx internal (4003/4004:
  // allocation), 5xxx execution failures.
  const int code = static_cast<int>(s);
  if (code == 4003 || code == 4004) return errors::ResourceExhausted(name, ": ", text);
  if (code >= 3000 && code < 4000) return errors::Unimplemented(name, ": ", text);
  return errors::Internal(name, ": ", text, " (cudnnStatus_t ", code, ")");
}

}  // namespace tensorflux
