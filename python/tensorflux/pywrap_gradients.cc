// Symbolic gradients for Python (tx.gradients): the Python graph's GraphDef is imported into a
// C++ Graph, AddSymbolicGradients adds the backward nodes, and the new NodeDefs go back to Python,
// which adds them through its normal op-creation path (so their shapes are inferred there).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "pywrap_common.h"
#include "tensorflux/gradients/gradients.h"
#include "tensorflux/graph.pb.h"
#include "tensorflux/graph/graph.h"
#include "tensorflux/graph/graph_def_io.h"

namespace py = pybind11;

namespace tensorflux::python {
namespace {

StatusOr<GradOutput> FindTensor(const Graph& g, const std::string& name, const char* what) {
  TX_ASSIGN_OR_RETURN(TensorId id, ParseTensorName(name));
  if (id.IsControl())
    return errors::InvalidArgument(what, " '", name, "' names an operation, not a tensor");
  Node* n = g.FindNode(id.node);
  if (n == nullptr) return errors::NotFound(what, " '", name, "' is not in the graph");
  if (id.index >= n->num_outputs())
    return errors::InvalidArgument(what, " '", name, "': node '", id.node, "' has ",
                                   n->num_outputs(), " outputs");
  return GradOutput{n, id.index};
}

StatusOr<std::vector<GradOutput>> FindTensors(const Graph& g,
                                              const std::vector<std::optional<std::string>>& names,
                                              const char* what, bool allow_none) {
  std::vector<GradOutput> out;
  for (const auto& n : names) {
    if (!n.has_value()) {
      if (!allow_none) return errors::InvalidArgument(what, " may not contain None");
      out.push_back({});
      continue;
    }
    TX_ASSIGN_OR_RETURN(GradOutput t, FindTensor(g, *n, what));
    out.push_back(t);
  }
  return out;
}

struct GradientsResult {
  std::vector<std::string> new_nodes;  // serialized NodeDefs, producers before consumers
  std::vector<std::optional<std::string>> grads;
};

StatusOr<GradientsResult> Compute(const GraphDef& gdef,
                                  const std::vector<std::optional<std::string>>& ys,
                                  const std::vector<std::optional<std::string>>& xs,
                                  const std::vector<std::optional<std::string>>& grad_ys,
                                  const std::string& name,
                                  const std::vector<std::optional<std::string>>& stops) {
  TX_ASSIGN_OR_RETURN(std::unique_ptr<Graph> g, GraphFromGraphDef(gdef));
  TX_ASSIGN_OR_RETURN(std::vector<GradOutput> y, FindTensors(*g, ys, "ys", false));
  TX_ASSIGN_OR_RETURN(std::vector<GradOutput> x, FindTensors(*g, xs, "xs", false));
  TX_ASSIGN_OR_RETURN(std::vector<GradOutput> gy, FindTensors(*g, grad_ys, "grad_ys", true));
  SymbolicGradientOptions opts;
  opts.name = name;
  TX_ASSIGN_OR_RETURN(opts.stop_gradients, FindTensors(*g, stops, "stop_gradients", false));
  absl::flat_hash_set<std::string> old_names;
  for (const NodeDef& n : gdef.node()) old_names.insert(n.name());

  std::vector<GradOutput> gx;
  TX_RETURN_IF_ERROR(AddSymbolicGradients(g.get(), y, x, gy, opts, &gx));

  GradientsResult r;
  GraphDef out;
  g->ToGraphDef(&out);  // id order: every new node comes after the nodes it reads
  for (const NodeDef& n : out.node()) {
    if (old_names.contains(n.name())) continue;
    std::string s;
    n.SerializeToString(&s);
    r.new_nodes.push_back(std::move(s));
  }
  for (const GradOutput& t : gx) {
    if (t.valid()) {
      r.grads.push_back(t.name());
    } else {
      r.grads.push_back(std::nullopt);
    }
  }
  return r;
}

py::tuple AddSymbolicGradientsPy(py::bytes graph_def, std::vector<std::optional<std::string>> ys,
                                 std::vector<std::optional<std::string>> xs,
                                 std::vector<std::optional<std::string>> grad_ys,
                                 std::string name,
                                 std::vector<std::optional<std::string>> stop_gradients) {
  GraphDef gdef;
  if (!gdef.ParseFromString(std::string(graph_def)))
    ThrowIfError(errors::InvalidArgument("cannot parse a serialized GraphDef"));
  StatusOr<GradientsResult> r;
  {
    py::gil_scoped_release release;
    r = Compute(gdef, ys, xs, grad_ys, name, stop_gradients);
  }
  GradientsResult res = ValueOrThrow(std::move(r));
  py::list nodes, grads;
  for (const std::string& s : res.new_nodes) nodes.append(py::bytes(s));
  for (const auto& gname : res.grads) {
    if (gname.has_value()) {
      grads.append(py::str(*gname));
    } else {
      grads.append(py::none());
    }
  }
  return py::make_tuple(nodes, grads);
}

}  // namespace

void RegisterGradients(py::module_& m) {
  m.def("add_symbolic_gradients", &AddSymbolicGradientsPy, py::arg("graph_def"), py::arg("ys"),
        py::arg("xs"), py::arg("grad_ys"), py::arg("name") = "gradients",
        py::arg("stop_gradients") = std::vector<std::optional<std::string>>(),
        "Imports a serialized GraphDef, adds the nodes computing d(sum ys)/d(xs) "
        "(AddSymbolicGradients; tensors named 'node:i', grad_ys entries may be None) under the "
        "scope `name` (made unique), and returns (new NodeDefs as bytes, in an order where "
        "producers come first; per x, the gradient tensor's name or None). Raises NotFoundError "
        "for a missing tensor or an op with no gradient, InvalidArgumentError for bad "
        "arguments.");
}

}  // namespace tensorflux::python
