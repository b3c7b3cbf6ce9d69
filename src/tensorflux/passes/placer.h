// The Placer gives every node of a graph a device (Node::set_assigned_device_name), following
// TensorFlow's Placer and ColocationGraph (tensorflow/core/common_runtime/placer.cc):
//
// 1. Colocation groups. Two nodes are put in one group when
//    - a data edge joins them into a DT_RESOURCE or ref-typed input: a resource or ref variable
//      and every op that reads or updates it (VarHandleOp with ReadVariableOp, AssignVariableOp
//      and ResourceApply*; VariableV2 with Assign and Apply*; an iterator with its ops);
//    - they share a `_class` entry "loc:@NAME", or one is NAME and the other lists "loc:@NAME".
//    A group's request is the merge of its members' NodeDef.device requests
//    (DeviceNameUtils::MergeDevNames): conflicting requests are INVALID_ARGUMENT naming both
//    nodes (under soft placement a type or id conflict only drops type and id, as TF). A group
//    can only go to a device type with a kernel for every member; members whose kernels share
//    no type are INVALID_ARGUMENT naming each with its types. A node with no kernel for any
//    type in the device set is the kernel registry's NOT_FOUND ("No registered 'Op' OpKernel
//    for 'CPU' devices compatible with node {{node n}} ..."), as the executor would report it.
//    A node that is already assigned one of the devices (a stateful node placed by an earlier
//    step, a node a pass placed) keeps it and pins its group there.
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
Status PlaceGraph(Graph* graph, const std::vector<Device*>& devices,
                  const PlacerOptions& options,
                  std::vector<std::string>* soft_placement_notes = nullptr);

// One line per node in id order, as TF's log_device_placement prints them:
//   "name: (Op): /job:localhost/replica:0/task:0/device:CPU:0".
std::vector<std::string> DevicePlacementLines(const Graph& graph);

}  // namespace tensorflux
