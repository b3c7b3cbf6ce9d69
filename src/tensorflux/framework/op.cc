// OpDefBuilder: parses TensorFlow's op-spec strings into an OpDef; OpRegistry: the global table.
//
// Grammar (what TF's op_def_builder accepts, re-implemented from the documented syntax):
//   arg  := NAME ':' ['Ref(' TYPE ')' | [NUMBER_ATTR '*'] TYPE]
//           TYPE is a type name (float, int32, ...) or an attr name (a `type` or `list(type)` attr)
//   attr := NAME ':' ATTR_TYPE ['>=' INT] ['=' DEFAULT]
//           ATTR_TYPE := int | float | bool | string | type | shape | tensor | func
//                      | list(ATTR_TYPE) | '{' types or 'strings' '}' | list('{' ... '}')
#include "tensorflux/framework/op.h"

#include <algorithm>
#include <cstdio>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "google/protobuf/text_format.h"
#include "tensorflux/core/types.h"

namespace tensorflux {
namespace {

absl::string_view Strip(absl::string_view s) { return absl::StripAsciiWhitespace(s); }

bool IsIdentifier(absl::string_view s) {
  if (s.empty() || !(absl::ascii_isalpha(s[0]) || s[0] == '_')) return false;
  for (char c : s) {
    if (!(absl::ascii_isalnum(c) || c == '_')) return false;
  }
  return true;
}

// A type name as written in specs: "float", "int32", "DT_FLOAT". Ref types and DT_INVALID are
// not type names.
bool ParseTypeName(absl::string_view word, DataType* out) {
  std::string upper = absl::AsciiStrToUpper(word);
  if (!absl::StartsWith(upper, "DT_")) {
    // Only lower-case names are type names ("T" is an attr, not a type).
    for (char c : word) {
      if (absl::ascii_isupper(c)) return false;
    }
    upper = absl::StrCat("DT_", upper);
  }
  DataType dt;
  if (!DataType_Parse(upper, &dt)) return false;
  if (dt == DT_INVALID || IsRefType(dt)) return false;
  *out = dt;
  return true;
}

// Index just past the bracket that closes the one at s[open], honouring quotes; npos if none.
size_t MatchingClose(absl::string_view s, size_t open) {
  int depth = 0;
  char quote = 0;
  for (size_t i = open; i < s.size(); ++i) {
    char c = s[i];
    if (quote) {
      if (c == '\\') {
        ++i;
      } else if (c == quote) {
        quote = 0;
      }
      continue;
    }
    if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '[' || c == '{' || c == '(') {
      ++depth;
    } else if (c == ']' || c == '}' || c == ')') {
      if (--depth == 0) return i + 1;
    }
  }
  return absl::string_view::npos;
}

// Splits "a, [b, c], 'd,e'" at top-level commas. Empty input gives no items.
Status SplitTopLevel(absl::string_view s, std::vector<absl::string_view>* items) {
  items->clear();
  s = Strip(s);
  if (s.empty()) return OkStatus();
  int depth = 0;
  char quote = 0;
  size_t start = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (quote) {
      if (c == '\\') {
        ++i;
      } else if (c == quote) {
        quote = 0;
      }
      continue;
    }
    if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '[' || c == '{' || c == '(') {
      ++depth;
    } else if (c == ']' || c == '}' || c == ')') {
      if (--depth < 0) return errors::InvalidArgument("unbalanced '", std::string(1, c), "'");
    } else if (c == ',' && depth == 0) {
      items->push_back(Strip(s.substr(start, i - start)));
      start = i + 1;
    }
  }
  if (quote || depth != 0) return errors::InvalidArgument("unterminated quote or bracket");
  items->push_back(Strip(s.substr(start)));
  for (absl::string_view item : *items) {
    if (item.empty()) return errors::InvalidArgument("empty list element");
  }
  return OkStatus();
}

Status ParseQuoted(absl::string_view s, std::string* out) {
  s = Strip(s);
  if (s.size() < 2 || (s[0] != '\'' && s[0] != '"') || s.back() != s[0]) {
    return errors::InvalidArgument("expected a quoted string, got '", s, "'");
  }
  std::string err;
  if (!absl::CUnescape(s.substr(1, s.size() - 2), out, &err)) {
    return errors::InvalidArgument("bad string escape in ", s, ": ", err);
  }
  return OkStatus();
}

