// Shared pieces of the _pywrap_tensorflux extension: Status -> Python exception, and numpy <->
// Tensor conversion.
//
// Errors cross into Python as exceptions only at this boundary: C++ code below returns Status and
// the binding functions call ThrowIfError, whose StatusError the registered translator turns into
// the tensorflux.errors class for the status code (InvalidArgumentError for INVALID_ARGUMENT, ...).
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <exception>
#include <string>

#include "tensorflux/core/status.h"
#include "tensorflux/core/tensor.h"

namespace tensorflux::python {

// Carries a non-OK Status out of a binding; translated by RegisterStatusTranslator.
class StatusError : public std::exception {
 public:
  explicit StatusError(Status s) : status_(std::move(s)), what_(status_.ToString()) {}
  const Status& status() const { return status_; }
  const char* what() const noexcept override { return what_.c_str(); }

 private:
  Status status_;
  std::string what_;
};

inline void ThrowIfError(const Status& s) {
  if (!s.ok()) throw StatusError(s);
}
template <typename T>
T ValueOrThrow(StatusOr<T> v) {
  if (!v.ok()) throw StatusError(v.status());
  return std::move(*v);
}

// Installs the translator: a StatusError raises
// tensorflux.framework.errors.exception_type_from_error_code(code)(None, None, message).
void RegisterStatusTranslator(pybind11::module_& m);

// Converts a numpy array (or anything np.asarray accepts) to a Tensor.
// Element types: bool, int8/16/32/64, uint8/16/32/64, float16 (DT_HALF), float32, float64;
// object / bytes / str arrays become DT_STRING (str is UTF-8 encoded). `want` (DT_INVALID = take
// the array's type) must equal the array's type, except DT_BFLOAT16, which takes any float array
// and rounds each value to nearest even. INVALID_ARGUMENT for a type mismatch, an unsupported
// element type (complex, datetime, ...), or rank > 8. GIL must be held.
// The data is copied once, except with `share` (session feeds): then a C-contiguous,
// native-order, writeable array of a fixed-size type whose elements are naturally aligned is
// not copied; the Tensor shares its buffer (which may then start at less than the usual 64-byte
// alignment, as a Slice does) and holds a reference to the array until the buffer is freed (as
// TF's session feeds share 64-byte aligned arrays). A caller that shares must keep the
// Tensor from being the sole owner of that buffer while kernels run (a kernel may write a buffer
// it holds alone): PySession::Run keeps its feed list alive until the step's fetches are
// converted.
StatusOr<Tensor> TensorFromNumpy(pybind11::handle value, DataType want, bool share = false);

// Drops the references to numpy arrays whose shared buffers (TensorFromNumpy) were freed by
// threads without the GIL. GIL must be held; TensorFromNumpy calls it.
void ReleaseLentNumpyArrays();

// Converts a Tensor to a numpy array (shape preserved, 0-d arrays stay 0-d). Shares the buffer
// (no copy) when `t` holds the only reference to it, otherwise copies. DT_STRING becomes an object
// array of bytes; DT_BFLOAT16 becomes float32 (exact). UNIMPLEMENTED for resource/variant tensors.
// GIL must be held.
StatusOr<pybind11::object> TensorToNumpy(const Tensor& t);

void RegisterTensorFunctions(pybind11::module_& m);
void RegisterOpFunctions(pybind11::module_& m);
void RegisterDeviceFunctions(pybind11::module_& m);  // pywrap_devices.cc
// TFRecord writer / iterator and IDX reading (pywrap_io.cc).
void RegisterIoFunctions(pybind11::module_& m);
void RegisterSession(pybind11::module_& m);
void RegisterGradients(pybind11::module_& m);  // pywrap_gradients.cc
void RegisterCheckpointFunctions(pybind11::module_& m);  // pywrap_checkpoint.cc
void RegisterPyFuncFunctions(pybind11::module_& m);  // pywrap_py_func.cc
void RegisterTimelineFunctions(pybind11::module_& m);  // pywrap_timeline.cc
void RegisterServer(pybind11::module_& m);  // pywrap_server.cc (tx.train.Server)

}  // namespace tensorflux::python
