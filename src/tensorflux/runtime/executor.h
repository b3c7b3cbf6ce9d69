// The executor runs one graph partition on one device by dataflow: each node keeps a count of
// pending inputs, nodes whose count reaches zero are ready, cheap kernels run inline on the
// scheduling thread and expensive ones on the inter-op pool. A tensor is released when its last
// consumer has run. The first error stops the step (remaining nodes are not started) and is
// returned with the failing node's name and op.
//
// Reference edges (TF 1.x variables): a Ref(T) output carries the variable's DT_RESOURCE handle;
// a consumer whose input is not a reference gets the variable's value, read under its lock when
// that consumer starts (framework/resource_var.h).
#pragma once

#include <functional>
#include <memory>

#include "tensorflux/core/status.h"
#include "tensorflux/core/threadpool.h"
#include "tensorflux/framework/call_frame.h"
#include "tensorflux/framework/cancellation.h"
#include "tensorflux/framework/device_base.h"
#include "tensorflux/graph/graph.h"
#include "tensorflux/config.pb.h"

namespace tensorflux {

class Rendezvous;

struct ExecutorParams {
  DeviceBase* device = nullptr;  // required
  // Fail the step at the first node whose floating-point output holds a NaN or Inf
  // (ConfigProto.check_numerics): INVALID_ARGUMENT "{{node n}} (op Op): output 0 has NaN values".
  // Fed values (_Arg outputs) are not checked; the first node computing from them is. After a
  // node that updates variables in place (Assign*, Apply*/ResourceApply*, SparseApply*,
  // Scatter*), the variables it wrote are checked: "{{node n}} (op ApplyGradientDescent):
  // updated variable w (input 0) has Inf values". Off, it costs nothing.
  bool check_numerics = false;
};

class Executor {
 public:
  struct Args {
    int64_t step_id = 0;
    CallFrameInterface* call_frame = nullptr;  // feeds (_Arg) and fetches (_Retval)
    CancellationManager* cancellation_manager = nullptr;  // optional
    // Optional; the step's first error aborts it (Rendezvous::StartAbort) before the
    // cancellation manager is cancelled, so partitions waiting in a _Recv stop with that error.
    Rendezvous* rendezvous = nullptr;
    ThreadPool* inter_op_pool = nullptr;  // nullptr: run everything on the calling thread
    // With no inter_op_pool: runs the work that another thread hands to this step (an async
    // kernel's done, called by the thread that finished its wait: an enqueue of another step, a
    // sender, a cancellation). nullptr: that thread runs it. Executor::Run sets it so that the
    // work comes back to the thread waiting in Run (see there).
    std::function<void(std::function<void()>)>* runner = nullptr;
    // When non-null, one NodeExecStats per node run (runtime/node_exec_stats.h), merged into the
    // DeviceStepStats of this executor's device when the step ends.
    StepStats* step_stats = nullptr;
  };
  using DoneCallback = std::function<void(const Status&)>;

  // Builds one kernel per node (errors name the node: unknown kernel, bad attrs) and the flat
  // node array. The graph must be acyclic. The executor keeps `graph` alive.
  static StatusOr<std::unique_ptr<Executor>> Create(const ExecutorParams& params,
                                                    std::unique_ptr<const Graph> graph);
  virtual ~Executor() = default;

  // Runs one step; `done` is called exactly once, from any thread. Thread-safe: several steps
  // may run at once.
  virtual void RunAsync(const Args& args, DoneCallback done) = 0;
  // Blocking form. With neither inter_op_pool nor runner, every kernel of the step runs on the
  // calling thread: work that another thread hands to the step (a dequeue that another step's
  // enqueue finished) is queued for this thread, which runs it while it waits, rather than run
  // by that thread (which would then run the rest of this step before its own returned, and
  // deadlock where that rest waits for what the other thread does next, e.g. a lock it holds).
  Status Run(const Args& args);

  virtual const Graph& graph() const = 0;
};

}  // namespace tensorflux
