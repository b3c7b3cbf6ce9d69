// The dataflow executor (runtime/executor.h).
//
// Create() turns the graph into a flat array of NodeItems: the kernel, where the node's inputs
// live in the step's input-slot array, its data out-edges as (dst item, dst slot) pairs grouped by
// output (the last consumer of an output is marked, so it gets the tensor by move and a kernel may
// forward that buffer), its control out-edges, and its initial pending count (data + control
// in-edges). A step then needs only an input-slot array and an atomic pending count per node.
//
// Scheduling follows TF's executor: the thread that finishes a node pushes its cheap ready
// successors onto a thread-local queue and runs them inline; expensive ones go to the inter-op
// pool, except one, which runs inline behind the queued cheap ones when there are at most a few
// (TF: the last one, only when none are queued), so a chain never leaves its thread; that one is
// the ready node with the most expensive kernels on a path after it. A kernel counts as
// expensive when it says so (OpKernel::IsExpensive) and its measured cost (a moving average of
// cycles per Compute) is above about a pool hand-off. A step's chain of GEMMs thus runs on one
// thread and one oneDNN OpenMP team, whose idle thread libgomp would spin for ~11 ms after each
// (one team is never throttled): the Python package bounds that spin (framework/_pywrap.py;
// reverted 75c4836 without it: 8-32 ms steps under load).
// Step state (slot and pending arrays) is recycled between steps. Locks are std::mutex (rare, off
// the per-node path) so that ThreadSanitizer sees them.
#include "tensorflux/runtime/executor.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include "absl/container/inlined_vector.h"
#include "absl/strings/match.h"
#include "tensorflux/core/allocation_tracker.h"
#include "tensorflux/framework/numerics.h"
#include "tensorflux/framework/op_kernel.h"
#include "tensorflux/framework/rendezvous.h"
#include "tensorflux/framework/resource_var.h"
#include "tensorflux/runtime/node_exec_stats.h"

namespace tensorflux {
namespace {

inline uint64_t CycleNow() {
#if defined(__x86_64__)
  return __rdtsc();
#else
  return static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
#endif
}

// Kernels not yet measured count as expensive (if they say they are).
constexpr uint64_t kUnmeasuredCost = ~uint64_t{0} >> 2;
// Below this many cycles per Compute, running inline beats handing the node to the pool.
constexpr uint64_t kExpensiveCycles = 20000;
// An expensive node runs inline behind at most this many queued cheap nodes (ScheduleReady).
constexpr size_t kMaxCheapAhead = 4;

uint32_t CurrentThreadTag() {
  static std::atomic<uint32_t> next{0};
  thread_local uint32_t tag = next.fetch_add(1);
  return tag;
}

std::mutex g_step_stats_mu;

// The op families that update their ref or resource inputs in place (Assign*,
// Apply*/ResourceApply*, SparseApply*, Scatter*; TF marks only the resource ones stateful):
// under check_numerics the executor checks those variables after them, since they output no
// float value to check.
bool WritesVariables(const Node& node) {
  const std::string& op = node.type_string();
  for (const char* prefix : {"Assign", "Apply", "ResourceApply", "SparseApply",
                             "ResourceSparseApply", "Scatter", "ResourceScatter"}) {
    if (absl::StartsWith(op, prefix)) return true;
  }
  return false;
}

struct OutEdge {
  int src_output;
  int dst;   // item index
  int slot;  // global input slot of the consumer
  bool last;  // last consumer of src_output: gets the tensor by move
};

struct NodeItem {
  const Node* node = nullptr;
  OpKernel* kernel = nullptr;
  int input_start = 0;
  int num_inputs = 0;
  int num_outputs = 0;
  int out_start = 0, out_end = 0;    // in ExecutorImpl::out_edges_
  int ctrl_start = 0, ctrl_end = 0;  // in ExecutorImpl::control_out_
  int deref_start = 0, deref_end = 0;  // in ExecutorImpl::deref_inputs_
  // check_numerics only: the variable inputs an update op writes, in ExecutorImpl::var_inputs_.
  int var_start = 0, var_end = 0;
  bool expensive = true;
  bool async = false;
  bool check_numerics = false;  // ExecutorParams::check_numerics, except for feeds (_Arg)
};

using ReadyList = absl::InlinedVector<int, 8>;

// FIFO of item indices run inline by one thread.
class ReadyQueue {
 public:
  bool empty() const { return head_ == v_.size(); }
  size_t size() const { return v_.size() - head_; }
  // Whether the expensive node kept on this thread (PushExpensive) is still queued.
  bool has_expensive() const { return kept_expensive_ >= 0; }
  void push(int x) { v_.push_back(x); }
  void PushExpensive(int x) {
    v_.push_back(x);
    kept_expensive_ = x;  // a node is ready once per step, so its id is queued once
  }
  int pop() {
    int x = v_[head_++];
    if (head_ == v_.size()) {
      v_.clear();
      head_ = 0;
    }
    if (x == kept_expensive_) kept_expensive_ = -1;
    return x;
  }

