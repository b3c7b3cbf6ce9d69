// Harness of the GPU tests (tests/gpu, ctest label "gpu"): run one op's GPU kernel and its CPU
// kernel on the same inputs and compare.
//
//   GpuOpCase c("MatMul");
//   c.Attr("transpose_a", true).Input(RandomTensor(DT_FLOAT, {64, 32}, 1))
//    .Input(RandomTensor(DT_FLOAT, {64, 16}, 2));
//   ExpectGpuMatchesCpu(c, 1e-5);
//
// The GPU run gets copies of the inputs in GPU memory, except the inputs marked HostInput(i)
// (the kernel's HostMemory args: shapes, axes). Outputs are copied back and compared with the
// CPU outputs: same dtype and shape, and for floating types the relative error
// max|gpu - cpu| / max(max|cpu|, 1) below the tolerance (a norm-wise error: near-zero elements
// of a large result are not held to a relative bound the two summation orders cannot meet);
// other dtypes must be equal.
//
// GpuTest is the fixture: it skips the test when no GPU is visible (CudaDeviceCount() == 0),
// which is how these tests pass on machines without one; it fails when a CUDA driver is present
// but the CUDA module (devices/cuda_module.h) did not load.
//
// TX_GPU_TESTS_ON_CPU=1 runs the comparisons with a CPU device standing in for the GPU (copies
// become plain copies): a check of the harness, the reference paths and the tolerances on a
// machine without a GPU. Tests of GPU-only behaviour skip themselves in that mode
// (SkipIfCpuStandIn).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernel_test_util.h"
#include "tensorflux/devices/cuda_api.h"
#include "tensorflux/framework/resource_mgr.h"

namespace tensorflux {
namespace test {

inline bool CpuStandIn() {
  static const bool on = [] {
    const char* v = std::getenv("TX_GPU_TESTS_ON_CPU");
    return v != nullptr && *v != '\0' && std::string(v) != "0";
  }();
  return on;
}

// A CPU test device with a resource manager (variables).
class CpuWithResources : public TestCpuDevice {
 public:
  ResourceMgr* resource_manager() override { return &rm_; }

 private:
  ResourceMgr rm_;
};

// One GPU device for the whole test binary (made on first use).
inline DeviceBase* TestGpu() {
  static DeviceBase* gpu = []() -> DeviceBase* {
    if (CpuStandIn()) return new CpuWithResources();
    auto d = NewCudaDevice("/job:localhost/replica:0/task:0/device:GPU:0", 0);
    return d.ok() ? d->release() : nullptr;
  }();
  return gpu;
}

class GpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (CpuStandIn()) return;
    if (CudaDeviceCount() == 0) {
      // Skip only for want of a GPU: a driver with a module that failed to load is a failure.
      const Status module = CudaModuleStatus();
      const std::string why(module.message());
      if (!module.ok() && why.find("no CUDA driver") == std::string::npos &&
          why.find("TX_DISABLE_GPU") == std::string::npos &&
          why.find("CUDA_VISIBLE_DEVICES") == std::string::npos) {
        FAIL() << "the CUDA module did not load: " << module;
      }
      GTEST_SKIP() << "no GPU visible to this process (" << module << ")";
    }
    ASSERT_NE(TestGpu(), nullptr) << "a GPU is visible but the CUDA device could not be made";
  }
};

// Values uniform in [lo, hi) from a fixed seed (float types), or integers in [lo, hi).
inline Tensor RandomTensor(DataType dtype, const TensorShape& shape, uint32_t seed,
                           double lo = -1.0, double hi = 1.0) {
  std::mt19937 gen(seed);
  std::vector<double> v(static_cast<size_t>(shape.num_elements()));
  const bool integral = dtype == DT_INT32 || dtype == DT_INT64 || dtype == DT_BOOL;
  for (double& x : v) {
    x = integral ? std::floor(std::uniform_real_distribution<double>(lo, hi)(gen))
                 : std::uniform_real_distribution<double>(lo, hi)(gen);
  }
  return FromDoubles(dtype, shape, v);
}

#define SkipIfCpuStandIn() \
  if (::tensorflux::test::CpuStandIn()) GTEST_SKIP() << "GPU-only behaviour"

inline Tensor ToGpu(const Tensor& host) {
  if (CpuStandIn()) return host.DeepCopy();
  Tensor out;
  Status s = CopyHostToCudaDevice(TestGpu(), host, &out);
  EXPECT_TRUE(s.ok()) << s;
  return out;
}

// Waits for the GPU's queued work; its first error.
inline Status SyncGpu() { return CpuStandIn() ? OkStatus() : SynchronizeCudaDevice(TestGpu()); }

inline Tensor ToHost(const Tensor& device_tensor) {
  if (CpuStandIn()) return device_tensor.DeepCopy();
  Tensor out;
  Status s = CopyCudaDeviceToHost(TestGpu(), device_tensor, &out);
  EXPECT_TRUE(s.ok()) << s;
  return out;
}

