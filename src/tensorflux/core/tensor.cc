#include "tensorflux/core/tensor.h"

#include <new>
#include <type_traits>

#include "absl/strings/escaping.h"
#include "absl/strings/str_format.h"
#include "tensorflux/core/variant.h"

namespace tensorflux {
namespace {

// Bytes one element occupies in a tensor buffer; 0 for dtypes a Tensor cannot hold.
size_t ElementBytes(DataType dt) {
  if (dt == DT_STRING) return sizeof(std::string);
  if (dt == DT_RESOURCE) return sizeof(ResourceHandle);
  if (dt == DT_VARIANT) return sizeof(Variant);
  return DataTypeCanUseMemcpy(dt) ? DataTypeSize(dt) : 0;
}

bool IsHoldable(DataType dt) { return !IsRefType(dt) && DataTypeIsSupported(dt); }

// Calls fn(TypeTag<T>{}) for every dtype a tensor can hold, strings and resources included.
template <typename Fn>
Status VisitTensorType(DataType dt, std::string_view what, Fn&& fn) {
  if (dt == DT_STRING) return fn(TypeTag<std::string>{});
  if (dt == DT_RESOURCE) return fn(TypeTag<ResourceHandle>{});
  if (dt == DT_VARIANT) return fn(TypeTag<Variant>{});
  return VisitPodType(dt, what, fn);
}

}  // namespace

// ------------------------------------------------------------------ TensorBuffer

TensorBuffer::TensorBuffer(Allocator* a, DataType dt, int64_t num_elements, void* data,
                           size_t bytes)
    : allocator_(a), dtype_(dt), num_elements_(num_elements), data_(data), bytes_(bytes) {
  if (dtype_ == DT_STRING) {
    auto* p = static_cast<std::string*>(data_);
    for (int64_t i = 0; i < num_elements_; ++i) new (p + i) std::string();
  } else if (dtype_ == DT_RESOURCE) {
    auto* p = static_cast<ResourceHandle*>(data_);
    for (int64_t i = 0; i < num_elements_; ++i) new (p + i) ResourceHandle();
  } else if (dtype_ == DT_VARIANT) {
    auto* p = static_cast<Variant*>(data_);
    for (int64_t i = 0; i < num_elements_; ++i) new (p + i) Variant();
  }
}

TensorBuffer::~TensorBuffer() {
  if (dtype_ == DT_STRING) {
    auto* p = static_cast<std::string*>(data_);
    for (int64_t i = 0; i < num_elements_; ++i) p[i].~basic_string();
  } else if (dtype_ == DT_RESOURCE) {
    auto* p = static_cast<ResourceHandle*>(data_);
    for (int64_t i = 0; i < num_elements_; ++i) p[i].~ResourceHandle();
  } else if (dtype_ == DT_VARIANT) {
    auto* p = static_cast<Variant*>(data_);
    for (int64_t i = 0; i < num_elements_; ++i) p[i].~Variant();
  }
  if (allocator_ != nullptr) allocator_->DeallocateRaw(data_, bytes_);
}

// ------------------------------------------------------------------ Tensor

Tensor::Tensor(DataType dtype, const TensorShape& shape) : Tensor(nullptr, dtype, shape) {}

Tensor::Tensor(Allocator* a, DataType dtype, const TensorShape& shape) {
  StatusOr<Tensor> t = Allocate(dtype, shape, a);
  if (t.ok()) *this = std::move(*t);
}

StatusOr<Tensor> Tensor::Allocate(DataType dtype, const TensorShape& shape, Allocator* a) {
  if (!IsHoldable(dtype)) {
    return errors::InvalidArgument("A tensor cannot hold dtype ", DataTypeString(dtype));
  }
  const int64_t n = shape.num_elements();
  if (n < 0) {
    return errors::InvalidArgument("Cannot allocate a tensor of invalid shape ",
                                   shape.DebugString());
  }
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = shape;
  if (n == 0) return t;
  size_t bytes;
  if (__builtin_mul_overflow(static_cast<size_t>(n), ElementBytes(dtype), &bytes)) {
    return errors::ResourceExhausted("Tensor of shape ", shape.DebugString(), " and dtype ",
                                     DataTypeString(dtype), " is too large to allocate");
  }
  if (a == nullptr) a = cpu_allocator();
  void* p = a->AllocateRaw(kAllocatorAlignment, bytes);
  if (p == nullptr) {
    return errors::ResourceExhausted("Out of memory allocating ", bytes, " bytes for a ",
                                     DataTypeString(dtype), " tensor of shape ",
                                     shape.DebugString(), " with allocator ", a->Name());
  }
  t.buf_ = std::make_shared<TensorBuffer>(a, dtype, n, p, bytes);
  return t;
}

size_t Tensor::TotalBytes() const {
  return static_cast<size_t>(NumElements()) * ElementBytes(dtype_);
}

bool Tensor::IsInitialized() const { return dtype_ != DT_INVALID; }

void* Tensor::raw_data() const {
  return buf_ ? static_cast<char*>(buf_->data()) + offset_ : nullptr;
}

bool Tensor::CopyFrom(const Tensor& other, const TensorShape& shape) {
  if (other.NumElements() != shape.num_elements()) return false;
  dtype_ = other.dtype_;
  shape_ = shape;
  buf_ = other.buf_;
  offset_ = other.offset_;
  return true;
}

// A slice starts `start` rows into the parent's buffer; it stays 64-byte aligned only when
// start * row bytes is a multiple of 64 (e.g. a float row of 16 elements).
Tensor Tensor::Slice(int64_t start, int64_t limit) const {
  if (dims() < 1 || start < 0 || limit < start || limit > dim_size(0)) return Tensor();
  Tensor t;
  t.dtype_ = dtype_;
  t.shape_ = shape_;
  t.shape_.set_dim(0, limit - start);
  int64_t row_elems = 1;
  for (int d = 1; d < dims(); ++d) row_elems *= dim_size(d);
  t.buf_ = buf_;
  t.offset_ = offset_ + static_cast<size_t>(start * row_elems) * ElementBytes(dtype_);
  return t;
}

Tensor Tensor::DeepCopy() const {
  if (!IsInitialized()) return Tensor();
  Tensor t(dtype_, shape_);
  if (!t.IsInitialized() || NumElements() == 0) return t;
  if (dtype_ == DT_STRING) {
    auto src = flat<std::string>();
    auto dst = t.flat<std::string>();
    for (size_t i = 0; i < src.size(); ++i) dst[i] = src[i];
  } else if (dtype_ == DT_RESOURCE) {
    auto src = flat<ResourceHandle>();
    auto dst = t.flat<ResourceHandle>();
    for (size_t i = 0; i < src.size(); ++i) dst[i] = src[i];
  } else if (dtype_ == DT_VARIANT) {
    auto src = flat<Variant>();
    auto dst = t.flat<Variant>();
    for (size_t i = 0; i < src.size(); ++i) dst[i] = src[i];
  } else {
    std::memcpy(t.raw_data(), raw_data(), TotalBytes());
  }
  return t;
}

bool Tensor::SharesBufferWith(const Tensor& other) const {
  return buf_ != nullptr && buf_ == other.buf_;
}

bool Tensor::RefCountIsOne() const { return buf_ != nullptr && buf_.use_count() == 1; }

// ------------------------------------------------------------------ TensorProto decoding

namespace {

// Fills out[0..n) from vals converted by conv: TF's rules (repeat the last value when there are
// fewer, zeros/empty when there are none, INVALID_ARGUMENT when there are more).
template <typename T, typename Field, typename Conv>
Status FillFromField(const Field& vals, T* out, int64_t n, std::string_view field, Conv conv) {
  const int64_t m = vals.size();
  if (m > n) {
    return errors::InvalidArgument("TensorProto has ", m, " values in ", field, " but its shape has ",
                                   n, " elements");
  }
  if (m == 0) {
    for (int64_t i = 0; i < n; ++i) out[i] = T();
    return OkStatus();
  }
  for (int64_t i = 0; i < m; ++i) out[i] = conv(vals.Get(static_cast<int>(i)));
  if (m < n) {
    const T last = out[m - 1];
    for (int64_t i = m; i < n; ++i) out[i] = last;
  }
  return OkStatus();
}

template <typename T>
Status DecodeTypedField(const TensorProto& p, T* out, int64_t n) {
  if constexpr (std::is_same_v<T, float>) {
    return FillFromField(p.float_val(), out, n, "float_val", [](float v) { return v; });
  } else if constexpr (std::is_same_v<T, double>) {
    return FillFromField(p.double_val(), out, n, "double_val", [](double v) { return v; });
  } else if constexpr (std::is_same_v<T, int64_t>) {
    return FillFromField(p.int64_val(), out, n, "int64_val", [](int64_t v) { return v; });
  } else if constexpr (std::is_same_v<T, uint32_t>) {
    return FillFromField(p.uint32_val(), out, n, "uint32_val", [](uint32_t v) { return v; });
  } else if constexpr (std::is_same_v<T, uint64_t>) {
    return FillFromField(p.uint64_val(), out, n, "uint64_val", [](uint64_t v) { return v; });
  } else if constexpr (std::is_same_v<T, bool>) {
    return FillFromField(p.bool_val(), out, n, "bool_val", [](bool v) { return v; });
  } else if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    return FillFromField(p.half_val(), out, n, "half_val", [](int32_t v) {
      T h;
      h.bits = static_cast<uint16_t>(v);
      return h;
    });
  } else if constexpr (std::is_same_v<T, std::string>) {
    return FillFromField(p.string_val(), out, n, "string_val",
                         [](const std::string& v) { return v; });
  } else if constexpr (std::is_same_v<T, ResourceHandle>) {
    return FillFromField(p.resource_handle_val(), out, n, "resource_handle_val",
                         [](const ResourceHandleProto& v) {
                           ResourceHandle h;
                           h.device = v.device();
                           h.container = v.container();
                           h.name = v.name();
                           h.hash_code = v.hash_code();
                           h.maybe_type_name = v.maybe_type_name();
                           return h;
                         });
  } else if constexpr (std::is_same_v<T, Variant>) {
    if (p.variant_val_size() > 0) {
      return errors::Unimplemented("Decoding DT_VARIANT values from a TensorProto");
    }
    return OkStatus();  // empty variants (core/variant.h: no wire form)
  } else {  // int32, int16, int8, uint8, uint16 travel in int_val
    return FillFromField(p.int_val(), out, n, "int_val",
                         [](int32_t v) { return static_cast<T>(v); });
  }
}

// Reads a varint32 at *pos; false when it runs past `end` or is longer than 5 bytes.
bool ReadVarint32(const std::string& s, size_t* pos, uint32_t* out) {
  uint32_t v = 0;
  for (int shift = 0; shift <= 28; shift += 7) {
    if (*pos >= s.size()) return false;
    const uint8_t b = static_cast<uint8_t>(s[(*pos)++]);
    v |= static_cast<uint32_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) {
      *out = v;
      return true;
    }
  }
  return false;
}

