// fused_ops parsing for _FusedMatMul / _FusedConv2D (fused_ops_spec.h).
#include "tensorflux/ops/fused_ops_spec.h"

#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "tensorflux/framework/node_def_util.h"

namespace tensorflux {

StatusOr<FusedOpsSpec> FusedOpsSpec::FromNodeDef(const NodeDef& def) {
  std::vector<std::string> ops;
  TX_RETURN_IF_ERROR(GetNodeAttr(def, "fused_ops", &ops));
  int64_t num_args = 0;
  TX_RETURN_IF_ERROR(GetNodeAttr(def, "num_args", &num_args));
  FusedOpsSpec spec;
  const bool bias = !ops.empty() && ops[0] == "BiasAdd";
  bool ok = bias && ops.size() <= 2;
  if (ok && ops.size() == 2) {
    const std::string& a = ops[1];
    if (a == "Relu") {
      spec.activation = FusedActivation::kRelu;
    } else if (a == "Relu6") {
      spec.activation = FusedActivation::kRelu6;
    } else if (a == "Elu") {
      spec.activation = FusedActivation::kElu;
    } else if (a == "LeakyRelu") {
      spec.activation = FusedActivation::kLeakyRelu;
    } else {
      ok = false;
    }
  }
  if (!ok) {
    return errors::Unimplemented(def.op(), " node '", def.name(), "': fused_ops [",
                                 absl::StrJoin(ops, ", "),
                                 "] is not supported (BiasAdd, optionally followed by one of "
                                 "Relu, Relu6, Elu, LeakyRelu)");
  }
  if (num_args != 1) {
    return errors::InvalidArgument(def.op(), " node '", def.name(),
                                   "': fused_ops BiasAdd takes num_args = 1, got ", num_args);
  }
  if (FindAttr(def, "leakyrelu_alpha") != nullptr) {
    TX_RETURN_IF_ERROR(GetNodeAttr(def, "leakyrelu_alpha", &spec.leakyrelu_alpha));
  }
  return spec;
}

Status CheckFusedBiasShape(const NodeDef& def, const PartialTensorShape& bias, int64_t channels) {
  if (bias.unknown_rank()) return OkStatus();
  if (bias.dims() != 1) {
    return errors::InvalidArgument(def.op(), " node '", def.name(), "': bias must be 1-D, got ",
                                   bias.DebugString());
  }
  if (channels >= 0 && bias.dim_size(0) >= 0 && bias.dim_size(0) != channels) {
    return errors::InvalidArgument(def.op(), " node '", def.name(), "': bias has ",
                                   bias.dim_size(0), " elements but the output has ", channels,
                                   " channels");
  }
  return OkStatus();
}

}  // namespace tensorflux
