// Checkpoint files for the Python Saver: safetensors read/write (train/safetensors.h). Arrays are
// converted while holding the GIL; file I/O runs without it.
#include <pybind11/stl.h>

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "pywrap_common.h"
#include "tensorflux/train/safetensors.h"

namespace py = pybind11;

namespace tensorflux::python {

void RegisterCheckpointFunctions(py::module_& m) {
  m.def(
      "write_safetensors",
      [](const std::string& path, const std::vector<std::tuple<std::string, py::object, int>>& items,
         const std::map<std::string, std::string>& metadata) {
        std::vector<std::pair<std::string, Tensor>> tensors;
        for (const auto& [name, value, dtype] : items) {
          auto t = TensorFromNumpy(value, static_cast<DataType>(dtype));
          if (!t.ok())
            ThrowIfError(Status(t.status().code(),
                                absl::StrCat("tensor '", name, "': ", t.status().message())));
          tensors.emplace_back(name, *std::move(t));
        }
        Status s;
        {
          py::gil_scoped_release release;
          s = WriteSafetensors(path, tensors, metadata);
        }
        ThrowIfError(s);
      },
      py::arg("path"), py::arg("tensors"), py::arg("metadata") = std::map<std::string, std::string>(),
      "Writes [(name, array, dtype enum or 0 = the array's)] and a str->str metadata dict to a "
      "safetensors file atomically (temporary file, fsync, rename, fsync of the directory).");
  m.def(
      "read_safetensors",
      [](const std::string& path, std::optional<std::vector<std::string>> names) {
        std::vector<std::pair<std::string, Tensor>> tensors;
        std::map<std::string, std::string> metadata;
        Status s = [&]() -> Status {
          py::gil_scoped_release release;
          TX_ASSIGN_OR_RETURN(auto reader, SafetensorsReader::Open(path));
          metadata = reader->metadata();
          std::vector<std::string> wanted;
          if (names.has_value()) {
            wanted = *names;
          } else {
            for (const auto& e : reader->entries()) wanted.push_back(e.name);
          }
          for (const std::string& n : wanted) {
            TX_ASSIGN_OR_RETURN(Tensor t, reader->Read(n));
            tensors.emplace_back(n, std::move(t));
          }
          return OkStatus();
        }();
        ThrowIfError(s);
        py::dict out;
        for (const auto& [n, t] : tensors)
          out[py::str(n)] = py::make_tuple(static_cast<int>(t.dtype()), ValueOrThrow(TensorToNumpy(t)));
        return py::make_tuple(out, metadata);
      },
      py::arg("path"), py::arg("names") = py::none(),
      "Reads a safetensors file after validating it: ({name: (dtype enum, array)}, metadata). "
      "`names` limits the tensors read (NotFoundError for a missing one). DataLossError for a "
      "truncated or corrupt file, NotFoundError for a missing one.");
}

}  // namespace tensorflux::python
