// Attr access, NodeDef validation against an OpDef, and input/output type computation.
#include "tensorflux/framework/node_def_util.h"

#include <algorithm>
#include <limits>
#include <map>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace tensorflux {
namespace {

// Abseil here is built with its own string_view type; the public API takes std::string_view.
absl::string_view AV(std::string_view s) { return absl::string_view(s.data(), s.size()); }

// Non-empty fields of a list value, by element type name.
std::vector<const char*> ListFieldsPresent(const AttrValue::ListValue& l) {
  std::vector<const char*> out;
  if (l.s_size()) out.push_back("string");
  if (l.i_size()) out.push_back("int");
  if (l.f_size()) out.push_back("float");
  if (l.b_size()) out.push_back("bool");
  if (l.type_size()) out.push_back("type");
  if (l.shape_size()) out.push_back("shape");
  if (l.tensor_size()) out.push_back("tensor");
  if (l.func_size()) out.push_back("func");
  return out;
}

int64_t ListLength(const AttrValue::ListValue& l) {
  return l.s_size() + l.i_size() + l.f_size() + l.b_size() + l.type_size() + l.shape_size() +
         l.tensor_size() + l.func_size();
}

// The attr type an AttrValue holds: "int", "list(float)", "list(empty)"...
std::string AttrValueTypeName(const AttrValue& v) {
  switch (v.value_case()) {
    case AttrValue::kS: return "string";
    case AttrValue::kI: return "int";
    case AttrValue::kF: return "float";
    case AttrValue::kB: return "bool";
    case AttrValue::kType: return "type";
    case AttrValue::kShape: return "shape";
    case AttrValue::kTensor: return "tensor";
    case AttrValue::kFunc: return "func";
    case AttrValue::kPlaceholder: return "placeholder";
    case AttrValue::kList: {
      std::vector<const char*> f = ListFieldsPresent(v.list());
      if (f.empty()) return "list(empty)";
      if (f.size() == 1) return absl::StrCat("list(", f[0], ")");
      return absl::StrCat("list(", absl::StrJoin(f, "|"), ")");
    }
    case AttrValue::VALUE_NOT_SET: break;
  }
  return "<unset>";
}

// True when `v` can be read as attr type `type` (an empty list is every list type).
bool HoldsType(const AttrValue& v, absl::string_view type) {
  if (absl::StartsWith(type, "list(")) {
    if (v.value_case() != AttrValue::kList) return false;
    std::vector<const char*> f = ListFieldsPresent(v.list());
    return f.empty() || (f.size() == 1 && type == absl::StrCat("list(", f[0], ")"));
  }
  return AttrValueTypeName(v) == type;
}

Status GetTyped(const NodeDef& n, std::string_view name, absl::string_view type,
                const AttrValue** out) {
  const AttrValue* v = FindAttr(n, name);
  if (v == nullptr) {
    return errors::NotFound("No attr named '", AV(name), "' in NodeDef of node '", n.name(), "'");
  }
  if (!HoldsType(*v, type)) {
    return errors::InvalidArgument("Attr '", AV(name), "' of node '", n.name(), "' has type ",
                                   AttrValueTypeName(*v), ", expected ", type);
  }
  *out = v;
  return OkStatus();
}

Status AttrError(const NodeDef& n, std::string_view name, const Status& s) {
  return errors::InvalidArgument("Attr '", AV(name), "' of node '", n.name(), "': ", s.message());
}

std::string DataTypeName(DataType dt) {
  const std::string& s = DataType_Name(dt);
  return s.empty() ? absl::StrCat("DataType(", static_cast<int>(dt), ")") : s;
}

std::string ShapeSummary(const TensorShapeProto& p) {
  if (p.unknown_rank()) return "<unknown>";
  std::vector<std::string> dims;
  for (const auto& d : p.dim()) dims.push_back(d.size() < 0 ? "?" : absl::StrCat(d.size()));
  return absl::StrCat("[", absl::StrJoin(dims, ","), "]");
}

std::string TensorSummary(const TensorProto& p) {
  StatusOr<Tensor> t = Tensor::FromProto(p);
  if (!t.ok()) return absl::StrCat("<Invalid TensorProto: ", t.status().message(), ">");
  return absl::StrCat("<", t->DebugString(), ">");
}

std::string FuncSummary(const NameAttrList& f) {
  std::map<std::string, std::string> sorted;
  for (const auto& [k, v] : f.attr()) sorted[k] = SummarizeAttrValue(v);
  std::vector<std::string> parts;
  for (const auto& [k, v] : sorted) parts.push_back(absl::StrCat(k, "=", v));
  if (parts.empty()) return f.name();
  return absl::StrCat(f.name(), "[", absl::StrJoin(parts, ", "), "]");
}

std::string FloatSummary(float f) { return absl::StrFormat("%g", f); }

}  // namespace

