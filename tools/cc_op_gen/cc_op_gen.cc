// Generates the C++ op wrappers (tensorflux/cc/ops/ops.h and ops.cc) from the op registry, the
// way TF's cc op generator does: one class per registered op.
//
//   usage: tx_cc_op_gen OUT_DIR      (writes OUT_DIR/ops.h and OUT_DIR/ops.cc)
//          tx_cc_op_gen --list       (prints the registered op names)
//
// For an op, the class takes (scope, one Input per input arg, one argument per required attr
// that the inputs do not determine, [Attrs]) and exposes `operation` plus one member per output
// arg (Output, or OutputList for list args). Attrs with defaults are set through the nested
// Attrs struct and static setters named in CamelCase: ops::MatMul::TransposeA(true). Type attrs
// and list lengths are inferred from the inputs by internal::OpBuilder. Ops whose names start with
// '_' go to ops::internal without the underscore (_Arg -> ops::internal::Arg). Const is written by
// hand (const_op.h). Output is sorted by op name, so it is deterministic; files are only
// rewritten when their contents change.
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "tensorflux/framework/node_def_util.h"
#include "tensorflux/framework/op.h"

namespace tensorflux {
namespace {

const std::set<std::string>& CppKeywords() {
  static const auto* k = new std::set<std::string>{
      "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break",
      "case", "catch", "char", "char8_t", "char16_t", "char32_t", "class", "compl", "concept",
      "const", "consteval", "constexpr", "constinit", "const_cast", "continue", "co_await",
      "co_return", "co_yield", "decltype", "default", "delete", "do", "double", "dynamic_cast",
      "else", "enum", "explicit", "export", "extern", "false", "float", "for", "friend", "goto",
      "if", "inline", "int", "long", "mutable", "namespace", "new", "noexcept", "not", "not_eq",
      "nullptr", "operator", "or", "or_eq", "private", "protected", "public", "register",
      "reinterpret_cast", "requires", "return", "short", "signed", "sizeof", "static",
      "static_assert", "static_cast", "struct", "switch", "template", "this", "thread_local",
      "throw", "true", "try", "typedef", "typeid", "typename", "union", "unsigned", "using",
      "virtual", "void", "volatile", "wchar_t", "while", "xor", "xor_eq",
      // names the generated code itself uses
      "scope", "attrs", "tx_builder", "tx_node", "operation", "node"};
  return *k;
}

// An identifier for an arg or attr name that clashes with nothing in the class `cls`.
std::string SafeName(const std::string& name, const std::string& cls) {
  if (CppKeywords().count(name) || name == cls) return name + "_";
  return name;
}

// "transpose_a" -> "TransposeA".
std::string CamelCase(const std::string& s) {
  std::string out;
  bool up = true;
  for (char c : s) {
    if (c == '_') {
      up = true;
      continue;
    }
    out.push_back(up ? absl::ascii_toupper(c) : c);
    up = false;
  }
  return out;
}

// C++ type of an attr value, by OpDef attr type.
std::string AttrCppType(const std::string& type) {
  if (type == "string") return "std::string";
  if (type == "int") return "int64_t";
  if (type == "float") return "float";
  if (type == "bool") return "bool";
  if (type == "type") return "::tensorflux::DataType";
  if (type == "shape") return "::tensorflux::PartialTensorShape";
  if (type == "tensor") return "::tensorflux::Tensor";
  if (type == "func") return "::tensorflux::NameAttrList";
  if (type == "list(string)") return "std::vector<std::string>";
  if (type == "list(int)") return "std::vector<int64_t>";
  if (type == "list(float)") return "std::vector<float>";
  if (type == "list(bool)") return "std::vector<bool>";
  if (type == "list(type)") return "std::vector<::tensorflux::DataType>";
  if (type == "list(shape)") return "std::vector<::tensorflux::PartialTensorShape>";
  if (type == "list(tensor)") return "std::vector<::tensorflux::Tensor>";
  if (type == "list(func)") return "std::vector<::tensorflux::NameAttrList>";
  return "::tensorflux::AttrValue";
}

// Parameter type for passing an attr value (by value for scalars, const& otherwise).
std::string AttrParamType(const std::string& type) {
  std::string t = AttrCppType(type);
  if (t == "int64_t" || t == "float" || t == "bool" || t == "::tensorflux::DataType") return t;
  return "const " + t + "&";
}

std::string ArgTypeString(const OpDef::ArgDef& arg) {
  std::string t;
  if (!arg.type_list_attr().empty()) {
    t = arg.type_list_attr();
  } else {
    t = !arg.type_attr().empty() ? arg.type_attr() : DataTypeString(arg.type());
    if (!arg.number_attr().empty()) t = absl::StrCat(arg.number_attr(), " * ", t);
  }
  return arg.is_ref() ? absl::StrCat("Ref(", t, ")") : t;
}

bool IsListArg(const OpDef::ArgDef& arg) {
  return !arg.number_attr().empty() || !arg.type_list_attr().empty();
}

void AppendComment(const std::string& text, const std::string& indent, std::string* out) {
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    std::string l(absl::StripTrailingAsciiWhitespace(line));
    absl::StrAppend(out, indent, l.empty() ? "//" : "// " + l, "\n");
  }
}

struct OpInfo {
  const OpDef* def;
  std::string cls;        // class name
  bool internal;          // in ops::internal
  std::vector<const OpDef::AttrDef*> required;  // constructor arguments
  std::vector<const OpDef::AttrDef*> optional;  // Attrs struct
};

OpInfo Analyze(const OpDef& def) {
  OpInfo info{&def, def.name(), false, {}, {}};
  while (!info.cls.empty() && info.cls[0] == '_') {
    info.cls.erase(0, 1);
    info.internal = true;
  }
  std::set<std::string> inferred;
  for (const auto& arg : def.input_arg()) {
    if (!arg.type_attr().empty()) inferred.insert(arg.type_attr());
    if (!arg.number_attr().empty()) inferred.insert(arg.number_attr());
    if (!arg.type_list_attr().empty()) inferred.insert(arg.type_list_attr());
  }
  for (const auto& attr : def.attr()) {
    if (inferred.count(attr.name())) continue;
    if (attr.has_default_value()) {
      info.optional.push_back(&attr);
    } else {
      info.required.push_back(&attr);
    }
  }
  return info;
}

// "(const ::tensorflux::Scope& scope, ::tensorflux::Input a, ...)" without the trailing paren.
std::string CtorParams(const OpInfo& op) {
  std::string p = "const ::tensorflux::Scope& scope";
  for (const auto& arg : op.def->input_arg())
    absl::StrAppend(&p, ", ", IsListArg(arg) ? "::tensorflux::InputList " : "::tensorflux::Input ",
                    SafeName(arg.name(), op.cls));
  for (const auto* attr : op.required)
    absl::StrAppend(&p, ", ", AttrParamType(attr->type()), " ", SafeName(attr->name(), op.cls));
  return p;
}

std::string CtorArgs(const OpInfo& op) {
  std::string a = "scope";
  for (const auto& arg : op.def->input_arg()) absl::StrAppend(&a, ", ", SafeName(arg.name(), op.cls));
  for (const auto* attr : op.required) absl::StrAppend(&a, ", ", SafeName(attr->name(), op.cls));
  return a;
}

std::string SetterName(const OpDef::AttrDef& attr, const std::string& cls) {
  std::string s = CamelCase(attr.name());
  if (s == cls || s == "Attrs" || CppKeywords().count(s)) s += "_";
  return s;
}

void EmitClass(const OpInfo& op, std::string* h, std::string* cc) {
  const OpDef& def = *op.def;
  const std::string& cls = op.cls;
  // ---- header
  absl::StrAppend(h, "// ", def.name(), "\n");
  if (!def.summary().empty()) AppendComment(def.summary(), "", h);
  if (!def.description().empty()) {
    absl::StrAppend(h, "//\n");
    AppendComment(def.description(), "", h);
  }
  if (def.input_arg_size() > 0) {
    absl::StrAppend(h, "//\n// Inputs:\n");
    for (const auto& arg : def.input_arg())
      absl::StrAppend(h, "//   ", arg.name(), ": ", ArgTypeString(arg), "\n");
  }
  if (!op.required.empty()) {
    absl::StrAppend(h, "//\n// Required attrs:\n");
    for (const auto* a : op.required) absl::StrAppend(h, "//   ", a->name(), ": ", a->type(), "\n");
  }
  if (!op.optional.empty()) {
    absl::StrAppend(h, "//\n// Optional attrs (", cls, "::Attrs):\n");
    for (const auto* a : op.optional)
      absl::StrAppend(h, "//   ", a->name(), ": ", a->type(), " = ",
                      SummarizeAttrValue(a->default_value()), "\n");
  }
  if (def.output_arg_size() > 0) {
    absl::StrAppend(h, "//\n// Outputs:\n");
    for (const auto& arg : def.output_arg())
      absl::StrAppend(h, "//   ", arg.name(), ": ", ArgTypeString(arg), "\n");
  }
  absl::StrAppend(h, "class ", cls, " {\n public:\n");
  if (!op.optional.empty()) {
    absl::StrAppend(h, "  // Optional attrs; unset ones take the OpDef's default.\n");
    absl::StrAppend(h, "  struct Attrs {\n");
    for (const auto* a : op.optional) {
      absl::StrAppend(h, "    Attrs ", SetterName(*a, cls), "(", AttrParamType(a->type()),
                      " x) const {\n      Attrs ret = *this;\n      ret.", a->name(),
                      "_ = x;\n      return ret;\n    }\n");
    }
    for (const auto* a : op.optional)
      absl::StrAppend(h, "    std::optional<", AttrCppType(a->type()), "> ", a->name(), "_;\n");
    absl::StrAppend(h, "  };\n");
  }
  const bool only_scope = def.input_arg_size() == 0 && op.required.empty();
  absl::StrAppend(h, "  ", only_scope ? "explicit " : "", cls, "(", CtorParams(op), ");\n");
  if (!op.optional.empty())
    absl::StrAppend(h, "  ", cls, "(", CtorParams(op), ", const ", cls, "::Attrs& attrs);\n");

  // Conversions.
  int n_out = def.output_arg_size();
  if (n_out == 1 && !IsListArg(def.output_arg(0))) {
    std::string m = SafeName(def.output_arg(0).name(), cls);
    absl::StrAppend(h, "  operator ::tensorflux::Output() const { return ", m, "; }\n");
    absl::StrAppend(h, "  operator ::tensorflux::Input() const { return ", m, "; }\n");
    absl::StrAppend(h, "  ::tensorflux::Node* node() const { return ", m, ".node(); }\n");
  } else if (n_out == 1) {
    std::string m = SafeName(def.output_arg(0).name(), cls);
    absl::StrAppend(h, "  ::tensorflux::Output operator[](size_t index) const { return ", m,
                    "[index]; }\n");
    absl::StrAppend(h, "  ::tensorflux::Node* node() const { return operation.node(); }\n");
  } else {
    if (n_out == 0)
      absl::StrAppend(h, "  operator ::tensorflux::Operation() const { return operation; }\n");
    absl::StrAppend(h, "  ::tensorflux::Node* node() const { return operation.node(); }\n");
  }
  for (const auto* a : op.optional)
    absl::StrAppend(h, "  static Attrs ", SetterName(*a, cls), "(", AttrParamType(a->type()),
                    " x) { return Attrs().", SetterName(*a, cls), "(x); }\n");
  absl::StrAppend(h, "\n  ::tensorflux::Operation operation;\n");
  for (const auto& arg : def.output_arg())
    absl::StrAppend(h, "  ", IsListArg(arg) ? "::tensorflux::OutputList " : "::tensorflux::Output ",
                    SafeName(arg.name(), cls), ";\n");
  absl::StrAppend(h, "};\n\n");

  // ---- source
  std::string attrs_param = op.optional.empty() ? "" : absl::StrCat(", const ", cls, "::Attrs& attrs");
  absl::StrAppend(cc, cls, "::", cls, "(", CtorParams(op), attrs_param, ") {\n");
  absl::StrAppend(cc, "  if (!scope.ok()) return;\n");
  absl::StrAppend(cc, "  ::tensorflux::internal::OpBuilder tx_builder(scope, \"", def.name(), "\");\n");
  for (const auto& arg : def.input_arg())
    absl::StrAppend(cc, "  tx_builder.Input(", SafeName(arg.name(), cls), ");\n");
  for (const auto* a : op.required)
    absl::StrAppend(cc, "  tx_builder.Attr(\"", a->name(), "\", ", SafeName(a->name(), cls), ");\n");
  for (const auto* a : op.optional)
    absl::StrAppend(cc, "  if (attrs.", a->name(), "_) tx_builder.Attr(\"", a->name(), "\", *attrs.",
                    a->name(), "_);\n");
  absl::StrAppend(cc, "  ::tensorflux::Node* tx_node = tx_builder.Finalize();\n");
  absl::StrAppend(cc, "  if (tx_node == nullptr) return;\n");
  absl::StrAppend(cc, "  operation = ::tensorflux::Operation(tx_node);\n");
  for (const auto& arg : def.output_arg()) {
    absl::StrAppend(cc, "  ", SafeName(arg.name(), cls), " = tx_builder.",
                    IsListArg(arg) ? "OutputsOf" : "OutputOf", "(\"", arg.name(), "\");\n");
  }
  absl::StrAppend(cc, "}\n");
  if (!op.optional.empty())
    absl::StrAppend(cc, cls, "::", cls, "(", CtorParams(op), ")\n    : ", cls, "(", CtorArgs(op),
                    ", ", cls, "::Attrs()) {}\n");
  absl::StrAppend(cc, "\n");
}

const char kPreamble[] =
    "// Generated by tools/cc_op_gen from the op registry. Do not edit.\n";

bool WriteIfChanged(const std::string& path, const std::string& contents) {
  {
    std::ifstream in(path, std::ios::binary);
    if (in) {
      std::ostringstream ss;
      ss << in.rdbuf();
      if (ss.str() == contents) return true;
    }
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << contents;
  out.close();
  return static_cast<bool>(out);
}

int Main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUT_DIR | --list\n", argv[0]);
    return 1;
  }
  const std::string dir = argv[1];
  if (dir == "--list") {  // the registered op names, one per line
    for (const OpRegistrationData* r : OpRegistry::Global()->ListOps())
      std::printf("%s\n", r->op_def.name().c_str());
    return 0;
  }
  std::vector<OpInfo> ops;
  for (const OpRegistrationData* r : OpRegistry::Global()->ListOps()) {
    if (r->op_def.name() == "Const") continue;  // hand-written: const_op.h
    ops.push_back(Analyze(r->op_def));
  }