// DT_STRING in tensor_content: n varint32 lengths, then the bytes of every string in order.
Status DecodeStringContent(const std::string& content, std::string* out, int64_t n) {
  size_t pos = 0;
  std::vector<uint32_t> lens(static_cast<size_t>(n));
  uint64_t total = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (!ReadVarint32(content, &pos, &lens[i])) {
      return errors::InvalidArgument("Malformed DT_STRING tensor_content: length ", i, " of ", n,
                                     " is truncated or invalid");
    }
    total += lens[i];
  }
  if (total != content.size() - pos) {
    return errors::InvalidArgument("Malformed DT_STRING tensor_content: lengths sum to ", total,
                                   " bytes but ", content.size() - pos, " bytes follow");
  }
  for (int64_t i = 0; i < n; ++i) {
    out[i].assign(content, pos, lens[i]);
    pos += lens[i];
  }
  return OkStatus();
}

}  // namespace

StatusOr<Tensor> Tensor::FromProto(const TensorProto& proto, Allocator* a) {
  const DataType dt = proto.dtype();
  if (!IsHoldable(dt)) {
    return errors::InvalidArgument("TensorProto has unsupported dtype ", DataTypeString(dt));
  }
  StatusOr<TensorShape> shape = TensorShape::FromProto(proto.tensor_shape());
  if (!shape.ok()) {
    return errors::InvalidArgument("TensorProto has an invalid shape: ", shape.status().message());
  }
  const int64_t n = shape->num_elements();
  if (n > 0 && !proto.tensor_content().empty() && DataTypeCanUseMemcpy(dt)) {
    // Check the length before allocating, so a tiny proto cannot request a huge buffer.
    const size_t want = static_cast<size_t>(n) * DataTypeSize(dt);
    if (proto.tensor_content().size() != want) {
      return errors::InvalidArgument("TensorProto tensor_content has ",
                                     proto.tensor_content().size(), " bytes but shape ",
                                     shape->DebugString(), " of ", DataTypeString(dt), " needs ",
                                     want);
    }
  }
  if (dt == DT_STRING && !proto.tensor_content().empty() &&
      proto.tensor_content().size() < static_cast<uint64_t>(n)) {
    // Every string needs at least one length byte.
    return errors::InvalidArgument("Malformed DT_STRING tensor_content: ",
                                   proto.tensor_content().size(), " bytes cannot hold ", n,
                                   " string lengths");
  }
  TX_ASSIGN_OR_RETURN(Tensor t, Allocate(dt, *shape, a));
  const std::string& content = proto.tensor_content();
  if (!content.empty()) {
    if (dt == DT_STRING) {
      TX_RETURN_IF_ERROR(DecodeStringContent(content, t.data<std::string>(), n));
      return t;
    }
    if (dt == DT_RESOURCE || dt == DT_VARIANT) {
      return errors::InvalidArgument("TensorProto of dtype ", DataTypeString(dt),
                                     " cannot use tensor_content");
    }
    if (n == 0) {
      return errors::InvalidArgument("TensorProto tensor_content has ", content.size(),
                                     " bytes but shape ", shape->DebugString(),
                                     " has no elements");
    }
    std::memcpy(t.raw_data(), content.data(), content.size());
    return t;
  }
  TX_RETURN_IF_ERROR(VisitTensorType(dt, "TensorProto decoding", [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    return DecodeTypedField<T>(proto, t.data<T>(), n);
  }));
  return t;
}