// ---------------------------------------------------------------- getters

const AttrValue* FindAttr(const NodeDef& n, std::string_view name) {
  auto it = n.attr().find(std::string(name));
  return it == n.attr().end() ? nullptr : &it->second;
}

Status GetNodeAttr(const NodeDef& n, std::string_view name, std::string* v) {
  const AttrValue* a;
  TX_RETURN_IF_ERROR(GetTyped(n, name, "string", &a));
  *v = a->s();
  return OkStatus();
}

Status GetNodeAttr(const NodeDef& n, std::string_view name, int64_t* v) {
  const AttrValue* a;
  TX_RETURN_IF_ERROR(GetTyped(n, name, "int", &a));
  *v = a->i();
  return OkStatus();
}

Status GetNodeAttr(const NodeDef& n, std::string_view name, int32_t* v) {
  const AttrValue* a;
  TX_RETURN_IF_ERROR(GetTyped(n, name, "int", &a));
  if (a->i() < std::numeric_limits<int32_t>::min() || a->i() > std::numeric_limits<int32_t>::max()) {
    return errors::InvalidArgument("Attr '", AV(name), "' of node '", n.name(), "' has value ", a->i(),
                                   " out of range for an int32");
  }
  *v = static_cast<int32_t>(a->i());
  return OkStatus();
}

Status GetNodeAttr(const NodeDef& n, std::string_view name, float* v) {
  const AttrValue* a;
  TX_RETURN_IF_ERROR(GetTyped(n, name, "float", &a));
  *v = a->f();
  return OkStatus();
}

Status GetNodeAttr(const NodeDef& n, std::string_view name, bool* v) {
  const AttrValue* a;
  TX_RETURN_IF_ERROR(GetTyped(n, name, "bool", &a));
  *v = a->b();
  return OkStatus();
}

Status GetNodeAttr(const NodeDef& n, std::string_view name, DataType* v) {
  const AttrValue* a;
  TX_RETURN_IF_ERROR(GetTyped(n, name, "type", &a));
  *v = a->type();
  return OkStatus();
}

Status GetNodeAttr(const NodeDef& n, std::string_view name, TensorShape* v) {
  const AttrValue* a;
  TX_RETURN_IF_ERROR(GetTyped(n, name, "shape", &a));
  StatusOr<TensorShape> s = TensorShape::FromProto(a->shape());
  if (!s.ok()) return AttrError(n, name, s.status());
  *v = *std::move(s);
  return OkStatus();
}

Status GetNodeAttr(const NodeDef& n, std::string_view name, PartialTensorShape* v) {
  const AttrValue* a;
  TX_RETURN_IF_ERROR(GetTyped(n, name, "shape", &a));
  StatusOr<PartialTensorShape> s = PartialTensorShape::FromProto(a->shape());
  if (!s.ok()) return AttrError(n, name, s.status());
  *v = *std::move(s);
  return OkStatus();
}

Status GetNodeAttr(const NodeDef& n, std::string_view name, Tensor* v) {
  const AttrValue* a;
  TX_RETURN_IF_ERROR(GetTyped(n, name, "tensor", &a));
  StatusOr<Tensor> t = Tensor::FromProto(a->tensor());
  if (!t.ok()) return AttrError(n, name, t.status());
  *v = *std::move(t);
  return OkStatus();
}

Status GetNodeAttr(const NodeDef& n, std::string_view name, NameAttrList* v) {
  const AttrValue* a;
  TX_RETURN_IF_ERROR(GetTyped(n, name, "func", &a));
  *v = a->func();
  return OkStatus();
}

