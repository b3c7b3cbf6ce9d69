// Parsing serialized tf.train.Example protos (proto/tensorflux/example.proto) into dense and
// sparse tensors, the work of TF's ParseExample and ParseSingleExample ops (kernels in
// kernels/cpu/example_parsing_ops.cc) and of tx.io.parse_example / parse_single_example.
//
// Dense feature j (FixedLenFeature): output [B] + shape_j of dtype_j. An Example must hold exactly
// shape_j.num_elements() values of dtype_j under the key; a missing key takes `default_value`
// (same element count), or is an error when the default is empty (a required feature).
// Sparse feature (VarLenFeature): indices [N, 2] int64 (example, position), values [N],
// dense_shape [2] = {B, longest list}; a missing key adds no values.
// dtypes: DT_FLOAT (FloatList), DT_INT64 (Int64List), DT_STRING (BytesList).
//
// Errors (INVALID_ARGUMENT), naming the record (its index and `names[i]` when given) and feature:
// an unparsable proto, a required dense feature missing, a list of another type than the spec's,
// a dense value count other than the shape's.
#pragma once

#include <string>
#include <vector>

#include "absl/types/span.h"
#include "tensorflux/core/status.h"
#include "tensorflux/core/tensor.h"

namespace tensorflux {
namespace io {

struct ExampleParserConfig {
  struct Sparse {
    std::string key;
    DataType dtype;
  };
  struct Dense {
    std::string key;
    DataType dtype;
    TensorShape shape;
    Tensor default_value;  // no elements (or uninitialized): the feature is required
  };
  std::vector<Sparse> sparse;
  std::vector<Dense> dense;
};

struct ParsedExamples {
  std::vector<Tensor> sparse_indices, sparse_values, sparse_shapes, dense_values;
};

// Parses `serialized` (B records). `names` is empty or holds B record names for error messages.
// With `single` (ParseSingleExample), B must be 1 and outputs lose the batch dimension: dense
// values are shape_j, sparse indices [N, 1], sparse shapes [1].
Status ParseExamples(const ExampleParserConfig& config, absl::Span<const std::string> serialized,
                     absl::Span<const std::string> names, bool single, ParsedExamples* out);

}  // namespace io
}  // namespace tensorflux
