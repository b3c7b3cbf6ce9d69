// PartitionedExecutor: one placed graph run as a step over several devices (the part of TF's
// DirectSession that holds ExecutorsAndKeys and runs them).
//
// Create() partitions the graph (passes/graph_partition.h: one graph per device, _Send/_Recv on
// every cross-device edge) and builds one Executor per partition on its device. A graph whose
// nodes all live on one CPU device is not partitioned: it runs as one executor, unchanged.
//
// Run() runs every partition's executor at once (all but one start on the inter-op pool, the
// last on the calling thread) with one LocalRendezvous for the step (runtime/rendezvous.h) and
// the caller's call frame and cancellation manager, and returns when all have finished. The
// first error aborts the rendezvous (runtime/executor.h), so partitions waiting in a _Recv stop
// instead of hanging; the step returns that first error (the abort status), not the CANCELLED
// that the other partitions then report.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tensorflux/core/status.h"
#include "tensorflux/framework/device_base.h"
#include "tensorflux/graph/graph.h"
#include "tensorflux/passes/graph_partition.h"
#include "tensorflux/runtime/executor.h"

namespace tensorflux {

class PartitionedExecutor {
 public:
  // Every node of `graph` must have an assigned device among `devices` (INVALID_ARGUMENT naming
  // the node otherwise). A _Recv whose key no _Send of the step sends (it would wait forever),
  // and two _Sends of one key, are INVALID_ARGUMENT naming the node. `params.device` is ignored: each partition runs on its own device.
  // `popts.node_to_loc` is ignored (assigned devices decide); the other options are passed on.
  // Executor::Create's errors (unknown kernel, bad attrs) name the node.
  // external_recvs (a worker's graph, distributed/graph_mgr.h): a _Recv may also take its
  // tensor from outside the graph (another task, or a feed the caller sends into the step's
  // rendezvous); only keys sent twice are refused.
  static StatusOr<std::unique_ptr<PartitionedExecutor>> Create(
      const ExecutorParams& params, const std::vector<DeviceBase*>& devices,
      const PartitionOptions& popts, std::unique_ptr<Graph> graph, bool external_recvs = false);

  // Runs one step (see above). args.rendezvous is replaced by the step's own rendezvous (none
  // when the graph was not partitioned and has no _Send/_Recv of its own).
  // Thread-safe: several steps may run at once.
  Status Run(const Executor::Args& args) const;
  // Runs one step with the caller's rendezvous (args.rendezvous, required when the graph has
  // _Send/_Recv nodes: FAILED_PRECONDITION otherwise); `done` gets the step's status (the
  // rendezvous' abort status when the step failed and aborted it) once every partition has
  // finished. Partitions start on args.inter_op_pool (all but the last), so this returns
  // quickly unless there is no pool.
  void RunAsync(const Executor::Args& args, Executor::DoneCallback done) const;
  // Whether steps need a rendezvous (the graph has _Send/_Recv nodes).
  bool needs_rendezvous() const { return needs_rendezvous_; }

  int num_partitions() const { return static_cast<int>(parts_.size()); }
  // The graph partition i runs, and its device.
  const Graph& partition_graph(int i) const { return parts_[i].executor->graph(); }
  DeviceBase* partition_device(int i) const { return parts_[i].device; }

 private:
  struct Part {
    DeviceBase* device = nullptr;
    std::unique_ptr<Executor> executor;
  };
  std::vector<Part> parts_;
  // False for one partition without _Send/_Recv nodes: its steps make no rendezvous.
  bool needs_rendezvous_ = false;
};

}  // namespace tensorflux
