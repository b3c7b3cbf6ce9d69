// numpy <-> Tensor conversion and the Status -> Python exception translator.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "pywrap_common.h"
#include "tensorflux/core/allocator.h"
#include "tensorflux/core/tensor.h"
#include "tensorflux/core/types.h"
#include "tensorflux/tensor.pb.h"

namespace py = pybind11;

namespace tensorflux::python {
namespace {

// Decodes bytes as UTF-8, replacing invalid sequences (messages may quote binary data).
py::str SafeStr(absl::string_view s) {
  PyObject* o = PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), "replace");
  if (o == nullptr) {
    PyErr_Clear();
    return py::str("<undecodable message>");
  }
  return py::reinterpret_steal<py::str>(o);
}

void SetPythonError(const Status& s) {
  try {
    py::module_ errors = py::module_::import("tensorflux.framework.errors");
    py::object cls = errors.attr("exception_type_from_error_code")(static_cast<int>(s.code()));
    py::object exc = cls(py::none(), py::none(), SafeStr(s.message()));
    PyErr_SetObject(cls.ptr(), exc.ptr());
  } catch (py::error_already_set&) {
    // tensorflux.errors could not be imported (should not happen inside the package).
    std::string text = StatusToString(s);
    PyErr_SetString(PyExc_RuntimeError, text.c_str());
  }
}

// The numpy name for a fixed-size element type with identical storage, or nullptr.
const char* NumpyName(DataType dt) {
  switch (dt) {
    case DT_BOOL: return "bool";
    case DT_INT8: return "int8";
    case DT_INT16: return "int16";
    case DT_INT32: return "int32";
    case DT_INT64: return "int64";
    case DT_UINT8: return "uint8";
    case DT_UINT16: return "uint16";
    case DT_UINT32: return "uint32";
    case DT_UINT64: return "uint64";
    case DT_HALF: return "float16";
    case DT_FLOAT: return "float32";
    case DT_DOUBLE: return "float64";
    default: return nullptr;
  }
}

// DataType of a numpy dtype by kind and item size; DT_INVALID when unsupported.
DataType DataTypeOfNumpy(const py::dtype& dt) {
  const char kind = dt.kind();
  const auto size = dt.itemsize();
  switch (kind) {
    case 'b': return DT_BOOL;
    case 'i':
      return size == 1 ? DT_INT8 : size == 2 ? DT_INT16 : size == 4 ? DT_INT32 : size == 8 ? DT_INT64 : DT_INVALID;
    case 'u':
      return size == 1 ? DT_UINT8 : size == 2 ? DT_UINT16 : size == 4 ? DT_UINT32 : size == 8 ? DT_UINT64 : DT_INVALID;
    case 'f': return size == 2 ? DT_HALF : size == 4 ? DT_FLOAT : size == 8 ? DT_DOUBLE : DT_INVALID;
    case 'O':
    case 'S':
    case 'U': return DT_STRING;
    default: return DT_INVALID;
  }
}

std::string PyTypeName(py::handle h) { return py::str(py::type::handle_of(h).attr("__name__")); }

StatusOr<TensorShape> ShapeOf(const py::array& arr) {
  if (arr.ndim() > TensorShape::kMaxDims) {
    return errors::InvalidArgument("arrays of rank ", arr.ndim(), " are not supported (at most ",
                                   TensorShape::kMaxDims, " dimensions)");
  }
  std::vector<int64_t> dims(arr.shape(), arr.shape() + arr.ndim());
  return TensorShape::Make(dims);
}

StatusOr<Tensor> StringTensorFromNumpy(py::array arr, const TensorShape& shape) {
  if (arr.dtype().kind() != 'O') arr = arr.attr("astype")("O");
  py::list items = arr.attr("ravel")().attr("tolist")();
  TX_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(DT_STRING, shape));
  auto out = t.flat<std::string>();
  for (size_t i = 0; i < out.size(); ++i) {
    py::handle item = items[i];
    if (PyBytes_Check(item.ptr())) {
      char* data = nullptr;
      Py_ssize_t len = 0;
      PyBytes_AsStringAndSize(item.ptr(), &data, &len);
      out[i].assign(data, static_cast<size_t>(len));
    } else if (PyUnicode_Check(item.ptr())) {
      Py_ssize_t len = 0;
      const char* data = PyUnicode_AsUTF8AndSize(item.ptr(), &len);
      if (data == nullptr) {
        PyErr_Clear();
        return errors::InvalidArgument("string element ", i, " cannot be encoded as UTF-8");
      }
      out[i].assign(data, static_cast<size_t>(len));
    } else {
      return errors::InvalidArgument("a string tensor's elements must be bytes or str, but element ",
                                     i, " is of type ", PyTypeName(item));
    }
  }
  return t;
}

