// How the executor fills step stats (RunOptions.trace_level above NO_TRACE), following TF's
// NodeExecStatsWrapper (common_runtime/step_stats_collector.cc). For each node run:
//   node_name, thread_id   a small process-wide number of the executor thread that started it
//   scheduled_micros/nanos when the node became ready (absolute wall clock)
//   all_start_micros/nanos when the executor began it, before its inputs were prepared (absolute
//                          wall clock, absl::GetCurrentTimeNanos(); micros = nanos / 1000)
//   op_start_rel_*         Compute (an async kernel: ComputeAsync) began,  \  relative to
//   op_end_rel_*           Compute returned (async: its done callback ran), } all_start, in
//   all_end_rel_*          its outputs were passed on to their consumers   /  micros and nanos
//   timeline_label         TF's: "name = Op(in0, in1:1, ^ctrl)"; _Send/_HostSend:
//                          "name = _Send(tensor_name @recv_device)"; _Recv/_HostRecv:
//                          "name = _Recv(tensor_name @send_device)"
//   output                 per output: slot, TensorDescription dtype and shape, and an
//                          AllocationDescription with requested_bytes (element bytes) and ptr;
//                          when the node allocated that buffer itself (seen by its tracker),
//                          allocator_name and allocated_bytes too (TF's timeline draws tensors
//                          and memory from these)
//   memory                 per allocator the node allocated from while it computed
//                          (core/allocation_tracker.h): on its own thread, on the intra-op
//                          threads running its ParallelFor shards, and for an async kernel in
//                          ComputeAsync and the continuations it binds until done; total, peak
//                          and live bytes, and the allocator's bytes in use when Compute
//                          returned (an async kernel: when done ran).
// The stats of one device are merged into one DeviceStepStats per StepStats (TF's
// StepStatsCollector), however many executors ran there.
#pragma once

#include <cstdint>

#include "absl/types/span.h"
#include "tensorflux/config.pb.h"
#include "tensorflux/core/allocation_tracker.h"
#include "tensorflux/core/tensor.h"
#include "tensorflux/node_def.pb.h"

namespace tensorflux {
namespace nodestats {

// The clock of every step-stats field: wall-clock nanoseconds since the Unix epoch.
int64_t NowNanos();

void SetScheduled(NodeExecStats* st, int64_t nanos);
void SetAllStart(NodeExecStats* st, int64_t nanos);
// These three are relative to all_start (set that first).
void SetOpStart(NodeExecStats* st, int64_t nanos);
void SetOpEnd(NodeExecStats* st, int64_t nanos);
void SetAllEnd(NodeExecStats* st, int64_t nanos);

// One NodeOutput per initialized output. `tracker` (may be null) tells which buffers the node
// allocated itself.
void SetOutputs(NodeExecStats* st, absl::Span<const Tensor> outputs,
                const AllocationTracker* tracker);
// One AllocatorMemoryUsed per allocator the tracker saw.
void SetMemory(NodeExecStats* st, const AllocationTracker& tracker);
// `def` is the kernel's NodeDef (its input list as run).
void SetTimelineLabel(NodeExecStats* st, const NodeDef& def);

}  // namespace nodestats

// Appends `from`'s node stats to the entry of `into` for the same device (adding one at the
// end when there is none). Not thread-safe.
void MergeDeviceStepStats(DeviceStepStats&& from, StepStats* into);

}  // namespace tensorflux