 private:
  absl::InlinedVector<int, 16> v_;
  size_t head_ = 0;
  int kept_expensive_ = -1;
};

class ExecutorImpl;

// One step's mutable state. Recycled by the executor between steps.
class Step {
 public:
  explicit Step(const ExecutorImpl* impl);
  void Start(const Executor::Args& args, Executor::DoneCallback done);
  void RunLoop(ReadyQueue* q);
  void ScheduleReady(const int* ready, size_t n, ReadyQueue* q);

 private:
  struct AsyncState {
    AsyncState(Step* s, int i, const OpKernelContext::Params& p)
        : step(s), id(i), params(p), ctx(&params) {}
    Step* step;
    int id;
    OpKernelContext::Params params;
    OpKernelContext ctx;
    ReadyList ready;
    NodeExecStats* stats = nullptr;
    // With stats: what the kernel allocates in ComputeAsync and in continuations it binds
    // (BindAllocationTracker), until its done callback.
    std::unique_ptr<AllocationTracker> tracker;
    std::atomic<bool> handoff{false};
  };

  // Runs one node; true when it was the step's last outstanding node.
  bool ProcessNode(int id, ReadyQueue* q);
  void FillParams(const NodeItem& item, OpKernelContext::Params* p);
  // Replaces the variable handles that ref edges carry into non-ref inputs by their values.
  Status DerefInputs(const NodeItem& item);
  // Releases inputs, checks outputs and passes them on; appends newly ready nodes.
  Status PostCompute(const NodeItem& item, OpKernelContext* ctx, ReadyList* ready);
  void AsyncDone(AsyncState* as);
  bool NodeDone(const ReadyList& ready, ReadyQueue* q);
  void ClearInputs(const NodeItem& item);
  // check_numerics: INVALID_ARGUMENT naming the node and variable when a variable the node
  // updated now holds a NaN or Inf (update ops have no float output to check).
  Status CheckUpdatedVariables(const NodeItem& item);
  void Abort(const Status& s);
  void Finish();
  // Step stats (runtime/node_exec_stats.h); only called when args_.step_stats is set.
  NodeExecStats* StartStats(int id);
  // Compute with op start/end times, outputs and the memory the node allocated.
  void TracedCompute(const NodeItem& item, OpKernelContext* ctx, NodeExecStats* st);
  void EndStats(const NodeItem& item, NodeExecStats* st);

  const ExecutorImpl* impl_;
  std::unique_ptr<Tensor[]> inputs_;
  std::unique_ptr<std::atomic<int>[]> pending_;
  std::function<void(std::function<void()>)> runner_;

  // Per run.
  Executor::Args args_;
  Executor::DoneCallback done_;
  std::unique_ptr<CancellationManager> own_cm_;
  CancellationManager* cm_ = nullptr;
  std::atomic<int64_t> outstanding_{0};
  std::atomic<bool> aborted_{false};
  std::mutex mu_;
  Status status_;
  std::mutex stats_mu_;
  DeviceStepStats dev_stats_;
  // When each node became ready (nanos), kept only while tracing.
  std::unique_ptr<int64_t[]> scheduled_ns_;
};

class ExecutorImpl : public Executor {
 public:
  ExecutorImpl(const ExecutorParams& p, std::unique_ptr<const Graph> g)
      : params_(p), graph_(std::move(g)) {}
  Status Initialize();
  void RunAsync(const Args& args, DoneCallback done) override;
  const Graph& graph() const override { return *graph_; }

  bool IsCheap(int id) const {
    return !items_[id].expensive || cost_[id].load(std::memory_order_relaxed) < kExpensiveCycles;
  }
  void RecordCost(int id, uint64_t cycles) const {
    uint64_t old = cost_[id].load(std::memory_order_relaxed);
    uint64_t v = old == kUnmeasuredCost ? cycles : (old * 3 + cycles) / 4;
    cost_[id].store(v, std::memory_order_relaxed);
  }
  void ReleaseStep(Step* s) const {
    std::lock_guard<std::mutex> l(free_mu_);
    free_steps_.emplace_back(s);
  }

