#include "tensorflux/core/npy.h"

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace tensorflux {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;

// One value of the header dict: a string, a bool, or a tuple of non-negative ints.
struct HeaderValue {
  enum Kind { kString, kBool, kTuple } kind = kString;
  std::string str;
  bool b = false;
  std::vector<int64_t> ints;
};

// Recursive-descent reader for the tiny subset of Python literals .npy headers use.
class HeaderParser {
 public:
  explicit HeaderParser(std::string_view s) : s_(s) {}

  Status ParseDict(std::vector<std::pair<std::string, HeaderValue>>* out) {
    SkipSpace();
    if (!Consume('{')) return Error("expected '{'");
    while (true) {
      SkipSpace();
      if (Consume('}')) break;
      HeaderValue key;
      TX_RETURN_IF_ERROR(ParseString(&key.str));
      SkipSpace();
      if (!Consume(':')) return Error("expected ':' after key '" + key.str + "'");
      HeaderValue v;
      TX_RETURN_IF_ERROR(ParseValue(&v));
      out->emplace_back(key.str, std::move(v));
      SkipSpace();
      if (Consume(',')) continue;
      SkipSpace();
      if (Consume('}')) break;
      return Error("expected ',' or '}'");
    }
    SkipSpace();
    if (pos_ != s_.size()) return Error("unexpected text after the dict");
    return OkStatus();
  }

 private:
  Status Error(const std::string& what) const {
    return errors::InvalidArgument("malformed .npy header at offset ", pos_, ": ", what);
  }
  void SkipSpace() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' ||
                                s_[pos_] == '\r'))
      ++pos_;
  }
  bool Consume(char c) {
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool ConsumeWord(std::string_view w) {
    if (s_.substr(pos_, w.size()) == w) {
      pos_ += w.size();
      return true;
    }
    return false;
  }
  Status ParseString(std::string* out) {
    if (pos_ >= s_.size() || (s_[pos_] != '\'' && s_[pos_] != '"')) return Error("expected a string");
    char q = s_[pos_++];
    size_t end = s_.find(q, pos_);
    if (end == std::string_view::npos) return Error("unterminated string");
    *out = std::string(s_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return OkStatus();
  }
  Status ParseInt(int64_t* out) {
    SkipSpace();
    size_t start = pos_;
    int64_t v = 0;
    while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') {
      int d = s_[pos_] - '0';
      if (v > (std::numeric_limits<int64_t>::max() - d) / 10) return Error("dimension overflows int64");
      v = v * 10 + d;
      ++pos_;
    }
    if (pos_ == start) return Error("expected a non-negative integer");
    Consume('L');  // Python 2 long suffix
    *out = v;
    return OkStatus();
  }
  Status ParseValue(HeaderValue* v) {
    SkipSpace();
    if (pos_ >= s_.size()) return Error("expected a value");
    char c = s_[pos_];
    if (c == '\'' || c == '"') {
      v->kind = HeaderValue::kString;
      return ParseString(&v->str);
    }
    if (ConsumeWord("True")) {
      v->kind = HeaderValue::kBool;
      v->b = true;
      return OkStatus();
    }
    if (ConsumeWord("False")) {
      v->kind = HeaderValue::kBool;
      v->b = false;
      return OkStatus();
    }
    if (c == '(') {
      ++pos_;
      v->kind = HeaderValue::kTuple;
      while (true) {
        SkipSpace();
        if (Consume(')')) return OkStatus();
        if (v->ints.size() >= static_cast<size_t>(TensorShape::kMaxDims))
          return Error(absl::StrCat("shape has more than ", TensorShape::kMaxDims, " dims"));
        int64_t d = 0;
        TX_RETURN_IF_ERROR(ParseInt(&d));
        v->ints.push_back(d);
        SkipSpace();
        if (Consume(',')) continue;
        if (Consume(')')) return OkStatus();
        return Error("expected ',' or ')' in shape");
      }
    }
    if (c == '[') return Error("structured dtypes (a list descr) are not supported");
    return Error("unsupported value");
  }

  std::string_view s_;
  size_t pos_ = 0;
};