// References to numpy arrays whose lent buffers were released by a thread without the GIL; the
// next TensorFromNumpy or ReleaseLentNumpyArrays (both hold the GIL) drops them (TF's
// DelayedNumpyDecref / ClearDecrefCache).
std::mutex g_lent_mu;
std::vector<PyObject*>* LentArraysToRelease() {
  static auto* v = new std::vector<PyObject*>();  // never destroyed: used until the process ends
  return v;
}

// A one-shot Allocator whose only "allocation" is a numpy array's data: it lets a Tensor share
// the array's buffer (TensorBuffer frees through its Allocator). It holds a reference to the
// array until the buffer is freed, then releases it (at once when the freeing thread holds the
// GIL, else at the next ReleaseLentNumpyArrays) and deletes itself.
class NumpyBufferLender final : public Allocator {
 public:
  explicit NumpyBufferLender(py::array array) : data_(array.mutable_data()),
                                                array_(array.release().ptr()) {}
  std::string Name() const override { return "numpy_feed"; }
  void* AllocateRaw(size_t, size_t) override { return std::exchange(data_, nullptr); }
  void DeallocateRaw(void*, size_t) override {
    if (!Py_IsInitialized()) {
      // The interpreter is gone (a tensor freed at exit): the array's memory goes with it.
    } else if (PyGILState_Check()) {
      Py_DECREF(array_);
    } else {
      std::lock_guard<std::mutex> l(g_lent_mu);
      LentArraysToRelease()->push_back(array_);
    }
    delete this;
  }

 private:
  void* data_;
  PyObject* array_;
};

// True when `arr`'s buffer can back a Tensor as it is: each element at an address that is a
// multiple of its size, writeable (kernels may write a buffer they hold the only reference to)
// and not empty. `arr` is C-contiguous and in native byte order here. Tensors from
// cpu_allocator() start at 64 bytes, but kernels do not rely on it: Slice and Split already hand
// them buffers at any row offset. (TF requires 64-byte alignment to share, its Eigen maps being
// declared aligned; numpy's allocations of a few hundred KB are usually only 16-byte aligned.)
bool CanLend(const py::array& arr) {
  return arr.nbytes() > 0 && arr.writeable() &&
         reinterpret_cast<uintptr_t>(arr.data()) % static_cast<uintptr_t>(arr.itemsize()) == 0;
}

}  // namespace

void ReleaseLentNumpyArrays() {
  std::vector<PyObject*> release;
  {
    std::lock_guard<std::mutex> l(g_lent_mu);
    release.swap(*LentArraysToRelease());
  }
  for (PyObject* o : release) Py_DECREF(o);
}

void RegisterStatusTranslator(py::module_& m) {
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const StatusError& e) {
      SetPythonError(e.status());
    }
  });
}

StatusOr<Tensor> TensorFromNumpy(py::handle value, DataType want, bool share) {
  want = BaseType(want);
  py::array arr = py::array::ensure(value, py::array::c_style);
  if (!arr) {
    PyErr_Clear();
    return errors::InvalidArgument("cannot convert a value of type ", PyTypeName(value),
                                   " to a numpy array");
  }
  const DataType got = DataTypeOfNumpy(arr.dtype());
  if (got == DT_INVALID) {
    return errors::InvalidArgument("numpy dtype ", std::string(py::str(arr.dtype())),
                                   " has no TensorFlux equivalent");
  }
  TX_ASSIGN_OR_RETURN(TensorShape shape, ShapeOf(arr));
  if (got == DT_STRING) {
    if (want != DT_INVALID && want != DT_STRING) {
      return errors::InvalidArgument("expected a ", DataTypeString(want),
                                     " value but got a string array");
    }
    return StringTensorFromNumpy(arr, shape);
  }
  if (arr.dtype().byteorder() == '>') {
    arr = arr.attr("astype")(arr.dtype().attr("newbyteorder")("="));
  }
  if (want == DT_BFLOAT16 && arr.dtype().kind() == 'f') {
    py::array_t<float, py::array::c_style | py::array::forcecast> f32(arr);
    TX_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(DT_BFLOAT16, shape));
    const float* src = f32.data();
    auto out = t.flat<BFloat16>();
    for (size_t i = 0; i < out.size(); ++i) out[i] = BFloat16(src[i]);
    return t;
  }
  if (want != DT_INVALID && want != got) {
    return errors::InvalidArgument("expected a ", DataTypeString(want), " value but got a ",
                                   DataTypeString(got), " array (numpy ",
                                   std::string(py::str(arr.dtype())), ")");
  }
  ReleaseLentNumpyArrays();
  if (share && CanLend(arr)) {
    auto* lender = new NumpyBufferLender(arr);
    StatusOr<Tensor> shared = Tensor::Allocate(got, shape, lender);
    if (shared.ok() && shared->TotalBytes() == static_cast<size_t>(arr.nbytes())) return shared;
    // Not expected (the shape and dtype are the array's): take the copying path.
    if (shared.ok()) {
      *shared = Tensor();  // frees through the lender, which deletes itself
    } else {
      lender->DeallocateRaw(nullptr, 0);
    }
  }
  TX_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(got, shape));
  const size_t bytes = t.TotalBytes();
  if (bytes != static_cast<size_t>(arr.nbytes())) {
    return errors::Internal("numpy array holds ", arr.nbytes(), " bytes, tensor needs ", bytes);
  }
  if (bytes > 0) std::memcpy(t.raw_data(), arr.data(), bytes);
  return t;
}

