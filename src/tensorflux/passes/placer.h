// The Placer gives every node of a graph a device (Node::set_assigned_device_name), following
// TensorFlow's Placer and ColocationGraph (tensorflow/core/common_runtime/placer.cc):
//
// 1. Colocation groups. Two nodes are put in one group when
//    - a data edge joins them into a DT_RESOURCE or ref-typed input: a resource or ref variable
//      and every op that reads or updates it (VarHandleOp with ReadVariableOp, AssignVariableOp
//      and ResourceApply*; VariableV2 with Assign and Apply*; an iterator with its ops);
//    - they share a `_class` entry "loc:@NAME", or one is NAME and the other lists "loc:@NAME".
//    A node that takes a resource or reference variable keeps the request of the node it takes
//    it from when its own request does not agree with it (TF's "Ignoring device specification
//    ... because the input edge from 'v' is a reference connection"; soft placement or not): a
//    variable read or updated under another device scope stays where it was created (a line
//    in `ignored_requests` says so). A group's request is the merge of its members' remaining NodeDef.device
//    requests
//    (DeviceNameUtils::MergeDevNames): conflicting requests are INVALID_ARGUMENT naming both
//    nodes (under soft placement a type or id conflict only drops type and id, as TF). A group
//    can only go to a device type with a kernel for every member; members whose kernels share
//    no type are INVALID_ARGUMENT naming each with its types. A node with no kernel for any
//    type in the device set is the kernel registry's NOT_FOUND ("No registered 'Op' OpKernel
//    for 'CPU' devices compatible with node {{node n}} ..."), as the executor would report it.
//    A node that is already assigned one of the devices (a stateful node placed by an earlier
//    step, a node a pass placed) keeps it and pins its group there: a member's request that
//    the pin does not satisfy is soft-placed there with a note, or without soft placement is
//    INVALID_ARGUMENT naming the requesting node and the pinned one. Two members pinned to
//    different devices are INVALID_ARGUMENT naming both ("Cannot colocate ...").
// 2. Candidates: the devices whose type has kernels for the group and that match its request.
//    When none do, with allow_soft_placement (TensorFlux's default) the request's type and id
//    are dropped (then the whole request) and a note says why; without it, INVALID_ARGUMENT:
//    "Cannot assign a device for operation 'n': Could not satisfy explicit device
//    specification '/device:GPU:0' because no devices matching that specification are
//    registered in this process" (or "because no supported kernel for GPU devices is
//    available"), listing the devices that have a kernel for the node.
// 3. Choice: the candidate of the highest-priority type (DeviceFactory::DevicePriority: GPU
//    before CPU), first in the device list (CPU:0 before CPU:1). A group whose members all take
//    and give only int32 (shape arithmetic, which TF's GPU kernels keep in host memory) chooses
//    among CPUs instead, unless its request names a device type. TF's two heuristics move a
//    lone node without a request to a candidate device: a generator (no inputs, one non-ref
//    output: Const, _Arg) goes where all its consumers went; a metadata op (Shape, ShapeN,
//    Size, Rank) goes with its input, and so does a fetch (_Retval), so that a step computed
//    on one device returns its values from there. Groups are placed in topological order,
//    generators last.
// A malformed request is INVALID_ARGUMENT naming the node, soft placement or not.
#pragma once

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "tensorflux/core/status.h"
#include "tensorflux/devices/device.h"
#include "tensorflux/graph/graph.h"

namespace tensorflux {

struct PlacerOptions {
  bool allow_soft_placement = true;
};

// Places every node of `graph` on one of `devices` (full names; the order is the preference
// among devices of one type). `soft_placement_notes`, when not null, receives one line per
// group that soft placement moved away from its request:
//   "{{node v}} (op VarHandleOp) asked for '/device:GPU:0' but no devices matching that
//    specification are registered in this process; placed on
//    /job:localhost/replica:0/task:0/device:CPU:0 (soft placement)".
// `ignored_requests`, when not null, receives one line per node whose request was ignored for
// its variable's (TF logs these only with log_device_placement):
//   "{{node r}} (op ReadVariableOp): ignoring its device request '/device:CPU:2' because its
//    input from {{node v}} (op VarHandleOp) is a resource or reference variable, which asks
//    for '/device:CPU:1'".
Status PlaceGraph(Graph* graph, const std::vector<Device*>& devices,
                  const PlacerOptions& options,
                  std::vector<std::string>* soft_placement_notes = nullptr,
                  std::vector<std::string>* ignored_requests = nullptr);

// Stateful placements as TF's GraphExecutionState keeps them: places a copy of the whole
// `graph` (every node, not one step's pruned graph) with the nodes named in `*placements`
// pinned to their devices, then records the device of every stateful node (variables,
// iterators, their updates) in `*placements` (node name -> full device name). Placing the whole
// graph gives a variable the device its full colocation group asks for -- reads, assigns and
// optimizer updates of every run signature -- so that steps placed later, whatever their
// order, pin it to the same device. Errors are PlaceGraph's on the whole graph (then
// `*placements` is unchanged); a session falls back to placing each step graph alone.
Status PlaceStatefulNodes(const Graph& graph, const std::vector<Device*>& devices,
                          const PlacerOptions& options,
                          absl::flat_hash_map<std::string, std::string>* placements);

// One line per node in id order, as TF's log_device_placement prints them:
//   "name: (Op): /job:localhost/replica:0/task:0/device:CPU:0".
std::vector<std::string> DevicePlacementLines(const Graph& graph);

}  // namespace tensorflux