  ExecutorParams params_;
  std::unique_ptr<const Graph> graph_;
  std::vector<std::unique_ptr<OpKernel>> kernels_;
  std::vector<NodeItem> items_;
  std::vector<OutEdge> out_edges_;
  std::vector<int> control_out_;
  // Inputs (indices into the node's inputs) fed by a ref edge into a non-ref input: the
  // executor reads the variable's value there when the node starts (framework/resource_var.h).
  std::vector<int> deref_inputs_;
  std::vector<int> var_inputs_;  // NodeItem::var_start/var_end
  std::vector<int> initial_pending_;
  std::vector<int> roots_;
  // Per item: the most kernels that say they are expensive on a path from it to the end of the
  // graph, itself included (ScheduleReady keeps the ready expensive node with the most inline).
  std::vector<int> expensive_height_;
  int total_inputs_ = 0;
  std::unique_ptr<std::atomic<uint64_t>[]> cost_;

  mutable std::mutex free_mu_;
  mutable std::vector<std::unique_ptr<Step>> free_steps_;
};

// ---------------------------------------------------------------- construction

// The node's NodeDef with its `input` list rebuilt from the graph's edges (Node::def() does not
// keep inputs in sync). INVALID_ARGUMENT when a data input is unconnected.
StatusOr<NodeDef> KernelNodeDef(const Node* n) {
  NodeDef nd = n->def();
  nd.clear_input();
  std::vector<std::string> data(n->num_inputs());
  std::vector<bool> connected(n->num_inputs(), false);
  std::vector<std::string> control;
  for (const Edge* e : n->in_edges()) {
    if (e->IsControlEdge()) {
      control.push_back(absl::StrCat("^", e->src()->name()));
      continue;
    }
    int i = e->dst_input();
    if (i < 0 || i >= n->num_inputs() || connected[i]) {
      return errors::InvalidArgument("{{node ", n->name(), "}} (op ", n->type_string(),
                                     "): bad data edge into input ", i);
    }
    connected[i] = true;
    data[i] = e->src_output() == 0 ? e->src()->name()
                                   : absl::StrCat(e->src()->name(), ":", e->src_output());
  }
  for (int i = 0; i < n->num_inputs(); ++i) {
    if (!connected[i]) {
      return errors::InvalidArgument("{{node ", n->name(), "}} (op ", n->type_string(),
                                     "): input ", i, " is not connected");
    }
    nd.add_input(data[i]);
  }
  for (auto& c : control) nd.add_input(c);
  return nd;
}

Status ExecutorImpl::Initialize() {
  if (params_.device == nullptr) return errors::InvalidArgument("Executor needs a device");
  if (graph_ == nullptr) return errors::InvalidArgument("Executor needs a graph");
  std::vector<Node*> nodes = graph_->nodes();
  const int n = static_cast<int>(nodes.size());
  std::vector<int> index_of(graph_->num_node_ids(), -1);
  for (int i = 0; i < n; ++i) index_of[nodes[i]->id()] = i;

  items_.resize(n);
  kernels_.resize(n);
  initial_pending_.assign(n, 0);
  for (int i = 0; i < n; ++i) {
    const Node* node = nodes[i];
    NodeItem& it = items_[i];
    it.node = node;
    TX_ASSIGN_OR_RETURN(NodeDef nd, KernelNodeDef(node));
    Status s = CreateOpKernel(params_.device, nd, &kernels_[i]);
    if (!s.ok()) return errors::AttachNodeContext(s, node->name(), node->type_string());
    OpKernel* k = kernels_[i].get();
    if (k->num_inputs() != node->num_inputs() || k->num_outputs() != node->num_outputs()) {
      return errors::Internal("{{node ", node->name(), "}} (op ", node->type_string(),
                              "): kernel has ", k->num_inputs(), " inputs and ", k->num_outputs(),
                              " outputs, node has ", node->num_inputs(), " and ",
                              node->num_outputs());
    }
    it.kernel = k;
    it.input_start = total_inputs_;
    it.num_inputs = node->num_inputs();
    it.num_outputs = node->num_outputs();
    it.check_numerics = params_.check_numerics && node->type_string() != "_Arg";
    it.expensive = k->IsExpensive();
    it.async = k->IsAsync();
    total_inputs_ += it.num_inputs;
    it.deref_start = static_cast<int>(deref_inputs_.size());
    for (const Edge* e : node->in_edges()) {
      if (!e->IsControlEdge() && IsRefType(e->src()->output_type(e->src_output())) &&
          !IsRefType(k->input_type(e->dst_input()))) {
        deref_inputs_.push_back(e->dst_input());
      }
    }
    it.deref_end = static_cast<int>(deref_inputs_.size());
    it.var_start = static_cast<int>(var_inputs_.size());
    if (it.check_numerics && WritesVariables(*node)) {
      for (int j = 0; j < it.num_inputs; ++j) {
        const DataType t = k->input_type(j);
        if (IsRefType(t) || t == DT_RESOURCE) var_inputs_.push_back(j);
      }
    }
    it.var_end = static_cast<int>(var_inputs_.size());
  }
  // Out-edges, grouped by output so the last consumer of each output is known.
  for (int i = 0; i < n; ++i) {
    const Node* node = nodes[i];
    NodeItem& it = items_[i];
    std::vector<OutEdge> data;
    it.ctrl_start = static_cast<int>(control_out_.size());
    for (const Edge* e : node->out_edges()) {
      const int dst = index_of[e->dst()->id()];
      ++initial_pending_[dst];
      if (e->IsControlEdge()) {
        control_out_.push_back(dst);
      } else {
        data.push_back({e->src_output(), dst, items_[dst].input_start + e->dst_input(), false});
      }
    }
    it.ctrl_end = static_cast<int>(control_out_.size());
    std::stable_sort(data.begin(), data.end(),
                     [](const OutEdge& a, const OutEdge& b) { return a.src_output < b.src_output; });
    for (size_t k = 0; k < data.size(); ++k) {
      data[k].last = k + 1 == data.size() || data[k + 1].src_output != data[k].src_output;
    }
    it.out_start = static_cast<int>(out_edges_.size());
    out_edges_.insert(out_edges_.end(), data.begin(), data.end());
    it.out_end = static_cast<int>(out_edges_.size());
  }
  // Cycle check (Kahn's algorithm over the items).
  std::vector<int> pending = initial_pending_;
  std::vector<int> stack;
  for (int i = 0; i < n; ++i) {
    if (pending[i] == 0) {
      roots_.push_back(i);
      stack.push_back(i);
    }
  }
  int visited = 0;
  auto visit = [&](int dst) {
    if (--pending[dst] == 0) stack.push_back(dst);
  };
  std::vector<int> order;  // topological
  order.reserve(n);
  while (!stack.empty()) {
    int i = stack.back();
    stack.pop_back();
    ++visited;
    order.push_back(i);
    for (int e = items_[i].out_start; e < items_[i].out_end; ++e) visit(out_edges_[e].dst);
    for (int e = items_[i].ctrl_start; e < items_[i].ctrl_end; ++e) visit(control_out_[e]);
  }
  expensive_height_.assign(n, 0);
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const int i = *it;
    int below = 0;
    for (int e = items_[i].out_start; e < items_[i].out_end; ++e) {
      below = std::max(below, expensive_height_[out_edges_[e].dst]);
    }
    for (int e = items_[i].ctrl_start; e < items_[i].ctrl_end; ++e) {
      below = std::max(below, expensive_height_[control_out_[e]]);
    }
    expensive_height_[i] = below + (items_[i].expensive ? 1 : 0);
  }
  if (visited < n) {
    // Walk back through unfinished inputs from an unfinished node until a node repeats.
    int cur = 0;
    while (pending[cur] == 0) ++cur;
    std::vector<int> seen_at(n, -1);
    std::vector<int> path;
    while (seen_at[cur] < 0) {
      seen_at[cur] = static_cast<int>(path.size());
      path.push_back(cur);
      for (const Edge* e : items_[cur].node->in_edges()) {
        int src = index_of[e->src()->id()];
        if (pending[src] > 0) {
          cur = src;
          break;
        }
      }
    }
    std::string names;
    for (size_t k = seen_at[cur]; k < path.size(); ++k) {
      absl::StrAppend(&names, names.empty() ? "" : ", ", "'", items_[path[k]].node->name(), "'");
    }
    return errors::InvalidArgument("Graph has a cycle through nodes ", names);
  }
  cost_ = std::make_unique<std::atomic<uint64_t>[]>(n);
  for (int i = 0; i < n; ++i) cost_[i].store(kUnmeasuredCost, std::memory_order_relaxed);
  return OkStatus();
}

// ---------------------------------------------------------------- running

Step::Step(const ExecutorImpl* impl) : impl_(impl) {
  inputs_ = std::make_unique<Tensor[]>(impl->total_inputs_ + 1);
  pending_ = std::make_unique<std::atomic<int>[]>(impl->items_.size());
  runner_ = [this](std::function<void()> fn) {
    if (args_.inter_op_pool != nullptr) {
      args_.inter_op_pool->Schedule(std::move(fn));
    } else if (args_.runner != nullptr) {
      (*args_.runner)(std::move(fn));
    } else {
      fn();
    }
  };
}

void Step::Start(const Executor::Args& args, Executor::DoneCallback done) {
  args_ = args;
  done_ = std::move(done);
  if (args.cancellation_manager != nullptr) {
    cm_ = args.cancellation_manager;
  } else {
    own_cm_ = std::make_unique<CancellationManager>();
    cm_ = own_cm_.get();
  }
  aborted_.store(false, std::memory_order_relaxed);
  status_ = OkStatus();
  dev_stats_.Clear();
  const size_t n = impl_->items_.size();
  if (args.step_stats != nullptr && scheduled_ns_ == nullptr) {
    scheduled_ns_ = std::make_unique<int64_t[]>(n);
  }
  for (size_t i = 0; i < n; ++i) {
    pending_[i].store(impl_->initial_pending_[i], std::memory_order_relaxed);
  }
  outstanding_.store(static_cast<int64_t>(impl_->roots_.size()), std::memory_order_release);
  ReadyQueue q;
  ScheduleReady(impl_->roots_.data(), impl_->roots_.size(), &q);
  RunLoop(&q);
}

void Step::ScheduleReady(const int* ready, size_t n, ReadyQueue* q) {
  if (args_.step_stats != nullptr) {
    const int64_t now = nodestats::NowNanos();
    for (size_t i = 0; i < n; ++i) scheduled_ns_[ready[i]] = now;
  }
  ThreadPool* pool = args_.inter_op_pool;
  if (pool == nullptr) {
    for (size_t i = 0; i < n; ++i) q->push(ready[i]);
    return;
  }
  auto schedule = [this, pool](int id) {
    pool->Schedule([this, id] {
      ReadyQueue local;
      local.push(id);
      RunLoop(&local);
    });
  };
  // Of the expensive ready nodes, the one with the most kernels that say they are expensive on
  // a path after it (the critical chain, e.g. a layer's input gradient rather than its kernel
  // gradient) stays on this thread; the others go to the pool.
  int curr_expensive = -1;
  for (size_t i = 0; i < n; ++i) {
    const int id = ready[i];
    if (impl_->IsCheap(id)) {
      q->push(id);
    } else if (curr_expensive < 0) {
      curr_expensive = id;
    } else if (impl_->expensive_height_[id] >= impl_->expensive_height_[curr_expensive]) {
      schedule(curr_expensive);
      curr_expensive = id;
    } else {
      schedule(id);
    }
  }
  if (curr_expensive >= 0) {
    // It runs behind the nodes already queued when those are a few cheap ones (cheap by their
    // measured cost, or because their kernel says it is never expensive): this thread would
    // otherwise run out of work and wait, and waking a pool thread costs more than most cheap
    // kernels. One expensive node at most is kept queued on a thread: a second one (made
    // ready by a cheap node queued before the first) goes to the pool, so independent
    // expensive nodes still run in parallel. TF dispatches it whenever anything cheap is
    // queued; in the bench/peer MLP that sent both of the loss gradient's MatMuls to the pool
    // and left the calling thread idle for the rest of the step.
    if (!q->has_expensive() && q->size() <= kMaxCheapAhead) {
      q->PushExpensive(curr_expensive);
    } else {
      schedule(curr_expensive);
    }
  }
}

void Step::RunLoop(ReadyQueue* q) {
  while (!q->empty()) {
    if (ProcessNode(q->pop(), q)) {
      Finish();  // `this` may be reused from here on
      return;
    }
  }
}

void Step::FillParams(const NodeItem& item, OpKernelContext::Params* p) {
  p->step_id = args_.step_id;
  p->op_kernel = item.kernel;
  p->device = impl_->params_.device;
  p->inputs = &inputs_[item.input_start];
  p->num_inputs = item.num_inputs;
  p->call_frame = args_.call_frame;
  p->cancellation_manager = cm_;
  p->rendezvous = args_.rendezvous;
  p->runner = &runner_;
}

bool Step::ProcessNode(int id, ReadyQueue* q) {
  const NodeItem& item = impl_->items_[id];
  ReadyList ready;
  if (aborted_.load(std::memory_order_relaxed)) {
    ClearInputs(item);
    return NodeDone(ready, q);
  }
  if (cm_->IsCancelled()) {
    Abort(errors::Cancelled("Step ", args_.step_id, " was cancelled"));
    ClearInputs(item);
    return NodeDone(ready, q);
  }
  NodeExecStats* stats = args_.step_stats != nullptr ? StartStats(id) : nullptr;
  if (item.deref_start != item.deref_end) {
    Status s = DerefInputs(item);
    if (!s.ok()) {
      Abort(errors::AttachNodeContext(s, item.node->name(), item.node->type_string()));
      ClearInputs(item);
      if (stats != nullptr) EndStats(item, stats);
      return NodeDone(ready, q);
    }
  }
  if (item.async) {
    OpKernelContext::Params params;
    FillParams(item, &params);
    auto* as = new AsyncState(this, id, params);
    as->stats = stats;
    if (stats != nullptr) {
      as->tracker = std::make_unique<AllocationTracker>();
      nodestats::SetOpStart(stats, nodestats::NowNanos());
    }
    {
      ScopedAllocationTracking tracking(as->tracker.get());
      static_cast<AsyncOpKernel*>(item.kernel)->ComputeAsync(&as->ctx, [as] {
        as->step->AsyncDone(as);
      });
    }
    if (as->handoff.exchange(true, std::memory_order_acq_rel)) {
      // The callback already ran; continue with its ready nodes on this thread.
      ready = std::move(as->ready);
      delete as;
      return NodeDone(ready, q);
    }
    return false;  // the callback will finish the node
  }
  OpKernelContext::Params params;
  FillParams(item, &params);
  OpKernelContext ctx(&params);
  const bool measure = item.expensive && args_.inter_op_pool != nullptr;
  const uint64_t t0 = measure ? CycleNow() : 0;
  if (stats == nullptr) {
    item.kernel->Compute(&ctx);
  } else {
    TracedCompute(item, &ctx, stats);
  }
  if (measure) impl_->RecordCost(id, CycleNow() - t0);
  Status s = PostCompute(item, &ctx, &ready);
  if (!s.ok()) Abort(s);
  if (stats != nullptr) EndStats(item, stats);
  return NodeDone(ready, q);
}

void Step::AsyncDone(AsyncState* as) {
  // Nothing from here on counts for the node, whose tracker may be installed on this thread
  // (a bound continuation calling done) and goes with `as`.
  ScopedAllocationTracking untracked(nullptr);
  const NodeItem& item = impl_->items_[as->id];
  if (as->stats != nullptr) {
    nodestats::SetOpEnd(as->stats, nodestats::NowNanos());
    if (as->ctx.status().ok()) {
      nodestats::SetOutputs(as->stats, as->ctx.outputs(), as->tracker.get());
    }
    nodestats::SetMemory(as->stats, *as->tracker);
  }
  Status s = PostCompute(item, &as->ctx, &as->ready);
  if (!s.ok()) Abort(s);
  if (as->stats != nullptr) EndStats(item, as->stats);
  if (!as->handoff.exchange(true, std::memory_order_acq_rel)) return;  // ComputeAsync continues
  ReadyList ready = std::move(as->ready);
  delete as;
  ReadyQueue q;
  if (NodeDone(ready, &q)) {
    Finish();
    return;
  }
  RunLoop(&q);
}

Status Step::DerefInputs(const NodeItem& item) {
  Tensor* in = &inputs_[item.input_start];
  for (int d = item.deref_start; d < item.deref_end; ++d) {
    Tensor* slot = &in[impl_->deref_inputs_[d]];
    TX_RETURN_IF_ERROR(ReadRefInput(impl_->params_.device, *slot, slot));
  }
  return OkStatus();
}

Status Step::CheckUpdatedVariables(const NodeItem& item) {
  const Tensor* in = &inputs_[item.input_start];
  for (int v = item.var_start; v < item.var_end; ++v) {
    const Tensor& handle = in[impl_->var_inputs_[v]];
    Tensor value;
    Status s = ReadRefInput(impl_->params_.device, handle, &value);
    if (!s.ok()) return errors::AttachNodeContext(s, item.node->name(), item.node->type_string());
    const NonFinite f = FindNonFinite(value);
    if (f.any()) {
      const Node* node = item.node;
      return errors::InvalidArgument("{{node ", node->name(), "}} (op ", node->type_string(),
                                     "): updated variable ", handle.data<ResourceHandle>()->name,
                                     " (input ", impl_->var_inputs_[v], ") has ",
                                     NonFiniteName(f), " values (ConfigProto.check_numerics)");
    }
  }
  return OkStatus();
}

void Step::ClearInputs(const NodeItem& item) {
  Tensor* in = &inputs_[item.input_start];
  for (int i = 0; i < item.num_inputs; ++i) in[i] = Tensor();
}

Status Step::PostCompute(const NodeItem& item, OpKernelContext* ctx, ReadyList* ready) {
  const Node* node = item.node;
  if (!ctx->status().ok()) {
    ClearInputs(item);
    return errors::AttachNodeContext(ctx->status(), node->name(), node->type_string());
  }
  if (item.var_end > item.var_start) {
    Status s = CheckUpdatedVariables(item);
    if (!s.ok()) {
      ClearInputs(item);
      return s;
    }
  }
  ClearInputs(item);
  auto& outs = ctx->outputs();
  if (static_cast<int>(outs.size()) < item.num_outputs) {
    return errors::Internal("{{node ", node->name(), "}} (op ", node->type_string(),
                            "): kernel produced ", outs.size(), " outputs, expected ",
                            item.num_outputs);
  }
  for (int i = 0; i < item.num_outputs; ++i) {
    // A Ref(T) output carries the variable's DT_RESOURCE handle (framework/resource_var.h).
    const DataType declared = item.kernel->output_type(i);
    const DataType want = IsRefType(declared) ? DT_RESOURCE : declared;
    if (!outs[i].IsInitialized()) {
      return errors::Internal("{{node ", node->name(), "}} (op ", node->type_string(),
                              "): kernel did not set output ", i);
    }
    if (outs[i].dtype() != want) {
      return errors::Internal("{{node ", node->name(), "}} (op ", node->type_string(),
                              "): output ", i, " is ", DataTypeString(outs[i].dtype()),
                              ", declared ", DataTypeString(want));
    }
  }
  if (item.check_numerics) {
    for (int i = 0; i < item.num_outputs; ++i) {
      const NonFinite f = FindNonFinite(outs[i]);
      if (f.any()) {
        return errors::InvalidArgument("{{node ", node->name(), "}} (op ", node->type_string(),
                                       "): output ", i, " has ", NonFiniteName(f),
                                       " values (ConfigProto.check_numerics)");
      }
    }
  }
  const OutEdge* e = impl_->out_edges_.data() + item.out_start;
  const OutEdge* end = impl_->out_edges_.data() + item.out_end;
  for (; e != end; ++e) {
    if (e->last) {
      inputs_[e->slot] = std::move(outs[e->src_output]);
    } else {
      inputs_[e->slot] = outs[e->src_output];
    }
    if (pending_[e->dst].fetch_sub(1, std::memory_order_acq_rel) == 1) ready->push_back(e->dst);
  }
  for (int c = item.ctrl_start; c < item.ctrl_end; ++c) {
    const int dst = impl_->control_out_[c];
    if (pending_[dst].fetch_sub(1, std::memory_order_acq_rel) == 1) ready->push_back(dst);
  }
  return OkStatus();
}

bool Step::NodeDone(const ReadyList& ready, ReadyQueue* q) {
  const int64_t n = static_cast<int64_t>(ready.size());
  bool completed = false;
  if (n != 1) {
    // Count the new nodes before they can run, and this node as done.
    completed = outstanding_.fetch_add(n - 1, std::memory_order_acq_rel) + (n - 1) == 0;
  }
  if (n > 0) ScheduleReady(ready.data(), ready.size(), q);
  return completed;
}

void Step::Abort(const Status& s) {
  bool first = false;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (status_.ok()) {
      status_ = s;
      first = true;
    }
  }
  aborted_.store(true, std::memory_order_release);
  if (!first) return;
  // The rendezvous first, so that its abort status is this error rather than the CANCELLED
  // that cancelling makes the step's other partitions report.
  if (args_.rendezvous != nullptr) args_.rendezvous->StartAbort(s);
  cm_->StartCancel();
}

