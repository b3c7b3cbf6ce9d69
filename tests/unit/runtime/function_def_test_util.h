// Building FunctionDefs by hand in tests, in TF's body format (node inputs "arg_name" or
// "node:out_arg:index", `ret` mapping output args to such names).
#pragma once

#include <string>
#include <vector>

#include "tensorflux/function.pb.h"

namespace tensorflux {
namespace test {

inline OpDef::ArgDef* AddFunctionArg(google::protobuf::RepeatedPtrField<OpDef::ArgDef>* args,
                                     const std::string& name, DataType t) {
  OpDef::ArgDef* a = args->Add();
  a->set_name(name);
  a->set_type(t);
  return a;
}

// A body node without attrs.
inline NodeDef* AddFunctionNode(FunctionDef* f, const std::string& name, const std::string& op,
                                const std::vector<std::string>& inputs) {
  NodeDef* n = f->add_node_def();
  n->set_name(name);
  n->set_op(op);
  for (const std::string& i : inputs) n->add_input(i);
  return n;
}

}  // namespace test
}  // namespace tensorflux