  std::string h = kPreamble;
  absl::StrAppend(&h,
                  "// One class per registered op; see tools/cc_op_gen/cc_op_gen.cc for the "
                  "conventions.\n#pragma once\n\n"
                  "#include <cstdint>\n#include <optional>\n#include <string>\n#include <vector>\n\n"
                  "#include \"tensorflux/attr_value.pb.h\"\n"
                  "#include \"tensorflux/cc/const_op.h\"\n"
                  "#include \"tensorflux/cc/ops.h\"\n"
                  "#include \"tensorflux/cc/scope.h\"\n"
                  "#include \"tensorflux/core/tensor.h\"\n"
                  "#include \"tensorflux/core/tensor_shape.h\"\n"
                  "#include \"tensorflux/core/types.h\"\n\n"
                  "namespace tensorflux {\nnamespace ops {\n\n");
  std::string cc = kPreamble;
  absl::StrAppend(&cc,
                  "#include \"tensorflux/cc/ops/ops.h\"\n\n"
                  "#include \"tensorflux/cc/op_builder.h\"\n\n"
                  "namespace tensorflux {\nnamespace ops {\n\n");
  for (bool internal : {false, true}) {
    if (internal) {
      absl::StrAppend(&h, "// Internal ops (names starting with '_'), without the underscore.\n"
                          "namespace internal {\n\n");
      absl::StrAppend(&cc, "namespace internal {\n\n");
    }
    for (const OpInfo& op : ops) {
      if (op.internal != internal) continue;
      EmitClass(op, &h, &cc);
    }
    if (internal) {
      absl::StrAppend(&h, "}  // namespace internal\n");
      absl::StrAppend(&cc, "}  // namespace internal\n");
    }
  }
  absl::StrAppend(&h, "\n}  // namespace ops\n}  // namespace tensorflux\n");
  absl::StrAppend(&cc, "\n}  // namespace ops\n}  // namespace tensorflux\n");

  if (!WriteIfChanged(dir + "/ops.h", h) || !WriteIfChanged(dir + "/ops.cc", cc)) {
    std::fprintf(stderr, "tx_cc_op_gen: cannot write into %s\n", dir.c_str());
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace tensorflux

int main(int argc, char** argv) { return tensorflux::Main(argc, argv); }