Status GetNodeAttr(const NodeDef& n, std::string_view name, std::vector<std::string>* v) {
  const AttrValue* a;
  TX_RETURN_IF_ERROR(GetTyped(n, name, "list(string)", &a));
  v->assign(a->list().s().begin(), a->list().s().end());
  return OkStatus();
}

Status GetNodeAttr(const NodeDef& n, std::string_view name, std::vector<int64_t>* v) {
  const AttrValue* a;
  TX_RETURN_IF_ERROR(GetTyped(n, name, "list(int)", &a));
  v->assign(a->list().i().begin(), a->list().i().end());
  return OkStatus();
}

Status GetNodeAttr(const NodeDef& n, std::string_view name, std::vector<int32_t>* v) {
  const AttrValue* a;
  TX_RETURN_IF_ERROR(GetTyped(n, name, "list(int)", &a));
  v->clear();
  for (int64_t x : a->list().i()) {
    if (x < std::numeric_limits<int32_t>::min() || x > std::numeric_limits<int32_t>::max()) {
      return errors::InvalidArgument("Attr '", AV(name), "' of node '", n.name(), "' has value ", x,
                                     " out of range for an int32");
    }
    v->push_back(static_cast<int32_t>(x));
  }
  return OkStatus();
}

Status GetNodeAttr(const NodeDef& n, std::string_view name, std::vector<float>* v) {
  const AttrValue* a;
  TX_RETURN_IF_ERROR(GetTyped(n, name, "list(float)", &a));
  v->assign(a->list().f().begin(), a->list().f().end());
  return OkStatus();
}

Status GetNodeAttr(const NodeDef& n, std::string_view name, std::vector<bool>* v) {
  const AttrValue* a;
  TX_RETURN_IF_ERROR(GetTyped(n, name, "list(bool)", &a));
  v->assign(a->list().b().begin(), a->list().b().end());
  return OkStatus();
}

Status GetNodeAttr(const NodeDef& n, std::string_view name, std::vector<DataType>* v) {
  const AttrValue* a;
  TX_RETURN_IF_ERROR(GetTyped(n, name, "list(type)", &a));
  v->clear();
  for (int t : a->list().type()) v->push_back(static_cast<DataType>(t));
  return OkStatus();
}

Status GetNodeAttr(const NodeDef& n, std::string_view name, DataTypeVector* v) {
  const AttrValue* a;
  TX_RETURN_IF_ERROR(GetTyped(n, name, "list(type)", &a));
  v->clear();
  for (int t : a->list().type()) v->push_back(static_cast<DataType>(t));
  return OkStatus();
}

Status GetNodeAttr(const NodeDef& n, std::string_view name, std::vector<PartialTensorShape>* v) {
  const AttrValue* a;
  TX_RETURN_IF_ERROR(GetTyped(n, name, "list(shape)", &a));
  v->clear();
  for (const auto& p : a->list().shape()) {
    StatusOr<PartialTensorShape> s = PartialTensorShape::FromProto(p);
    if (!s.ok()) return AttrError(n, name, s.status());
    v->push_back(*std::move(s));
  }
  return OkStatus();
}

Status GetNodeAttr(const NodeDef& n, std::string_view name, std::vector<TensorShape>* v) {
  const AttrValue* a;
  TX_RETURN_IF_ERROR(GetTyped(n, name, "list(shape)", &a));
  v->clear();
  for (const auto& p : a->list().shape()) {
    StatusOr<TensorShape> s = TensorShape::FromProto(p);
    if (!s.ok()) return AttrError(n, name, s.status());
    v->push_back(*std::move(s));
  }
  return OkStatus();
}

// ---------------------------------------------------------------- validation

void AddDefaultsToNodeDef(const OpDef& op_def, NodeDef* node_def) {
  auto* attrs = node_def->mutable_attr();
  for (const auto& a : op_def.attr()) {
    if (a.has_default_value() && !attrs->contains(a.name())) (*attrs)[a.name()] = a.default_value();
  }
}