Status ParseShapeLiteral(absl::string_view s, TensorShapeProto* out) {
  out->Clear();
  s = Strip(s);
  if (!s.empty() && s.front() == '{' && s.back() == '}') {
    std::string body(s.substr(1, s.size() - 2));
    if (!google::protobuf::TextFormat::ParseFromString(body, out)) {
      return errors::InvalidArgument("bad shape literal '", s, "'");
    }
    return OkStatus();
  }
  if (s.size() < 2 || s.front() != '[' || s.back() != ']') {
    return errors::InvalidArgument("expected a shape like [2,3] or { unknown_rank: true }, got '",
                                   s, "'");
  }
  std::vector<absl::string_view> dims;
  TX_RETURN_IF_ERROR(SplitTopLevel(s.substr(1, s.size() - 2), &dims));
  for (absl::string_view d : dims) {
    int64_t v;
    if (d == "?") {
      v = -1;
    } else if (!absl::SimpleAtoi(d, &v) || v < -1) {
      return errors::InvalidArgument("bad dimension '", d, "' in shape '", s, "'");
    }
    out->add_dim()->set_size(v);
  }
  return OkStatus();
}

// Parses one scalar value of attr type `type` ("int", "string", ...) into `out`.
Status ParseScalarValue(absl::string_view type, absl::string_view s, AttrValue* out) {
  s = Strip(s);
  if (type == "int") {
    int64_t v;
    if (!absl::SimpleAtoi(s, &v)) return errors::InvalidArgument("expected an int, got '", s, "'");
    out->set_i(v);
  } else if (type == "float") {
    float v;
    if (!absl::SimpleAtof(s, &v)) return errors::InvalidArgument("expected a float, got '", s, "'");
    out->set_f(v);
  } else if (type == "bool") {
    if (s == "true") {
      out->set_b(true);
    } else if (s == "false") {
      out->set_b(false);
    } else {
      return errors::InvalidArgument("expected true or false, got '", s, "'");
    }
  } else if (type == "string") {
    std::string v;
    TX_RETURN_IF_ERROR(ParseQuoted(s, &v));
    out->set_s(std::move(v));
  } else if (type == "type") {
    DataType dt;
    if (!ParseTypeName(s, &dt)) return errors::InvalidArgument("unknown type '", s, "'");
    out->set_type(dt);
  } else if (type == "shape") {
    TX_RETURN_IF_ERROR(ParseShapeLiteral(s, out->mutable_shape()));
  } else if (type == "tensor") {
    if (s.size() < 2 || s.front() != '{' || s.back() != '}' ||
        !google::protobuf::TextFormat::ParseFromString(std::string(s.substr(1, s.size() - 2)),
                                                       out->mutable_tensor())) {
      return errors::InvalidArgument("expected a TensorProto in text format like "
                                     "{ dtype: DT_FLOAT float_val: 1 }, got '", s, "'");
    }
  } else {
    return errors::InvalidArgument("defaults are not supported for attrs of type '", type, "'");
  }
  return OkStatus();
}

Status ParseDefault(absl::string_view type, absl::string_view s, AttrValue* out) {
  out->Clear();
  if (absl::ConsumePrefix(&type, "list(")) {
    absl::ConsumeSuffix(&type, ")");
    s = Strip(s);
    if (s.size() < 2 || s.front() != '[' || s.back() != ']') {
      return errors::InvalidArgument("expected a list default like [1, 2], got '", s, "'");
    }
    std::vector<absl::string_view> items;
    TX_RETURN_IF_ERROR(SplitTopLevel(s.substr(1, s.size() - 2), &items));
    AttrValue::ListValue* list = out->mutable_list();
    for (absl::string_view item : items) {
      AttrValue v;
      TX_RETURN_IF_ERROR(ParseScalarValue(type, item, &v));
      switch (v.value_case()) {
        case AttrValue::kI: list->add_i(v.i()); break;
        case AttrValue::kF: list->add_f(v.f()); break;
        case AttrValue::kB: list->add_b(v.b()); break;
        case AttrValue::kS: list->add_s(v.s()); break;
        case AttrValue::kType: list->add_type(v.type()); break;
        case AttrValue::kShape: *list->add_shape() = v.shape(); break;
        case AttrValue::kTensor: *list->add_tensor() = v.tensor(); break;
        default: return errors::InvalidArgument("unsupported list element '", item, "'");
      }
    }
    return OkStatus();
  }
  return ParseScalarValue(type, s, out);
}

