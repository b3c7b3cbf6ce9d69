// Tensor: a dtype, a shape and a reference-counted, 64-byte-aligned buffer.
//
// Copies of a Tensor share the buffer. Reshaping (CopyFrom with another shape of the same element
// count) and slicing along dim 0 (Slice) share memory too. Element storage is row-major.
// DT_STRING tensors hold std::string elements and DT_RESOURCE tensors ResourceHandle elements;
// every other supported dtype is a POD element of DataTypeSize() bytes.
#pragma once

#include <cstring>
#include <memory>
#include <string>

#include "absl/types/span.h"
#include "tensorflux/core/allocator.h"
#include "tensorflux/core/status.h"
#include "tensorflux/core/tensor_shape.h"
#include "tensorflux/core/types.h"
#include "tensorflux/tensor.pb.h"

namespace tensorflux {

// Owns one allocation. Destroys non-POD elements (strings, resource handles) when freed.
class TensorBuffer {
 public:
  TensorBuffer(Allocator* a, DataType dt, int64_t num_elements, void* data, size_t bytes);
  ~TensorBuffer();
  TensorBuffer(const TensorBuffer&) = delete;
  TensorBuffer& operator=(const TensorBuffer&) = delete;

  void* data() const { return data_; }
  size_t size() const { return bytes_; }

 private:
  Allocator* allocator_;
  DataType dtype_;
  int64_t num_elements_;
  void* data_;
  size_t bytes_;
};

class Tensor {
 public:
  // An uninitialized tensor: dtype DT_INVALID, no buffer.
  Tensor() = default;
  // Allocates from cpu_allocator(). Elements are uninitialized for POD types, empty for
  // strings. For dtypes a tensor cannot hold, or if allocation fails, the result is
  // uninitialized (IsInitialized() false); use Allocate() to get the reason as a Status.
  Tensor(DataType dtype, const TensorShape& shape);
  Tensor(Allocator* a, DataType dtype, const TensorShape& shape);

  // INVALID_ARGUMENT for an unsupported dtype, RESOURCE_EXHAUSTED when allocation fails.
  static StatusOr<Tensor> Allocate(DataType dtype, const TensorShape& shape,
                                   Allocator* a = nullptr);

  // Scalar convenience constructors.
  template <typename T>
  static Tensor Scalar(T value) {
    Tensor t(DataTypeToEnum<T>::value, TensorShape());
    *t.data<T>() = std::move(value);
    return t;
  }
  // A tensor of the given shape filled from `values` (must have shape.num_elements() entries).
  template <typename T>
  static Tensor FromVector(absl::Span<const T> values, const TensorShape& shape) {
    Tensor t(DataTypeToEnum<T>::value, shape);
    T* p = t.data<T>();
    for (int64_t i = 0; i < shape.num_elements() && i < static_cast<int64_t>(values.size()); ++i)
      p[i] = values[i];
    return t;
  }

  DataType dtype() const { return dtype_; }
  const TensorShape& shape() const { return shape_; }
  int dims() const { return shape_.dims(); }
  int64_t dim_size(int d) const { return shape_.dim_size(d); }
  int64_t NumElements() const { return shape_.num_elements(); }
  // Bytes of element storage (NumElements() * element size).
  size_t TotalBytes() const;
  // True once the tensor has a dtype (zero-element tensors have no buffer but are initialized).
  bool IsInitialized() const;

  // Unchecked element pointer; T must match dtype().
  template <typename T>
  T* data() const {
    return reinterpret_cast<T*>(raw_data());
  }
  template <typename T>
  absl::Span<T> flat() const {
    return absl::Span<T>(data<T>(), static_cast<size_t>(NumElements()));
  }
  template <typename T>
  T& scalar() const {
    return *data<T>();
  }
  void* raw_data() const;

  // Makes *this share `other`'s buffer with `shape`. False (and no change) when the element
  // counts differ.
  bool CopyFrom(const Tensor& other, const TensorShape& shape);
  // Rows [start, limit) along dim 0, sharing the buffer. Requires dims() >= 1 and
  // 0 <= start <= limit <= dim_size(0).
  Tensor Slice(int64_t start, int64_t limit) const;
  // A new buffer with the same contents.
  Tensor DeepCopy() const;
  bool SharesBufferWith(const Tensor& other) const;
  // True when this Tensor object holds the only reference to its buffer (safe to write in place).
  bool RefCountIsOne() const;

  // Decodes a TensorProto (TF's rules: non-empty tensor_content wins; otherwise the typed *_val
  // field, repeating its last value when it holds fewer than NumElements() values, zeros when
  // empty). INVALID_ARGUMENT for a bad dtype, bad shape, or wrong content length.
  static StatusOr<Tensor> FromProto(const TensorProto& proto, Allocator* a = nullptr);
  // Encodes values into the typed *_val field.
  void AsProtoField(TensorProto* proto) const;
  // Encodes POD values into tensor_content (strings fall back to string_val).
  void AsProtoTensorContent(TensorProto* proto) const;

  // "Tensor<type: float shape: [2,2] values: [1 2][3 4]>"
  std::string DebugString(int64_t max_entries = 16) const;
  // Values only, nested with brackets: "[[1 2][3 4]]", at most max_entries values then "...".
  std::string SummarizeValue(int64_t max_entries = 16) const;

 private:
  DataType dtype_ = DT_INVALID;
  TensorShape shape_;
  std::shared_ptr<TensorBuffer> buf_;
  size_t offset_ = 0;  // bytes into buf_ (dim-0 slices)
};

}  // namespace tensorflux
