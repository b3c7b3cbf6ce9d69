#include "op_graph_gen.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "tensorflux/core/tensor.h"
#include "tensorflux/core/types.h"
#include "tensorflux/framework/node_def_util.h"
#include "tensorflux/framework/op.h"
#include "tensorflux/runtime/session.h"

namespace tensorflux {
namespace fuzz {
namespace {

constexpr int64_t kMaxInputElements = 256;

const DataType kTypes[] = {DT_FLOAT, DT_DOUBLE, DT_INT32, DT_INT64, DT_BOOL,
                           DT_UINT8, DT_INT8,   DT_HALF,  DT_BFLOAT16};
const int64_t kInts[] = {-2, -1, 0, 1, 2, 3, 4, 7};
const int64_t kHostileInts[] = {std::numeric_limits<int32_t>::min(),
                                std::numeric_limits<int32_t>::max(),
                                std::numeric_limits<int64_t>::min(),
                                std::numeric_limits<int64_t>::max(), int64_t{1} << 40};
const float kFloats[] = {0.0f, 0.5f, 1.0f, -1.0f, 1e-3f, 0.2f, 2.5f};
const char* const kStrings[] = {"SAME", "VALID", "EXPLICIT", "NHWC", "NCHW", "", "bogus"};

template <typename T, size_t N>
const T& Pick(ByteSource* src, const T (&arr)[N]) {
  return arr[src->Below(N)];
}

// Set for the duration of one GenerateOneOpGraph call (the generator is single-threaded).
thread_local bool t_extreme_ints = false;

int64_t RandomInt(ByteSource* src) {
  return t_extreme_ints && src->Below(16) == 0 ? Pick(src, kHostileInts) : Pick(src, kInts);
}

double RandomReal(ByteSource* src) {
  switch (src->Below(24)) {
    case 0: return std::numeric_limits<double>::quiet_NaN();
    case 1: return std::numeric_limits<double>::infinity();
    case 2: return -std::numeric_limits<double>::infinity();
    case 3: return 1e30;
    case 4: return -0.0;
    case 5: return 1e-40;
    default: return (static_cast<double>(src->U8()) - 128.0) / 16.0;
  }
}

// Element values: small integers (valid indices, sizes, axes) most of the time.
template <typename T>
T RandomValue(ByteSource* src) {
  if constexpr (std::is_same_v<T, bool>) {
    return src->Bool();
  } else if constexpr (std::is_integral_v<T>) {
    if (t_extreme_ints && src->Below(20) == 0) {
      return src->Bool() ? std::numeric_limits<T>::min() : std::numeric_limits<T>::max();
    }
    return static_cast<T>(static_cast<int>(src->Below(12)) - (std::is_signed_v<T> ? 3 : 0));
  } else if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(RandomReal(src));
  } else {  // Half, BFloat16
    return T(static_cast<float>(RandomReal(src)));
  }
}

bool RandomTensor(ByteSource* src, DataType dt, Tensor* out) {
  const int rank = static_cast<int>(src->Below(5));
  std::vector<int64_t> dims;
  int64_t n = 1;
  for (int i = 0; i < rank; ++i) {
    int64_t d = src->Below(6);
    if (n * std::max<int64_t>(d, 1) > kMaxInputElements) d = 1;
    dims.push_back(d);
    n *= d;
  }
  auto shape_or = TensorShape::Make(dims);
  if (!shape_or.ok()) return false;
  const TensorShape shape = *shape_or;
  Status s = VisitPodType(dt, "fuzz input", [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    Tensor t(dt, shape);
    T* p = t.data<T>();
    for (int64_t i = 0; i < n; ++i) p[i] = RandomValue<T>(src);
    *out = std::move(t);
    return OkStatus();
  });
  return s.ok();
}

DataType RandomType(ByteSource* src, const OpDef::AttrDef& a) {
  if (a.has_allowed_values() && a.allowed_values().list().type_size() > 0) {
    const auto& allowed = a.allowed_values().list().type();
    return static_cast<DataType>(allowed[src->Below(allowed.size())]);
  }
  return Pick(src, kTypes);
}

int64_t ListLength(ByteSource* src, const OpDef::AttrDef& a) {
  const int64_t min = a.has_minimum() ? std::max<int64_t>(a.minimum(), 0) : 0;
  return min + src->Below(5);
}

// Fills one attr; false when the generator can't make a value (e.g. func attrs).
bool RandomAttr(ByteSource* src, const OpDef::AttrDef& a, AttrValue* v) {
  const std::string& t = a.type();
  if (t == "type") {
    v->set_type(RandomType(src, a));
  } else if (t == "int") {
    int64_t i = RandomInt(src);
    if (a.has_minimum() && i < a.minimum()) i = a.minimum() + src->Below(4);
    v->set_i(i);
  } else if (t == "float") {
    v->set_f(src->Below(10) == 0 ? static_cast<float>(RandomReal(src)) : Pick(src, kFloats));
  } else if (t == "bool") {
    v->set_b(src->Bool());
  } else if (t == "string") {
    if (a.has_allowed_values() && a.allowed_values().list().s_size() > 0 && src->Below(8) != 0) {
      const auto& allowed = a.allowed_values().list().s();
      v->set_s(allowed[src->Below(allowed.size())]);
    } else {
      v->set_s(Pick(src, kStrings));
    }
  } else if (t == "shape") {
    TensorShapeProto* s = v->mutable_shape();
    const int rank = static_cast<int>(src->Below(5)) - 1;
    if (rank < 0) {
      s->set_unknown_rank(true);
    } else {
      for (int i = 0; i < rank; ++i) s->add_dim()->set_size(static_cast<int>(src->Below(6)) - 1);
    }
  } else if (t == "tensor") {
    Tensor value;
    if (!RandomTensor(src, Pick(src, kTypes), &value)) return false;
    value.AsProtoTensorContent(v->mutable_tensor());
  } else if (t == "list(int)") {
    const int64_t n = ListLength(src, a);
    auto* list = v->mutable_list();
    for (int64_t i = 0; i < n; ++i) list->add_i(src->Below(6) == 0 ? RandomInt(src) : src->Below(4));
  } else if (t == "list(type)") {
    const int64_t n = ListLength(src, a);
    for (int64_t i = 0; i < n; ++i) v->mutable_list()->add_type(RandomType(src, a));
  } else if (t == "list(float)") {
    const int64_t n = ListLength(src, a);
    for (int64_t i = 0; i < n; ++i) v->mutable_list()->add_f(Pick(src, kFloats));
  } else if (t == "list(string)") {
    const int64_t n = ListLength(src, a);
    for (int64_t i = 0; i < n; ++i) v->mutable_list()->add_s(Pick(src, kStrings));
  } else if (t == "list(shape)") {
    const int64_t n = ListLength(src, a);
    for (int64_t i = 0; i < n; ++i) {
      TensorShapeProto* s = v->mutable_list()->add_shape();
      const int rank = static_cast<int>(src->Below(4));
      for (int d = 0; d < rank; ++d) s->add_dim()->set_size(src->Below(5));
    }
  } else {
    return false;  // func, list(func), list(tensor): not generated
  }
  return true;
}

bool HasFuncAttr(const OpDef& def) {
  for (const auto& a : def.attr()) {
    if (a.type().find("func") != std::string::npos) return true;
  }
  return false;
}

NodeDef* AddConst(GraphDef* g, const std::string& name, const Tensor& value) {
  NodeDef* n = g->add_node();
  n->set_name(name);
  n->set_op("Const");
  (*n->mutable_attr())["dtype"].set_type(value.dtype());
  value.AsProtoTensorContent((*n->mutable_attr())["value"].mutable_tensor());
  return n;
}

}  // namespace

uint32_t ByteSource::U32() {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v = (v << 8) | U8();
  return v;
}

std::vector<std::string> FuzzableOps() {
  std::vector<std::string> names;
  for (const OpRegistrationData* r : OpRegistry::Global()->ListOps()) {
    const OpDef& def = r->op_def;
    const std::string& name = def.name();
    // "Tx*" ops are test-only fixtures registered by the unit tests (some fail on purpose).
    if (name.empty() || name[0] == '_' || name.rfind("Tx", 0) == 0 || name == "Placeholder" ||
        name == "Const" || HasFuncAttr(def)) {
      continue;
    }
    names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

FuzzGraph GenerateOneOpGraph(ByteSource* src, const std::vector<std::string>& ops,
                             const GeneratorOptions& options) {
  t_extreme_ints = options.extreme_ints;
  FuzzGraph out;
  if (ops.empty()) return out;
  auto op = OpRegistry::Global()->LookUpOpDef(ops[src->Below(ops.size())]);
  if (!op.ok()) return out;
  const OpDef& def = **op;

  NodeDef node;
  node.set_name("op");
  node.set_op(def.name());
  for (const auto& a : def.attr()) {
    // Attrs with defaults keep them half of the time.
    if (a.has_default_value() && src->Bool()) continue;
    AttrValue v;
    if (!RandomAttr(src, a, &v)) {
      if (!a.has_default_value()) return out;
      continue;
    }
    (*node.mutable_attr())[a.name()] = v;
  }
  AddDefaultsToNodeDef(def, &node);

  DataTypeVector in_types, out_types;
  if (!InOutTypesForNode(node, def, &in_types, &out_types).ok()) return out;
  if (in_types.size() > 8) return out;
  for (size_t i = 0; i < in_types.size(); ++i) {
    Tensor value;
    if (!RandomTensor(src, BaseType(in_types[i]), &value)) return out;
    const std::string name = absl::StrCat("in", i);
    AddConst(&out.graph, name, value);
    node.add_input(name);
  }
  *out.graph.add_node() = node;
  out.node = node.name();
  out.num_outputs = static_cast<int>(out_types.size());
  return out;
}

Status RunOneOpGraph(const FuzzGraph& g) {
  if (g.node.empty()) return OkStatus();
  SessionOptions opts;
  opts.config.set_inter_op_parallelism_threads(1);
  opts.config.set_intra_op_parallelism_threads(1);
  TX_ASSIGN_OR_RETURN(std::unique_ptr<Session> session, NewSession(opts));
  TX_RETURN_IF_ERROR(session->Create(g.graph));
  std::vector<std::string> fetches;
  for (int i = 0; i < g.num_outputs; ++i) fetches.push_back(absl::StrCat(g.node, ":", i));
  std::vector<Tensor> outputs;
  std::vector<std::string> targets;
  if (fetches.empty()) targets.push_back(g.node);
  return session->Run({}, fetches, targets, &outputs);
}

}  // namespace fuzz
}  // namespace tensorflux
