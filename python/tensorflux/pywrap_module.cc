// The _pywrap_tensorflux extension module: the C++ engine under the tensorflux Python package.
#include <pybind11/pybind11.h>

#include "pywrap_common.h"

PYBIND11_MODULE(_pywrap_tensorflux, m) {
  m.doc() = "C++ core of the tensorflux package: op registry, shape inference, Session, numpy bridge.";
  tensorflux::python::RegisterStatusTranslator(m);
  tensorflux::python::RegisterTensorFunctions(m);
  tensorflux::python::RegisterOpFunctions(m);
  tensorflux::python::RegisterSession(m);
  tensorflux::python::RegisterGradients(m);
  tensorflux::python::RegisterCheckpointFunctions(m);
  tensorflux::python::RegisterIoFunctions(m);
  tensorflux::python::RegisterPyFuncFunctions(m);
  tensorflux::python::RegisterDeviceFunctions(m);
  tensorflux::python::RegisterTimelineFunctions(m);
  tensorflux::python::RegisterServer(m);
}