// A node's NodeExecStats is written only by the threads running that node, one after the other;
// the lock guards adding it to the step's list (earlier entries do not move).
NodeExecStats* Step::StartStats(int id) {
  const int64_t now = nodestats::NowNanos();
  NodeExecStats* st;
  {
    std::lock_guard<std::mutex> l(stats_mu_);
    st = dev_stats_.add_node_stats();
  }
  st->set_node_name(impl_->items_[id].node->name());
  nodestats::SetScheduled(st, scheduled_ns_[id]);
  nodestats::SetAllStart(st, now);
  st->set_thread_id(CurrentThreadTag());
  return st;
}

void Step::TracedCompute(const NodeItem& item, OpKernelContext* ctx, NodeExecStats* st) {
  AllocationTracker tracker;
  nodestats::SetOpStart(st, nodestats::NowNanos());
  {
    ScopedAllocationTracking tracking(&tracker);
    item.kernel->Compute(ctx);
  }
  nodestats::SetOpEnd(st, nodestats::NowNanos());
  if (ctx->status().ok()) nodestats::SetOutputs(st, ctx->outputs(), &tracker);
  nodestats::SetMemory(st, tracker);
}

void Step::EndStats(const NodeItem& item, NodeExecStats* st) {
  nodestats::SetAllEnd(st, nodestats::NowNanos());
  nodestats::SetTimelineLabel(st, item.kernel->def());
}

