// Chrome trace from step stats (summary/timeline.h).
#include "tensorflux/summary/timeline.h"

#include <algorithm>
#include <cstdint>
#include <deque>
#include <limits>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"

namespace tensorflux {
namespace {

using Json = nlohmann::ordered_json;

bool IsSendOp(const std::string& op) { return op == "_Send" || op == "_HostSend"; }
bool IsRecvOp(const std::string& op) { return op == "_Recv" || op == "_HostRecv"; }

// "name = Op(in0, in1)" -> op, inputs (TF's timeline parses the same form; TF's executor may
// prefix "[allocator 1.0MB] " memory notes, which are skipped).
struct Label {
  std::string op = "unknown";
  std::vector<std::string> inputs;
};

Label ParseLabel(absl::string_view text) {
  Label l;
  while (absl::StartsWith(text, "[")) {
    const size_t close = text.find("] ");
    if (close == absl::string_view::npos) break;
    text.remove_prefix(close + 2);
  }
  const size_t eq = text.find(" = ");
  if (eq == absl::string_view::npos) return l;
  const size_t open = text.find('(', eq + 3);
  if (open == absl::string_view::npos || text.back() != ')') return l;
  l.op = std::string(text.substr(eq + 3, open - eq - 3));
  const absl::string_view args = text.substr(open + 1, text.size() - open - 2);
  if (!args.empty()) l.inputs = absl::StrSplit(args, ", ");
  return l;
}

// "node:0" and "node" name the same tensor.
std::string CanonicalTensor(const std::string& name) {
  return absl::EndsWith(name, ":0") ? name.substr(0, name.size() - 2) : name;
}

std::string NodeOfInput(const std::string& input) {
  const size_t colon = input.rfind(':');
  return colon == std::string::npos ? input : input.substr(0, colon);
}

// One NodeExecStats placed on the trace. Times are nanos from the trace origin.
struct Event {
  const NodeExecStats* st = nullptr;
  int device = 0;  // index into dev_stats
  int pid = 0;
  int tid = 0;
  int64_t start = 0, op_start = 0, end = 0;
  Label label;
};

bool HasNanos(const NodeExecStats& s) { return s.all_start_nanos() != 0; }
int64_t AbsStart(const NodeExecStats& s) {
  return HasNanos(s) ? s.all_start_nanos() : s.all_start_micros() * 1000;
}
int64_t RelEnd(const NodeExecStats& s) {
  return HasNanos(s) ? s.all_end_rel_nanos() : s.all_end_rel_micros() * 1000;
}
int64_t RelOpStart(const NodeExecStats& s) {
  return HasNanos(s) ? s.op_start_rel_nanos() : s.op_start_rel_micros() * 1000;
}

double Micros(int64_t nanos) { return static_cast<double>(nanos) / 1000.0; }

class TraceBuilder {
 public:
  TraceBuilder(const StepStats& stats, const ChromeTraceOptions& opts)
      : stats_(stats), opts_(opts) {}

  Json Build() {
    origin_ = std::numeric_limits<int64_t>::max();
    for (const DeviceStepStats& d : stats_.dev_stats()) {
      for (const NodeExecStats& n : d.node_stats()) origin_ = std::min(origin_, AbsStart(n));
    }
    if (origin_ == std::numeric_limits<int64_t>::max()) origin_ = 0;
    if (opts_.show_memory) Process(0, "Allocators");
    for (int d = 0; d < stats_.dev_stats_size(); ++d) {
      Process(ComputePid(d), stats_.dev_stats(d).device() + " Compute");
      if (opts_.show_memory) Process(TensorsPid(d), stats_.dev_stats(d).device() + " Tensors");
      AssignTracks(d);
    }
    for (const Event& e : events_) EmitOp(e);
    if (opts_.show_dataflow) {
      EmitDataflow();
      EmitSendRecvFlows();
    }
    if (opts_.show_memory) EmitMemory();
    Json trace = Json::object();
    Json all = std::move(metadata_);
    for (Json& e : trace_events_) all.push_back(std::move(e));
    trace["traceEvents"] = std::move(all);
    trace["displayTimeUnit"] = "ns";
    trace["otherData"] = {{"origin_nanos", origin_}};
    return trace;
  }

 private:
  static int ComputePid(int device) { return 1 + 2 * device; }
  static int TensorsPid(int device) { return 2 + 2 * device; }

  void Process(int pid, const std::string& name) {
    metadata_.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", pid},
                         {"args", {{"name", name}}}});
    metadata_.push_back({{"name", "process_sort_index"}, {"ph", "M"}, {"pid", pid},
                         {"args", {{"sort_index", pid}}}});
  }

