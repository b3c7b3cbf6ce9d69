#include "tensorflux/runtime/node_exec_stats.h"

#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "tensorflux/framework/node_def_util.h"

namespace tensorflux {
namespace nodestats {
namespace {

bool IsSendOp(const std::string& op) { return op == "_Send" || op == "_HostSend"; }
bool IsRecvOp(const std::string& op) { return op == "_Recv" || op == "_HostRecv"; }

}  // namespace

int64_t NowNanos() { return absl::GetCurrentTimeNanos(); }

void SetScheduled(NodeExecStats* st, int64_t nanos) {
  st->set_scheduled_micros(nanos / 1000);
  st->set_scheduled_nanos(nanos);
}

void SetAllStart(NodeExecStats* st, int64_t nanos) {
  st->set_all_start_micros(nanos / 1000);
  st->set_all_start_nanos(nanos);
}

// Relative micros are differences of the absolute micros, as TF computes them, so that
// all_start_micros + all_end_rel_micros is the end in micros.
void SetOpStart(NodeExecStats* st, int64_t nanos) {
  st->set_op_start_rel_micros(nanos / 1000 - st->all_start_micros());
  st->set_op_start_rel_nanos(nanos - st->all_start_nanos());
}

void SetOpEnd(NodeExecStats* st, int64_t nanos) {
  st->set_op_end_rel_micros(nanos / 1000 - st->all_start_micros());
  st->set_op_end_rel_nanos(nanos - st->all_start_nanos());
}

void SetAllEnd(NodeExecStats* st, int64_t nanos) {
  st->set_all_end_rel_micros(nanos / 1000 - st->all_start_micros());
  st->set_all_end_rel_nanos(nanos - st->all_start_nanos());
}

void SetOutputs(NodeExecStats* st, absl::Span<const Tensor> outputs,
                const AllocationTracker* tracker) {
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Tensor& t = outputs[i];
    if (!t.IsInitialized()) continue;
    NodeOutput* out = st->add_output();
    out->set_slot(static_cast<int>(i));
    TensorDescription* desc = out->mutable_tensor_description();
    desc->set_dtype(t.dtype());
    t.shape().AsProto(desc->mutable_shape());
    AllocationDescription* alloc = desc->mutable_allocation_description();
    alloc->set_requested_bytes(static_cast<int64_t>(t.TotalBytes()));
    const void* ptr = t.NumElements() > 0 ? t.raw_data() : nullptr;
    alloc->set_ptr(reinterpret_cast<uintptr_t>(ptr));
    size_t allocated = 0;
    const AllocationTracker::Usage* u =
        tracker != nullptr && ptr != nullptr ? tracker->FindLive(ptr, &allocated) : nullptr;
    if (u != nullptr) {
      alloc->set_allocator_name(u->allocator->Name());
      alloc->set_allocated_bytes(static_cast<int64_t>(allocated));
      alloc->set_has_single_reference(t.RefCountIsOne());
    }
  }
}

void SetMemory(NodeExecStats* st, const AllocationTracker& tracker) {
  for (const AllocationTracker::Usage& u : tracker.usage()) {
    AllocatorMemoryUsed* m = st->add_memory();
    m->set_allocator_name(u.allocator->Name());
    m->set_total_bytes(u.total_bytes);
    m->set_peak_bytes(u.peak_bytes);
    m->set_live_bytes(u.live_bytes);
    m->set_allocator_bytes_in_use(u.allocator->GetStats().bytes_in_use);
  }
}

void SetTimelineLabel(NodeExecStats* st, const NodeDef& def) {
  const std::string& op = def.op();
  const bool send = IsSendOp(op);
  if (send || IsRecvOp(op)) {
    std::string tensor_name, peer;
    // The kernel was built from this NodeDef, so the attrs are there.
    GetNodeAttr(def, "tensor_name", &tensor_name).IgnoreError();
    GetNodeAttr(def, send ? "recv_device" : "send_device", &peer).IgnoreError();
    st->set_timeline_label(absl::StrCat(def.name(), " = ", op, "(", tensor_name, " @", peer, ")"));
    return;
  }
  st->set_timeline_label(
      absl::StrCat(def.name(), " = ", op, "(", absl::StrJoin(def.input(), ", "), ")"));
}

}  // namespace nodestats

void MergeDeviceStepStats(DeviceStepStats&& from, StepStats* into) {
  for (DeviceStepStats& d : *into->mutable_dev_stats()) {
    if (d.device() == from.device()) {
      for (NodeExecStats& n : *from.mutable_node_stats()) *d.add_node_stats() = std::move(n);
      return;
    }
  }
  *into->add_dev_stats() = std::move(from);
}

}  // namespace tensorflux
