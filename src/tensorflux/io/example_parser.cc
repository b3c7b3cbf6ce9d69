#include "tensorflux/io/example_parser.h"

#include <algorithm>
#include <cstring>

#include "tensorflux/example.pb.h"

namespace tensorflux {
namespace io {
namespace {

const char* KindName(Feature::KindCase k) {
  switch (k) {
    case Feature::kBytesList: return "bytes (string)";
    case Feature::kFloatList: return "float";
    case Feature::kInt64List: return "int64";
    default: return "none";
  }
}

Feature::KindCase KindOf(DataType dt) {
  switch (dt) {
    case DT_FLOAT: return Feature::kFloatList;
    case DT_INT64: return Feature::kInt64List;
    default: return Feature::kBytesList;
  }
}

int64_t ListSize(const Feature& f) {
  switch (f.kind_case()) {
    case Feature::kBytesList: return f.bytes_list().value_size();
    case Feature::kFloatList: return f.float_list().value_size();
    case Feature::kInt64List: return f.int64_list().value_size();
    default: return 0;
  }
}

// Copies the feature's values into `dst` (typed by the feature's kind) starting at element `at`.
void CopyValues(const Feature& f, Tensor* dst, int64_t at) {
  switch (f.kind_case()) {
    case Feature::kBytesList:
      for (int i = 0; i < f.bytes_list().value_size(); ++i)
        dst->flat<std::string>()[at + i] = f.bytes_list().value(i);
      break;
    case Feature::kFloatList:
      std::copy(f.float_list().value().begin(), f.float_list().value().end(),
                dst->flat<float>().begin() + at);
      break;
    case Feature::kInt64List:
      std::copy(f.int64_list().value().begin(), f.int64_list().value().end(),
                dst->flat<int64_t>().begin() + at);
      break;
    default:
      break;
  }
}

void CopyElements(const Tensor& src, Tensor* dst, int64_t at) {
  if (src.dtype() == DT_STRING) {
    for (int64_t i = 0; i < src.NumElements(); ++i)
      dst->flat<std::string>()[at + i] = src.flat<std::string>()[i];
  } else {
    const size_t w = DataTypeSize(src.dtype());
    std::memcpy(static_cast<char*>(dst->raw_data()) + at * w, src.raw_data(),
                src.NumElements() * w);
  }
}

std::string RecordName(absl::Span<const std::string> names, size_t i) {
  if (names.empty() || names[i].empty()) return absl::StrCat("record ", i);
  return absl::StrCat("record ", i, " ('", names[i], "')");
}

// A feature present with no list set counts as absent, as in TF.
const Feature* Lookup(const Example& ex, const std::string& key) {
  auto it = ex.features().feature().find(key);
  if (it == ex.features().feature().end() || it->second.kind_case() == Feature::KIND_NOT_SET)
    return nullptr;
  return &it->second;
}

Status CheckType(const Feature& f, DataType dt, const std::string& rec, const std::string& key) {
  if (f.kind_case() != KindOf(dt))
    return errors::InvalidArgument("Example ", rec, ", feature '", key, "': expected a ",
                                   KindName(KindOf(dt)), " list (", DataTypeString(dt),
                                   "), found a ", KindName(f.kind_case()), " list");
  return OkStatus();
}

Status ValidateConfig(const ExampleParserConfig& config) {
  auto check_dtype = [](DataType dt, const std::string& key) {
    if (dt != DT_FLOAT && dt != DT_INT64 && dt != DT_STRING)
      return errors::InvalidArgument("feature '", key, "' has dtype ", DataTypeString(dt),
                                     "; Example features are float, int64 or string");
    return OkStatus();
  };
  for (const auto& s : config.sparse) TX_RETURN_IF_ERROR(check_dtype(s.dtype, s.key));
  for (const auto& d : config.dense) {
    TX_RETURN_IF_ERROR(check_dtype(d.dtype, d.key));
    if (d.default_value.IsInitialized() && d.default_value.NumElements() > 0) {
      if (d.default_value.dtype() != d.dtype)
        return errors::InvalidArgument("default of dense feature '", d.key, "' is ",
                                       DataTypeString(d.default_value.dtype()), ", expected ",
                                       DataTypeString(d.dtype));
      if (d.default_value.NumElements() != d.shape.num_elements())
        return errors::InvalidArgument("default of dense feature '", d.key, "' has ",
                                       d.default_value.NumElements(), " elements, shape ",
                                       d.shape.DebugString(), " needs ", d.shape.num_elements());
    }
  }
  return OkStatus();
}

}  // namespace

Status ParseExamples(const ExampleParserConfig& config, absl::Span<const std::string> serialized,
                     absl::Span<const std::string> names, bool single, ParsedExamples* out) {
  TX_RETURN_IF_ERROR(ValidateConfig(config));
  const int64_t batch = static_cast<int64_t>(serialized.size());
  if (!names.empty() && names.size() != serialized.size())
    return errors::InvalidArgument("names has ", names.size(), " entries for ", batch,
                                   " serialized Examples");
  if (single && batch != 1)
    return errors::InvalidArgument("ParseSingleExample needs one record, got ", batch);

  std::vector<Example> examples(batch);
  for (int64_t i = 0; i < batch; ++i)
    if (!examples[i].ParseFromString(serialized[i]))
      return errors::InvalidArgument("could not parse Example ", RecordName(names, i),
                                     ": not a serialized tf.train.Example");

  *out = ParsedExamples();
  for (const auto& d : config.dense) {
    TensorShape shape = d.shape;
    if (!single) shape.InsertDim(0, batch);
    StatusOr<Tensor> t = Tensor::Allocate(d.dtype, shape);
    if (!t.ok()) return t.status();
    const int64_t n = d.shape.num_elements();
    const bool required = !d.default_value.IsInitialized() || d.default_value.NumElements() == 0;
    for (int64_t i = 0; i < batch; ++i) {
      const Feature* f = Lookup(examples[i], d.key);
      if (f == nullptr) {
        if (required)
          return errors::InvalidArgument("Example ", RecordName(names, i),
                                         " lacks the required feature '", d.key, "'");
        CopyElements(d.default_value, &*t, i * n);
        continue;
      }
      TX_RETURN_IF_ERROR(CheckType(*f, d.dtype, RecordName(names, i), d.key));
      if (ListSize(*f) != n)
        return errors::InvalidArgument("Example ", RecordName(names, i), ", feature '", d.key,
                                       "': ", ListSize(*f), " values, the fixed-length shape ",
                                       d.shape.DebugString(), " needs ", n);
      CopyValues(*f, &*t, i * n);
    }
    out->dense_values.push_back(std::move(*t));
  }

  for (const auto& s : config.sparse) {
    int64_t total = 0, longest = 0;
    for (int64_t i = 0; i < batch; ++i) {
      const Feature* f = Lookup(examples[i], s.key);
      if (f == nullptr) continue;
      TX_RETURN_IF_ERROR(CheckType(*f, s.dtype, RecordName(names, i), s.key));
      total += ListSize(*f);
      longest = std::max(longest, ListSize(*f));
    }
    const int rank = single ? 1 : 2;
    Tensor indices(DT_INT64, TensorShape({total, rank}));
    Tensor values(s.dtype, TensorShape({total}));
    Tensor shape(DT_INT64, TensorShape({rank}));
    int64_t at = 0;
    for (int64_t i = 0; i < batch; ++i) {
      const Feature* f = Lookup(examples[i], s.key);
      if (f == nullptr) continue;
      const int64_t k = ListSize(*f);
      CopyValues(*f, &values, at);
      for (int64_t j = 0; j < k; ++j) {
        int64_t* row = indices.flat<int64_t>().data() + (at + j) * rank;
        if (!single) *row++ = i;
        *row = j;
      }
      at += k;
    }
    if (single) {
      shape.flat<int64_t>()[0] = longest;
    } else {
      shape.flat<int64_t>()[0] = batch;
      shape.flat<int64_t>()[1] = longest;
    }
    out->sparse_indices.push_back(std::move(indices));
    out->sparse_values.push_back(std::move(values));
    out->sparse_shapes.push_back(std::move(shape));
  }
  return OkStatus();
}

}  // namespace io
}  // namespace tensorflux