  // Events of device d, sorted by start, each on the first track of its thread where it nests.
  void AssignTracks(int d) {
    const DeviceStepStats& dev = stats_.dev_stats(d);
    std::vector<Event> evs;
    for (const NodeExecStats& n : dev.node_stats()) {
      Event e;
      e.st = &n;
      e.device = d;
      e.pid = ComputePid(d);
      e.start = AbsStart(n) - origin_;
      e.end = e.start + RelEnd(n);
      e.op_start = e.start + RelOpStart(n);
      e.label = ParseLabel(n.timeline_label());
      evs.push_back(std::move(e));
    }
    std::stable_sort(evs.begin(), evs.end(), [](const Event& a, const Event& b) {
      return a.start != b.start ? a.start < b.start : a.end > b.end;
    });
    // thread id -> lanes, each a stack of the ends of the slices open on it.
    std::map<uint32_t, std::vector<std::vector<int64_t>>> lanes;
    std::vector<std::pair<uint32_t, int>> lane_of(evs.size());
    for (size_t i = 0; i < evs.size(); ++i) {
      auto& thread_lanes = lanes[evs[i].st->thread_id()];
      int k = 0;
      for (;; ++k) {
        if (k == static_cast<int>(thread_lanes.size())) thread_lanes.emplace_back();
        std::vector<int64_t>& open = thread_lanes[k];
        while (!open.empty() && open.back() <= evs[i].start) open.pop_back();
        if (open.empty() || open.back() >= evs[i].end) {
          open.push_back(evs[i].end);
          break;
        }
      }
      lane_of[i] = {evs[i].st->thread_id(), k};
    }
    // Tracks numbered per device in (thread, lane) order.
    std::map<std::pair<uint32_t, int>, int> tid_of;
    for (const auto& [thread, thread_lanes] : lanes) {
      for (int k = 0; k < static_cast<int>(thread_lanes.size()); ++k) {
        const int tid = static_cast<int>(tid_of.size());
        tid_of[{thread, k}] = tid;
        const std::string name =
            k == 0 ? absl::StrCat("thread ", thread) : absl::StrCat("thread ", thread, " #", k + 1);
        metadata_.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", ComputePid(d)},
                             {"tid", tid}, {"args", {{"name", name}}}});
        metadata_.push_back({{"name", "thread_sort_index"}, {"ph", "M"}, {"pid", ComputePid(d)},
                             {"tid", tid}, {"args", {{"sort_index", tid}}}});
      }
    }
    for (size_t i = 0; i < evs.size(); ++i) {
      evs[i].tid = tid_of[lane_of[i]];
      events_.push_back(std::move(evs[i]));
    }
  }

  void EmitOp(const Event& e) {
    Json args = {{"name", e.st->node_name()}, {"op", e.label.op}};
    const bool send = IsSendOp(e.label.op);
    if ((send || IsRecvOp(e.label.op)) && e.label.inputs.size() == 1) {
      const auto [tensor, peer] = SplitTransfer(e.label.inputs[0]);
      args["tensor_name"] = tensor;
      args[send ? "recv_device" : "send_device"] = peer;
    } else {
      for (size_t i = 0; i < e.label.inputs.size(); ++i) {
        args[absl::StrCat("input", i)] = e.label.inputs[i];
      }
    }
    trace_events_.push_back({{"ph", "X"}, {"cat", "Op"}, {"name", e.label.op}, {"pid", e.pid},
                             {"tid", e.tid}, {"ts", Micros(e.start)},
                             {"dur", Micros(e.end - e.start)}, {"args", std::move(args)}});
  }

  // "tensor_name @device" of a _Send/_Recv label.
  static std::pair<std::string, std::string> SplitTransfer(const std::string& arg) {
    const size_t at = arg.rfind(" @");
    if (at == std::string::npos) return {arg, ""};
    return {arg.substr(0, at), arg.substr(at + 2)};
  }

  void Flow(const std::string& name, const Event& from, int64_t from_ts, const Event& to,
            int64_t to_ts) {
    const int id = next_flow_id_++;
    trace_events_.push_back({{"ph", "s"}, {"cat", "DataFlow"}, {"name", name}, {"id", id},
                             {"pid", from.pid}, {"tid", from.tid}, {"ts", Micros(from_ts)},
                             {"bp", "e"}});
    trace_events_.push_back({{"ph", "f"}, {"cat", "DataFlow"}, {"name", name}, {"id", id},
                             {"pid", to.pid}, {"tid", to.tid}, {"ts", Micros(to_ts)},
                             {"bp", "e"}});
  }

  // The run of `node` that produced what a consumer starting at `before` read: the last one
  // started by then (a StepStats may hold several steps).
  const Event* Producer(const std::string& node, int64_t before) const {
    auto it = by_node_.find(node);
    if (it == by_node_.end()) return nullptr;
    const Event* best = nullptr;
    for (const Event* e : it->second) {
      if (e->start <= before && (best == nullptr || e->start >= best->start)) best = e;
    }
    return best;
  }

  void IndexNodes() {
    if (!by_node_.empty()) return;
    for (const Event& e : events_) by_node_[e.st->node_name()].push_back(&e);
  }

  // Flow ends sit 1 ns inside their slices, so that a slice starting or ending at the same time
  // on that track does not take the arrow.
  static int64_t JustBeforeEnd(const Event& e) { return std::max(e.start, e.end - 1); }
  static int64_t JustAfterStart(const Event& e) { return std::min(e.end, e.start + 1); }

  // Producer -> consumer across tracks. _Send/_Recv labels name a rendezvous tensor, not
  // inputs (EmitSendRecvFlows joins those).
  void EmitDataflow() {
    IndexNodes();
    for (const Event& e : events_) {
      if (IsSendOp(e.label.op) || IsRecvOp(e.label.op)) continue;
      for (const std::string& in : e.label.inputs) {
        if (absl::StartsWith(in, "^")) continue;
        const Event* p = Producer(NodeOfInput(in), e.start);
        if (p == nullptr || (p->pid == e.pid && p->tid == e.tid)) continue;
        Flow(in, *p, JustBeforeEnd(*p), e, JustAfterStart(e));
      }
    }
  }

  void EmitSendRecvFlows() {
    // (tensor_name, send device, recv device) -> sends in start order.
    std::map<std::tuple<std::string, std::string, std::string>, std::deque<const Event*>> sends;
    for (const Event& e : events_) {
      if (!IsSendOp(e.label.op) || e.label.inputs.size() != 1) continue;
      auto [tensor, peer] = SplitTransfer(e.label.inputs[0]);
      sends[{tensor, stats_.dev_stats(e.device).device(), peer}].push_back(&e);
    }
    for (const Event& e : events_) {
      if (!IsRecvOp(e.label.op) || e.label.inputs.size() != 1) continue;
      auto [tensor, peer] = SplitTransfer(e.label.inputs[0]);
      auto it = sends.find({tensor, peer, stats_.dev_stats(e.device).device()});
      if (it == sends.end() || it->second.empty()) continue;
      const Event* s = it->second.front();
      it->second.pop_front();
      Flow(tensor, *s, std::clamp(s->op_start, s->start, s->end), e, JustBeforeEnd(e));
    }
  }

  void EmitMemory() {
    IndexNodes();
    // Last use of each tensor: the end of its last consumer.
    absl::flat_hash_map<std::string, int64_t> last_use;  // "node:k" (":0" dropped) -> nanos
    for (const Event& e : events_) {
      for (const std::string& in : e.label.inputs) {
        if (absl::StartsWith(in, "^")) continue;
        int64_t& t = last_use[CanonicalTensor(in)];
        t = std::max(t, e.end);
      }
    }
    std::map<std::string, std::vector<std::pair<int64_t, int64_t>>> changes;  // allocator
    int next_object = 0;
    for (const Event& e : events_) {
      for (const NodeOutput& out : e.st->output()) {
        const AllocationDescription& a = out.tensor_description().allocation_description();
        if (a.allocator_name().empty()) continue;
        const std::string name = out.slot() == 0 ? e.st->node_name()
                                                 : absl::StrCat(e.st->node_name(), ":", out.slot());
        const int id = next_object++;
        const int pid = TensorsPid(e.device);
        auto lu = last_use.find(name);
        const int64_t end = std::max(e.end, lu == last_use.end() ? e.end : lu->second);
        trace_events_.push_back({{"ph", "N"}, {"cat", "Tensor"}, {"name", name}, {"id", id},
                                 {"pid", pid}, {"tid", e.tid}, {"ts", Micros(e.start)}});
        trace_events_.push_back(
            {{"ph", "O"}, {"cat", "Tensor"}, {"name", name}, {"id", id}, {"pid", pid},
             {"tid", e.tid}, {"ts", Micros(e.end)},
             {"args", {{"snapshot", {{"tensor_description",
                                      out.tensor_description().ShortDebugString()}}}}}});
        trace_events_.push_back({{"ph", "D"}, {"cat", "Tensor"}, {"name", name}, {"id", id},
                                 {"pid", pid}, {"tid", e.tid}, {"ts", Micros(end)}});
        changes[a.allocator_name()].push_back({e.start, a.requested_bytes()});
        changes[a.allocator_name()].push_back({end, -a.requested_bytes()});
      }
    }
    for (auto& [allocator, list] : changes) {
      std::stable_sort(list.begin(), list.end(),
                       [](const auto& x, const auto& y) { return x.first < y.first; });
      int64_t total = 0;
      for (const auto& [ts, delta] : list) {
        total += delta;
        trace_events_.push_back({{"ph", "C"}, {"cat", "Memory"}, {"name", allocator},
                                 {"pid", 0}, {"tid", 0}, {"ts", Micros(ts)},
                                 {"args", {{allocator, total}}}});
      }
    }
  }

  const StepStats& stats_;
  const ChromeTraceOptions& opts_;
  int64_t origin_ = 0;
  std::deque<Event> events_;  // stable addresses for by_node_
  absl::flat_hash_map<std::string, std::vector<const Event*>> by_node_;
  Json metadata_ = Json::array();
  Json trace_events_ = Json::array();
  int next_flow_id_ = 0;
};

}  // namespace

std::string ChromeTraceFromStepStats(const StepStats& step_stats,
                                     const ChromeTraceOptions& options) {
  TraceBuilder b(step_stats, options);
  return b.Build().dump(options.pretty ? 1 : -1);
}

}  // namespace tensorflux