// descr type code (without byte order) <-> DataType.
struct DescrEntry {
  const char* code;
  DataType dtype;
};
constexpr DescrEntry kDescrs[] = {
    {"b1", DT_BOOL},   {"i1", DT_INT8},    {"i2", DT_INT16},  {"i4", DT_INT32},
    {"i8", DT_INT64},  {"u1", DT_UINT8},   {"u2", DT_UINT16}, {"u4", DT_UINT32},
    {"u8", DT_UINT64}, {"f2", DT_HALF},    {"f4", DT_FLOAT},  {"f8", DT_DOUBLE},
};

StatusOr<DataType> DescrToDataType(const std::string& descr) {
  if (descr.size() < 2) return errors::InvalidArgument(".npy descr '", descr, "' is not supported");
  char order = descr[0];
  std::string code = descr.substr(1);
  if (order != '<' && order != '>' && order != '|' && order != '=')
    return errors::InvalidArgument(".npy descr '", descr, "' is not supported (expected a byte ",
                                   "order '<', '|' or '=' followed by one of b1 i1 i2 i4 i8 u1 ",
                                   "u2 u4 u8 f2 f4 f8)");
  for (const auto& e : kDescrs) {
    if (code == e.code) {
      bool one_byte = code[1] == '1';
      if (order == '>' && !one_byte)
        return errors::InvalidArgument(".npy descr '", descr,
                                       "': big-endian data is not supported");
      return e.dtype;
    }
  }
  return errors::InvalidArgument(".npy descr '", descr,
                                 "' is not supported (supported: b1 i1 i2 i4 i8 u1 u2 u4 u8 f2 "
                                 "f4 f8, little-endian)");
}

uint32_t ReadLE(const unsigned char* p, int bytes) {
  uint32_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

}  // namespace

StatusOr<Tensor> ParseNpy(std::string_view bytes) {
  if (bytes.size() < kMagicLen + 2 || bytes.substr(0, kMagicLen) != std::string_view(kMagic, kMagicLen))
    return errors::InvalidArgument("not a .npy file (missing the \\x93NUMPY magic)");
  const auto* u = reinterpret_cast<const unsigned char*>(bytes.data());
  int major = u[6], minor = u[7];
  size_t len_bytes;
  if (major == 1 && minor == 0) {
    len_bytes = 2;
  } else if ((major == 2 || major == 3) && minor == 0) {
    len_bytes = 4;
  } else {
    return errors::InvalidArgument(".npy version ", major, ".", minor,
                                   " is not supported (1.0, 2.0, 3.0 are)");
  }
  if (bytes.size() < 8 + len_bytes) return errors::InvalidArgument(".npy file truncated in its header length");
  uint64_t header_len = ReadLE(u + 8, static_cast<int>(len_bytes));
  uint64_t data_offset = 8 + len_bytes + header_len;
  if (data_offset > bytes.size())
    return errors::InvalidArgument(".npy header length ", header_len, " exceeds the file size ",
                                   bytes.size());
  std::string_view header = bytes.substr(8 + len_bytes, header_len);

  std::vector<std::pair<std::string, HeaderValue>> dict;
  TX_RETURN_IF_ERROR(HeaderParser(header).ParseDict(&dict));
  const HeaderValue* descr = nullptr;
  const HeaderValue* fortran = nullptr;
  const HeaderValue* shape = nullptr;
  for (const auto& [k, v] : dict) {
    if (k == "descr") descr = &v;
    else if (k == "fortran_order") fortran = &v;
    else if (k == "shape") shape = &v;
    else return errors::InvalidArgument(".npy header has unexpected key '", k, "'");
  }
  if (!descr || !fortran || !shape)
    return errors::InvalidArgument(".npy header must have 'descr', 'fortran_order' and 'shape'");
  if (descr->kind != HeaderValue::kString)
    return errors::InvalidArgument(".npy header 'descr' must be a string");
  if (fortran->kind != HeaderValue::kBool)
    return errors::InvalidArgument(".npy header 'fortran_order' must be True or False");
  if (shape->kind != HeaderValue::kTuple)
    return errors::InvalidArgument(".npy header 'shape' must be a tuple");
  if (fortran->b)
    return errors::InvalidArgument(
        ".npy arrays in Fortran order are not supported; save a C-ordered array "
        "(numpy.ascontiguousarray)");
  TX_ASSIGN_OR_RETURN(DataType dtype, DescrToDataType(descr->str));
  auto shape_or = TensorShape::Make(shape->ints);
  if (!shape_or.ok())
    return errors::InvalidArgument(".npy shape is invalid: ", shape_or.status().message());
  const TensorShape& ts = *shape_or;

  const size_t elem = DataTypeSize(dtype);
  const uint64_t n = static_cast<uint64_t>(ts.num_elements());
  if (elem != 0 && n > std::numeric_limits<uint64_t>::max() / elem)
    return errors::InvalidArgument(".npy data size overflows");
  const uint64_t want = n * elem;
  const uint64_t have = bytes.size() - data_offset;
  if (have != want)
    return errors::InvalidArgument(".npy data section holds ", have, " bytes but shape ",
                                   ts.DebugString(), " of ", descr->str, " needs ", want);
  TX_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(dtype, ts));
  if (want > 0) std::memcpy(t.raw_data(), bytes.data() + data_offset, want);
  if (dtype == DT_BOOL) {
    // Only 0 and 1 are valid bool bytes in C++.
    auto* p = static_cast<unsigned char*>(t.raw_data());
    for (uint64_t i = 0; i < n; ++i) p[i] = p[i] != 0;
  }
  return t;
}

