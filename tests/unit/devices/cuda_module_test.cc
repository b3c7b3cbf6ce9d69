// The CUDA module's loading (devices/cuda_api.h, devices/cuda_module.h), on any machine: no
// CUDA library is mapped until the module is loaded; the module loads without a GPU or driver
// and registers the GPU kernels and device factory; a missing or broken module, TX_DISABLE_GPU
// and an empty CUDA_VISIBLE_DEVICES leave the process without GPUs and without a crash. Each
// case runs in a child process (a gtest death test that must exit 0), since a process loads the
// module at most once.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <tuple>

#include "gtest/gtest.h"
#include "tensorflux/devices/cuda_api.h"
#include "tensorflux/devices/device_factory.h"
#include "tensorflux/devices/device_mgr.h"
#include "tensorflux/framework/op_kernel.h"

namespace tensorflux {
namespace {

// Whether a shared object whose name contains `name` is mapped into this process.
bool Mapped(const std::string& name) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    if (line.find(name) != std::string::npos) return true;
  }
  return false;
}

bool HasGpuKernel(const std::string& op) {
  for (const std::string& line : KernelRegistry::Global()->ListKernels(op)) {
    if (line.find("device='GPU'") != std::string::npos) return true;
  }
  return false;
}

// In the child: prints why and exits 1 when `ok` is false.
#define CHILD_EXPECT(ok)                                                  \
  do {                                                                    \
    if (!(ok)) {                                                          \
      std::cerr << __FILE__ << ":" << __LINE__ << ": failed: " #ok "\n"; \
      std::exit(1);                                                       \
    }                                                                     \
  } while (0)

// A process without the module: no GPU devices, sessions get their CPU device.
void ExpectNoGpus() {
  CHILD_EXPECT(CudaDeviceCount() == 0);
  CHILD_EXPECT(!NewCudaDevice("/job:localhost/replica:0/task:0/device:GPU:0", 0).ok());
  auto mgr = DeviceMgr::Create(ConfigProto());
  CHILD_EXPECT(mgr.ok());
  CHILD_EXPECT((*mgr)->ListDevices().size() == 1);
  CHILD_EXPECT(!Mapped("libcudart") && !Mapped("libcublas") && !Mapped("libcudnn"));
}

bool Contains(const Status& s, const std::string& text) {
  return std::string(s.message()).find(text) != std::string::npos;
}

class CudaModuleTest : public ::testing::Test {
 protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

TEST_F(CudaModuleTest, NoCudaLibraryIsMappedBeforeTheModuleLoads) {
  EXPECT_EXIT(
      {
        CHILD_EXPECT(!Mapped("libcudart") && !Mapped("libcublas") && !Mapped("libcudnn"));
        CHILD_EXPECT(!Mapped("libtensorflux_cuda"));
        std::exit(0);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST_F(CudaModuleTest, TheModuleLoadsWithoutADriverAndRegistersTheGpuParts) {
  if (!CudaSupportBuilt()) GTEST_SKIP() << "built without CUDA: there is no module";
  EXPECT_EXIT(
      {
        CHILD_EXPECT(!HasGpuKernel("MatMul"));
        Status s = LoadCudaModuleForTesting("");
        if (!s.ok()) std::cerr << s << "\n";
        CHILD_EXPECT(s.ok());
        CHILD_EXPECT(Mapped("libtensorflux_cuda") && Mapped("libcublas"));
        for (const char* op : {"MatMul", "Conv2D", "_Send", "_Recv", "_HostSend", "_HostRecv"}) {
          CHILD_EXPECT(HasGpuKernel(op));
        }
        CHILD_EXPECT(DeviceFactory::GetFactory(DEVICE_GPU) != nullptr);
        // Devices: as many GPUs as the machine has (none without a driver), never an error.
        auto mgr = DeviceMgr::Create(ConfigProto());
        CHILD_EXPECT(mgr.ok());
        CHILD_EXPECT(static_cast<int>((*mgr)->ListDevices().size()) == 1 + CudaDeviceCount());
        CHILD_EXPECT(CudaModuleStatus().ok());
        std::exit(0);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST_F(CudaModuleTest, AMissingModuleIsAnErrorNotACrash) {
  EXPECT_EXIT(
      {
        Status s = LoadCudaModuleForTesting("/nonexistent/libtensorflux_cuda.so");
        CHILD_EXPECT(s.code() == absl::StatusCode::kUnavailable);
        CHILD_EXPECT(!CudaSupportBuilt() || Contains(s, "/nonexistent/libtensorflux_cuda.so"));
        CHILD_EXPECT(CudaModuleStatus().code() == absl::StatusCode::kUnavailable);
        ExpectNoGpus();
        std::exit(0);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST_F(CudaModuleTest, ABrokenModuleIsAnErrorNotACrash) {
  if (!CudaSupportBuilt()) GTEST_SKIP() << "built without CUDA: no module is looked for";
  const std::string path = testing::TempDir() + "/tx_broken_module_" +
                           std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
                           ".so";
  std::ofstream(path) << "not an ELF file\n";
  EXPECT_EXIT(
      {
        Status s = LoadCudaModuleForTesting(path);
        CHILD_EXPECT(s.code() == absl::StatusCode::kUnavailable);
        CHILD_EXPECT(Contains(s, "cannot load the CUDA module"));
        ExpectNoGpus();
        std::exit(0);
      },
      ::testing::ExitedWithCode(0), "");
  std::remove(path.c_str());
}

TEST_F(CudaModuleTest, EnvironmentOptOutsKeepTheModuleUnloaded) {
  if (!CudaSupportBuilt()) GTEST_SKIP() << "built without CUDA";
  for (auto [var, value, why] :
       {std::tuple{"TX_DISABLE_GPU", "1", "TX_DISABLE_GPU is set"},
        std::tuple{"CUDA_VISIBLE_DEVICES", "", "CUDA_VISIBLE_DEVICES is empty"}}) {
    EXPECT_EXIT(
        {
          setenv(var, value, 1);
          Status s = CudaModuleStatus();
          CHILD_EXPECT(s.code() == absl::StatusCode::kUnavailable && Contains(s, why));
          ExpectNoGpus();
          CHILD_EXPECT(!Mapped("libtensorflux_cuda"));
          std::exit(0);
        },
        ::testing::ExitedWithCode(0), "")
        << var;
  }
}

}  // namespace
}  // namespace tensorflux
