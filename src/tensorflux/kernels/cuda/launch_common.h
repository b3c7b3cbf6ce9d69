// Shared by the device code (*.cu) and the host kernels (*.cc) of kernels/cuda: the element
// types the launchers take and the launch geometry. Plain C++: no tensorflux headers, no
// templates, so the .cu files stay light for nvcc.
#pragma once

#include <cstdint>

#include <cuda_runtime_api.h>

namespace tensorflux {
namespace gpu {

// Element types of the GPU kernels (the host maps DataType onto these).
enum class ElemType : int { kFloat, kDouble, kBool, kInt32, kInt64 };

// Threads per block of the elementwise-style kernels, and the most blocks a grid-stride loop
// launches (enough to fill a 132-SM H200 many times over).
inline constexpr int kThreads = 256;
inline constexpr int64_t kMaxBlocks = 8192;

inline unsigned BlocksFor(int64_t n, int threads = kThreads) {
  const int64_t b = (n + threads - 1) / threads;
  return static_cast<unsigned>(b < 1 ? 1 : (b > kMaxBlocks ? kMaxBlocks : b));
}

}  // namespace gpu
}  // namespace tensorflux
