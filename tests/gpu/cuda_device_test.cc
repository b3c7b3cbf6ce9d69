// CudaDevice, its allocator and the host <-> GPU copies (devices/cuda_api.h). The first tests run
// on any machine (they check that a CUDA build without a GPU reports none and fails cleanly);
// the others need a GPU and skip without one.
#include <cstring>

#include "gpu_test_util.h"

namespace tensorflux {
namespace {

using test::TestGpu;

// Tests of the CUDA device itself: a real GPU only.
class GpuTest : public test::GpuTest {
 protected:
  void SetUp() override {
    SkipIfCpuStandIn();
    test::GpuTest::SetUp();
  }
};

TEST(CudaApiTest, BuiltAndCountsWithoutCrashing) {
  EXPECT_TRUE(CudaSupportBuilt());
  const int n = CudaDeviceCount();
  EXPECT_GE(n, 0);
  if (n == 0) {
    // No GPU (or no driver): making a device is UNAVAILABLE, never a crash.
    auto d = NewCudaDevice("/job:localhost/replica:0/task:0/device:GPU:0", 0);
    EXPECT_EQ(d.status().code(), absl::StatusCode::kUnavailable) << d.status();
    EXPECT_EQ(CudaDeviceDescription(0), "");
  }
}

TEST(CudaApiTest, CopiesRejectADeviceThatIsNotAGpu) {
  test::TestCpuDevice cpu;
  Tensor out;
  Status s = CopyHostToCudaDevice(&cpu, Tensor::Scalar<float>(1), &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_FALSE(IsCudaDevice(&cpu));
}

TEST(CudaApiTest, OrdinalBeyondTheDeviceCountIsUnavailable) {
  auto d = NewCudaDevice("/device:GPU:99", CudaDeviceCount() + 3);
  EXPECT_EQ(d.status().code(), absl::StatusCode::kUnavailable) << d.status();
}

TEST_F(GpuTest, DeviceNameTypeAndDescription) {
  EXPECT_TRUE(IsCudaDevice(TestGpu()));
  EXPECT_EQ(TestGpu()->device_type(), "GPU");
  EXPECT_EQ(TestGpu()->name(), "/job:localhost/replica:0/task:0/device:GPU:0");
  EXPECT_NE(CudaDeviceDescription(0).find("compute capability"), std::string::npos);
  auto bytes = CudaDeviceMemoryBytes(0);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  EXPECT_GT(*bytes, int64_t{1} << 30);
}

TEST_F(GpuTest, RoundTripKeepsEveryByte) {
  for (DataType dt : {DT_FLOAT, DT_DOUBLE, DT_HALF, DT_INT32, DT_INT64, DT_BOOL, DT_UINT8}) {
    Tensor host = test::RandomTensor(dt, TensorShape({3, 1000}), 7, -100, 100);
    Tensor dev = test::ToGpu(host);
    EXPECT_EQ(dev.dtype(), dt);
    EXPECT_EQ(dev.shape(), host.shape());
    Tensor back = test::ToHost(dev);
    ASSERT_EQ(back.TotalBytes(), host.TotalBytes());
    EXPECT_EQ(std::memcmp(back.raw_data(), host.raw_data(), host.TotalBytes()), 0)
        << DataTypeString(dt);
  }
  // Empty tensors keep their shape.
  Tensor empty = test::ToHost(test::ToGpu(Tensor(DT_FLOAT, TensorShape({0, 5}))));
  EXPECT_EQ(empty.shape(), TensorShape({0, 5}));
}

TEST_F(GpuTest, StringTensorsCannotGoToTheGpu) {
  Tensor out;
  Status s = CopyHostToCudaDevice(TestGpu(), Tensor::Scalar<std::string>("x"), &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
}

TEST_F(GpuTest, AllocatorCachesFreedBlocks) {
  Allocator* a = TestGpu()->GetAllocator();
  EXPECT_EQ(a->Name(), "cuda:0");
  void* p = a->AllocateRaw(64, 1000);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 256, 0u);
  const AllocatorStats before = a->GetStats();
  a->DeallocateRaw(p, 1000);
  void* q = a->AllocateRaw(64, 1020);  // same 1024-byte class: the cached block
  EXPECT_EQ(q, p);
  const AllocatorStats after = a->GetStats();
  EXPECT_EQ(after.cache_hits, before.cache_hits + 1);
  a->DeallocateRaw(q, 1020);
  EXPECT_EQ(a->AllocateRaw(512, 16), nullptr);  // alignment above cudaMalloc's 256
}

TEST_F(GpuTest, OutOfMemoryIsResourceExhaustedNamingTheSize) {
  // 2^46 bytes (64 TiB): more than any GPU has.
  auto t = Tensor::Allocate(DT_FLOAT, TensorShape({int64_t{1} << 44}), TestGpu()->GetAllocator());
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), absl::StatusCode::kResourceExhausted) << t.status();
  EXPECT_NE(std::string(t.status().message()).find("70368744177664 bytes"), std::string::npos)
      << t.status();
  EXPECT_NE(std::string(t.status().message()).find("cuda:0"), std::string::npos) << t.status();
  // The device still works afterwards.
  Tensor host = test::AsTensor<float>({1, 2, 3}, {3});
  EXPECT_EQ(test::ToDoubles(test::ToHost(test::ToGpu(host))), (std::vector<double>{1, 2, 3}));
}

}  // namespace
}  // namespace tensorflux