namespace {

Status ValidateAttrValue(const NodeDef& n, const OpDef::AttrDef& def, const AttrValue& v) {
  auto fail = [&](const auto&... args) {
    return errors::InvalidArgument("Attr '", def.name(), "' of node '", n.name(), "' (op ",
                                   n.op(), ") ", args...);
  };
  if (v.value_case() == AttrValue::kPlaceholder) return OkStatus();  // inside function bodies
  if (!HoldsType(v, def.type())) {
    return fail("has type ", AttrValueTypeName(v), ", expected ", def.type());
  }
  if (def.type() == "type" && v.type() == DT_INVALID) return fail("has the invalid type DT_INVALID");
  if (def.has_minimum()) {
    if (def.type() == "int" && v.i() < def.minimum()) {
      return fail("has value ", v.i(), " less than the minimum ", def.minimum());
    }
    if (v.has_list() && ListLength(v.list()) < def.minimum()) {
      return fail("has length ", ListLength(v.list()), " less than the minimum ", def.minimum());
    }
  }
  if (def.has_allowed_values()) {
    const auto& allowed = def.allowed_values().list();
    auto type_ok = [&](int t) {
      return std::find(allowed.type().begin(), allowed.type().end(), t) != allowed.type().end();
    };
    auto s_ok = [&](const std::string& s) {
      return std::find(allowed.s().begin(), allowed.s().end(), s) != allowed.s().end();
    };
    auto allowed_str = [&] { return SummarizeAttrValue(def.allowed_values()); };
    if (v.value_case() == AttrValue::kType && !type_ok(v.type())) {
      return fail("has value ", DataTypeName(v.type()), " not in the allowed list ", allowed_str());
    }
    if (v.value_case() == AttrValue::kS && !s_ok(v.s())) {
      return fail("has value \"", absl::CEscape(v.s()), "\" not in the allowed list ",
                  allowed_str());
    }
    if (v.has_list()) {
      for (int t : v.list().type()) {
        if (!type_ok(t)) {
          return fail("has element ", DataTypeName(static_cast<DataType>(t)),
                      " not in the allowed list ", allowed_str());
        }
      }
      for (const std::string& s : v.list().s()) {
        if (!s_ok(s)) {
          return fail("has element \"", absl::CEscape(s), "\" not in the allowed list ",
                      allowed_str());
        }
      }
    }
  }
  return OkStatus();
}

// Number of flattened tensors an arg stands for, and (optionally) their types.
Status ArgTypes(const NodeDef& n, const OpDef::ArgDef& arg, DataTypeVector* types) {
  auto wrap = [&](const Status& s) {
    return s.ok() ? s
                  : errors::InvalidArgument("Node '", n.name(), "' (op ", n.op(), "), arg '",
                                            arg.name(), "': ", s.message());
  };
  if (!arg.type_list_attr().empty()) {
    DataTypeVector list;
    TX_RETURN_IF_ERROR(wrap(GetNodeAttr(n, arg.type_list_attr(), &list)));
    for (DataType dt : list) types->push_back(arg.is_ref() ? MakeRefType(dt) : dt);
    return OkStatus();
  }
  DataType dt = arg.type();
  if (!arg.type_attr().empty()) TX_RETURN_IF_ERROR(wrap(GetNodeAttr(n, arg.type_attr(), &dt)));
  if (arg.is_ref()) dt = MakeRefType(dt);
  int64_t count = 1;
  if (!arg.number_attr().empty()) {
    TX_RETURN_IF_ERROR(wrap(GetNodeAttr(n, arg.number_attr(), &count)));
    // An N of 2^31 would make an 8 GiB type list before anything else could object (fuzz
    // finding); no real graph has a million tensors in one argument.
    constexpr int64_t kMaxArgLength = int64_t{1} << 20;
    if (count < 0 || count > kMaxArgLength) {
      return wrap(errors::InvalidArgument("length attr '", arg.number_attr(), "' is ", count,
                                          "; it must be in [0, ", kMaxArgLength, "]"));
    }
  }
  types->insert(types->end(), static_cast<size_t>(count), dt);
  return OkStatus();
}

}  // namespace

