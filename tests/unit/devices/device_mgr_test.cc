// Devices, DeviceMgr and DeviceFactory: N logical CPU devices from ConfigProto.device_count
// (shared intra-op pool, an allocator view and a ResourceMgr each), lookup by full or partial
// name, a second device type through a registered factory (the hook the GPU device uses), and
// bad configs.
#include "tensorflux/devices/device_mgr.h"

#include <algorithm>
#include <set>

#include "gtest/gtest.h"
#include "tensorflux/core/tensor.h"
#include "tensorflux/devices/cpu_device.h"
#include "tensorflux/devices/cuda_api.h"
#include "tensorflux/framework/resource_mgr.h"
#include "tensorflux/runtime/local_session.h"

namespace tensorflux {
namespace {

constexpr char kTask[] = "/job:localhost/replica:0/task:0";

ConfigProto Config(std::initializer_list<std::pair<const char*, int>> counts, int intra = 0) {
  ConfigProto c;
  for (const auto& [type, n] : counts) (*c.mutable_device_count())[type] = n;
  c.set_intra_op_parallelism_threads(intra);
  return c;
}

std::unique_ptr<DeviceMgr> MustCreate(const ConfigProto& c) {
  auto m = DeviceMgr::Create(c);
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? *std::move(m) : nullptr;
}

// A device type that only appears when the config asks for it, standing in for a GPU factory.
class TestDevice : public Device {
 public:
  explicit TestDevice(const std::string& name) : Device(name, 1 << 20, "test device") {}
  Allocator* GetAllocator() override { return cpu_allocator(); }
};

class TestDeviceFactory : public DeviceFactory {
 public:
  Status CreateDevices(const ConfigProto& config, const std::string& prefix,
                       std::vector<std::unique_ptr<Device>>* devices) override {
    TX_ASSIGN_OR_RETURN(const int n, DeviceCount(config, "TX_TEST_DEV", 0));
    for (int i = 0; i < n; ++i) {
      devices->push_back(
          std::make_unique<TestDevice>(absl::StrCat(prefix, "/device:TX_TEST_DEV:", i)));
    }
    return OkStatus();
  }
};
TX_REGISTER_DEVICE_FACTORY("TX_TEST_DEV", TestDeviceFactory, 100);

struct TestResource : ResourceBase {
  static constexpr const char* kTypeName = "TestResource";
  std::string DebugString() const override { return "TestResource"; }
};

TEST(DeviceMgrTest, DefaultIsOneCpuDevice) {
  auto mgr = MustCreate(ConfigProto());
  ASSERT_EQ(mgr->ListDevices().size(), 1u);
  Device* d = mgr->ListDevices()[0];
  EXPECT_EQ(d->name(), "/job:localhost/replica:0/task:0/device:CPU:0");
  EXPECT_EQ(d->device_type(), "CPU");
  EXPECT_EQ(mgr->HostCPU(), d);
  const DeviceAttributes& a = d->attributes();
  EXPECT_EQ(a.name(), d->name());
  EXPECT_EQ(a.device_type(), "CPU");
  EXPECT_NE(a.incarnation(), 0u);
  EXPECT_GT(a.memory_limit(), 0);
  EXPECT_FALSE(a.physical_device_desc().empty());
  EXPECT_NE(d->resource_manager(), nullptr);
  EXPECT_EQ(d->parsed_name().id, 0);
  EXPECT_TRUE(d->parsed_name().IsFullySpecified());
}

TEST(DeviceMgrTest, FourLogicalCpuDevices) {
  auto mgr = MustCreate(Config({{"CPU", 4}}, /*intra=*/3));
  const auto& devs = mgr->ListDevices();
  ASSERT_EQ(devs.size(), 4u);
  std::set<uint64_t> incarnations;
  std::set<ResourceMgr*> rms;
  std::set<Allocator*> allocators;
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(devs[i]->name(), absl::StrCat(kTask, "/device:CPU:", i));
    incarnations.insert(devs[i]->attributes().incarnation());
    rms.insert(devs[i]->resource_manager());
    allocators.insert(devs[i]->GetAllocator());
    // One intra-op pool of 3 threads shared by all four.
    ASSERT_NE(devs[i]->intra_op_thread_pool(), nullptr);
    EXPECT_EQ(devs[i]->intra_op_thread_pool(), devs[0]->intra_op_thread_pool());
  }
  EXPECT_EQ(devs[0]->intra_op_thread_pool()->NumThreads(), 3);
  EXPECT_EQ(incarnations.size(), 4u);
  EXPECT_EQ(rms.size(), 4u);
  EXPECT_EQ(allocators.size(), 4u);
  EXPECT_EQ(devs[0]->GetAllocator()->Name(), "cpu");
  EXPECT_EQ(devs[2]->GetAllocator()->Name(), "cpu_2");