// ------------------------------------------------------------------ TensorProto encoding

void Tensor::AsProtoField(TensorProto* proto) const {
  proto->Clear();
  proto->set_dtype(dtype_);
  shape_.AsProto(proto->mutable_tensor_shape());
  if (!IsInitialized() || NumElements() == 0) return;
  Status s = VisitTensorType(dtype_, "AsProtoField", [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    for (const T& v : this->template flat<T>()) {
      if constexpr (std::is_same_v<T, float>) proto->add_float_val(v);
      else if constexpr (std::is_same_v<T, double>) proto->add_double_val(v);
      else if constexpr (std::is_same_v<T, int64_t>) proto->add_int64_val(v);
      else if constexpr (std::is_same_v<T, uint32_t>) proto->add_uint32_val(v);
      else if constexpr (std::is_same_v<T, uint64_t>) proto->add_uint64_val(v);
      else if constexpr (std::is_same_v<T, bool>) proto->add_bool_val(v);
      else if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>)
        proto->add_half_val(v.bits);
      else if constexpr (std::is_same_v<T, std::string>) proto->add_string_val(v);
      else if constexpr (std::is_same_v<T, ResourceHandle>) {
        ResourceHandleProto* h = proto->add_resource_handle_val();
        h->set_device(v.device);
        h->set_container(v.container);
        h->set_name(v.name);
        h->set_hash_code(v.hash_code);
        h->set_maybe_type_name(v.maybe_type_name);
      } else if constexpr (std::is_same_v<T, Variant>) {
        // No wire form (core/variant.h): the proto keeps dtype and shape only.
      } else {
        proto->add_int_val(static_cast<int32_t>(v));
      }
    }
    return OkStatus();
  });
  (void)s;  // every holdable dtype is handled
}

