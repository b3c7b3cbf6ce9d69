#include "tensorflux/train/safetensors.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <limits>
#include <set>

#include "nlohmann/json.hpp"
#include "tensorflux/train/file_io.h"

namespace tensorflux {

static_assert(std::endian::native == std::endian::little,
              "safetensors data is little-endian; this code copies it as it is");

namespace {

using json = nlohmann::json;

constexpr uint64_t kMaxHeaderBytes = 100u << 20;  // the reference implementation's limit
constexpr char kMetadataKey[] = "__metadata__";

struct DtypeName {
  DataType dtype;
  const char* name;
};
constexpr DtypeName kDtypeNames[] = {
    {DT_DOUBLE, "F64"}, {DT_FLOAT, "F32"},   {DT_HALF, "F16"},   {DT_BFLOAT16, "BF16"},
    {DT_INT64, "I64"},  {DT_INT32, "I32"},   {DT_INT16, "I16"},  {DT_INT8, "I8"},
    {DT_UINT64, "U64"}, {DT_UINT32, "U32"},  {DT_UINT16, "U16"}, {DT_UINT8, "U8"},
    {DT_BOOL, "BOOL"},
};

// A JSON number that is a non-negative integer fitting int64.
bool AsSize(const json& v, int64_t* out) {
  if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<int64_t>() >= 0)) return false;
  const uint64_t u = v.get<uint64_t>();
  if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return false;
  *out = static_cast<int64_t>(u);
  return true;
}

// Parses one tensor's {"dtype", "shape", "data_offsets"}; the error says what is wrong.
Status ParseEntry(const std::string& name, const json& info, SafetensorsEntry* e) {
  if (!info.is_object()) return errors::DataLoss("its header value is not an object");
  for (const auto& [field, v] : info.items()) {
    if (field != "dtype" && field != "shape" && field != "data_offsets")
      return errors::DataLoss("unknown field '", field, "'");
  }
  if (!info.contains("dtype") || !info["dtype"].is_string())
    return errors::DataLoss("missing or non-string \"dtype\"");
  auto dt = SafetensorsDtypeFromName(info["dtype"].get<std::string>());
  if (!dt.ok()) return errors::DataLoss(dt.status().message());
  if (!info.contains("shape") || !info["shape"].is_array())
    return errors::DataLoss("missing or non-array \"shape\"");
  std::vector<int64_t> dims;
  for (const json& d : info["shape"]) {
    int64_t n;
    if (!AsSize(d, &n)) return errors::DataLoss("shape has a non-integer or negative entry");
    dims.push_back(n);
  }
  auto shape = TensorShape::Make(dims);
  if (!shape.ok()) return errors::DataLoss(shape.status().message());
  const json* off = info.contains("data_offsets") ? &info["data_offsets"] : nullptr;
  if (off == nullptr || !off->is_array() || off->size() != 2 || !AsSize((*off)[0], &e->begin) ||
      !AsSize((*off)[1], &e->end))
    return errors::DataLoss("\"data_offsets\" is not a pair of non-negative integers");
  if (e->end < e->begin) return errors::DataLoss("data_offsets end before they begin");
  const int64_t esize = static_cast<int64_t>(DataTypeSize(*dt));
  if (shape->num_elements() > std::numeric_limits<int64_t>::max() / esize)
    return errors::DataLoss("shape ", shape->DebugString(), " is too large");
  if (e->end - e->begin != shape->num_elements() * esize)
    return errors::DataLoss("data_offsets [", e->begin, ", ", e->end, ") hold ",
                            e->end - e->begin, " bytes but ", info["dtype"].get<std::string>(),
                            shape->DebugString(), " needs ", shape->num_elements() * esize);
  e->name = name;
  e->dtype = *dt;
  e->shape = *std::move(shape);
  return OkStatus();
}

