// GraphMgr: the graphs a worker session registered (TF's GraphMgr), each ready to run a step.
//
// Register takes the worker's part of a partitioned graph (RegisterGraphRequest.graph_def):
// nodes on one or several of this worker's devices, each NodeDef.device a full device name
// ("/job:worker/replica:0/task:1/device:CPU:0"), already joined to other tasks by _Send/_Recv
// pairs (the master's partitioning). It imports the graph, splits it once more by device
// (runtime/partitioned_executor.h: _Send/_Recv between this worker's devices) and builds one
// Executor per device, and returns a handle. Errors: the import's (NOT_FOUND for an unknown op,
// INVALID_ARGUMENT for bad attrs, inputs or a cycle), INVALID_ARGUMENT naming the node for a
// node without a device or on a device this worker does not have, the executor's (unknown
// kernel). The graph's function library is added to the worker's function runtime.
//
// A registered graph runs any number of steps, concurrently; it stays registered until
// Deregister (NOT_FOUND for an unknown handle) or the GraphMgr is destroyed.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "tensorflux/core/status.h"
#include "tensorflux/devices/device_mgr.h"
#include "tensorflux/graph.pb.h"
#include "tensorflux/runtime/function_runtime.h"
#include "tensorflux/runtime/partitioned_executor.h"
#include "tensorflux/worker.pb.h"

namespace tensorflux {

class GraphMgr {
 public:
  // One registered graph.
  struct Item {
    std::string handle;
    std::unique_ptr<PartitionedExecutor> executor;
  };

  // `devices` and `function_runtime` must outlive the GraphMgr.
  GraphMgr(const DeviceMgr* devices, FunctionRuntime* function_runtime);

  StatusOr<std::string> Register(const RegisterGraphRequest& request);
  Status Deregister(const std::string& handle);
  // NOT_FOUND naming the handle when it is not registered.
  StatusOr<std::shared_ptr<const Item>> Find(const std::string& handle) const;
  int num_graphs() const;

 private:
  const DeviceMgr* devices_;
  FunctionRuntime* function_runtime_;
  mutable std::mutex mu_;
  int64_t next_handle_ = 0;
  absl::flat_hash_map<std::string, std::shared_ptr<const Item>> graphs_;
};

}  // namespace tensorflux
