#include "tensorflux/devices/cuda_context.h"

#include <map>

#include "tensorflux/devices/cuda_status.h"

namespace tensorflux {
namespace {

Status CheckCopyable(const Tensor& t, const char* what) {
  const DataType dt = t.dtype();
  if (dt == DT_STRING || dt == DT_RESOURCE || dt == DT_VARIANT || !t.IsInitialized()) {
    return errors::InvalidArgument(what, ": a ", DataTypeString(dt),
                                   " tensor cannot be held in GPU memory");
  }
  return OkStatus();
}

}  // namespace

StatusOr<CudaContext*> CudaContext::Get(int ordinal) {
  static absl::Mutex mu(absl::kConstInit);
  // Never destroyed: tensors and per-process caches may refer to a context until exit.
  static auto* contexts = new std::map<int, std::unique_ptr<CudaContext>>();
  absl::MutexLock l(&mu);
  auto it = contexts->find(ordinal);
  if (it != contexts->end()) return it->second.get();
  int count = 0;
  TX_RETURN_IF_CUDA_ERROR(cudaGetDeviceCount(&count));
  if (ordinal < 0 || ordinal >= count) {
    return errors::Unavailable("GPU ", ordinal, " does not exist: this process sees ", count,
                               " CUDA device(s)");
  }
  std::unique_ptr<CudaContext> ctx(new CudaContext(ordinal));
  TX_RETURN_IF_ERROR(ctx->Init());
  CudaContext* raw = ctx.get();
  contexts->emplace(ordinal, std::move(ctx));
  return raw;
}

Status CudaContext::Init() {
  TX_RETURN_IF_CUDA_ERROR(cudaSetDevice(ordinal_));
  TX_RETURN_IF_CUDA_ERROR(cudaGetDeviceProperties(&props_, ordinal_));
  for (cudaStream_t* s : {&compute_, &h2d_, &d2h_}) {
    TX_RETURN_IF_CUDA_ERROR(cudaStreamCreateWithFlags(s, cudaStreamNonBlocking));
  }
  for (cudaEvent_t* e : {&h2d_start_, &h2d_done_, &d2h_start_}) {
    TX_RETURN_IF_CUDA_ERROR(cudaEventCreateWithFlags(e, cudaEventDisableTiming));
  }
  TX_RETURN_IF_CUDA_ERROR(cublasCreate(&blas_));
  TX_RETURN_IF_CUDA_ERROR(cublasSetStream(blas_, compute_));
  TX_RETURN_IF_CUDA_ERROR(cudnnCreate(&dnn_));
  TX_RETURN_IF_CUDA_ERROR(cudnnSetStream(dnn_, compute_));
  return OkStatus();
}

Status CudaContext::Activate() const {
  TX_RETURN_IF_CUDA_ERROR(cudaSetDevice(ordinal_));
  return OkStatus();
}

Status CudaContext::WaitForCompute(cudaStream_t copy, cudaEvent_t event) {
  TX_RETURN_IF_CUDA_ERROR(cudaEventRecord(event, compute_));
  TX_RETURN_IF_CUDA_ERROR(cudaStreamWaitEvent(copy, event, 0));
  return OkStatus();
}

Status CudaContext::CopyHostToDevice(const Tensor& host, Tensor* out) {
  TX_RETURN_IF_ERROR(CheckCopyable(host, "Copying a tensor to the GPU"));
  TX_RETURN_IF_ERROR(Activate());
  TX_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(host.dtype(), host.shape(), &allocator_));
  const size_t n = host.TotalBytes();
  if (n > 0) {
    absl::MutexLock l(&h2d_mu_);
    TX_RETURN_IF_ERROR(WaitForCompute(h2d_, h2d_start_));
    TX_RETURN_IF_CUDA_ERROR(
        cudaMemcpyAsync(t.raw_data(), host.raw_data(), n, cudaMemcpyHostToDevice, h2d_));
    TX_RETURN_IF_CUDA_ERROR(cudaEventRecord(h2d_done_, h2d_));
    TX_RETURN_IF_CUDA_ERROR(cudaStreamWaitEvent(compute_, h2d_done_, 0));
    TX_RETURN_IF_CUDA_ERROR(cudaStreamSynchronize(h2d_));
  }
  *out = std::move(t);
  return OkStatus();
}

Status CudaContext::CopyDeviceToHost(const Tensor& device_tensor, Tensor* out) {
  TX_RETURN_IF_ERROR(CheckCopyable(device_tensor, "Copying a tensor from the GPU"));
  TX_RETURN_IF_ERROR(Activate());
  TX_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(device_tensor.dtype(), device_tensor.shape()));
  const size_t n = device_tensor.TotalBytes();
  if (n > 0) {
    absl::MutexLock l(&d2h_mu_);
    TX_RETURN_IF_ERROR(WaitForCompute(d2h_, d2h_start_));
    TX_RETURN_IF_CUDA_ERROR(cudaMemcpyAsync(t.raw_data(), device_tensor.raw_data(), n,
                                            cudaMemcpyDeviceToHost, d2h_));
    TX_RETURN_IF_CUDA_ERROR(cudaStreamSynchronize(d2h_));
  }
  *out = std::move(t);
  return OkStatus();
}

Status CudaContext::CopyDeviceToDevice(const void* src, void* dst, size_t n) {
  if (n == 0 || src == dst) return OkStatus();
  TX_RETURN_IF_ERROR(Activate());
  TX_RETURN_IF_CUDA_ERROR(cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToDevice, compute_));
  return OkStatus();
}

Status CudaContext::Synchronize() {
  TX_RETURN_IF_ERROR(Activate());
  TX_RETURN_IF_CUDA_ERROR(cudaStreamSynchronize(compute_));
  return OkStatus();
}

}  // namespace tensorflux
