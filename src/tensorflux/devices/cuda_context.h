// The per-GPU state of the process (internal to the CUDA build): created on first use, one per
// GPU, never destroyed, shared by every CudaDevice naming that GPU (so that sessions share its
// memory cache and stream order).
//
//   compute stream  every GPU kernel's work, and the cuBLAS and cuDNN handles' stream
//   h2d stream      host -> device copies
//   d2h stream      device -> host copies
//
// Ordering: a copy stream first waits for the compute stream (an event recorded at the copy's
// start), so a copy never overwrites a block still read by queued kernels nor reads a tensor
// before the kernel producing it has run; after a host -> device copy the compute stream waits
// for it. The copy helpers return when the copy is complete (the device -> host data is in
// host memory; the host -> device source may be freed). Errors become Status
// (devices/cuda_status.h).
#pragma once

#include <memory>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>

#include "absl/synchronization/mutex.h"
#include "tensorflux/core/status.h"
#include "tensorflux/core/tensor.h"
#include "tensorflux/devices/cuda_allocator.h"

namespace tensorflux {

class CudaContext {
 public:
  // The context of GPU `ordinal`, created on the first call. UNAVAILABLE when there is no such
  // GPU or no usable driver; the CUDA/cuBLAS/cuDNN error when creating a stream or handle fails.
  static StatusOr<CudaContext*> Get(int ordinal);

  CudaContext(const CudaContext&) = delete;
  CudaContext& operator=(const CudaContext&) = delete;

  int ordinal() const { return ordinal_; }
  const cudaDeviceProp& properties() const { return props_; }
  CudaAllocator* allocator() { return &allocator_; }

  // Makes this GPU the calling thread's current device (CUDA's device selection is per thread:
  // every entry point that may run on an executor thread calls this first).
  Status Activate() const;

  cudaStream_t compute_stream() const { return compute_; }
  // Handles bound to the compute stream. cuDNN handles must not be used by two threads at once
  // and both share workspace state: hold library_mu() around their use.
  cublasHandle_t blas() const { return blas_; }
  cudnnHandle_t dnn() const { return dnn_; }
  absl::Mutex* library_mu() { return &library_mu_; }

  // *out = a new tensor in this GPU's memory with `host`'s dtype, shape and values. Fixed-size
  // dtypes only (INVALID_ARGUMENT for string, resource, variant).
  Status CopyHostToDevice(const Tensor& host, Tensor* out);
  // *out = a new host (cpu_allocator) tensor with the values of `device_tensor`, a tensor in this
  // GPU's memory; waits for the kernels that produce it.
  Status CopyDeviceToHost(const Tensor& device_tensor, Tensor* out);
  // n bytes from src to dst, both in this GPU's memory, on the compute stream.
  Status CopyDeviceToDevice(const void* src, void* dst, size_t n);
  // Waits until all the work queued on the compute stream has run; its first error if any.
  Status Synchronize();

 private:
  explicit CudaContext(int ordinal) : ordinal_(ordinal), allocator_(ordinal) {}
  Status Init();
  // `copy` waits for the work queued so far on the compute stream. mu held by the caller.
  Status WaitForCompute(cudaStream_t copy, cudaEvent_t event);

  const int ordinal_;
  cudaDeviceProp props_{};
  CudaAllocator allocator_;
  cudaStream_t compute_ = nullptr, h2d_ = nullptr, d2h_ = nullptr;
  cublasHandle_t blas_ = nullptr;
  cudnnHandle_t dnn_ = nullptr;
  absl::Mutex library_mu_;
  // One copy at a time per direction; the events are reused under these locks.
  absl::Mutex h2d_mu_, d2h_mu_;
  cudaEvent_t h2d_start_ = nullptr, h2d_done_ = nullptr, d2h_start_ = nullptr;
};

}  // namespace tensorflux
