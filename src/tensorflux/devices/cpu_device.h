// The CPU device: the caching cpu_allocator() and an intra-op thread pool shared by kernels.
#pragma once

#include <memory>
#include <string>

#include "tensorflux/framework/device_base.h"

namespace tensorflux {

class CpuDevice : public DeviceBase {
 public:
  // `name` is a full device name, e.g. "/job:localhost/replica:0/task:0/device:CPU:0".
  // intra_op_threads <= 0 means ThreadPool::DefaultNumThreads().
  CpuDevice(std::string name, int intra_op_threads);
  ~CpuDevice() override;

  const std::string& name() const override { return name_; }
  const std::string& device_type() const override { return type_; }
  Allocator* GetAllocator() override;
  ThreadPool* intra_op_thread_pool() override { return pool_.get(); }
  ResourceMgr* resource_manager() override { return resource_mgr_; }
  void set_resource_manager(ResourceMgr* rm) { resource_mgr_ = rm; }

 private:
  std::string name_;
  std::string type_ = DEVICE_CPU;
  std::unique_ptr<ThreadPool> pool_;
  ResourceMgr* resource_mgr_ = nullptr;
};

}  // namespace tensorflux