// Parses "{float, int32}" or "{'SAME', 'VALID'}" into allowed values; sets *type to "type" or
// "string".
Status ParseAllowed(absl::string_view braced, std::string* type, AttrValue* allowed) {
  std::vector<absl::string_view> items;
  TX_RETURN_IF_ERROR(SplitTopLevel(braced.substr(1, braced.size() - 2), &items));
  if (items.empty()) return errors::InvalidArgument("empty set of allowed values");
  AttrValue::ListValue* list = allowed->mutable_list();
  bool strings = items[0][0] == '\'' || items[0][0] == '"';
  *type = strings ? "string" : "type";
  for (absl::string_view item : items) {
    if (strings) {
      std::string v;
      TX_RETURN_IF_ERROR(ParseQuoted(item, &v));
      list->add_s(std::move(v));
    } else {
      DataType dt;
      if (!ParseTypeName(item, &dt)) return errors::InvalidArgument("unknown type '", item, "'");
      list->add_type(dt);
    }
  }
  return OkStatus();
}

bool IsBasicAttrType(absl::string_view t) {
  return t == "int" || t == "float" || t == "bool" || t == "string" || t == "type" ||
         t == "shape" || t == "tensor" || t == "func";
}

// Checks a default against allowed values and the minimum.
Status CheckDefault(const OpDef::AttrDef& attr) {
  const AttrValue& v = attr.default_value();
  if (attr.has_minimum()) {
    if (attr.type() == "int" && v.i() < attr.minimum()) {
      return errors::InvalidArgument("default ", v.i(), " is below the minimum ", attr.minimum());
    }
    if (v.has_list()) {
      const auto& l = v.list();
      int64_t n = l.i_size() + l.f_size() + l.b_size() + l.s_size() + l.type_size() +
                  l.shape_size() + l.tensor_size() + l.func_size();
      if (n < attr.minimum()) {
        return errors::InvalidArgument("default list has length ", n, ", below the minimum ",
                                       attr.minimum());
      }
    }
  }
  if (attr.has_allowed_values()) {
    const auto& allowed = attr.allowed_values().list();
    auto check_s = [&](const std::string& s) -> Status {
      if (std::find(allowed.s().begin(), allowed.s().end(), s) == allowed.s().end()) {
        return errors::InvalidArgument("default '", s, "' is not an allowed value");
      }
      return OkStatus();
    };
    auto check_t = [&](int t) -> Status {
      if (std::find(allowed.type().begin(), allowed.type().end(), t) == allowed.type().end()) {
        return errors::InvalidArgument("default ", DataType_Name(static_cast<DataType>(t)),
                                       " is not an allowed value");
      }
      return OkStatus();
    };
    if (v.value_case() == AttrValue::kS) TX_RETURN_IF_ERROR(check_s(v.s()));
    if (v.value_case() == AttrValue::kType) TX_RETURN_IF_ERROR(check_t(v.type()));
    if (v.has_list()) {
      for (const auto& s : v.list().s()) TX_RETURN_IF_ERROR(check_s(s));
      for (int t : v.list().type()) TX_RETURN_IF_ERROR(check_t(t));
    }
  }
  return OkStatus();
}