Status ValidateNodeDef(const NodeDef& node_def, const OpDef& op_def) {
  const NodeDef& n = node_def;
  if (n.op() != op_def.name()) {
    return errors::InvalidArgument("NodeDef '", n.name(), "' has op '", n.op(),
                                   "' but is validated against op '", op_def.name(), "'");
  }
  // Inputs: data inputs first, then control inputs.
  int num_data = 0;
  bool seen_control = false;
  for (const std::string& in : n.input()) {
    if (in.empty()) {
      return errors::InvalidArgument("Node '", n.name(), "' (op ", n.op(), ") has an empty input");
    }
    if (in[0] == '^') {
      seen_control = true;
    } else if (seen_control) {
      return errors::InvalidArgument("Node '", n.name(), "' (op ", n.op(), "): data input '", in,
                                     "' comes after a control input; control inputs must follow "
                                     "all data inputs");
    } else {
      ++num_data;
    }
  }
  // Attrs: every NodeDef attr declared (or internal), every declared attr present and valid.
  for (const auto& entry : n.attr()) {
    const std::string& name = entry.first;  // not a structured binding: clang 14 can't capture one
    if (!name.empty() && name[0] == '_') continue;
    bool declared = std::any_of(op_def.attr().begin(), op_def.attr().end(),
                                [&](const OpDef::AttrDef& a) { return a.name() == name; });
    if (!declared) {
      return errors::InvalidArgument("Node '", n.name(), "' has attr '", name,
                                     "' that op '", op_def.name(), "' does not declare");
    }
  }
  for (const auto& def : op_def.attr()) {
    const AttrValue* v = FindAttr(n, def.name());
    if (v == nullptr) {
      return errors::InvalidArgument("Node '", n.name(), "' (op ", n.op(), ") is missing attr '",
                                     def.name(), "' of type ", def.type());
    }
    TX_RETURN_IF_ERROR(ValidateAttrValue(n, def, *v));
  }
  DataTypeVector in_types;
  for (const auto& arg : op_def.input_arg()) TX_RETURN_IF_ERROR(ArgTypes(n, arg, &in_types));
  if (static_cast<int>(in_types.size()) != num_data) {
    return errors::InvalidArgument("Node '", n.name(), "' (op ", n.op(), ") has ", num_data,
                                   " data inputs, but the op expects ", in_types.size(), ": ",
                                   SummarizeNodeDef(n));
  }
  return OkStatus();
}

Status InOutTypesForNode(const NodeDef& node_def, const OpDef& op_def, DataTypeVector* inputs,
                         DataTypeVector* outputs) {
  inputs->clear();
  outputs->clear();
  for (const auto& arg : op_def.input_arg()) TX_RETURN_IF_ERROR(ArgTypes(node_def, arg, inputs));
  for (const auto& arg : op_def.output_arg()) TX_RETURN_IF_ERROR(ArgTypes(node_def, arg, outputs));
  return OkStatus();
}

Status NameRangesForNode(const NodeDef& node_def, const OpDef& op_def, NameRangeMap* inputs,
                         NameRangeMap* outputs) {
  auto fill = [&](const auto& args, NameRangeMap* out) -> Status {
    if (out == nullptr) return OkStatus();
    out->clear();
    int start = 0;
    for (const auto& arg : args) {
      DataTypeVector types;
      TX_RETURN_IF_ERROR(ArgTypes(node_def, arg, &types));
      int end = start + static_cast<int>(types.size());
      (*out)[arg.name()] = {start, end};
      start = end;
    }
    return OkStatus();
  };
  TX_RETURN_IF_ERROR(fill(op_def.input_arg(), inputs));
  return fill(op_def.output_arg(), outputs);
}

// ---------------------------------------------------------------- summaries