// Parses the JSON header; `data_size` is the byte count after it.
Status ParseHeader(const std::string& text, int64_t data_size,
                   std::vector<SafetensorsEntry>* entries,
                   std::map<std::string, std::string>* metadata) {
  if (text.empty() || text[0] != '{') return errors::DataLoss("the header does not start with '{'");
  // Duplicate names: nlohmann keeps the last silently, so watch the top-level keys as they parse.
  std::set<std::string> seen;
  std::string duplicate;
  json::parser_callback_t watch = [&](int depth, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::key && depth == 1 && !seen.insert(parsed.get<std::string>()).second &&
        duplicate.empty())
      duplicate = parsed.get<std::string>();
    return true;
  };
  const json header = json::parse(text, watch, /*allow_exceptions=*/false);
  if (header.is_discarded()) return errors::DataLoss("the header is not valid JSON");
  if (!header.is_object()) return errors::DataLoss("the header is not a JSON object");
  if (!duplicate.empty()) return errors::DataLoss("tensor '", duplicate, "' appears twice");
  for (const auto& [name, info] : header.items()) {
    if (name == kMetadataKey) {
      if (!info.is_object()) return errors::DataLoss("\"__metadata__\" is not an object");
      for (const auto& [k, v] : info.items()) {
        if (!v.is_string())
          return errors::DataLoss("\"__metadata__\" value of '", k, "' is not a string");
        (*metadata)[k] = v.get<std::string>();
      }
      continue;
    }
    SafetensorsEntry e;
    Status s = ParseEntry(name, info, &e);
    if (!s.ok()) return errors::DataLoss("tensor '", name, "': ", s.message());
    entries->push_back(std::move(e));
  }
  // The ranges, in offset order, must tile [0, data_size) exactly.
  std::vector<const SafetensorsEntry*> by_offset;
  for (const auto& e : *entries) by_offset.push_back(&e);
  std::sort(by_offset.begin(), by_offset.end(), [](const auto* a, const auto* b) {
    return a->begin != b->begin ? a->begin < b->begin : a->end < b->end;
  });
  int64_t next = 0;
  for (const SafetensorsEntry* e : by_offset) {
    if (e->begin < next)
      return errors::DataLoss("tensor '", e->name, "': data_offsets [", e->begin, ", ", e->end,
                              ") overlap the tensor before it, which ends at ", next);
    if (e->end > data_size)
      return errors::DataLoss("tensor '", e->name, "': data_offsets [", e->begin, ", ", e->end,
                              ") run past the ", data_size, " bytes of data (truncated file?)");
    if (e->begin > next)
      return errors::DataLoss("tensor '", e->name, "': data_offsets [", e->begin, ", ", e->end,
                              ") leave a gap after byte ", next);
    next = e->end;
  }
  if (next != data_size)
    return errors::DataLoss("the tensors cover ", next, " bytes of data but the file has ",
                            data_size, next > data_size ? " (truncated?)" : " (trailing bytes)");
  std::sort(entries->begin(), entries->end(),
            [](const auto& a, const auto& b) { return a.name < b.name; });
  return OkStatus();
}

}  // namespace

StatusOr<std::string> SafetensorsDtypeName(DataType dt) {
  for (const DtypeName& d : kDtypeNames)
    if (d.dtype == dt) return std::string(d.name);
  return errors::Unimplemented("safetensors has no dtype for ", DataTypeString(dt));
}

StatusOr<DataType> SafetensorsDtypeFromName(std::string_view name) {
  for (const DtypeName& d : kDtypeNames)
    if (name == d.name) return d.dtype;
  return errors::InvalidArgument("unknown or unsupported safetensors dtype '", name, "'");
}