Status ParseAttrSpec(absl::string_view spec, OpDef::AttrDef* attr) {
  size_t colon = spec.find(':');
  if (colon == absl::string_view::npos) return errors::InvalidArgument("expected 'name: type'");
  absl::string_view name = Strip(spec.substr(0, colon));
  if (!IsIdentifier(name)) return errors::InvalidArgument("bad attr name '", name, "'");
  attr->set_name(std::string(name));
  absl::string_view rest = Strip(spec.substr(colon + 1));

  // The attr type.
  std::string type;
  if (!rest.empty() && rest[0] == '{') {
    size_t end = MatchingClose(rest, 0);
    if (end == absl::string_view::npos) return errors::InvalidArgument("unterminated '{'");
    TX_RETURN_IF_ERROR(ParseAllowed(rest.substr(0, end), &type, attr->mutable_allowed_values()));
    rest = rest.substr(end);
  } else if (absl::StartsWith(rest, "list(")) {
    size_t end = MatchingClose(rest, 4);
    if (end == absl::string_view::npos) return errors::InvalidArgument("unterminated 'list('");
    absl::string_view inner = Strip(rest.substr(5, end - 6));
    if (!inner.empty() && inner[0] == '{') {
      if (inner.back() != '}') return errors::InvalidArgument("bad list element type '", inner, "'");
      std::string elem;
      TX_RETURN_IF_ERROR(ParseAllowed(inner, &elem, attr->mutable_allowed_values()));
      type = absl::StrCat("list(", elem, ")");
    } else if (IsBasicAttrType(inner)) {
      type = absl::StrCat("list(", inner, ")");
    } else {
      return errors::InvalidArgument("unknown list element type '", inner, "'");
    }
    rest = rest.substr(end);
  } else {
    size_t end = 0;
    while (end < rest.size() && (absl::ascii_isalnum(rest[end]) || rest[end] == '_')) ++end;
    type = std::string(rest.substr(0, end));
    if (!IsBasicAttrType(type)) return errors::InvalidArgument("unknown attr type '", type, "'");
    rest = rest.substr(end);
  }
  attr->set_type(type);
  rest = Strip(rest);

  // ">= minimum"
  if (absl::ConsumePrefix(&rest, ">=")) {
    if (type != "int" && !absl::StartsWith(type, "list(")) {
      return errors::InvalidArgument("a minimum is only allowed for int and list attrs");
    }
    rest = Strip(rest);
    size_t end = 0;
    while (end < rest.size() && (absl::ascii_isdigit(rest[end]) || (end == 0 && rest[0] == '-'))) {
      ++end;
    }
    int64_t min;
    if (!absl::SimpleAtoi(rest.substr(0, end), &min)) {
      return errors::InvalidArgument("bad minimum '", rest, "'");
    }
    if (type != "int" && min < 0) return errors::InvalidArgument("list minimum must be >= 0");
    attr->set_has_minimum(true);
    attr->set_minimum(min);
    rest = Strip(rest.substr(end));
  }

  // "= default"
  if (absl::ConsumePrefix(&rest, "=")) {
    TX_RETURN_IF_ERROR(ParseDefault(type, rest, attr->mutable_default_value()));
    TX_RETURN_IF_ERROR(CheckDefault(*attr));
    rest = {};
  }
  if (!rest.empty()) return errors::InvalidArgument("unexpected '", rest, "'");
  return OkStatus();
}

// Parses an arg spec. The type token is kept in *type_token when it names an attr (resolved
// once all attrs are known).
Status ParseArgSpec(absl::string_view spec, OpDef::ArgDef* arg, std::string* type_token) {
  size_t colon = spec.find(':');
  if (colon == absl::string_view::npos) return errors::InvalidArgument("expected 'name: type'");
  absl::string_view name = Strip(spec.substr(0, colon));
  if (!IsIdentifier(name)) return errors::InvalidArgument("bad arg name '", name, "'");
  arg->set_name(std::string(name));
  absl::string_view rest = Strip(spec.substr(colon + 1));
  if (absl::ConsumePrefix(&rest, "Ref(")) {
    if (!absl::ConsumeSuffix(&rest, ")")) return errors::InvalidArgument("unterminated 'Ref('");
    arg->set_is_ref(true);
    rest = Strip(rest);
  }
  size_t star = rest.find('*');
  if (star != absl::string_view::npos) {
    absl::string_view n = Strip(rest.substr(0, star));
    if (!IsIdentifier(n)) return errors::InvalidArgument("bad number attr '", n, "'");
    arg->set_number_attr(std::string(n));
    rest = Strip(rest.substr(star + 1));
  }
  if (!IsIdentifier(rest)) return errors::InvalidArgument("bad arg type '", rest, "'");
  DataType dt;
  if (ParseTypeName(rest, &dt)) {
    arg->set_type(dt);
    type_token->clear();
  } else {
    *type_token = std::string(rest);
  }
  return OkStatus();
}

