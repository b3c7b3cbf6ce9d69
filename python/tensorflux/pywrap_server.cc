// tx.train.Server's C++ side: a GrpcServer (distributed/grpc_server.h) in this process.
#include <pybind11/pybind11.h>

#include <memory>
#include <string>

#include "pywrap_common.h"
#include "tensorflux/distributed/grpc_server.h"

namespace py = pybind11;

namespace tensorflux::python {
namespace {

class PyServer {
 public:
  PyServer(py::bytes server_def, const std::string& bind_host, const std::string& token_file) {
    GrpcServerOptions opts;
    if (!opts.server_def.ParseFromString(std::string(server_def))) {
      ThrowIfError(errors::InvalidArgument("cannot parse a serialized ServerDef"));
    }
    opts.bind_host = bind_host;
    opts.security.token_file = token_file;
    server_ = ValueOrThrow(GrpcServer::Create(opts));
  }

  std::string target() const { return server_->target(); }
  int port() const { return server_->bound_port(); }

  void Stop() {
    py::gil_scoped_release release;
    server_->Stop();
  }
  void Join() {
    py::gil_scoped_release release;
    server_->Join();
  }

 private:
  std::unique_ptr<GrpcServer> server_;
};

}  // namespace

void RegisterServer(py::module_& m) {
  py::class_<PyServer>(m, "Server", "A tensorflux GrpcServer (master + worker) in this process.")
      .def(py::init<py::bytes, const std::string&, const std::string&>(), py::arg("server_def"),
           py::arg("bind_host") = "127.0.0.1", py::arg("token_file") = "")
      .def_property_readonly("target", &PyServer::target)
      .def_property_readonly("port", &PyServer::port)
      .def("stop", &PyServer::Stop)
      .def("join", &PyServer::Join);
}

}  // namespace tensorflux::python