Status WriteSafetensors(const std::string& path,
                        const std::vector<std::pair<std::string, Tensor>>& tensors,
                        const std::map<std::string, std::string>& metadata) {
  std::vector<const std::pair<std::string, Tensor>*> sorted;
  for (const auto& nt : tensors) sorted.push_back(&nt);
  std::sort(sorted.begin(), sorted.end(), [](auto* a, auto* b) { return a->first < b->first; });
  json header = json::object();
  int64_t offset = 0;
  for (size_t i = 0; i < sorted.size(); ++i) {
    const auto& [name, t] = *sorted[i];
    if (name.empty() || name == kMetadataKey)
      return errors::InvalidArgument("safetensors tensor name '", name, "' is not allowed");
    if (i > 0 && sorted[i - 1]->first == name)
      return errors::InvalidArgument("tensor '", name, "' given twice");
    auto dtype_name = SafetensorsDtypeName(t.dtype());
    if (!dtype_name.ok())
      return errors::Unimplemented("tensor '", name, "': ", dtype_name.status().message());
    const int64_t bytes = static_cast<int64_t>(t.TotalBytes());
    header[name] = {{"dtype", *dtype_name},
                    {"shape", std::vector<int64_t>(t.shape().dim_sizes().begin(),
                                                   t.shape().dim_sizes().end())},
                    {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  if (!metadata.empty()) header[kMetadataKey] = metadata;
  std::string text;
  try {
    text = header.dump();
  } catch (const json::exception& e) {  // names or metadata that are not valid UTF-8
    return errors::InvalidArgument("safetensors header for '", path, "': ", e.what());
  }
  text.append((8 - text.size() % 8) % 8, ' ');  // the data starts 8-byte aligned
  uint64_t n = text.size();
  char len[8];
  std::memcpy(len, &n, 8);

  AtomicFile file(path);
  TX_RETURN_IF_ERROR(file.Open());
  TX_RETURN_IF_ERROR(file.Append(std::string_view(len, 8)));
  TX_RETURN_IF_ERROR(file.Append(text));
  for (const auto* nt : sorted) {
    const Tensor& t = nt->second;
    TX_RETURN_IF_ERROR(
        file.Append(std::string_view(static_cast<const char*>(t.raw_data()), t.TotalBytes())));
  }
  return file.Commit();
}

// ---------------------------------------------------------------- SafetensorsReader

StatusOr<std::unique_ptr<SafetensorsReader>> SafetensorsReader::Open(const std::string& path) {
  std::unique_ptr<SafetensorsReader> r(new SafetensorsReader());
  r->path_ = path;
  r->fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (r->fd_ < 0) return IoError(errno, "cannot open safetensors file", path);
  TX_ASSIGN_OR_RETURN(int64_t size, FileSize(r->fd_, path));
  auto fail = [&](const Status& s) {
    return errors::DataLoss("safetensors file '", path, "': ", s.message());
  };
  if (size < 8) return fail(errors::DataLoss("only ", size, " bytes, less than the 8-byte header length"));
  uint64_t n = 0;
  TX_RETURN_IF_ERROR(ReadAt(r->fd_, path, 0, 8, &n));
  if (n > kMaxHeaderBytes || n > static_cast<uint64_t>(size - 8))
    return fail(errors::DataLoss("header length ", n, " exceeds ",
                                 n > kMaxHeaderBytes ? "the 100 MiB limit" : "the file size"));
  std::string text(n, '\0');
  TX_RETURN_IF_ERROR(ReadAt(r->fd_, path, 8, n, text.data()));
  r->data_start_ = 8 + static_cast<int64_t>(n);
  Status s = ParseHeader(text, size - r->data_start_, &r->entries_, &r->metadata_);
  if (!s.ok()) return fail(s);
  return r;
}

SafetensorsReader::~SafetensorsReader() {
  if (fd_ >= 0) ::close(fd_);
}

const SafetensorsEntry* SafetensorsReader::Find(std::string_view name) const {
  auto it = std::lower_bound(entries_.begin(), entries_.end(), name,
                             [](const SafetensorsEntry& e, std::string_view n) { return e.name < n; });
  return it != entries_.end() && it->name == name ? &*it : nullptr;
}

StatusOr<Tensor> SafetensorsReader::Read(std::string_view name) const {
  const SafetensorsEntry* e = Find(name);
  if (e == nullptr)
    return errors::NotFound("tensor '", name, "' not found in safetensors file '", path_, "'");
  TX_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(e->dtype, e->shape));
  char* dst = static_cast<char*>(t.raw_data());
  const size_t n = static_cast<size_t>(e->end - e->begin);
  Status s = ReadAt(fd_, path_, data_start_ + e->begin, n, dst);
  if (s.ok() && e->dtype == DT_BOOL) s = CheckBoolBytes(dst, n);
  if (!s.ok())
    return Status(s.code(), absl::StrCat("safetensors file '", path_, "', tensor '",
                                         std::string(name), "': ", s.message()));
  return t;
}

}  // namespace tensorflux