const OpDef::AttrDef* FindAttrDef(const OpDef& op, absl::string_view name) {
  for (const auto& a : op.attr()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

// Fills type_attr / type_list_attr from the token and checks every attr the arg names.
Status ResolveArg(const OpDef& op, absl::string_view type_token, OpDef::ArgDef* arg) {
  if (!arg->number_attr().empty()) {
    const OpDef::AttrDef* n = FindAttrDef(op, arg->number_attr());
    if (n == nullptr) {
      return errors::InvalidArgument("arg '", arg->name(), "' uses undeclared attr '",
                                     arg->number_attr(), "'");
    }
    if (n->type() != "int") {
      return errors::InvalidArgument("attr '", n->name(), "' used as a length by arg '",
                                     arg->name(), "' has type ", n->type(), ", expected int");
    }
  }
  if (type_token.empty()) return OkStatus();
  const OpDef::AttrDef* t = FindAttrDef(op, type_token);
  if (t == nullptr) {
    return errors::InvalidArgument("arg '", arg->name(), "' uses undeclared attr or unknown type '",
                                   type_token, "'");
  }
  if (t->type() == "type") {
    arg->set_type_attr(t->name());
  } else if (t->type() == "list(type)" && arg->number_attr().empty()) {
    arg->set_type_list_attr(t->name());
  } else {
    return errors::InvalidArgument("attr '", t->name(), "' used as the type of arg '", arg->name(),
                                   "' has type ", t->type(), ", expected ",
                                   arg->number_attr().empty() ? "type or list(type)" : "type");
  }
  return OkStatus();
}

}  // namespace

// ---------------------------------------------------------------- OpDefBuilder

OpDefBuilder::OpDefBuilder(std::string op_name) : name_(std::move(op_name)) {}

OpDefBuilder& OpDefBuilder::Input(std::string spec) {
  inputs_.push_back(std::move(spec));
  return *this;
}
OpDefBuilder& OpDefBuilder::Output(std::string spec) {
  outputs_.push_back(std::move(spec));
  return *this;
}
OpDefBuilder& OpDefBuilder::Attr(std::string spec) {
  attrs_.push_back(std::move(spec));
  return *this;
}
OpDefBuilder& OpDefBuilder::SetIsStateful() {
  stateful_ = true;
  return *this;
}
OpDefBuilder& OpDefBuilder::SetIsCommutative() {
  commutative_ = true;
  return *this;
}
OpDefBuilder& OpDefBuilder::SetIsAggregate() {
  aggregate_ = true;
  return *this;
}
OpDefBuilder& OpDefBuilder::SetAllowsUninitializedInput() {
  uninit_ = true;
  return *this;
}
OpDefBuilder& OpDefBuilder::SetShapeFn(ShapeInferenceFn fn) {
  shape_fn_ = std::move(fn);
  return *this;
}
OpDefBuilder& OpDefBuilder::Doc(std::string text) {
  doc_ = std::move(text);
  return *this;
}

Status OpDefBuilder::Finalize(OpRegistrationData* out) const {
  OpDef op;
  auto bad = [&](const std::string& spec, const Status& s) {
    return errors::InvalidArgument("Invalid spec for op '", name_, "': '", spec, "': ",
                                   s.message());
  };
  if (!IsIdentifier(name_)) {
    return errors::InvalidArgument("Invalid op name '", name_, "'");
  }
  op.set_name(name_);
  for (const std::string& spec : attrs_) {
    OpDef::AttrDef attr;
    Status s = ParseAttrSpec(spec, &attr);
    if (s.ok() && FindAttrDef(op, attr.name()) != nullptr) {
      s = errors::InvalidArgument("duplicate attr '", attr.name(), "'");
    }
    if (!s.ok()) return bad(spec, s);
    *op.add_attr() = std::move(attr);
  }
  auto add_args = [&](const std::vector<std::string>& specs, bool is_input) -> Status {
    for (const std::string& spec : specs) {
      OpDef::ArgDef arg;
      std::string token;
      Status s = ParseArgSpec(spec, &arg, &token);
      if (s.ok()) s = ResolveArg(op, token, &arg);
      if (s.ok()) {
        const auto& existing = is_input ? op.input_arg() : op.output_arg();
        for (const auto& a : existing) {
          if (a.name() == arg.name()) {
            s = errors::InvalidArgument("duplicate ", is_input ? "input" : "output", " '",
                                        arg.name(), "'");
          }
        }
      }
      if (!s.ok()) return bad(spec, s);
      *(is_input ? op.add_input_arg() : op.add_output_arg()) = std::move(arg);
    }
    return OkStatus();
  };
  TX_RETURN_IF_ERROR(add_args(inputs_, true));
  TX_RETURN_IF_ERROR(add_args(outputs_, false));
  op.set_is_stateful(stateful_);
  op.set_is_commutative(commutative_);
  op.set_is_aggregate(aggregate_);
  op.set_allows_uninitialized_input(uninit_);
  if (!doc_.empty()) {
    absl::string_view doc = Strip(doc_);
    size_t para = doc.find("\n\n");
    if (para == absl::string_view::npos) {
      op.set_summary(std::string(doc));
    } else {
      op.set_summary(std::string(Strip(doc.substr(0, para))));
      op.set_description(std::string(Strip(doc.substr(para + 2))));
    }
  }
  out->op_def = std::move(op);
  out->shape_fn = shape_fn_ ? shape_fn_ : ShapeInferenceFn(shape_inference::UnknownShape);
  return OkStatus();
}

// ---------------------------------------------------------------- OpRegistry

OpRegistry* OpRegistry::Global() {
  static OpRegistry* registry = new OpRegistry;
  return registry;
}

Status OpRegistry::Register(const OpDefBuilder& builder) {
  auto data = std::make_unique<OpRegistrationData>();
  TX_RETURN_IF_ERROR(builder.Finalize(data.get()));
  absl::MutexLock lock(&mu_);
  const std::string& name = data->op_def.name();
  if (ops_.contains(name)) return errors::AlreadyExists("Op '", name, "' is already registered");
  ops_.emplace(name, std::move(data));
  return OkStatus();
}

StatusOr<const OpRegistrationData*> OpRegistry::LookUp(std::string_view op_name) const {
  absl::MutexLock lock(&mu_);
  const absl::string_view name(op_name.data(), op_name.size());
  auto it = ops_.find(name);
  if (it == ops_.end()) return errors::NotFound("Op type not registered '", name, "'");
  return it->second.get();
}

StatusOr<const OpDef*> OpRegistry::LookUpOpDef(std::string_view op_name) const {
  TX_ASSIGN_OR_RETURN(const OpRegistrationData* data, LookUp(op_name));
  return &data->op_def;
}

std::vector<const OpRegistrationData*> OpRegistry::ListOps() const {
  std::vector<const OpRegistrationData*> out;
  {
    absl::MutexLock lock(&mu_);
    out.reserve(ops_.size());
    for (const auto& [name, data] : ops_) out.push_back(data.get());
  }
  std::sort(out.begin(), out.end(), [](const OpRegistrationData* a, const OpRegistrationData* b) {
    return a->op_def.name() < b->op_def.name();
  });
  return out;
}

OpList OpRegistry::ToOpList() const {
  OpList list;
  for (const OpRegistrationData* data : ListOps()) *list.add_op() = data->op_def;
  return list;
}

namespace register_op {
OpRegistrar::OpRegistrar(const OpDefBuilder& b) {
  Status s = OpRegistry::Global()->Register(b);
  if (!s.ok()) std::fprintf(stderr, "tensorflux: op registration failed: %s\n", s.ToString().c_str());
}
}  // namespace register_op

}  // namespace tensorflux
