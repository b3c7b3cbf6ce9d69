// Core types of the C++ client API (TF's cc/framework/ops.h): Operation (a node of a Scope's
// graph), Output (one output of a node), Input (what an op wrapper accepts: an Output, or a C++
// literal that becomes a Const node) and InputList (a list-valued input).
//
//   ops::Add(scope, x, 2.0f);                  // 2.0f becomes a scalar float Const
//   ops::MatMul(scope, {{1.f, 2.f}}, w);      // nested braces give a [1,2] float Const
//
// Literal dtypes: bool -> bool, int -> int32, int64_t -> int64, float -> float, double -> double,
// strings -> string. When a literal feeds an input whose dtype another input (or the op itself)
// already fixes, it is converted to that dtype if the conversion keeps every value exact; see
// op_builder.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>
#include <type_traits>
#include <vector>

#include "tensorflux/core/status.h"
#include "tensorflux/core/tensor.h"
#include "tensorflux/core/tensor_shape.h"
#include "tensorflux/core/types.h"

namespace tensorflux {

class Node;
class Output;

// A node in a Scope's graph. Default-constructed (node() == nullptr) when the op that should have
// made it failed; such an Operation makes later ops fail with INVALID_ARGUMENT.
class Operation {
 public:
  Operation() = default;
  explicit Operation(Node* n) : node_(n) {}

  Node* node() const { return node_; }
  // Node name, op type; "" for an empty Operation.
  std::string name() const;
  std::string op_type() const;
  int num_inputs() const;
  int num_outputs() const;
  DataType input_type(int i) const;
  DataType output_type(int i) const;
  // The tensor feeding data input i (an empty Output when unconnected or out of range).
  Output input(int i) const;
  Output output(int i) const;

  bool operator==(const Operation& o) const { return node_ == o.node_; }

 private:
  Node* node_ = nullptr;
};

// Output `index` of a node: a tensor in the graph, named "node:index".
class Output {
 public:
  Output() = default;
  explicit Output(Node* n, int index = 0) : op_(n), index_(index) {}
  Output(const Operation& op, int index) : op_(op), index_(index) {}

  Operation op() const { return op_; }
  Node* node() const { return op_.node(); }
  int index() const { return index_; }
  DataType type() const;
  // "node:index" ("" for an empty Output).
  std::string name() const;

  bool operator==(const Output& o) const { return op_ == o.op_ && index_ == o.index_; }

 private:
  Operation op_;
  int index_ = 0;
};

struct OutputHash {
  size_t operator()(const Output& o) const {
    return std::hash<const void*>()(o.node()) * 31 + std::hash<int>()(o.index());
  }
};

using OutputList = std::vector<Output>;

template <typename T>
inline constexpr bool kIsLiteralType =
    std::is_arithmetic_v<T> || std::is_convertible_v<T, std::string>;

// What an op wrapper's input argument accepts.
class Input {
 public:
  // A host tensor built from C++ values: scalars, braced (nested) lists, or a Tensor. A
  // malformed value (ragged nesting, mixed element types, a shape that does not match the value
  // count) sets `status` instead; using it in an op records that error in the Scope.
  struct Initializer {
    template <typename T, typename = std::enable_if_t<kIsLiteralType<T>>>
    Initializer(const T& v) {  // NOLINT(runtime/explicit)
      using E = ElementType<T>;
      tensor = Tensor(DataTypeToEnum<E>::value, TensorShape());
      *tensor.data<E>() = E(v);
    }
    // A tensor of `shape` with every element `v`.
    template <typename T, typename = std::enable_if_t<kIsLiteralType<T>>>
    Initializer(const T& v, const TensorShape& shape) {
      using E = ElementType<T>;
      tensor = Tensor(DataTypeToEnum<E>::value, shape);
      E* p = tensor.data<E>();
      for (int64_t i = 0; i < shape.num_elements(); ++i) p[i] = E(v);
    }
    template <typename T, typename = std::enable_if_t<kIsLiteralType<T>>>
    Initializer(const std::initializer_list<T>& v) {  // NOLINT(runtime/explicit)
      using E = ElementType<T>;
      std::vector<E> values(v.begin(), v.end());
      Fill<E>(values, TensorShape({static_cast<int64_t>(v.size())}));
    }
    // `v` laid out in row-major order as `shape` (INVALID_ARGUMENT status when the counts differ).
    template <typename T, typename = std::enable_if_t<kIsLiteralType<T>>>
    Initializer(const std::initializer_list<T>& v, const TensorShape& shape) {
      using E = ElementType<T>;
      std::vector<E> values(v.begin(), v.end());
      Fill<E>(values, shape);
    }
    Initializer(const Tensor& t) : tensor(t) {}  // NOLINT(runtime/explicit)
    // Stacks equally shaped, equally typed initializers along a new leading dimension.
    Initializer(const std::initializer_list<Initializer>& v);  // NOLINT(runtime/explicit)

