// Input-pipeline file formats for Python (io/record_io.h, io/idx_reader.h): a TFRecord writer
// class, a TFRecord record iterator and a whole-file IDX reader. File I/O runs without the GIL.
#include <pybind11/stl.h>

#include <memory>
#include <string>

#include "pywrap_common.h"
#include "tensorflux/io/idx_reader.h"
#include "tensorflux/io/record_io.h"
#include "tensorflux/summary/events_writer.h"

namespace py = pybind11;

namespace tensorflux::python {
namespace {

class PyRecordIterator {
 public:
  explicit PyRecordIterator(const std::string& path, bool skip_corrupt) {
    io::RecordReader::Options opt;
    opt.skip_corrupt = skip_corrupt;
    reader_ = ValueOrThrow(io::RecordReader::Open(path, opt));
  }
  py::bytes Next() {
    std::string record;
    Status s;
    {
      py::gil_scoped_release release;
      s = reader_->ReadRecord(&record);
    }
    if (s.code() == absl::StatusCode::kOutOfRange) throw py::stop_iteration();
    ThrowIfError(s);
    return py::bytes(record);
  }
  int64_t corrupt_records() const { return reader_->corrupt_records(); }

 private:
  std::unique_ptr<io::RecordReader> reader_;
};

}  // namespace

void RegisterIoFunctions(py::module_& m) {
  py::class_<io::RecordWriter>(m, "RecordWriter")
      .def(py::init([](const std::string& path) {
             return ValueOrThrow(io::RecordWriter::Open(path)).release();
           }),
           py::arg("path"))
      .def(
          "write",
          [](io::RecordWriter& w, py::bytes record) {
            std::string data = record;
            Status s;
            {
              py::gil_scoped_release release;
              s = w.WriteRecord(data);
            }
            ThrowIfError(s);
          },
          py::arg("record"))
      .def("flush", [](io::RecordWriter& w) { ThrowIfError(w.Flush()); })
      .def("close", [](io::RecordWriter& w) { ThrowIfError(w.Close()); });
  py::class_<summary::EventsWriter>(m, "EventsWriter")
      .def(py::init([](const std::string& prefix, const std::string& suffix) {
             return ValueOrThrow(summary::EventsWriter::Open(prefix, suffix)).release();
           }),
           py::arg("file_prefix"), py::arg("file_suffix") = "")
      .def(
          "write_event",
          [](summary::EventsWriter& w, py::bytes event) {
            std::string data = event;
            ThrowIfError(w.WriteSerializedEvent(data));
          },
          py::arg("serialized_event"))
      .def("flush", [](summary::EventsWriter& w) { ThrowIfError(w.Flush()); })
      .def("close", [](summary::EventsWriter& w) { ThrowIfError(w.Close()); })
      .def_property_readonly("filename", &summary::EventsWriter::filename);
  py::class_<PyRecordIterator>(m, "RecordIterator")
      .def(py::init<const std::string&, bool>(), py::arg("path"),
           py::arg("skip_corrupt") = false)
      .def("__iter__", [](PyRecordIterator& it) -> PyRecordIterator& { return it; })
      .def("__next__", &PyRecordIterator::Next)
      .def_property_readonly("corrupt_records", &PyRecordIterator::corrupt_records);
  m.def(
      "read_idx",
      [](const std::string& path) {
        Tensor all;
        Status s = [&]() -> Status {
          py::gil_scoped_release release;
          TX_ASSIGN_OR_RETURN(auto reader, io::IdxReader::Open(path));
          return reader->ReadAll(&all);
        }();
        ThrowIfError(s);
        return ValueOrThrow(TensorToNumpy(all));
      },
      py::arg("path"), "Reads a whole IDX file (plain or gzip) into a numpy array.");
}

}  // namespace tensorflux::python
