// Chrome trace timelines for Python: tx.timeline.Timeline formats step stats through the C++
// writer (summary/timeline.h), so `tensorflux run --trace` and Python give the same trace.
#include <pybind11/pybind11.h>

#include <string>

#include "pywrap_common.h"
#include "tensorflux/config.pb.h"
#include "tensorflux/summary/timeline.h"

namespace py = pybind11;

namespace tensorflux::python {

void RegisterTimelineFunctions(py::module_& m) {
  m.def(
      "chrome_trace_from_step_stats",
      [](py::bytes serialized, bool show_dataflow, bool show_memory, bool pretty) {
        StepStats stats;
        if (!stats.ParseFromString(std::string(serialized))) {
          ThrowIfError(errors::InvalidArgument("cannot parse a serialized StepStats"));
        }
        ChromeTraceOptions opts;
        opts.show_dataflow = show_dataflow;
        opts.show_memory = show_memory;
        opts.pretty = pretty;
        std::string json;
        {
          py::gil_scoped_release release;
          json = ChromeTraceFromStepStats(stats, opts);
        }
        return json;
      },
      py::arg("step_stats"), py::arg("show_dataflow") = true, py::arg("show_memory") = false,
      py::arg("pretty") = false,
      "Chrome trace JSON (str) of a serialized StepStats; InvalidArgumentError when the bytes "
      "are not one.");
}

}  // namespace tensorflux::python
