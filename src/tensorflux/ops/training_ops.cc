// Optimizer update ops (TensorFlow's training_ops), each in its reference form (Apply*: Ref(T)
// inputs, output `out` = the variable) and its resource form (ResourceApply*: resource inputs,
// no output). Names, input order and attrs are TF's; the update rules are in
// kernels/cpu/training_ops.cc. T is half, bfloat16 (computed in float), float or double.
//
//   ApplyGradientDescent   var; alpha, delta
//   ApplyMomentum          var, accum; lr, grad, momentum          use_nesterov
//   ApplyAdam              var, m, v; beta1_power, beta2_power, lr, beta1, beta2, epsilon, grad
//                                                                  use_nesterov
//   ApplyRMSProp           var, ms, mom; lr, rho, momentum, epsilon, grad
//   ApplyCenteredRMSProp   var, mg, ms, mom; lr, rho, momentum, epsilon, grad
//   ApplyAdagrad           var, accum; lr, grad                    update_slots
//
// All take use_locking (default false); the variables are always locked here. The slot
// variables and the gradient must have the variable's shape and the hyper-parameters must be
// scalars: INVALID_ARGUMENT naming the input otherwise (at graph construction when the shapes
// are known, at run time always).
#include <string>
#include <vector>

#include "tensorflux/framework/op.h"
#include "tensorflux/framework/shape_inference.h"

namespace tensorflux {
namespace {

struct ApplySpec {
  const char* name;                 // without "Apply" / "ResourceApply"
  std::vector<const char*> vars;    // variable inputs, in order
  std::vector<const char*> others;  // the rest, in order
  const char* grad;                 // which of `others` has the variable's shape
  std::vector<const char*> attrs;   // beyond T and use_locking
};

// Variables and the gradient merge into the output's shape; the other inputs are scalars.
ShapeInferenceFn ApplyShape(const ApplySpec& spec, bool resource) {
  const int num_vars = static_cast<int>(spec.vars.size());
  int grad = -1;
  for (size_t i = 0; i < spec.others.size(); ++i) {
    if (std::string(spec.others[i]) == spec.grad) grad = num_vars + static_cast<int>(i);
  }
  std::vector<std::string> names(spec.vars.begin(), spec.vars.end());
  names.insert(names.end(), spec.others.begin(), spec.others.end());
  return [num_vars, grad, names, resource](InferenceContext* c) -> Status {
    PartialTensorShape s = resource ? PartialTensorShape::UnknownRank() : c->input(0);
    for (int i = 0; i < c->num_inputs(); ++i) {
      const bool shaped = i == grad || (i < num_vars && !resource);
      if (i < num_vars && resource) {
        TX_RETURN_IF_ERROR(c->WithRank(i, 0));  // a handle
      } else if (!shaped) {
        if (!c->input(i).IsCompatibleWith(PartialTensorShape::Scalar())) {
          return c->Error("Node '", c->node_def().name(), "' (op ", c->node_def().op(), "): ",
                          names[i], " is not a scalar: ", c->input(i).DebugString());
        }
      } else if (!s.IsCompatibleWith(c->input(i))) {
        return c->Error("Node '", c->node_def().name(), "' (op ", c->node_def().op(), "): ",
                        names[0], " and ", names[i], " do not have the same shape: ",
                        s.DebugString(), " ", c->input(i).DebugString());
      } else if (s.unknown_rank()) {
        s = c->input(i);
      }
    }
    if (c->num_outputs() > 0) c->set_output(0, s);
    return OkStatus();
  };
}

OpDefBuilder ApplyOp(const ApplySpec& spec, bool resource) {
  OpDefBuilder b(std::string(resource ? "ResourceApply" : "Apply") + spec.name);
  for (const char* v : spec.vars) {
    b.Input(absl::StrCat(v, resource ? ": resource" : ": Ref(T)"));
  }
  for (const char* o : spec.others) b.Input(absl::StrCat(o, ": T"));
  if (!resource) b.Output("out: Ref(T)");
  b.Attr("T: {half, bfloat16, float, double}");
  b.Attr("use_locking: bool = false");
  for (const char* a : spec.attrs) b.Attr(a);
  if (resource) b.SetIsStateful();
  b.SetShapeFn(ApplyShape(spec, resource));
  return b;
}

const ApplySpec kSpecs[] = {
    {"GradientDescent", {"var"}, {"alpha", "delta"}, "delta", {}},
    {"Momentum", {"var", "accum"}, {"lr", "grad", "momentum"}, "grad",
     {"use_nesterov: bool = false"}},
    {"Adam",
     {"var", "m", "v"},
     {"beta1_power", "beta2_power", "lr", "beta1", "beta2", "epsilon", "grad"},
     "grad",
     {"use_nesterov: bool = false"}},
    {"RMSProp", {"var", "ms", "mom"}, {"lr", "rho", "momentum", "epsilon", "grad"}, "grad", {}},
    {"CenteredRMSProp",
     {"var", "mg", "ms", "mom"},
     {"lr", "rho", "momentum", "epsilon", "grad"},
     "grad",
     {}},
    {"Adagrad", {"var", "accum"}, {"lr", "grad"}, "grad", {"update_slots: bool = true"}},
};

struct Registrations {
  Registrations() {
    for (const ApplySpec& spec : kSpecs) {
      for (bool resource : {false, true}) register_op::OpRegistrar r(ApplyOp(spec, resource));
    }
  }
} const registrations;

}  // namespace
}  // namespace tensorflux
