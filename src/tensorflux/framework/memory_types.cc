#include "tensorflux/framework/memory_types.h"

#include "tensorflux/framework/node_def_util.h"
#include "tensorflux/framework/op.h"
#include "tensorflux/framework/op_kernel.h"

namespace tensorflux {

bool DataTypeAlwaysOnHost(DataType dt) {
  const DataType base = BaseType(dt);
  return base == DT_STRING || base == DT_RESOURCE || base == DT_VARIANT;
}

Status MemoryTypesForNode(const NodeDef& node, std::string_view device_type,
                          MemoryTypeVector* input_types, MemoryTypeVector* output_types) {
  TX_ASSIGN_OR_RETURN(const OpDef* op_def, OpRegistry::Global()->LookUpOpDef(node.op()));
  NodeDef def = node;
  AddDefaultsToNodeDef(*op_def, &def);
  DataTypeVector in, out;
  TX_RETURN_IF_ERROR(InOutTypesForNode(def, *op_def, &in, &out));
  const bool host_device = device_type == DEVICE_CPU;
  auto by_dtype = [&](const DataTypeVector& dts, MemoryTypeVector* types) {
    types->clear();
    for (DataType dt : dts) {
      types->push_back(host_device || DataTypeAlwaysOnHost(dt) ? MemoryType::kHost
                                                               : MemoryType::kDevice);
    }
  };
  by_dtype(in, input_types);
  by_dtype(out, output_types);
  if (host_device) return OkStatus();
  StatusOr<const KernelRegistry::Entry*> kernel =
      KernelRegistry::Global()->FindKernel(def, device_type);
  if (!kernel.ok() || (*kernel)->def.host_memory().empty()) return OkStatus();
  NameRangeMap in_ranges, out_ranges;
  TX_RETURN_IF_ERROR(NameRangesForNode(def, *op_def, &in_ranges, &out_ranges));
  for (const std::string& arg : (*kernel)->def.host_memory()) {
    bool found = false;
    for (auto [ranges, types] : {std::pair{&in_ranges, input_types},
                                 std::pair{&out_ranges, output_types}}) {
      auto it = ranges->find(arg);
      if (it == ranges->end()) continue;
      found = true;
      for (int i = it->second.first; i < it->second.second; ++i) {
        (*types)[i] = MemoryType::kHost;
      }
    }
    if (!found) {
      return errors::Internal("The ", device_type, " kernel of op ", node.op(),
                              " marks HostMemory(\"", arg, "\"), which is no input or output of ",
                              "the op");
    }
  }
  return OkStatus();
}

}  // namespace tensorflux