    Status status;
    Tensor tensor;

   private:
    // The element type a C++ literal type is stored as.
    template <typename T>
    using ElementType = std::conditional_t<
        std::is_arithmetic_v<T>,
        std::conditional_t<std::is_same_v<T, long long>, int64_t,
                           std::conditional_t<std::is_same_v<T, unsigned long long>, uint64_t, T>>,
        std::string>;
    template <typename E>
    void Fill(const std::vector<E>& values, const TensorShape& shape) {
      if (static_cast<int64_t>(values.size()) != shape.num_elements()) {
        status = errors::InvalidArgument("initializer has ", values.size(),
                                         " values but shape ", shape.DebugString(), " needs ",
                                         shape.num_elements());
        return;
      }
      tensor = Tensor(DataTypeToEnum<E>::value, shape);
      E* p = tensor.data<E>();
      for (size_t i = 0; i < values.size(); ++i) p[i] = values[i];
    }
  };

  Input(const Output& o) : output_(o) {}  // NOLINT(runtime/explicit)
  template <typename T, typename = std::enable_if_t<kIsLiteralType<T>>>
  Input(const T& v) : Input(Initializer(v)) {}  // NOLINT(runtime/explicit)
  Input(const Initializer& init)  // NOLINT(runtime/explicit)
      : status_(init.status), tensor_(init.tensor), is_literal_(true) {}
  Input(const Tensor& t) : tensor_(t), is_literal_(true) {}  // NOLINT(runtime/explicit)
  Input(const std::initializer_list<Initializer>& init)  // NOLINT(runtime/explicit)
      : Input(Initializer(init)) {}

  // True when this input is a C++ value (a Const node is made for it when the op is built).
  bool is_literal() const { return is_literal_; }
  const Output& output() const { return output_; }
  const Tensor& tensor() const { return tensor_; }
  const Status& status() const { return status_; }

 private:
  Output output_;
  Status status_;
  Tensor tensor_;
  bool is_literal_ = false;
};

// A list-valued input (an op arg "N * T" or a list(type) attr).
class InputList {
 public:
  InputList(const OutputList& outputs)  // NOLINT(runtime/explicit)
      : inputs_(outputs.begin(), outputs.end()) {}
  InputList(const std::vector<Input>& inputs) : inputs_(inputs) {}  // NOLINT(runtime/explicit)
  InputList(std::initializer_list<Input> inputs)  // NOLINT(runtime/explicit)
      : inputs_(inputs.begin(), inputs.end()) {}

  const std::vector<Input>& inputs() const { return inputs_; }
  size_t size() const { return inputs_.size(); }
  std::vector<Input>::const_iterator begin() const { return inputs_.begin(); }
  std::vector<Input>::const_iterator end() const { return inputs_.end(); }

 private:
  std::vector<Input> inputs_;
};

}  // namespace tensorflux
