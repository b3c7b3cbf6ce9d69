// tensorflux::Session for Python: create from a ConfigProto, Extend with GraphDefs, Run with
// numpy feeds and fetches. Run and Extend release the GIL, so several Python threads can run
// steps at once.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "pywrap_common.h"
#include "tensorflux/config.pb.h"
#include "tensorflux/graph.pb.h"
#include "tensorflux/runtime/session.h"
#include "tensorflux/train/freeze_graph.h"

namespace py = pybind11;

namespace tensorflux::python {
namespace {

template <typename Proto>
Proto ParseOrThrow(const py::bytes& b, const char* what) {
  Proto p;
  if (!p.ParseFromString(std::string(b))) {
    ThrowIfError(errors::InvalidArgument("cannot parse a serialized ", what));
  }
  return p;
}

class PySession {
 public:
  PySession(const std::string& target, py::bytes config) {
    SessionOptions opts;
    opts.target = target;
    opts.config = ParseOrThrow<ConfigProto>(config, "ConfigProto");
    session_ = ValueOrThrow(NewSession(opts));
  }

  // The first call creates the session's graph, later ones add to it.
  void Extend(py::bytes serialized) {
    GraphDef g = ParseOrThrow<GraphDef>(serialized, "GraphDef");
    Status s;
    {
      py::gil_scoped_release release;
      std::lock_guard<std::mutex> lock(mu_);
      if (!created_) {
        s = session_->Create(g);
        if (s.ok()) created_ = true;
      } else {
        s = session_->Extend(g);
      }
    }
    ThrowIfError(s);
  }

  // feeds: [(tensor name, value, dtype enum or 0)]. Returns (list of arrays, RunMetadata bytes or
  // None).
  py::tuple Run(py::sequence feeds, const std::vector<std::string>& fetches,
                const std::vector<std::string>& targets, py::object options, bool want_metadata) {
    std::vector<std::pair<std::string, Tensor>> inputs;
    inputs.reserve(py::len(feeds));
    for (py::handle f : feeds) {
      py::tuple item = py::reinterpret_borrow<py::object>(f).cast<py::tuple>();
      if (item.size() != 3) ThrowIfError(errors::InvalidArgument("a feed must be (name, value, dtype)"));
      std::string name = item[0].cast<std::string>();
      auto t = TensorFromNumpy(item[1], static_cast<DataType>(item[2].cast<int>()),
                               /*share=*/true);
      if (!t.ok()) {
        ThrowIfError(Status(t.status().code(),
                            absl::StrCat("feed '", name, "': ", t.status().message())));
      }
      inputs.emplace_back(std::move(name), std::move(*t));
    }
    RunOptions run_options;
    if (!options.is_none()) run_options = ParseOrThrow<RunOptions>(options, "RunOptions");
    RunMetadata metadata;
    std::vector<Tensor> outputs;
    Status s;
    {
      py::gil_scoped_release release;
      s = EnsureCreated();
      if (s.ok()) {
        s = session_->Run(run_options, inputs, fetches, targets, &outputs,
                          want_metadata ? &metadata : nullptr);
      }
    }
    // `inputs` (which may share the fed arrays' buffers, TensorFromNumpy) lives until the fetches
    // are converted: a fetched fed tensor is then not the sole owner of its buffer, so its array
    // is a copy, not the caller's array again. Freed with the GIL held, the arrays are released
    // at once.
    ThrowIfError(s);
    if (outputs.size() != fetches.size()) {
      ThrowIfError(errors::Internal("session returned ", outputs.size(), " outputs for ",
                                    fetches.size(), " fetches"));
    }
    py::list arrays;
    for (size_t i = 0; i < outputs.size(); ++i) {
      auto a = TensorToNumpy(outputs[i]);
      if (!a.ok()) {
        ThrowIfError(Status(a.status().code(),
                            absl::StrCat("fetch '", fetches[i], "': ", a.status().message())));
      }
      outputs[i] = Tensor();  // drop our reference so a later array can share its buffer
      arrays.append(std::move(*a));
    }
    py::object md = py::none();
    if (want_metadata) {
      std::string out;
      metadata.SerializeToString(&out);
      md = py::bytes(out);
    }
    return py::make_tuple(arrays, md);
  }

