// Graph partitioning (TF's graph_partition.cc semantics): splits a placed graph into one GraphDef
// per device, joined by _Send/_Recv pairs (ops/sendrecv_ops.cc).
//
// - Every node goes to the GraphDef of its device (PartitionOptions::node_to_loc, by default
//   Node::assigned_device_name()), with NodeDef.device set to that device.
// - A data edge src:k -> dst between two devices becomes `src:k -> _Send` on src's device and
//   `_Recv -> dst` on dst's device. There is one _Send/_Recv pair per (tensor src:k, destination
//   device), however many consumers that tensor has there.
// - Memory types (framework/memory_types.h): on a device with its own memory (not CPU), an
//   input or output that the node's kernel keeps in host memory (HostMemory args, string and
//   resource dtypes) is received by a _HostRecv (sent by a _HostSend) instead of a _Recv
//   (_Send), so the rendezvous leaves it in host memory (runtime/rendezvous.h). The pairs are
//   per (tensor, destination device, memory type), and a data edge within one device whose ends
//   disagree on the memory type also becomes a pair (both nodes on that device), as in TF.
// - A control edge src -> dst between two devices is carried by a dummy tensor: on src's device
//   a Const (float, shape [0]) with control input ^src feeds a _Send; on dst's device the _Recv
//   becomes the control input ^recv of dst. One pair per (src, destination device).
// - _Send/_Recv attrs: T / tensor_type (the base type of src:k; float for control edges),
//   tensor_name "edge_<edge id>_<src name>" (unique per pair), send_device, recv_device,
//   send_device_incarnation (PartitionOptions::get_incarnation), client_terminated = false.
//   Both nodes are named new_name(src name) ("src/_0", "src/_1", ... by default).
// - versions and the function library are copied to every partition.
//
// A reference edge (Ref(T) output into a Ref(T) input, e.g. a variable into Assign) must not
// cross devices; a Ref(T) output into a plain T input across devices sends the value (the
// executor reads the variable at the _Send). DT_RESOURCE handles are sent like any tensor.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "tensorflux/core/status.h"
#include "tensorflux/graph.pb.h"
#include "tensorflux/graph/graph.h"

namespace tensorflux {

struct PartitionOptions {
  // The device of a node. Default: node.assigned_device_name().
  std::function<std::string(const Node&)> node_to_loc;
  // A node name used neither by the input graph nor by an earlier call. Default:
  // "<prefix>/_<n>" with a counter n that skips taken names.
  std::function<std::string(const std::string& prefix)> new_name;
  // The incarnation of a device (part of the rendezvous keys it sends under). Default: 1.
  std::function<uint64_t(const std::string& device)> get_incarnation;
};

// Fills `partitions` (cleared first) with one GraphDef per device, keyed by device name.
// INVALID_ARGUMENT naming the node for a node without a device and for a reference edge between
// two devices; the memory-type lookup's errors (unknown op) naming the node.
Status Partition(const PartitionOptions& opts, const Graph& graph,
                 std::map<std::string, GraphDef>* partitions);

}  // namespace tensorflux
