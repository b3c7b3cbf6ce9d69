// Small GraphDef helpers for the variable and optimizer tests (variable_ops_test.cc,
// training_ops_test.cc).
#pragma once

#include <initializer_list>
#include <string>
#include <vector>

#include "tensorflux/core/tensor.h"
#include "tensorflux/framework/node_def_util.h"
#include "tensorflux/graph.pb.h"
#include "tensorflux/runtime/session.h"
#include "../runtime/runtime_test_ops.h"

namespace tensorflux {
namespace var_test {

using rt_test::AddNode;
inline NodeDef* AddOp(GraphDef* g, const std::string& name, const std::string& op,
                      std::initializer_list<std::string> inputs = {}) {
  return AddNode(g, name, op, inputs);
}

inline NodeDef* AddConstNode(GraphDef* g, const std::string& name, const Tensor& value) {
  NodeDef* n = AddOp(g, name, "Const");
  AddNodeAttr("dtype", value.dtype(), n);
  AddNodeAttr("value", value, n);
  return n;
}

inline Tensor Vec(std::initializer_list<float> v) {
  return Tensor::FromVector<float>(std::vector<float>(v), TensorShape({(int64_t)v.size()}));
}

inline Status RunStep(Session* s, const std::vector<std::string>& fetches,
                  const std::vector<std::string>& targets, std::vector<Tensor>* out) {
  return s->Run({}, fetches, targets, out);
}

inline bool HasText(const Status& s, const std::string& text) {
  return std::string(s.message()).find(text) != std::string::npos;
}

}  // namespace var_test
}  // namespace tensorflux