  py::list ListDevices() {
    std::vector<DeviceAttributes> devices;
    ThrowIfError(session_->ListDevices(&devices));
    py::list out;
    for (const DeviceAttributes& d : devices) out.append(py::bytes(d.SerializeAsString()));
    return out;
  }

  void Close() {
    Status s;
    {
      py::gil_scoped_release release;
      s = session_->Close();
    }
    ThrowIfError(s);
  }

 // The session, created (with an empty graph) if no graph was given yet.
  Session* session() {
    ThrowIfError(EnsureCreated());
    return session_.get();
  }

 private:
  Status EnsureCreated() {
    std::lock_guard<std::mutex> lock(mu_);
    if (created_) return OkStatus();
    TX_RETURN_IF_ERROR(session_->Create(GraphDef()));
    created_ = true;
    return OkStatus();
  }

  std::unique_ptr<Session> session_;
  std::mutex mu_;  // guards created_ and orders Create/Extend
  bool created_ = false;
};

}  // namespace

void RegisterSession(py::module_& m) {
  py::class_<PySession>(m, "Session", "A tensorflux::Session (LocalSession for target '').")
      .def(py::init<const std::string&, py::bytes>(), py::arg("target"), py::arg("config"))
      .def("extend", &PySession::Extend, py::arg("graph_def"),
           "Adds the nodes of a serialized GraphDef (the first call creates the graph).")
      .def("run", &PySession::Run, py::arg("feeds"), py::arg("fetches"), py::arg("targets"),
           py::arg("options") = py::none(), py::arg("want_metadata") = false,
           "Runs one step. feeds: [(name, array, dtype enum or 0)]; returns (arrays, "
           "serialized RunMetadata or None).")
      .def("list_devices", &PySession::ListDevices,
           "Serialized DeviceAttributes of the session's devices.")
      .def("close", &PySession::Close);

  // tx.graph_util (train/freeze_graph.h): serialized GraphDefs in and out.
  auto parse = [](const py::bytes& b) {
    GraphDef g;
    if (!g.ParseFromString(std::string(b)))
      ThrowIfError(errors::InvalidArgument("not a serialized GraphDef"));
    return g;
  };
  auto serialize = [](const GraphDef& g) { return py::bytes(g.SerializeAsString()); };
  m.def(
      "convert_variables_to_constants",
      [parse, serialize](PySession& s, py::bytes graph_def, std::vector<std::string> outputs,
                         std::vector<std::string> allow, std::vector<std::string> deny) {
        FreezeOptions opts;
        opts.variable_names_allowlist = std::move(allow);
        opts.variable_names_denylist = std::move(deny);
        GraphDef in = parse(graph_def);
        Session* session = s.session();
        StatusOr<GraphDef> out;
        {
          py::gil_scoped_release release;
          out = ConvertVariablesToConstants(session, in, outputs, opts);
        }
        return serialize(ValueOrThrow(std::move(out)));
      },
      py::arg("session"), py::arg("graph_def"), py::arg("output_node_names"),
      py::arg("allowlist"), py::arg("denylist"));
  m.def(
      "extract_sub_graph",
      [parse, serialize](py::bytes graph_def, std::vector<std::string> dest) {
        return serialize(ValueOrThrow(ExtractSubGraph(parse(graph_def), dest)));
      },
      py::arg("graph_def"), py::arg("dest_nodes"));
  m.def(
      "remove_training_nodes",
      [parse, serialize](py::bytes graph_def, std::vector<std::string> protected_nodes) {
        return serialize(ValueOrThrow(RemoveTrainingNodes(parse(graph_def), protected_nodes)));
      },
      py::arg("graph_def"), py::arg("protected_nodes"));
}

}  // namespace tensorflux::python