void Step::Finish() {
  Status s;
  {
    std::lock_guard<std::mutex> l(mu_);
    s = status_;
  }
  if (args_.step_stats != nullptr) {
    dev_stats_.set_device(impl_->params_.device->name());
    std::lock_guard<std::mutex> l(g_step_stats_mu);
    MergeDeviceStepStats(std::move(dev_stats_), args_.step_stats);
  }
  if (aborted_.load(std::memory_order_acquire)) {
    // Nodes that never ran may still hold inputs.
    for (int i = 0; i < impl_->total_inputs_; ++i) inputs_[i] = Tensor();
  }
  Executor::DoneCallback done = std::move(done_);
  done_ = nullptr;
  own_cm_.reset();
  cm_ = nullptr;
  args_ = Executor::Args();
  impl_->ReleaseStep(this);  // after this, another step may reuse the object
  done(s);
}

void ExecutorImpl::RunAsync(const Args& args, DoneCallback done) {
  if (args.cancellation_manager != nullptr && args.cancellation_manager->IsCancelled()) {
    done(errors::Cancelled("Step ", args.step_id, " was cancelled before it started"));
    return;
  }
  if (items_.empty()) {
    if (args.step_stats != nullptr) {
      DeviceStepStats empty;
      empty.set_device(params_.device->name());
      std::lock_guard<std::mutex> l(g_step_stats_mu);
      MergeDeviceStepStats(std::move(empty), args.step_stats);
    }
    done(OkStatus());
    return;
  }
  Step* step = nullptr;
  {
    std::lock_guard<std::mutex> l(free_mu_);
    if (!free_steps_.empty()) {
      step = free_steps_.back().release();
      free_steps_.pop_back();
    }
  }
  if (step == nullptr) step = new Step(this);
  step->Start(args, std::move(done));
}

}  // namespace

