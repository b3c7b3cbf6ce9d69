#include "tensorflux/cc/training/clip_ops.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "tensorflux/cc/const_op.h"
#include "tensorflux/cc/ops/ops.h"

namespace tensorflux::training {
namespace {

Status Fail(const Scope& scope, Status s) {
  scope.UpdateStatus(s);
  return s;
}

}  // namespace

StatusOr<Output> GlobalNorm(const Scope& scope, const std::vector<Output>& t_list) {
  TX_RETURN_IF_ERROR(scope.status());
  const Scope s = scope.NewSubScope("global_norm");
  std::vector<Output> halves;
  DataType dtype = DT_INVALID;
  for (const Output& t : t_list) {
    if (t.node() == nullptr) continue;
    if (dtype == DT_INVALID) dtype = t.type();
    if (!DataTypeIsFloating(t.type()) || t.type() != dtype) {
      return Fail(scope, errors::InvalidArgument(
                             "GlobalNorm: every tensor must have one floating dtype; ", t.name(),
                             " is ", DataTypeString(t.type()), ", the first ",
                             DataTypeString(dtype)));
    }
    halves.push_back(ops::L2Loss(s, t));
  }
  if (halves.empty()) {
    return Fail(scope, errors::InvalidArgument("GlobalNorm: the list has no tensors (all empty)"));
  }
  Output sum = halves.size() == 1 ? halves[0] : ops::AddN(s, halves);
  Output norm = ops::Sqrt(s.WithOpName("global_norm"), ops::Mul(s, sum, ops::Const(s, 2.0, dtype)));
  TX_RETURN_IF_ERROR(scope.status());
  return norm;
}

Status ClipByGlobalNorm(const Scope& scope, const std::vector<Output>& t_list, double clip_norm,
                        std::vector<Output>* clipped, Output* global_norm) {
  TX_RETURN_IF_ERROR(scope.status());
  if (!(clip_norm > 0)) {
    return Fail(scope, errors::InvalidArgument("ClipByGlobalNorm: clip_norm must be > 0, got ",
                                               clip_norm));
  }
  const Scope s = scope.NewSubScope("clip_by_global_norm");
  TX_ASSIGN_OR_RETURN(Output norm, GlobalNorm(s, t_list));
  const DataType dt = norm.type();
  Output clip = ops::Const(s, clip_norm, dt);
  Output one = ops::Const(s, 1.0, dt);
  // clip * min(1 / norm, 1 / clip); (norm - norm) turns an Inf or NaN norm into NaN.
  Output scale = ops::AddV2(
      s, ops::Mul(s, clip, ops::Minimum(s, ops::RealDiv(s, one, norm), ops::RealDiv(s, one, clip))),
      ops::Sub(s, norm, norm));
  clipped->clear();
  for (size_t i = 0; i < t_list.size(); ++i) {
    const Output& t = t_list[i];
    clipped->push_back(t.node() == nullptr
                           ? Output()
                           : ops::Identity(s.WithOpName("clipped_", i), ops::Mul(s, t, scale)));
  }
  if (global_norm != nullptr) *global_norm = norm;
  return scope.status();
}

GradTransform ClipGradientsByGlobalNorm(double clip_norm, Output* global_norm) {
  return [clip_norm, global_norm](const Scope& scope, std::vector<GradAndVar>* gv) {
    std::vector<Output> grads;
    for (const GradAndVar& g : *gv) grads.push_back(g.first);
    std::vector<Output> clipped;
    TX_RETURN_IF_ERROR(ClipByGlobalNorm(scope, grads, clip_norm, &clipped, global_norm));
    for (size_t i = 0; i < gv->size(); ++i) (*gv)[i].first = clipped[i];
    return OkStatus();
  };
}

}  // namespace tensorflux::training
