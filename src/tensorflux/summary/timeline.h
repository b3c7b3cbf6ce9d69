// Chrome trace timeline from step stats (TF's tensorflow/python/client/timeline.py, as one C++
// implementation that `tensorflux run --trace` and Python's tx.timeline.Timeline share).
//
// The result is Chrome's JSON trace format ({"traceEvents": [...]}; opens in Perfetto and
// chrome://tracing). Times are microseconds (fractional, from the *_nanos fields when set, else
// the *_micros ones) from the earliest node start of the step, which is kept as
// "otherData": {"origin_nanos": N} (absolute wall clock, the NodeExecStats clock).
//
//   processes   one per DeviceStepStats, in their order: "<device> Compute" (pid 1, 2, ...);
//               with show_memory also "<device> Tensors" and one "Allocators" process (pid 0)
//   threads     one track per executor thread (NodeExecStats.thread_id), named "thread <id>";
//               a node that overlaps another of its thread without nesting in it (an async
//               kernel still waiting while its thread ran others) goes to an extra track of
//               that thread, "thread <id> #2", ... so that each track's slices nest
//   "X" events  one per NodeExecStats: cat "Op", name = the op, ts = all_start, dur =
//               all_end_rel; args {"name": node, "op": op, "input0": ..., "input1": ...} parsed
//               from timeline_label "name = Op(in0, in1)" (an unparsable label gives op
//               "unknown", as TF); _Send/_Recv (and _Host*) get args tensor_name and
//               recv_device / send_device instead of inputs
//   flows       with show_dataflow: an "s" (at the producer's end) / "f" (at the consumer's
//               start) pair, cat "DataFlow", both "bp": "e", for every data input whose producer
//               ran on another track (TF draws none within a track); and one pair from each
//               _Send (at its op start) to the _Recv with the same tensor_name on the peer
//               device (at its end), name = the tensor_name. Every id has exactly one "s" and
//               one "f".
//   memory      with show_memory (TF's): each output whose allocation_description names an
//               allocator (the node allocated it) is a "Tensor" object in its device's Tensors
//               process: "N" at its producer's start, "O" snapshot with its
//               tensor_description (text) at the producer's end, "D" at the end of its last
//               consumer (or producer); and per allocator a "C" counter in "Allocators" of the
//               bytes (requested_bytes) those tensors hold over time.
//
// Step stats from any source are accepted: nothing in them is an error (missing labels give
// "unknown" ops, negative durations are written as they are).
#pragma once

#include <string>

#include "tensorflux/config.pb.h"

namespace tensorflux {

struct ChromeTraceOptions {
  bool show_dataflow = true;
  bool show_memory = false;
  bool pretty = false;  // indented JSON
};

std::string ChromeTraceFromStepStats(const StepStats& step_stats,
                                     const ChromeTraceOptions& options = ChromeTraceOptions());

}  // namespace tensorflux