void Tensor::AsProtoTensorContent(TensorProto* proto) const {
  if (!DataTypeCanUseMemcpy(dtype_)) {
    AsProtoField(proto);
    return;
  }
  proto->Clear();
  proto->set_dtype(dtype_);
  shape_.AsProto(proto->mutable_tensor_shape());
  if (NumElements() > 0) {
    proto->set_tensor_content(static_cast<const char*>(raw_data()), TotalBytes());
  }
}

// ------------------------------------------------------------------ printing

namespace {

template <typename T>
void AppendValue(std::string* out, const T& v) {
  if constexpr (std::is_same_v<T, bool>) {
    out->append(v ? "true" : "false");
  } else if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    absl::StrAppendFormat(out, "%.6g", v);
  } else if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    absl::StrAppendFormat(out, "%.6g", static_cast<float>(v));
  } else if constexpr (std::is_same_v<T, std::string>) {
    absl::StrAppend(out, "\"", absl::CEscape(v), "\"");
  } else if constexpr (std::is_same_v<T, ResourceHandle>) {
    absl::StrAppend(out, "<ResourceHandle(name=\"", v.name, "\", device=\"", v.device, "\")>");
  } else if constexpr (std::is_same_v<T, Variant>) {
    absl::StrAppend(out, "<", v.DebugString(), ">");
  } else if constexpr (std::is_same_v<T, int8_t> || std::is_same_v<T, uint8_t>) {
    absl::StrAppend(out, static_cast<int>(v));
  } else {
    absl::StrAppend(out, v);
  }
}