std::string SummarizeAttrValue(const AttrValue& v) {
  switch (v.value_case()) {
    case AttrValue::kS: return absl::StrCat("\"", absl::CEscape(v.s()), "\"");
    case AttrValue::kI: return absl::StrCat(v.i());
    case AttrValue::kF: return FloatSummary(v.f());
    case AttrValue::kB: return v.b() ? "true" : "false";
    case AttrValue::kType: return DataTypeName(v.type());
    case AttrValue::kShape: return ShapeSummary(v.shape());
    case AttrValue::kTensor: return TensorSummary(v.tensor());
    case AttrValue::kFunc: return FuncSummary(v.func());
    case AttrValue::kPlaceholder: return absl::StrCat("$", v.placeholder());
    case AttrValue::kList: {
      const auto& l = v.list();
      std::vector<std::string> parts;
      for (const auto& s : l.s()) parts.push_back(absl::StrCat("\"", absl::CEscape(s), "\""));
      for (int64_t i : l.i()) parts.push_back(absl::StrCat(i));
      for (float f : l.f()) parts.push_back(FloatSummary(f));
      for (bool b : l.b()) parts.push_back(b ? "true" : "false");
      for (int t : l.type()) parts.push_back(DataTypeName(static_cast<DataType>(t)));
      for (const auto& s : l.shape()) parts.push_back(ShapeSummary(s));
      for (const auto& t : l.tensor()) parts.push_back(TensorSummary(t));
      for (const auto& f : l.func()) parts.push_back(FuncSummary(f));
      return absl::StrCat("[", absl::StrJoin(parts, ", "), "]");
    }
    case AttrValue::VALUE_NOT_SET: break;
  }
  return "<Unknown AttrValue type>";
}

std::string SummarizeNodeDef(const NodeDef& n) {
  std::map<std::string, const AttrValue*> sorted;
  for (const auto& [k, v] : n.attr()) sorted[k] = &v;
  std::vector<std::string> attrs;
  for (const auto& [k, v] : sorted) attrs.push_back(absl::StrCat(k, "=", SummarizeAttrValue(*v)));
  if (!n.device().empty()) attrs.push_back(absl::StrCat("_device=\"", n.device(), "\""));
  std::string out = absl::StrCat("{{node ", n.name(), "}} = ", n.op());
  if (!attrs.empty()) absl::StrAppend(&out, "[", absl::StrJoin(attrs, ", "), "]");
  absl::StrAppend(&out, "(", absl::StrJoin(n.input(), ", "), ")");
  return out;
}

// ---------------------------------------------------------------- setters

void SetAttrValue(const std::string& v, AttrValue* out) { out->set_s(v); }
void SetAttrValue(const char* v, AttrValue* out) { out->set_s(v); }
void SetAttrValue(int64_t v, AttrValue* out) { out->set_i(v); }
void SetAttrValue(int32_t v, AttrValue* out) { out->set_i(v); }
void SetAttrValue(float v, AttrValue* out) { out->set_f(v); }
void SetAttrValue(bool v, AttrValue* out) { out->set_b(v); }
void SetAttrValue(DataType v, AttrValue* out) { out->set_type(v); }
void SetAttrValue(const TensorShape& v, AttrValue* out) { v.AsProto(out->mutable_shape()); }
void SetAttrValue(const PartialTensorShape& v, AttrValue* out) {
  TensorShapeProto* p = out->mutable_shape();
  p->Clear();
  if (v.unknown_rank()) {
    p->set_unknown_rank(true);
    return;
  }
  for (int64_t d : v.dim_sizes()) p->add_dim()->set_size(d);
}
void SetAttrValue(const Tensor& v, AttrValue* out) { v.AsProtoTensorContent(out->mutable_tensor()); }
void SetAttrValue(absl::Span<const int64_t> v, AttrValue* out) {
  auto* l = out->mutable_list();
  l->Clear();
  for (int64_t x : v) l->add_i(x);
}
void SetAttrValue(absl::Span<const int32_t> v, AttrValue* out) {
  auto* l = out->mutable_list();
  l->Clear();
  for (int32_t x : v) l->add_i(x);
}
void SetAttrValue(absl::Span<const float> v, AttrValue* out) {
  auto* l = out->mutable_list();
  l->Clear();
  for (float x : v) l->add_f(x);
}
void SetAttrValue(absl::Span<const DataType> v, AttrValue* out) {
  auto* l = out->mutable_list();
  l->Clear();
  for (DataType x : v) l->add_type(x);
}
void SetAttrValue(absl::Span<const std::string> v, AttrValue* out) {
  auto* l = out->mutable_list();
  l->Clear();
  for (const std::string& x : v) l->add_s(x);
}
void SetAttrValue(absl::Span<const PartialTensorShape> v, AttrValue* out) {
  auto* l = out->mutable_list();
  l->Clear();
  for (const PartialTensorShape& x : v) {
    AttrValue tmp;
    SetAttrValue(x, &tmp);
    *l->add_shape() = tmp.shape();
  }
}

}  // namespace tensorflux