StatusOr<py::object> TensorToNumpy(const Tensor& t) {
  const DataType dt = BaseType(t.dtype());
  std::vector<py::ssize_t> shape(t.shape().dim_sizes().begin(), t.shape().dim_sizes().end());
  const int64_t n = t.NumElements();
  if (dt == DT_STRING) {
    py::array out(py::dtype("O"), shape);
    auto** slots = static_cast<PyObject**>(out.mutable_data());
    const std::string* src = n > 0 ? t.data<std::string>() : nullptr;
    for (int64_t i = 0; i < n; ++i) {
      PyObject* b = PyBytes_FromStringAndSize(src[i].data(), static_cast<Py_ssize_t>(src[i].size()));
      if (b == nullptr) throw py::error_already_set();
      Py_XDECREF(slots[i]);
      slots[i] = b;
    }
    return py::object(std::move(out));
  }
  if (dt == DT_BFLOAT16) {
    py::array_t<float> out(shape);
    float* dst = out.mutable_data();
    const BFloat16* src = n > 0 ? t.data<BFloat16>() : nullptr;
    for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<float>(src[i]);
    return py::object(std::move(out));
  }
  const char* name = NumpyName(dt);
  if (name == nullptr) {
    return errors::Unimplemented("cannot convert a ", DataTypeString(t.dtype()),
                                 " tensor to a numpy array");
  }
  py::dtype np_dtype(name);
  if (n == 0 || !t.RefCountIsOne()) {
    py::array out(np_dtype, shape);
    if (n > 0) std::memcpy(out.mutable_data(), t.raw_data(), t.TotalBytes());
    return py::object(std::move(out));
  }
  // Sole owner: hand the buffer to numpy, kept alive by a capsule holding a Tensor reference.
  auto* holder = new Tensor(t);
  py::capsule base(holder, [](void* p) { delete static_cast<Tensor*>(p); });
  return py::object(py::array(np_dtype, shape, holder->raw_data(), base));
}

void RegisterTensorFunctions(py::module_& m) {
  m.def(
      "tensor_proto_to_ndarray",
      [](py::bytes serialized) {
        TensorProto proto;
        if (!proto.ParseFromString(std::string(serialized))) {
          ThrowIfError(errors::InvalidArgument("cannot parse a TensorProto"));
        }
        Tensor t = ValueOrThrow(Tensor::FromProto(proto));
        return ValueOrThrow(TensorToNumpy(t));
      },
      py::arg("serialized"),
      "Decodes a serialized TensorProto with the engine's rules (tensor_content, or the typed "
      "field with its last value repeated) into a numpy array.");
  m.def(
      "tensor_round_trip",
      [](py::object value, int dtype) {
        Tensor t = ValueOrThrow(TensorFromNumpy(value, static_cast<DataType>(dtype)));
        return py::make_tuple(static_cast<int>(t.dtype()), ValueOrThrow(TensorToNumpy(t)));
      },
      py::arg("value"), py::arg("dtype") = 0,
      "Converts value to a Tensor (dtype enum or 0 = infer) and back; returns (dtype, array). "
      "For tests of the numpy bridge.");
  m.def(
      "tensor_to_proto",
      [](py::object value, int dtype) {
        Tensor t = ValueOrThrow(TensorFromNumpy(value, static_cast<DataType>(dtype)));
        TensorProto proto;
        t.AsProtoTensorContent(&proto);
        std::string out;
        proto.SerializeToString(&out);
        return py::bytes(out);
      },
      py::arg("value"), py::arg("dtype") = 0,
      "Encodes value (dtype enum or 0 = infer) as a serialized TensorProto (tensor_content).");
}

}  // namespace tensorflux::python