// Prints the block of `shape` dims from `d` inward starting at element *index; stops after
// `limit` elements with "...". Returns false once truncated.
template <typename T>
bool PrintDim(std::string* out, const T* data, absl::Span<const int64_t> dims, int d,
              int64_t* index, int64_t limit) {
  out->push_back('[');
  bool more = true;
  for (int64_t i = 0; i < dims[d] && more; ++i) {
    if (d + 1 == static_cast<int>(dims.size())) {
      if (*index >= limit) {
        out->append("...");
        more = false;
        break;
      }
      if (i > 0) out->push_back(' ');
      AppendValue(out, data[(*index)++]);
    } else {
      more = PrintDim(out, data, dims, d + 1, index, limit);
    }
  }
  out->push_back(']');
  return more;
}

}  // namespace

std::string Tensor::SummarizeValue(int64_t max_entries) const {
  if (!IsInitialized()) return "<uninitialized>";
  const int64_t n = NumElements();
  const int64_t limit = max_entries < 0 ? n : max_entries;
  std::string out;
  Status s = VisitTensorType(dtype_, "SummarizeValue", [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    const T* p = n > 0 ? this->template data<T>() : nullptr;
    if (dims() == 0) {
      if (limit > 0) AppendValue(&out, p[0]);
      else out.append("...");
      return OkStatus();
    }
    int64_t index = 0;
    PrintDim(&out, p, shape_.dim_sizes(), 0, &index, limit);
    return OkStatus();
  });
  (void)s;
  return out;
}

std::string Tensor::DebugString(int64_t max_entries) const {
  if (!IsInitialized()) return "Tensor<uninitialized>";
  std::string values = SummarizeValue(max_entries);
  // TF's legacy layout: the outermost dimension is not bracketed ("[1 2][3 4]", "1 2 3").
  if (dims() >= 1 && values.size() >= 2) values = values.substr(1, values.size() - 2);
  return absl::StrCat("Tensor<type: ", DataTypeString(dtype_), " shape: ", shape_.DebugString(),
                      " values: ", values, ">");
}

}  // namespace tensorflux
