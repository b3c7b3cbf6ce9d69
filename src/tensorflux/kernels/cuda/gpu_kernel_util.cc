#include "tensorflux/kernels/cuda/gpu_kernel_util.h"

namespace tensorflux {
namespace gpu {

bool ToElemType(DataType dt, ElemType* t) {
  switch (BaseType(dt)) {
    case DT_FLOAT: *t = ElemType::kFloat; return true;
    case DT_DOUBLE: *t = ElemType::kDouble; return true;
    case DT_BOOL: *t = ElemType::kBool; return true;
    case DT_INT32: *t = ElemType::kInt32; return true;
    case DT_INT64: *t = ElemType::kInt64; return true;
    default: return false;
  }
}

Status LaunchStatus(const OpKernel& k, cudaError_t e) {
  if (e == cudaSuccess) return OkStatus();
  return errors::Internal("GPU kernel of node '", k.name(), "' (op ", k.type_string(),
                          "): ", cudaGetErrorName(e), ": ", cudaGetErrorString(e));
}

void RegisterGpuKernel(const std::string& op, const std::string& type_attr,
                       std::initializer_list<DataType> types, KernelFactory factory,
                       std::initializer_list<const char*> host_memory) {
  auto def = [&]() {
    KernelDefBuilder b(op);
    b.Device(DEVICE_GPU);
    for (const char* arg : host_memory) b.HostMemory(arg);
    return b;
  };
  if (type_attr.empty()) {
    KernelRegistry::Global()->Register(def(), factory);
    return;
  }
  for (DataType dt : types) {
    KernelRegistry::Global()->Register(def().TypeConstraint(type_attr, dt), factory);
  }
}

}  // namespace gpu
}  // namespace tensorflux
