#include "tensorflux/cc/op_builder.h"

#include <cmath>
#include <limits>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "tensorflux/framework/node_def_util.h"
#include "tensorflux/framework/op.h"
#include "tensorflux/framework/shape_inference.h"
#include "tensorflux/graph/graph.h"

namespace tensorflux {
namespace internal {
namespace {

template <typename T>
constexpr bool kIsHalfLike = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

template <typename T>
long double ToLongDouble(T v) {
  if constexpr (kIsHalfLike<T>) {
    return static_cast<float>(v);
  } else {
    return static_cast<long double>(v);
  }
}

template <typename D>
long double MaxFinite() {
  if constexpr (std::is_same_v<D, Half>) {
    return 65504.0L;
  } else if constexpr (std::is_same_v<D, BFloat16>) {
    return static_cast<long double>(std::numeric_limits<float>::max());
  } else {
    return static_cast<long double>(std::numeric_limits<D>::max());
  }
}

// Converts one value; false when it does not convert under the literal rules.
template <typename D>
bool ConvertValue(long double v, D* out) {
  if constexpr (std::is_integral_v<D>) {
    if (!std::isfinite(v) || v != std::trunc(v)) return false;
    if (v < static_cast<long double>(std::numeric_limits<D>::min()) ||
        v > static_cast<long double>(std::numeric_limits<D>::max()))
      return false;
    *out = static_cast<D>(v);
    return true;
  } else {
    if (std::isfinite(v) && std::fabs(v) > MaxFinite<D>()) return false;
    if constexpr (kIsHalfLike<D>) {
      *out = D(static_cast<float>(v));
    } else {
      *out = static_cast<D>(v);
    }
    return true;
  }
}

std::string TypeString(DataType dt) { return DataTypeString(dt); }

}  // namespace

StatusOr<Tensor> ConvertLiteral(const Tensor& t, DataType dtype, std::string_view what) {
  if (t.dtype() == dtype) return t;
  if (t.dtype() == DT_BOOL || dtype == DT_BOOL || t.dtype() == DT_STRING || dtype == DT_STRING ||
      !DataTypeCanUseMemcpy(dtype) || !DataTypeCanUseMemcpy(t.dtype()))
    return errors::InvalidArgument(what, " needs ", TypeString(dtype), " but the literal is ",
                                   TypeString(t.dtype()), " (only numeric literals convert)");
  TX_ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(dtype, t.shape()));
  Status s = VisitPodType(t.dtype(), "literal conversion", [&](auto src_tag) -> Status {
    using S = typename decltype(src_tag)::type;
    return VisitPodType(dtype, "literal conversion", [&](auto dst_tag) -> Status {
      using D = typename decltype(dst_tag)::type;
      const S* src = t.data<S>();
      D* dst = out.data<D>();
      for (int64_t i = 0; i < t.NumElements(); ++i) {
        long double v = ToLongDouble(src[i]);
        if (!ConvertValue<D>(v, &dst[i]))
          return errors::InvalidArgument(what, " needs ", TypeString(dtype), " but the ",
                                         TypeString(t.dtype()), " literal value ",
                                         static_cast<double>(v), " does not convert exactly");
      }
      return OkStatus();
    });
  });
  TX_RETURN_IF_ERROR(s);
  return out;
}

OpBuilder::OpBuilder(const Scope& scope, std::string op_type)
    : scope_(scope), op_type_(std::move(op_type)) {}

OpBuilder& OpBuilder::Input(const ::tensorflux::Input& input) {
  args_.push_back(Arg{false, {input}});
  return *this;
}
OpBuilder& OpBuilder::Input(const ::tensorflux::InputList& inputs) {
  args_.push_back(Arg{true, inputs.inputs()});
  return *this;
}

OpBuilder& OpBuilder::Attr(std::string_view name, AttrValue value) {
  attrs_.emplace_back(std::string(name), std::move(value));
  return *this;
}

#define TX_OP_BUILDER_ATTR(TYPE, EXPR) \
  OpBuilder& OpBuilder::Attr(std::string_view name, TYPE v) { \
    AttrValue a;                                              \
    EXPR;                                                     \
    return Attr(name, std::move(a));                          \
  }
TX_OP_BUILDER_ATTR(const std::string&, SetAttrValue(v, &a))
TX_OP_BUILDER_ATTR(const char*, SetAttrValue(v, &a))
TX_OP_BUILDER_ATTR(int64_t, SetAttrValue(v, &a))
TX_OP_BUILDER_ATTR(float, SetAttrValue(v, &a))
TX_OP_BUILDER_ATTR(bool, SetAttrValue(v, &a))
TX_OP_BUILDER_ATTR(DataType, SetAttrValue(v, &a))
TX_OP_BUILDER_ATTR(const PartialTensorShape&, SetAttrValue(v, &a))
TX_OP_BUILDER_ATTR(const Tensor&, SetAttrValue(v, &a))
TX_OP_BUILDER_ATTR(const NameAttrList&, *a.mutable_func() = v)
TX_OP_BUILDER_ATTR(const std::vector<std::string>&, SetAttrValue(absl::MakeConstSpan(v), &a))
TX_OP_BUILDER_ATTR(const std::vector<int64_t>&, SetAttrValue(absl::MakeConstSpan(v), &a))
TX_OP_BUILDER_ATTR(const std::vector<float>&, SetAttrValue(absl::MakeConstSpan(v), &a))
TX_OP_BUILDER_ATTR(const std::vector<bool>&, a.mutable_list();
                   for (bool b : v) a.mutable_list()->add_b(b))
TX_OP_BUILDER_ATTR(const std::vector<DataType>&, SetAttrValue(absl::MakeConstSpan(v), &a))
TX_OP_BUILDER_ATTR(const std::vector<PartialTensorShape>&,
                   SetAttrValue(absl::MakeConstSpan(v), &a))
TX_OP_BUILDER_ATTR(const std::vector<Tensor>&, a.mutable_list();
                   for (const Tensor& t : v) t.AsProtoTensorContent(a.mutable_list()->add_tensor()))
TX_OP_BUILDER_ATTR(const std::vector<NameAttrList>&, a.mutable_list();
                   for (const NameAttrList& f : v) *a.mutable_list()->add_func() = f)
#undef TX_OP_BUILDER_ATTR

Node* OpBuilder::Finalize() {
  if (!scope_.ok()) return nullptr;
  Node* n = nullptr;
  Status s = Build(&n);
  if (!s.ok()) {
    scope_.UpdateStatus(s);
    return nullptr;
  }
  node_ = n;
  return n;
}

Status OpBuilder::Build(Node** out) {
  Graph* g = scope_.graph();
  TX_ASSIGN_OR_RETURN(const OpRegistrationData* reg, g->op_registry()->LookUp(op_type_));
  const OpDef& op_def = reg->op_def;
  const std::string name = scope_.GetUniqueNameForOp(op_type_);
  auto fail = [&](auto&&... args) {
    return errors::AttachNodeContext(errors::InvalidArgument(args...), name, op_type_);
  };
  if (static_cast<int>(args_.size()) != op_def.input_arg_size())
    return fail("op wrapper passed ", args_.size(), " inputs, the op has ",
                op_def.input_arg_size());

  NodeDef def;
  def.set_name(name);
  def.set_op(op_type_);
  if (!scope_.device().empty()) def.set_device(scope_.device());
  for (const auto& [k, v] : attrs_) (*def.mutable_attr())[k] = v;

  // Inputs given as Outputs must be live nodes of this graph.
  for (int i = 0; i < op_def.input_arg_size(); ++i) {
    const std::string& arg = op_def.input_arg(i).name();
    for (const ::tensorflux::Input& in : args_[i].items) {
      if (in.is_literal()) {
        if (!in.status().ok()) return fail("input '", arg, "': ", in.status().message());
        continue;
      }
      const Output& o = in.output();
      if (o.node() == nullptr)
        return fail("input '", arg, "' is an empty Output (the op meant to produce it failed)");
      if (o.node()->id() < 0 || o.node()->id() >= g->num_node_ids() ||
          g->FindNodeId(o.node()->id()) != o.node())
        return fail("input '", arg, "' (", o.name(), ") belongs to another graph");
      if (o.index() < 0 || o.index() >= o.node()->num_outputs())
        return fail("input '", arg, "' names output ", o.index(), " of node '", o.node()->name(),
                    "', which has ", o.node()->num_outputs(), " outputs");
    }
  }

  // Attrs implied by inputs that are Outputs.
  auto find_type = [&](const std::string& attr) -> DataType {
    auto it = def.attr().find(attr);
    return it != def.attr().end() && it->second.value_case() == AttrValue::kType ? it->second.type()
                                                                                 : DT_INVALID;
  };
  auto unify = [&](const std::string& attr, DataType dt, const std::string& arg) -> Status {
    auto it = def.attr().find(attr);
    if (it == def.attr().end()) {
      SetAttrValue(dt, &(*def.mutable_attr())[attr]);
      return OkStatus();
    }
    if (it->second.value_case() == AttrValue::kType && it->second.type() != dt)
      return fail("inconsistent values for attr '", attr, "': ", DataTypeString(it->second.type()),
                  " vs. ", DataTypeString(dt), " from input '", arg, "'");
    return OkStatus();
  };
  for (int i = 0; i < op_def.input_arg_size(); ++i) {
    const OpDef::ArgDef& arg = op_def.input_arg(i);
    const Arg& a = args_[i];
    if (!arg.number_attr().empty() && !def.attr().contains(arg.number_attr()))
      SetAttrValue(static_cast<int64_t>(a.items.size()), &(*def.mutable_attr())[arg.number_attr()]);
    if (arg.type_attr().empty()) continue;
    for (const ::tensorflux::Input& in : a.items)
      if (!in.is_literal()) TX_RETURN_IF_ERROR(unify(arg.type_attr(), BaseType(in.output().type()), arg.name()));
  }

  // Literals become Const nodes "NAME/ARG" in the dtype the arg needs.
  std::vector<std::vector<Output>> resolved(args_.size());
  for (int i = 0; i < op_def.input_arg_size(); ++i) {
    const OpDef::ArgDef& arg = op_def.input_arg(i);
    const Arg& a = args_[i];
    for (size_t j = 0; j < a.items.size(); ++j) {
      const ::tensorflux::Input& in = a.items[j];
      if (!in.is_literal()) {
        resolved[i].push_back(in.output());
        continue;
      }
      DataType want = DT_INVALID;
      if (arg.type() != DT_INVALID) {
        want = arg.type();
      } else if (!arg.type_attr().empty()) {
        want = find_type(arg.type_attr());
      } else if (!arg.type_list_attr().empty()) {
        auto it = def.attr().find(arg.type_list_attr());
        if (it != def.attr().end() && it->second.has_list() &&
            static_cast<int>(j) < it->second.list().type_size())
          want = it->second.list().type(static_cast<int>(j));
      }
      Tensor value = in.tensor();
      if (want != DT_INVALID && want != value.dtype()) {
        auto conv = ConvertLiteral(value, want, absl::StrCat("input '", arg.name(), "'"));
        if (!conv.ok()) return errors::AttachNodeContext(conv.status(), name, op_type_);
        value = *conv;
      } else if (!arg.type_attr().empty()) {
        TX_RETURN_IF_ERROR(unify(arg.type_attr(), value.dtype(), arg.name()));
      }
      std::string const_name = a.is_list ? absl::StrCat(arg.name(), "_", j) : arg.name();
      Scope cs = scope_.NewSubScopeExact(name).WithNoControlDependencies().WithOpName(const_name);
      Output c = BuildConst(cs, value);
      if (!scope_.ok()) return scope_.status();
      resolved[i].push_back(c);
    }
    if (!arg.type_list_attr().empty() && !def.attr().contains(arg.type_list_attr())) {
      std::vector<DataType> types;
      for (const Output& o : resolved[i]) types.push_back(BaseType(o.type()));
      SetAttrValue(absl::MakeConstSpan(types), &(*def.mutable_attr())[arg.type_list_attr()]);
    }
  }

  std::vector<Output> flat;
  for (const auto& r : resolved) flat.insert(flat.end(), r.begin(), r.end());
  for (const Output& o : flat)
    def.add_input(o.index() == 0 ? o.node()->name() : absl::StrCat(o.node()->name(), ":", o.index()));
  std::vector<Node*> control;
  for (const Operation& op : scope_.control_deps()) {
    if (op.node() == nullptr)
      return fail("control dependency is an empty Operation (the op meant to produce it failed)");
    control.push_back(op.node());
    def.add_input(absl::StrCat("^", op.node()->name()));
  }

  TX_ASSIGN_OR_RETURN(Node* n, g->AddNode(def));
  for (size_t k = 0; k < flat.size(); ++k) {
    auto e = g->AddEdge(flat[k].node(), flat[k].index(), n, static_cast<int>(k));
    if (!e.ok()) {
      g->RemoveNode(n);
      return errors::AttachNodeContext(e.status(), name, op_type_);
    }
  }
  for (Node* c : control) g->AddControlEdge(c, n);

  // Shape inference from the inputs' inferred shapes and constant values.
  std::vector<PartialTensorShape> shapes;
  std::vector<Tensor> consts(flat.size());
  std::vector<const Tensor*> const_ptrs(flat.size(), nullptr);
  for (size_t k = 0; k < flat.size(); ++k) {
    shapes.push_back(scope_.GetInferredShape(flat[k]));
    if (flat[k].node()->IsConstant() && GetNodeAttr(flat[k].node()->def(), "value", &consts[k]).ok())
      const_ptrs[k] = &consts[k];
  }
  InferenceContext ctx(n->def(), n->op_def(), std::move(shapes), std::move(const_ptrs),
                       n->num_outputs());
  if (reg->shape_fn) {
    Status s = reg->shape_fn(&ctx);
    if (!s.ok()) return errors::AttachNodeContext(s, name, op_type_);
  }
  scope_.RecordShapes(n, ctx.outputs());
  *out = n;
  return OkStatus();
}

std::vector<Output> OpBuilder::OutputsOf(std::string_view arg) const {
  std::vector<Output> outs;
  if (node_ == nullptr) return outs;
  NameRangeMap in, out;
  if (!NameRangesForNode(node_->def(), node_->op_def(), &in, &out).ok()) return outs;
  auto it = out.find(std::string(arg));
  if (it == out.end()) return outs;
  for (int i = it->second.first; i < it->second.second; ++i) outs.emplace_back(node_, i);
  return outs;
}

Output OpBuilder::OutputOf(std::string_view arg) const {
  std::vector<Output> outs = OutputsOf(arg);
  return outs.empty() ? Output() : outs[0];
}

Output BuildConst(const Scope& scope, const Tensor& value) {
  if (!scope.ok()) return Output();
  if (!value.IsInitialized()) {
    scope.UpdateStatus(errors::InvalidArgument("Const: the value is an uninitialized Tensor"));
    return Output();
  }
  OpBuilder b(scope, "Const");
  b.Attr("value", value).Attr("dtype", value.dtype());
  Node* n = b.Finalize();
  return n ? Output(n, 0) : Output();
}

}  // namespace internal
}  // namespace tensorflux