// max|a - b| / max(max|b|, 1) over all elements (0 for empty tensors).
inline double RelativeError(const Tensor& a, const Tensor& b) {
  const std::vector<double> x = ToDoubles(a), y = ToDoubles(b);
  double diff = 0, scale = 1;
  for (size_t i = 0; i < x.size(); ++i) {
    if (std::isnan(x[i]) != std::isnan(y[i])) return INFINITY;
    if (std::isnan(x[i])) continue;
    if (std::isinf(x[i]) || std::isinf(y[i])) {
      if (x[i] != y[i]) return INFINITY;
      continue;
    }
    diff = std::max(diff, std::abs(x[i] - y[i]));
    scale = std::max(scale, std::abs(y[i]));
  }
  return diff / scale;
}

class GpuOpCase {
 public:
  explicit GpuOpCase(std::string op) : op_(std::move(op)) {}
  template <typename V>
  GpuOpCase& Attr(std::string_view name, V&& value) {
    attrs_.emplace_back([n = std::string(name), value](KernelRunner& r) { r.Attr(n, value); });
    return *this;
  }
  GpuOpCase& Input(Tensor t) {
    inputs_.push_back(std::move(t));
    return *this;
  }
  // Input i stays in host memory for the GPU kernel (a HostMemory arg).
  GpuOpCase& HostInput(int i) {
    host_inputs_.insert(i);
    return *this;
  }
  // The CPU reference runs on float64 copies of the floating-point inputs and its outputs are
  // rounded back to their dtypes: for ops that sum many terms, whose float32 CPU result (one
  // summation order) is itself further than 1e-5 from the exact value.
  GpuOpCase& CpuReferenceInFloat64() {
    f64_reference_ = true;
    return *this;
  }

  StatusOr<std::vector<Tensor>> RunCpu() const {
    KernelRunner r(op_);
    Setup(&r, false);
    TX_ASSIGN_OR_RETURN(std::vector<Tensor> out, r.Run());
    if (f64_reference_) {
      for (size_t i = 0; i < out.size(); ++i) {
        const DataType want = i < output_dtypes_.size() ? output_dtypes_[i] : out[i].dtype();
        if (out[i].dtype() == DT_DOUBLE && want != DT_DOUBLE) {
          out[i] = FromDoubles(want, out[i].shape(), ToDoubles(out[i]));
        }
      }
    }
    return out;
  }
  // Outputs copied back to the host.
  StatusOr<std::vector<Tensor>> RunGpu() const {
    KernelRunner r(op_);
    Setup(&r, true);
    r.OnDevice(TestGpu());
    TX_ASSIGN_OR_RETURN(std::vector<Tensor> out, r.Run());
    TX_RETURN_IF_ERROR(SyncGpu());
    std::vector<Tensor> host;
    for (const Tensor& t : out) host.push_back(ToHost(t));
    return host;
  }
  const std::string& op() const { return op_; }

 private:
  static bool IsFloating(DataType dt) {
    return dt == DT_FLOAT || dt == DT_HALF || dt == DT_BFLOAT16 || dt == DT_DOUBLE;
  }

  void Setup(KernelRunner* r, bool gpu) const {
    output_dtypes_.clear();
    for (size_t i = 0; i < inputs_.size(); ++i) {
      const Tensor& t = inputs_[i];
      const bool host = host_inputs_.count(static_cast<int>(i)) > 0;
      if (gpu && !host) {
        r->Input(ToGpu(t));
      } else if (!gpu && f64_reference_ && !host && IsFloating(t.dtype())) {
        r->Input(FromDoubles(DT_DOUBLE, t.shape(), ToDoubles(t)));
        if (output_dtypes_.empty()) output_dtypes_.assign(8, t.dtype());  // outputs have T
      } else {
        r->Input(t);
      }
    }
    for (const auto& a : attrs_) a(*r);
  }

  std::string op_;
  std::vector<Tensor> inputs_;
  std::set<int> host_inputs_;
  bool f64_reference_ = false;
  mutable std::vector<DataType> output_dtypes_;  // the float64 reference's outputs' dtypes
  std::vector<std::function<void(KernelRunner&)>> attrs_;
};

// Runs `c` on the CPU and the GPU and compares every output (see the file comment).
inline void ExpectGpuMatchesCpu(const GpuOpCase& c, double tolerance) {
  auto cpu = c.RunCpu();
  ASSERT_TRUE(cpu.ok()) << c.op() << " on the CPU: " << cpu.status();
  auto gpu = c.RunGpu();
  ASSERT_TRUE(gpu.ok()) << c.op() << " on the GPU: " << gpu.status();
  ASSERT_EQ(cpu->size(), gpu->size());
  for (size_t i = 0; i < cpu->size(); ++i) {
    const Tensor& a = (*gpu)[i];
    const Tensor& b = (*cpu)[i];
    ASSERT_EQ(a.dtype(), b.dtype()) << c.op() << " output " << i;
    ASSERT_EQ(a.shape(), b.shape()) << c.op() << " output " << i;
    if (a.dtype() == DT_FLOAT || a.dtype() == DT_DOUBLE || a.dtype() == DT_HALF ||
        a.dtype() == DT_BFLOAT16) {
      EXPECT_LE(RelativeError(a, b), tolerance) << c.op() << " output " << i;
    } else {
      EXPECT_EQ(ToDoubles(a), ToDoubles(b)) << c.op() << " output " << i;
    }
  }
}

// The GPU kernel's error for `c` (for validation tests): its status, or OK.
inline Status GpuError(const GpuOpCase& c) { return c.RunGpu().status(); }

}  // namespace test
}  // namespace tensorflux
