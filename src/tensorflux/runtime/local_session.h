// LocalSession: the in-process Session (TF's DirectSession). Its devices come from
// ConfigProto.device_count through the registered device factories (devices/device_mgr.h):
// "/job:localhost/replica:0/task:0/device:CPU:0" and, with device_count {"CPU": N}, CPU:1 ..
// CPU:N-1 (GPUs when a GPU factory is registered). A bad device_count makes every call fail
// with INVALID_ARGUMENT (NewSession returns it).
//
// The graph logic (Create/Extend, feed and fetch checks, rewrite, passes, placement) is
// runtime/graph_execution_state.h, shared with the distributed master.
// Create/Extend keep the session's GraphDef and import it on every change, so a bad graph fails
// there with the import's error (NOT_FOUND for an unknown op, INVALID_ARGUMENT for bad attrs,
// inputs or a cycle). Extend appends nodes whose names must be new (INVALID_ARGUMENT otherwise).
//
// Run(feeds, fetches, targets):
// - feeds are checked against the graph: a well-formed tensor name ("n", "n:i"; "n" is "n:0"),
//   an existing node and output (NOT_FOUND), the output's base dtype (INVALID_ARGUMENT
//   "Feed for tensor 'x:0' must be a float tensor, got int32"), a tensor fed once; when the fed
//   node is a Placeholder or PlaceholderWithDefault with a known-rank `shape` attr, the fed
//   shape must be compatible with it (INVALID_ARGUMENT) -- except that a placeholder declared
//   scalar (rank 0) accepts a value of any shape, as TF's C API does (graphs such as
//   rust_addition declare `shape {}` and are fed vectors);
// - fetches must name existing tensors (NOT_FOUND); fetching a fed tensor returns the fed value;
//   the same tensor may be fetched more than once;
// - targets name nodes (errors come from RewriteGraphForExecution: NOT_FOUND for a missing node,
//   INVALID_ARGUMENT for a tensor name);
// - the pruned, rewritten graph (_Arg/_Retval) is placed (below), partitioned into one graph per
//   device (passes/graph_partition.h: _Send/_Recv on every cross-device edge) and given one
//   Executor per partition (runtime/partitioned_executor.h), once per signature (sorted feeds,
//   fetches in order, sorted targets), and cached; a needed unfed Placeholder fails at run time
//   with the Placeholder kernel's INVALID_ARGUMENT.
// Placement (passes/placer.h) follows the nodes' device requests, colocation and kernels; soft
// placement is on unless ConfigProto.allow_soft_placement is set to false (then an
// unsatisfiable request is INVALID_ARGUMENT), and its notes go to stderr (the first 5 and a
// count of the rest, unless log_device_placement is on). A stateful node
// (variable, iterator) keeps the device of its first placement for the session's life, across
// signatures and Extend, as TF's stateful placements do; that first placement is the whole
// graph's (every reader, assign and optimizer update of the variable taken into account), made
// when a step first needs a stateful node not placed yet, so the order in which signatures run
// does not change where a variable lives. ConfigProto.log_device_placement
// writes "node: (Op): device" for each node to stderr when a signature is placed (after the
// requests the Placer ignored for a variable's, passes/placer.h),
// RunOptions.log_device_placement on every step that asks.
// A step runs every partition at once with one rendezvous (runtime/rendezvous.h); the first
// error in any partition stops the others (also those waiting in a _Recv) and is what Run
// returns.
// Run is thread-safe: executors for one signature run concurrently. Cheap kernels run on the
// calling thread, expensive ones on the inter-op pool (ConfigProto.inter_op_parallelism_threads:
// N > 0 = N threads, < 0 = everything on the calling thread, 0 = the calling thread when the
// session's only device is a CPU, else one per core); kernels parallelize on the intra-op
// pool (intra_op_parallelism_threads: 0 = one per core, 1 = single-threaded). The calling
// thread is the better default where the step's time is in kernels that use every core
// themselves (oneDNN, ParallelFor: measured on 2 cores, docs/PERFORMANCE.md 2026-12-02); a
// graph of many independent kernels too small to split (hundreds of small variables' updates
// on a many-core machine, say) may run faster with an explicit inter_op_parallelism_threads.
// RunOptions: trace_level other than NO_TRACE fills run_metadata->step_stats (one
// DeviceStepStats per device, one NodeExecStats per node run, appended to any already there;
// the fields are in runtime/node_exec_stats.h); timeout_in_ms (else
// ConfigProto.operation_timeout_in_ms) > 0 cancels a step that runs longer, returning
// DEADLINE_EXCEEDED; output_partition_graphs adds the executed graphs (one per device, with
// their _Send/_Recv nodes) to run_metadata->partition_graphs.
// ConfigProto.check_numerics (a TensorFlux extension) fails a step at the first node whose
// floating-point output holds a NaN or Inf, naming it (runtime/executor.h).
// Functions of the graph's library (GraphDef.library, merged by Extend) run through the
// session's FunctionRuntime (runtime/function_runtime.h), registered in the device's
// ResourceMgr, where kernels find it (GetFunctionLibrary in framework/function.h).
// Variables and other resources live in the ResourceMgr of the device they are placed on
// (framework/resource_mgr.h): they persist across Run calls and are destroyed by Close() or the
// destructor.
// Close() cancels the running steps (they end with CANCELLED "the session was closed") and
// releases graph, executors and resources; later Create/Extend/Run return CANCELLED.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "tensorflux/core/threadpool.h"
#include "tensorflux/devices/device_mgr.h"
#include "tensorflux/framework/cancellation.h"
#include "tensorflux/graph/graph.h"
#include "tensorflux/runtime/executor.h"
#include "tensorflux/runtime/function_runtime.h"
#include "tensorflux/runtime/graph_execution_state.h"
#include "tensorflux/runtime/partitioned_executor.h"
#include "tensorflux/runtime/session.h"

