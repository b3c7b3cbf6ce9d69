// Shape inference: one function per op computes output shapes from input shapes, attrs and,
// when an input is a constant, its value.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "tensorflux/core/status.h"
#include "tensorflux/core/tensor.h"
#include "tensorflux/core/tensor_shape.h"
#include "tensorflux/framework/node_def_util.h"
#include "tensorflux/node_def.pb.h"
#include "tensorflux/op_def.pb.h"

namespace tensorflux {

class InferenceContext {
 public:
  // `input_tensors[i]` is the value of input i when known (a Const), else nullptr.
  InferenceContext(const NodeDef& node_def, const OpDef& op_def,
                   std::vector<PartialTensorShape> input_shapes,
                   std::vector<const Tensor*> input_tensors, int num_outputs);

  const NodeDef& node_def() const { return node_def_; }
  const OpDef& op_def() const { return op_def_; }
  int num_inputs() const { return static_cast<int>(inputs_.size()); }
  int num_outputs() const { return static_cast<int>(outputs_.size()); }
  const PartialTensorShape& input(int i) const { return inputs_[i]; }
  // The constant value of input i, or nullptr when not known at graph-construction time.
  const Tensor* input_tensor(int i) const { return i < (int)input_tensors_.size() ? input_tensors_[i] : nullptr; }

  void set_output(int i, PartialTensorShape s) { outputs_[i] = std::move(s); }
  const PartialTensorShape& output(int i) const { return outputs_[i]; }
  const std::vector<PartialTensorShape>& outputs() const { return outputs_; }

  template <typename T>
  Status GetAttr(std::string_view name, T* value) const {
    return GetNodeAttr(node_def_, name, value);
  }

  // INVALID_ARGUMENT naming the node, e.g. "Shapes must be equal rank, but are 2 and 3".
  template <typename... Args>
  Status Error(const Args&... args) const {
    return errors::InvalidArgument(args...);
  }
  // Checks input i's rank when it is known: INVALID_ARGUMENT otherwise.
  Status WithRank(int i, int rank) const;
  Status WithRankAtLeast(int i, int rank) const;

 private:
  const NodeDef& node_def_;
  const OpDef& op_def_;
  std::vector<PartialTensorShape> inputs_;
  std::vector<const Tensor*> input_tensors_;
  std::vector<PartialTensorShape> outputs_;
};

using ShapeInferenceFn = std::function<Status(InferenceContext* c)>;

namespace shape_inference {
// Every output is unknown-rank.
Status UnknownShape(InferenceContext* c);
// Every output is a scalar.
Status ScalarShape(InferenceContext* c);
// Output 0 has input 0's shape.
Status UnchangedShape(InferenceContext* c);
// Output 0 is the NumPy broadcast of inputs 0 and 1; INVALID_ARGUMENT when incompatible.
Status BroadcastBinaryOpShape(InferenceContext* c);
// Output 0 is the merge of every input's shape (TF's MergeBothInputsShapeFn, for any number of
// inputs: AddN, the *Grad ops); INVALID_ARGUMENT naming the node when two are incompatible.
Status MergeAllInputsShape(InferenceContext* c);
// NumPy broadcasting of two partial shapes (unknown dims stay unknown unless the other is > 1).
StatusOr<PartialTensorShape> BroadcastShapes(const PartialTensorShape& a, const PartialTensorShape& b);
// Interprets a 1-D int32/int64 constant tensor as a shape (with -1 = unknown dim).
StatusOr<PartialTensorShape> ShapeFromTensor(const Tensor& t);
}  // namespace shape_inference

}  // namespace tensorflux