  // A single-threaded config has no pool.
  auto one = MustCreate(Config({{"CPU", 2}}, /*intra=*/1));
  EXPECT_EQ(one->ListDevices()[1]->intra_op_thread_pool(), nullptr);
}

TEST(DeviceMgrTest, AllocatorViewCountsItsOwnDevice) {
  auto mgr = MustCreate(Config({{"CPU", 2}}));
  Allocator* a0 = mgr->ListDevices()[0]->GetAllocator();
  Allocator* a1 = mgr->ListDevices()[1]->GetAllocator();
  const int64_t before0 = a0->GetStats().bytes_in_use;
  const int64_t before1 = a1->GetStats().bytes_in_use;
  const int64_t allocs1 = a1->GetStats().num_allocs;
  {
    Tensor t(a1, DT_FLOAT, TensorShape({1000}));
    EXPECT_EQ(a1->GetStats().bytes_in_use - before1, 4000);
    EXPECT_EQ(a1->GetStats().num_allocs - allocs1, 1);
    EXPECT_GE(a1->GetStats().peak_bytes_in_use, before1 + 4000);
    EXPECT_EQ(a0->GetStats().bytes_in_use, before0);
  }
  EXPECT_EQ(a1->GetStats().bytes_in_use, before1);
}

TEST(DeviceMgrTest, EachDeviceHasItsOwnResources) {
  auto mgr = MustCreate(Config({{"CPU", 2}}));
  ResourceMgr* rm0 = mgr->ListDevices()[0]->resource_manager();
  ResourceMgr* rm1 = mgr->ListDevices()[1]->resource_manager();
  ASSERT_TRUE(rm0->Create<TestResource>("", "v", std::make_shared<TestResource>()).ok());
  EXPECT_TRUE(rm0->Lookup<TestResource>("", "v").ok());
  EXPECT_EQ(rm1->Lookup<TestResource>("", "v").status().code(), absl::StatusCode::kNotFound);
  mgr->ClearResources();
  EXPECT_EQ(rm0->Lookup<TestResource>("", "v").status().code(), absl::StatusCode::kNotFound);
}

TEST(DeviceMgrTest, LookupByFullOrPartialName) {
  auto mgr = MustCreate(Config({{"CPU", 3}}));
  Device* want = mgr->ListDevices()[2];
  for (const char* name : {"/job:localhost/replica:0/task:0/device:CPU:2", "/device:CPU:2",
                           "/cpu:2", "CPU:2", "/job:localhost/cpu:2"}) {
    auto d = mgr->LookupDevice(name);
    ASSERT_TRUE(d.ok()) << name << ": " << d.status();
    EXPECT_EQ(*d, want) << name;
  }
  auto missing = mgr->LookupDevice("/gpu:0");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(std::string(missing.status().message()).find("device:CPU:1"), std::string::npos)
      << missing.status();
  EXPECT_EQ(mgr->LookupDevice("/cpu:3").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(mgr->LookupDevice("/job:worker/cpu:0").status().code(),
            absl::StatusCode::kNotFound);
  auto ambiguous = mgr->LookupDevice("/device:CPU:*");
  EXPECT_EQ(ambiguous.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(ambiguous.status().message()).find("matches 3 devices"),
            std::string::npos)
      << ambiguous.status();
  EXPECT_EQ(mgr->LookupDevice("").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(mgr->LookupDevice("/cpu:x").status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(DeviceMgrTest, RegisteredFactoryAddsItsType) {
  // Absent from the config: the test factory makes none.
  EXPECT_EQ(MustCreate(ConfigProto())->ListDevices().size(), 1u);
  auto mgr = MustCreate(Config({{"CPU", 2}, {"TX_TEST_DEV", 2}}));
  std::vector<std::string> names;
  for (Device* d : mgr->ListDevices()) names.push_back(d->name());
  EXPECT_EQ(names, (std::vector<std::string>{absl::StrCat(kTask, "/device:CPU:0"),
                                             absl::StrCat(kTask, "/device:CPU:1"),
                                             absl::StrCat(kTask, "/device:TX_TEST_DEV:0"),
                                             absl::StrCat(kTask, "/device:TX_TEST_DEV:1")}));
  EXPECT_EQ(mgr->ListDevices()[3]->device_type(), "TX_TEST_DEV");
  EXPECT_EQ(DeviceFactory::DevicePriority("TX_TEST_DEV"), 100);
  EXPECT_EQ(DeviceFactory::DevicePriority("CPU"), kCpuDevicePriority);
  EXPECT_EQ(DeviceFactory::DevicePriority("GPU"), kGpuDevicePriority);  // with a factory or not
  EXPECT_NE(DeviceFactory::GetFactory("CPU"), nullptr);
  // Asking for more GPUs than the machine has (none without a GPU) gives those it has.
  EXPECT_EQ(MustCreate(Config({{"GPU", 2}}))->ListDevices().size(),
            1u + std::min(2, CudaDeviceCount()));
  EXPECT_EQ(MustCreate(Config({{"GPU", 0}}))->ListDevices().size(), 1u);
}

TEST(DeviceMgrTest, BadDeviceCounts) {
  for (const ConfigProto& c : {Config({{"CPU", 0}}), Config({{"CPU", -1}}),
                               Config({{"GPU", -2}}), Config({{"TX_TEST_DEV", -1}})}) {
    auto m = DeviceMgr::Create(c);
    ASSERT_FALSE(m.ok()) << c.ShortDebugString();
    EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument) << m.status();
    EXPECT_NE(std::string(m.status().message()).find("device_count"), std::string::npos)
        << m.status();
    // A session with such a config fails the same way, at creation and on every call.
    SessionOptions opts;
    opts.config = c;
    EXPECT_EQ(NewSession(opts).status().code(), absl::StatusCode::kInvalidArgument);
    LocalSession s(opts);
    EXPECT_EQ(s.Create(GraphDef()).code(), absl::StatusCode::kInvalidArgument);
    std::vector<DeviceAttributes> devs;
    EXPECT_EQ(s.ListDevices(&devs).code(), absl::StatusCode::kInvalidArgument);
  }
}

TEST(DeviceMgrTest, SessionListsItsDevices) {
  SessionOptions opts;
  opts.config = Config({{"CPU", 3}});
  auto s = NewSession(opts);
  ASSERT_TRUE(s.ok()) << s.status();
  std::vector<DeviceAttributes> devs;
  ASSERT_TRUE((*s)->ListDevices(&devs).ok());
  ASSERT_EQ(devs.size(), 3u);
  EXPECT_EQ(devs[1].name(), absl::StrCat(kTask, "/device:CPU:1"));
  EXPECT_EQ(devs[1].device_type(), "CPU");
}

}  // namespace
}  // namespace tensorflux