namespace tensorflux {

class LocalSession : public Session {
 public:
  explicit LocalSession(const SessionOptions& options);
  ~LocalSession() override;

  Status Create(const GraphDef& graph) override;
  Status Extend(const GraphDef& graph) override;
  using Session::Run;
  Status Run(const RunOptions& run_options,
             const std::vector<std::pair<std::string, Tensor>>& inputs,
             const std::vector<std::string>& output_tensor_names,
             const std::vector<std::string>& target_node_names, std::vector<Tensor>* outputs,
             RunMetadata* run_metadata) override;
  Status Close() override;
  Status ListDevices(std::vector<DeviceAttributes>* response) override;

  // OK, or why the devices could not be created (then every call returns it).
  const Status& init_status() const { return init_status_; }

  // Number of cached executors (one per distinct run signature); for tests.
  int NumCachedExecutors() const;

 private:
  struct ExecutorEntry {
    std::unique_ptr<PartitionedExecutor> executor;
    int num_retvals = 0;
    std::vector<std::string> placement;  // DevicePlacementLines of the placed graph
  };

  StatusOr<std::shared_ptr<ExecutorEntry>> GetOrCreateExecutor(
      const std::shared_ptr<const Graph>& graph, const RunSignature& sig);

  SessionOptions options_;
  Status init_status_;
  // Runs the library's functions (tf.data map/filter) on the host CPU device. Declared first so
  // it is destroyed last: iterators in the devices' resource managers may call it until they
  // are gone.
  std::shared_ptr<FunctionRuntime> function_runtime_;
  std::unique_ptr<DeviceMgr> device_mgr_;  // the devices, each with its ResourceMgr
  Device* host_device_ = nullptr;          // device_mgr_->HostCPU()
  std::unique_ptr<ThreadPool> inter_op_pool_;  // nullptr: run on the calling thread
  std::atomic<int64_t> next_step_id_{1};
  // The graph, run signatures, step graphs and stateful placements.
  GraphExecutionState state_;

  // Cancelled by Close(): every running step registers its own CancellationManager here, so a
  // step blocked in a queue, Recv or other cancellable kernel ends with CANCELLED instead of
  // outliving the session (DirectSession's cancellation_manager_ in TF).
  CancellationManager close_cancellation_;

  // Guards the members below (std::mutex, visible to ThreadSanitizer; never held while running).
  mutable std::mutex mu_;
  bool closed_ = false;
  absl::flat_hash_map<std::string, std::shared_ptr<ExecutorEntry>> executors_;
};

// A LocalSession, or its init_status() error (NewSession's target "").
StatusOr<std::unique_ptr<Session>> NewLocalSession(const SessionOptions& options);

}  // namespace tensorflux
