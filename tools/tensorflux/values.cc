// Inline literals in, printed values out.
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli.h"

namespace tensorflux {
namespace cli {
namespace {

// A parsed literal: nested lists of number/bool tokens.
struct LitNode {
  bool is_list = false;
  std::string token;
  std::vector<LitNode> items;
};

class LiteralParser {
 public:
  LiteralParser(std::string_view s, std::string_view what) : s_(s), what_(what) {}

  Status Parse(LitNode* out) {
    TX_RETURN_IF_ERROR(ParseValue(out, 0));
    SkipSpace();
    if (pos_ != s_.size()) return Error("unexpected text");
    return OkStatus();
  }

 private:
  Status Error(std::string_view what) const {
    return errors::InvalidArgument("bad literal for ", what_, ": ", what, " at character ", pos_ + 1,
                                   " of '", s_, "'");
  }
  void SkipSpace() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n')) ++pos_;
  }
  Status ParseValue(LitNode* out, int depth) {
    SkipSpace();
    if (pos_ >= s_.size()) return Error("expected a value");
    if (s_[pos_] == '[') {
      if (depth >= TensorShape::kMaxDims)
        return Error(absl::StrCat("more than ", TensorShape::kMaxDims, " nested lists"));
      ++pos_;
      out->is_list = true;
      SkipSpace();
      if (pos_ < s_.size() && s_[pos_] == ']') {
        ++pos_;
        return OkStatus();
      }
      while (true) {
        LitNode item;
        TX_RETURN_IF_ERROR(ParseValue(&item, depth + 1));
        out->items.push_back(std::move(item));
        SkipSpace();
        if (pos_ < s_.size() && s_[pos_] == ',') {
          ++pos_;
          continue;
        }
        if (pos_ < s_.size() && s_[pos_] == ']') {
          ++pos_;
          return OkStatus();
        }
        return Error("expected ',' or ']'");
      }
    }
    size_t start = pos_;
    while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) ||
                                s_[pos_] == '.' || s_[pos_] == '-' || s_[pos_] == '+' ||
                                s_[pos_] == '_'))
      ++pos_;
    if (pos_ == start) return Error(absl::StrCat("unexpected character '", std::string(s_.substr(pos_, 1)), "'"));
    out->token = std::string(s_.substr(start, pos_ - start));
    return OkStatus();
  }

  std::string_view s_;
  std::string_view what_;
  size_t pos_ = 0;
};

// Shape of a rectangular literal; INVALID_ARGUMENT when ragged.
Status InferShape(const LitNode& n, std::vector<int64_t>* dims, std::string_view what) {
  dims->clear();
  const LitNode* cur = &n;
  while (cur->is_list) {
    dims->push_back(static_cast<int64_t>(cur->items.size()));
    if (cur->items.empty()) break;
    cur = &cur->items[0];
  }
  // Check every node at depth d has dims[d] items (or is a scalar at the last depth).
  std::vector<std::pair<const LitNode*, size_t>> stack = {{&n, 0}};
  while (!stack.empty()) {
    auto [node, d] = stack.back();
    stack.pop_back();
    if (d == dims->size()) {
      if (node->is_list)
        return errors::InvalidArgument("ragged literal for ", what, ": lists nested deeper at some ",
                                       "positions than others");
      continue;
    }
    if (!node->is_list)
      return errors::InvalidArgument("ragged literal for ", what, ": a number where a list of ",
                                     (*dims)[d], " was expected");
    if (static_cast<int64_t>(node->items.size()) != (*dims)[d])
      return errors::InvalidArgument("ragged literal for ", what, ": a list of ",
                                     node->items.size(), " where ", (*dims)[d],
                                     " items were expected");
    for (const LitNode& c : node->items) stack.push_back({&c, d + 1});
  }
  return OkStatus();
}

void Flatten(const LitNode& n, std::vector<const std::string*>* out) {
  if (!n.is_list) {
    out->push_back(&n.token);
    return;
  }
  for (const LitNode& c : n.items) Flatten(c, out);
}

bool ParseDouble(const std::string& tok, double* v) {
  std::string t = tok;
  if (t == "true" || t == "True") {
    *v = 1;
    return true;
  }
  if (t == "false" || t == "False") {
    *v = 0;
    return true;
  }
  const char* b = t.data();
  if (*b == '+') ++b;
  auto [p, ec] = std::from_chars(b, t.data() + t.size(), *v);
  return ec == std::errc() && p == t.data() + t.size();
}

