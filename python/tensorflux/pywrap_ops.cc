// The op registry as seen from Python: the registered OpDefs, and per-node validation, type and
// shape inference for graph construction (what TF's Python does through its C API when an op is
// created).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
#include <vector>

#include "pywrap_common.h"
#include "tensorflux/framework/node_def_util.h"
#include "tensorflux/framework/op.h"
#include "tensorflux/framework/op_kernel.h"
#include "tensorflux/gradients/gradients.h"
#include "tensorflux/framework/shape_inference.h"
#include "tensorflux/node_def.pb.h"
#include "tensorflux/op_def.pb.h"

namespace py = pybind11;

namespace tensorflux::python {
namespace {

py::bytes SerializedOpList() {
  OpList list = OpRegistry::Global()->ToOpList();
  std::string out;
  list.SerializeToString(&out);
  return py::bytes(out);
}

// None -> unknown rank; a sequence of ints (None or -1 = unknown dim) -> known rank.
StatusOr<PartialTensorShape> ShapeFromPython(py::handle h, int input_index) {
  if (h.is_none()) return PartialTensorShape();
  TensorShapeProto proto;
  try {
    for (py::handle d : h) {
      proto.add_dim()->set_size(d.is_none() ? -1 : d.cast<int64_t>());
    }
  } catch (py::error_already_set&) {
    return errors::InvalidArgument("shape of input ", input_index, " is not a list of ints");
  } catch (py::cast_error&) {
    return errors::InvalidArgument("shape of input ", input_index, " is not a list of ints");
  }
  return PartialTensorShape::FromProto(proto);
}

py::object ShapeToPython(const PartialTensorShape& s) {
  if (s.unknown_rank()) return py::none();
  py::list dims;
  for (int64_t d : s.dim_sizes()) {
    if (d < 0) {
      dims.append(py::none());
    } else {
      dims.append(py::int_(d));
    }
  }
  return dims;
}

std::string ShapesString(const std::vector<PartialTensorShape>& shapes) {
  std::string out;
  for (size_t i = 0; i < shapes.size(); ++i) {
    if (i > 0) out += ", ";
    out += shapes[i].DebugString();
  }
  return out;
}

// Fills attr defaults, validates the node against its OpDef, computes its flattened input and
// output types and runs the op's shape function.
// Returns (node_def with defaults: bytes, input dtype enums, output dtype enums, output shapes).
py::tuple InferNode(py::bytes serialized, py::sequence input_shapes, py::sequence input_values) {
  NodeDef def;
  if (!def.ParseFromString(std::string(serialized))) {
    ThrowIfError(errors::InvalidArgument("cannot parse a NodeDef"));
  }
  auto reg_or = OpRegistry::Global()->LookUp(def.op());
  if (!reg_or.ok()) {
    ThrowIfError(errors::NotFound("Op type not registered '", def.op(), "' in node '", def.name(),
                                  "'"));
  }
  const OpRegistrationData* reg = *reg_or;
  AddDefaultsToNodeDef(reg->op_def, &def);
  ThrowIfError(ValidateNodeDef(def, reg->op_def));
  DataTypeVector in_types, out_types;
  ThrowIfError(InOutTypesForNode(def, reg->op_def, &in_types, &out_types));
  if (static_cast<size_t>(py::len(input_shapes)) != in_types.size()) {
    ThrowIfError(errors::InvalidArgument("node '", def.name(), "' (op ", def.op(), ") has ",
                                         in_types.size(), " inputs but ", py::len(input_shapes),
                                         " input shapes were given"));
  }
  std::vector<PartialTensorShape> shapes;
  shapes.reserve(in_types.size());
  for (size_t i = 0; i < in_types.size(); ++i) {
    shapes.push_back(ValueOrThrow(ShapeFromPython(input_shapes[i], static_cast<int>(i))));
  }
  // Constant input values, when the caller knows them; a value that does not convert is treated
  // as unknown (shape inference then does less, never something wrong).
  std::vector<Tensor> values(in_types.size());
  std::vector<const Tensor*> value_ptrs(in_types.size(), nullptr);
  const size_t num_values = static_cast<size_t>(py::len(input_values));
  for (size_t i = 0; i < in_types.size() && i < num_values; ++i) {
    py::handle v = input_values[i];
    if (v.is_none()) continue;
    auto t = TensorFromNumpy(v, in_types[i]);
    if (!t.ok()) continue;
    values[i] = std::move(*t);
    value_ptrs[i] = &values[i];
  }
  InferenceContext ctx(def, reg->op_def, shapes, value_ptrs, static_cast<int>(out_types.size()));
  Status s = reg->shape_fn(&ctx);
  if (!s.ok()) {
    ThrowIfError(Status(s.code(), absl::StrCat(s.message(), " for '", SummarizeNodeDef(def),
                                               "' with input shapes: ", ShapesString(shapes),
                                               ".")));
  }
  py::list in_list, out_list, shape_list;
  for (DataType t : in_types) in_list.append(static_cast<int>(t));
  for (DataType t : out_types) out_list.append(static_cast<int>(t));
  for (const PartialTensorShape& o : ctx.outputs()) shape_list.append(ShapeToPython(o));
  std::string filled;
  def.SerializeToString(&filled);
  return py::make_tuple(py::bytes(filled), in_list, out_list, shape_list);
}

// "gradient" (a gradient function), "none" (registered as carrying no gradient) or "missing".
std::string GradientKind(const std::string& op) {
  GradFunc fn;
  if (!GradientRegistry::Global()->Lookup(op, &fn).ok()) return "missing";
  return fn ? "gradient" : "none";
}

}  // namespace

void RegisterOpFunctions(py::module_& m) {
  m.def("op_list", &SerializedOpList,
        "Every registered op as a serialized OpList, sorted by name.");
  m.def("infer_node", &InferNode, py::arg("node_def"), py::arg("input_shapes"),
        py::arg("input_values"),
        "Validates a serialized NodeDef (inputs listed) against its OpDef with defaults filled, "
        "and runs the op's shape function. input_shapes: per data input, None (unknown rank) or "
        "a list of dims (None or -1 unknown); input_values: per input, a numpy array when the "
        "value is a known constant, else None. Returns (node_def bytes with defaults, input "
        "dtype enums, output dtype enums, output shapes in the same form as input_shapes). "
        "Raises NotFoundError for an unknown op and InvalidArgumentError for bad attrs or "
        "incompatible shapes.");
  m.def(
      "kernel_list",
      [](const std::string& op) { return KernelRegistry::Global()->ListKernels(op); },
      py::arg("op"),
      "The op's registered kernels, one line each: \"OP: device='CPU'; T in [float, double]\" "
      "(a constraint per type attr; '; priority=N' when not 0). Empty for an unknown op.");
  m.def("gradient_kind", &GradientKind, py::arg("op"),
        "'gradient' when the op has a registered gradient function, 'none' when it is registered "
        "as carrying no gradient (REGISTER_NO_GRADIENT), 'missing' otherwise.");
}

}  // namespace tensorflux::python
