// The CPU device: tensors come from the process's caching cpu_allocator() through a per-device
// view that counts this device's bytes (GetAllocator()->GetStats()); kernels parallelize on an
// intra-op thread pool that a session's CPU devices share.
//
// Its factory (registered for "CPU") makes ConfigProto.device_count["CPU"] devices (default 1)
// "<task>/device:CPU:0", ":1", ... so that graphs can be placed and partitioned over several
// devices on any machine; intra_op_parallelism_threads sizes the shared pool (0 = one thread
// per core, 1 = no pool: single-threaded kernels).
#pragma once

#include <memory>
#include <string>

#include "tensorflux/devices/device.h"

namespace tensorflux {

class CpuDevice : public Device {
 public:
  // `name` is a full device name, e.g. "/job:localhost/replica:0/task:0/device:CPU:0".
  // intra_op_threads <= 0 means ThreadPool::DefaultNumThreads(); 1 means no pool.
  CpuDevice(std::string name, int intra_op_threads);
  // Shares `intra_op_pool` (may be null: single-threaded kernels) with other devices.
  CpuDevice(std::string name, std::shared_ptr<ThreadPool> intra_op_pool);
  ~CpuDevice() override;

  Allocator* GetAllocator() override { return allocator_; }
  ThreadPool* intra_op_thread_pool() override { return pool_.get(); }

  // The pool a session's CPU devices share: nullptr for intra_op_threads == 1.
  static std::shared_ptr<ThreadPool> NewIntraOpPool(int intra_op_threads);

 private:
  std::shared_ptr<ThreadPool> pool_;
  Allocator* allocator_;  // the view for this device id; lives for the process
};

}  // namespace tensorflux