// Integer tokens parse exactly; "2.0"-style tokens must be whole.
template <typename T>
Status ParseInteger(const std::string& tok, T* out, std::string_view what) {
  const char* b = tok.data();
  const char* e = tok.data() + tok.size();
  if (*b == '+') ++b;
  if (tok == "true" || tok == "True" || tok == "false" || tok == "False") {
    *out = static_cast<T>(tok[0] == 't' || tok[0] == 'T');
    return OkStatus();
  }
  if constexpr (std::is_unsigned_v<T>) {
    uint64_t v;
    auto [p, ec] = std::from_chars(b, e, v);
    if (ec == std::errc() && p == e) {
      if (v > std::numeric_limits<T>::max())
        return errors::InvalidArgument("value ", tok, " for ", what, " is out of range");
      *out = static_cast<T>(v);
      return OkStatus();
    }
    if (ec == std::errc::result_out_of_range)
      return errors::InvalidArgument("value ", tok, " for ", what, " is out of range");
  } else {
    int64_t v;
    auto [p, ec] = std::from_chars(b, e, v);
    if (ec == std::errc() && p == e) {
      if (v < std::numeric_limits<T>::min() || v > std::numeric_limits<T>::max())
        return errors::InvalidArgument("value ", tok, " for ", what, " is out of range");
      *out = static_cast<T>(v);
      return OkStatus();
    }
    if (ec == std::errc::result_out_of_range)
      return errors::InvalidArgument("value ", tok, " for ", what, " is out of range");
  }
  double d;
  if (!ParseDouble(tok, &d)) return errors::InvalidArgument("'", tok, "' is not a number (", what, ")");
  if (!std::isfinite(d) || d != std::trunc(d))
    return errors::InvalidArgument("value ", tok, " for ", what, " is not a whole number");
  // [min, 2^digits) are exactly the whole doubles that fit T.
  if (d < static_cast<double>(std::numeric_limits<T>::min()) ||
      d >= std::ldexp(1.0, std::numeric_limits<T>::digits))
    return errors::InvalidArgument("value ", tok, " for ", what, " is out of range");
  *out = static_cast<T>(d);
  return OkStatus();
}

template <typename T>
Status ParseElement(const std::string& tok, T* out, std::string_view what) {
  if constexpr (std::is_same_v<T, bool>) {
    if (tok == "true" || tok == "True" || tok == "1") {
      *out = true;
    } else if (tok == "false" || tok == "False" || tok == "0") {
      *out = false;
    } else {
      return errors::InvalidArgument("'", tok, "' is not a bool (", what, " is bool)");
    }
    return OkStatus();
  } else if constexpr (std::is_integral_v<T>) {
    return ParseInteger<T>(tok, out, what);
  } else {
    double d;
    if (!ParseDouble(tok, &d)) return errors::InvalidArgument("'", tok, "' is not a number (", what, ")");
    if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
      *out = T(static_cast<float>(d));
    } else {
      *out = static_cast<T>(d);
    }
    return OkStatus();
  }
}

template <typename T>
void AppendValue(const T& v, std::string* out) {
  char buf[64];
  if constexpr (std::is_same_v<T, bool>) {
    out->append(v ? "true" : "false");
  } else if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    AppendValue(static_cast<float>(v), out);
  } else {
    auto [p, ec] = std::to_chars(buf, buf + sizeof(buf), v);
    out->append(buf, ec == std::errc() ? p : buf);
  }
}

template <typename T>
void FormatLevel(const T* data, const TensorShape& shape, int d, int64_t* i, std::string* out) {
  if (d == shape.dims()) {
    AppendValue(data[(*i)++], out);
    return;
  }
  out->push_back('[');
  for (int64_t k = 0; k < shape.dim_size(d); ++k) {
    if (k > 0 && d == shape.dims() - 1) out->push_back(' ');
    FormatLevel(data, shape, d + 1, i, out);
  }
  out->push_back(']');
}

}  // namespace

StatusOr<Tensor> ParseLiteral(std::string_view text, DataType dtype, std::string_view what) {
  LitNode root;
  TX_RETURN_IF_ERROR(LiteralParser(text, what).Parse(&root));
  std::vector<int64_t> dims;
  TX_RETURN_IF_ERROR(InferShape(root, &dims, what));
  auto shape = TensorShape::Make(dims);
  if (!shape.ok())
    return errors::InvalidArgument("bad literal for ", what, ": ", shape.status().message());
  std::vector<const std::string*> tokens;
  Flatten(root, &tokens);
  if (dtype == DT_STRING || !DataTypeCanUseMemcpy(dtype))
    return errors::InvalidArgument(what, " has dtype ", DataTypeString(dtype),
                                   ", which inline literals do not support (use a .npy file)");
  TX_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(dtype, *shape));
  TX_RETURN_IF_ERROR(VisitPodType(dtype, "inline literal", [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    T* p = t.data<T>();
    for (size_t i = 0; i < tokens.size(); ++i)
      TX_RETURN_IF_ERROR(ParseElement<T>(*tokens[i], &p[i], what));
    return OkStatus();
  }));
  return t;
}

std::string FormatValues(const Tensor& t) {
  std::string out;
  if (t.dtype() == DT_STRING) {
    // Quoted strings, same nesting.
    std::vector<std::string> parts;
    for (int64_t i = 0; i < t.NumElements(); ++i) parts.push_back(absl::StrCat("\"", t.data<std::string>()[i], "\""));
    return t.dims() == 0 && !parts.empty() ? parts[0] : absl::StrCat("[", absl::StrJoin(parts, " "), "]");
  }
  Status s = VisitPodType(t.dtype(), "printing", [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    int64_t i = 0;
    FormatLevel(t.data<T>(), t.shape(), 0, &i, &out);
    return OkStatus();
  });
  if (!s.ok()) return "<" + std::string(s.message()) + ">";
  return out;
}

std::string FormatTypeAndShape(const Tensor& t) {
  std::vector<std::string> dims;
  for (int64_t d : t.shape().dim_sizes()) dims.push_back(absl::StrCat(d));
  return absl::StrCat(DataTypeString(t.dtype()), "[", absl::StrJoin(dims, ","), "]");
}

int ReportError(const Status& s) {
  std::fprintf(stderr, "%s\n", StatusToString(s).c_str());
  return 1;
}

}  // namespace cli
}  // namespace tensorflux