StatusOr<Tensor> ReadNpyFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return errors::NotFound("cannot open .npy file '", path, "'");
  std::ostringstream ss;
  ss << f.rdbuf();
  if (f.bad()) return errors::DataLoss("error reading '", path, "'");
  auto t = ParseNpy(ss.str());
  if (!t.ok()) return Status(t.status().code(), absl::StrCat(path, ": ", t.status().message()));
  return t;
}

StatusOr<std::string> EncodeNpy(const Tensor& t) {
  const char* code = nullptr;
  for (const auto& e : kDescrs)
    if (e.dtype == t.dtype()) code = e.code;
  if (code == nullptr)
    return errors::Unimplemented(".npy has no encoding for dtype ", DataTypeString(t.dtype()));
  const char order = (code[1] == '1') ? '|' : '<';
  std::vector<std::string> dims;
  for (int64_t d : t.shape().dim_sizes()) dims.push_back(absl::StrCat(d));
  std::string shape = t.dims() == 1 ? absl::StrCat("(", dims[0], ",)")
                                    : absl::StrCat("(", absl::StrJoin(dims, ", "), ")");
  std::string dict = absl::StrCat("{'descr': '", std::string(1, order), code,
                                  "', 'fortran_order': False, 'shape': ", shape, ", }");
  // Pad with spaces so that magic + version + length + header (ending in '\n') is a multiple of 64.
  int version = 1;
  size_t prefix = kMagicLen + 2 + 2;
  size_t total = prefix + dict.size() + 1;
  size_t padded = (total + 63) / 64 * 64;
  if (padded - prefix > 65535) {
    version = 2;
    prefix = kMagicLen + 2 + 4;
    total = prefix + dict.size() + 1;
    padded = (total + 63) / 64 * 64;
  }
  dict.append(padded - total, ' ');
  dict.push_back('\n');
  std::string out(kMagic, kMagicLen);
  out.push_back(static_cast<char>(version));
  out.push_back(0);
  uint32_t hl = static_cast<uint32_t>(dict.size());
  for (int i = 0; i < (version == 1 ? 2 : 4); ++i) out.push_back(static_cast<char>((hl >> (8 * i)) & 0xff));
  out += dict;
  if (t.TotalBytes() > 0) out.append(static_cast<const char*>(t.raw_data()), t.TotalBytes());
  return out;
}

Status WriteNpyFile(const std::string& path, const Tensor& t) {
  TX_ASSIGN_OR_RETURN(std::string bytes, EncodeNpy(t));
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) return errors::NotFound("cannot create .npy file '", path, "'");
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  f.close();
  if (!f) return errors::DataLoss("error writing '", path, "'");
  return OkStatus();
}

}  // namespace tensorflux
