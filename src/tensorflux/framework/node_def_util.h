// Reading attrs from NodeDefs, validating a NodeDef against its OpDef, filling attr defaults, and
// computing a node's flattened input and output types.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "tensorflux/attr_value.pb.h"
#include "tensorflux/core/status.h"
#include "tensorflux/core/tensor.h"
#include "tensorflux/core/tensor_shape.h"
#include "tensorflux/core/types.h"
#include "tensorflux/node_def.pb.h"
#include "tensorflux/op_def.pb.h"

namespace tensorflux {

// Typed attr getters. NOT_FOUND when the attr is absent, INVALID_ARGUMENT when it holds another
// type (both name the node and attr).
Status GetNodeAttr(const NodeDef& n, std::string_view name, std::string* v);
Status GetNodeAttr(const NodeDef& n, std::string_view name, int64_t* v);
Status GetNodeAttr(const NodeDef& n, std::string_view name, int32_t* v);  // range-checked
Status GetNodeAttr(const NodeDef& n, std::string_view name, float* v);
Status GetNodeAttr(const NodeDef& n, std::string_view name, bool* v);
Status GetNodeAttr(const NodeDef& n, std::string_view name, DataType* v);
Status GetNodeAttr(const NodeDef& n, std::string_view name, TensorShape* v);
Status GetNodeAttr(const NodeDef& n, std::string_view name, PartialTensorShape* v);
Status GetNodeAttr(const NodeDef& n, std::string_view name, Tensor* v);
Status GetNodeAttr(const NodeDef& n, std::string_view name, NameAttrList* v);
Status GetNodeAttr(const NodeDef& n, std::string_view name, std::vector<std::string>* v);
Status GetNodeAttr(const NodeDef& n, std::string_view name, std::vector<int64_t>* v);
Status GetNodeAttr(const NodeDef& n, std::string_view name, std::vector<int32_t>* v);
Status GetNodeAttr(const NodeDef& n, std::string_view name, std::vector<float>* v);
Status GetNodeAttr(const NodeDef& n, std::string_view name, std::vector<bool>* v);
Status GetNodeAttr(const NodeDef& n, std::string_view name, std::vector<DataType>* v);
Status GetNodeAttr(const NodeDef& n, std::string_view name, DataTypeVector* v);
Status GetNodeAttr(const NodeDef& n, std::string_view name, std::vector<PartialTensorShape>* v);
Status GetNodeAttr(const NodeDef& n, std::string_view name, std::vector<TensorShape>* v);
// nullptr when absent.
const AttrValue* FindAttr(const NodeDef& n, std::string_view name);

// Adds every attr the OpDef gives a default for and the NodeDef lacks.
void AddDefaultsToNodeDef(const OpDef& op_def, NodeDef* node_def);

// Checks op name, every attr present with the OpDef's attr type, allowed values and minimums,
// no attrs the OpDef doesn't declare (names starting with '_' are allowed), and the number of
// data inputs matching the OpDef (counting N*T and list(type) args). Control inputs must come
// after data inputs. INVALID_ARGUMENT naming the node on failure.
Status ValidateNodeDef(const NodeDef& node_def, const OpDef& op_def);

// Flattened input and output types of a node (expanding number_attr and type_list_attr args;
// ref args give ref types).
Status InOutTypesForNode(const NodeDef& node_def, const OpDef& op_def, DataTypeVector* inputs,
                         DataTypeVector* outputs);

// For each input (resp. output) arg name, the [start, end) range of flattened indices it covers.
using NameRangeMap = absl::flat_hash_map<std::string, std::pair<int, int>>;
Status NameRangesForNode(const NodeDef& node_def, const OpDef& op_def, NameRangeMap* inputs,
                         NameRangeMap* outputs);

// "{{node NAME}} = Op[attr=value, ...](input, ...)" for error messages.
std::string SummarizeNodeDef(const NodeDef& n);
std::string SummarizeAttrValue(const AttrValue& v);

// Setting attrs when building NodeDefs (C++ client, tests, graph rewrites).
void SetAttrValue(const std::string& v, AttrValue* out);
void SetAttrValue(const char* v, AttrValue* out);
void SetAttrValue(int64_t v, AttrValue* out);
void SetAttrValue(int32_t v, AttrValue* out);
void SetAttrValue(float v, AttrValue* out);
void SetAttrValue(bool v, AttrValue* out);
void SetAttrValue(DataType v, AttrValue* out);
void SetAttrValue(const TensorShape& v, AttrValue* out);
void SetAttrValue(const PartialTensorShape& v, AttrValue* out);
void SetAttrValue(const Tensor& v, AttrValue* out);  // as TensorProto tensor_content
void SetAttrValue(absl::Span<const int64_t> v, AttrValue* out);
void SetAttrValue(absl::Span<const int32_t> v, AttrValue* out);
void SetAttrValue(absl::Span<const float> v, AttrValue* out);
void SetAttrValue(absl::Span<const DataType> v, AttrValue* out);
void SetAttrValue(absl::Span<const std::string> v, AttrValue* out);
void SetAttrValue(absl::Span<const PartialTensorShape> v, AttrValue* out);
template <typename T>
void AddNodeAttr(std::string_view name, T&& value, NodeDef* n) {
  AttrValue v;
  SetAttrValue(std::forward<T>(value), &v);
  (*n->mutable_attr())[std::string(name)] = std::move(v);
}

}  // namespace tensorflux