StatusOr<std::unique_ptr<Executor>> Executor::Create(const ExecutorParams& params,
                                                     std::unique_ptr<const Graph> graph) {
  auto impl = std::make_unique<ExecutorImpl>(params, std::move(graph));
  TX_RETURN_IF_ERROR(impl->Initialize());
  return std::unique_ptr<Executor>(std::move(impl));
}

namespace {

// The work other threads hand to the steps that this thread runs and waits for in
// Executor::Run. One per thread, so that a Run nested in a kernel of another (a function call)
// also runs the outer step's work while it waits.
struct CallerWork {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::function<void()>> queue;
};

CallerWork& ThisThreadsWork() {
  thread_local CallerWork work;
  return work;
}

}  // namespace

Status Executor::Run(const Args& args) {
  if (args.inter_op_pool == nullptr && args.runner == nullptr) {
    CallerWork* work = &ThisThreadsWork();
    const std::thread::id owner = std::this_thread::get_id();
    std::function<void(std::function<void()>)> runner = [work,
                                                         owner](std::function<void()> fn) {
      if (std::this_thread::get_id() == owner) {
        fn();
        return;
      }
      std::lock_guard<std::mutex> l(work->mu);
      work->queue.push_back(std::move(fn));
      work->cv.notify_all();
    };
    Args a = args;
    a.runner = &runner;
    bool finished = false;
    Status result;
    RunAsync(a, [&](const Status& s) {
      std::lock_guard<std::mutex> l(work->mu);
      result = s;
      finished = true;
      work->cv.notify_all();
    });
    // Nothing is handed to the step once it has finished: what is handed is what finishes its
    // nodes.
    std::unique_lock<std::mutex> l(work->mu);
    while (true) {
      work->cv.wait(l, [&] { return finished || !work->queue.empty(); });
      if (work->queue.empty()) break;
      std::function<void()> fn = std::move(work->queue.front());
      work->queue.pop_front();
      l.unlock();
      fn();
      l.lock();
    }
    return result;
  }
  std::mutex mu;
  std::condition_variable cv;
  bool finished = false;
  Status result;
  RunAsync(args, [&](const Status& s) {
    std::lock_guard<std::mutex> l(mu);
    result = s;
    finished = true;
    cv.notify_one();
  });
  std::unique_lock<std::mutex> l(mu);
  cv.wait(l, [&] { return finished; });
  return result;
}

}  // namespace tensorflux
