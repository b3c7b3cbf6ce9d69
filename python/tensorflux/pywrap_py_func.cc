// The PyFunc callback (kernels/cpu/py_func.h): a kernel thread takes the GIL, converts the
// inputs to numpy arrays and calls the Python dispatcher (tensorflux.ops.script_ops._dispatch),
// which looks the token up, calls the function and answers (0, [values converted to Tout]) or
// (error code, message) for an exception.
#include <pybind11/stl.h>

#include <string>
#include <vector>

#include "pywrap_common.h"
#include "tensorflux/kernels/cpu/py_func.h"

namespace py = pybind11;

namespace tensorflux::python {
namespace {

Status CallDispatcher(const py::object& dispatcher, const std::string& token,
                      const std::vector<Tensor>& inputs, const DataTypeVector& tout,
                      std::vector<Tensor>* outputs) {
  py::gil_scoped_acquire gil;
  try {
    py::list args;
    for (const Tensor& t : inputs) {
      TX_ASSIGN_OR_RETURN(py::object a, TensorToNumpy(t));
      args.append(a);
    }
    py::tuple answer = dispatcher(token, args);
    const int code = answer[0].cast<int>();
    if (code != 0) {
      return Status(static_cast<absl::StatusCode>(code), answer[1].cast<std::string>());
    }
    py::list values = answer[1];
    if (values.size() != tout.size()) {
      return errors::InvalidArgument("PyFunc '", token, "' returned ", values.size(),
                                     " values, Tout has ", tout.size());
    }
    for (size_t i = 0; i < tout.size(); ++i) {
      StatusOr<Tensor> t = TensorFromNumpy(values[i], tout[i]);
      if (!t.ok()) {
        return errors::InvalidArgument("PyFunc '", token, "' value ", i, ": ",
                                       t.status().message());
      }
      outputs->push_back(*std::move(t));
    }
    return OkStatus();
  } catch (py::error_already_set& e) {  // in the conversions (the dispatcher catches its own)
    return errors::Unknown("PyFunc '", token, "': ", e.what());
  }
}

}  // namespace

void RegisterPyFuncFunctions(py::module_& m) {
  m.def(
      "set_py_func_dispatcher",
      [](py::object dispatcher) {
        // Held for the life of the process (never destroyed after the interpreter is gone).
        auto* held = new py::object(std::move(dispatcher));
        SetPyFuncCallback([held](const std::string& token, const std::vector<Tensor>& inputs,
                                 const DataTypeVector& tout, std::vector<Tensor>* outputs) {
          if (!Py_IsInitialized() || _Py_IsFinalizing()) {
            return errors::Cancelled("PyFunc '", token, "': the Python interpreter has exited");
          }
          return CallDispatcher(*held, token, inputs, tout, outputs);
        });
      },
      py::arg("dispatcher"),
      "Installs dispatcher(token, [numpy inputs]) -> (0, [values]) | (code, message) as the "
      "PyFunc kernel's callback.");
}

}  // namespace tensorflux::python
