// Memory types of a node's inputs and outputs on a device type (TF's memory_types.h,
// MemoryTypesForNode): which tensors a kernel on a device with its own memory (a GPU) keeps in
// host memory instead.
//
// On CPU devices every tensor is in host memory. On any other device type an arg is in host
// memory when its kernel's registration names it with KernelDefBuilder::HostMemory (shape and
// axis inputs: Reshape's `shape`, Sum's `reduction_indices`, Conv2DBackpropInput's
// `input_sizes`; resource handles) or when its dtype can only live on the host (string,
// resource, variant; TF's DataTypeAlwaysOnHost); every other arg is in device memory.
//
// Who acts on them: the partitioner (passes/graph_partition.h) turns an edge whose two ends
// disagree into a _HostSend/_HostRecv or _Send/_Recv pair, so the rendezvous copies the tensor
// into the memory the consumer reads (runtime/rendezvous.h); _HostRecv outputs the host tensor
// it received; any other kernel makes its host-memory outputs in host memory itself (a host
// tensor given to set_output, as VarIsInitializedOp's GPU kernel does:
// OpKernelContext::allocate_output allocates from the device).
#pragma once

#include <string_view>

#include "absl/container/inlined_vector.h"
#include "tensorflux/core/status.h"
#include "tensorflux/core/types.h"
#include "tensorflux/node_def.pb.h"

namespace tensorflux {

enum class MemoryType { kDevice, kHost };  // TF's DEVICE_MEMORY, HOST_MEMORY
using MemoryTypeVector = absl::InlinedVector<MemoryType, 4>;

// True for dtypes that never live in device memory (string, resource, variant).
bool DataTypeAlwaysOnHost(DataType dt);

// The memory type of each flattened input and output of `node` (attrs as in the graph;
// defaults are filled in) on `device_type`. A node without a kernel for the device type gets
// the dtype rule alone. NOT_FOUND for an unknown op, INVALID_ARGUMENT for a node that does not
// match its OpDef, INTERNAL for a kernel registration whose HostMemory names no arg of the op.
Status MemoryTypesForNode(const NodeDef& node, std::string_view device_type,
                          MemoryTypeVector* input_types, MemoryTypeVector* output_types);

}  // namespace tensorflux
