// ParseExample, ParseSingleExample and DecodeCSV (TF's signatures, so that graphs holding them, such as TF
// Serving's SavedModels that feed serialized Examples, import and run). CPU kernels:
// kernels/cpu/example_parsing_ops.cc over io/example_parser.h.
#include <string>
#include <vector>

#include "tensorflux/framework/op.h"
#include "tensorflux/framework/shape_inference.h"

namespace tensorflux {
namespace {

// serialized [B]; per sparse key: indices [?, 2], values [?], dense_shape [2]; per dense key i:
// [B] + dense_shapes[i].
Status ParseExampleShape(InferenceContext* c) {
  int64_t num_sparse = 0, num_dense = 0;
  TX_RETURN_IF_ERROR(c->GetAttr("Nsparse", &num_sparse));
  TX_RETURN_IF_ERROR(c->GetAttr("Ndense", &num_dense));
  std::vector<PartialTensorShape> dense_shapes;
  TX_RETURN_IF_ERROR(c->GetAttr("dense_shapes", &dense_shapes));
  if (static_cast<int64_t>(dense_shapes.size()) != num_dense)
    return c->Error("ParseExample '", c->node_def().name(), "': ", dense_shapes.size(),
                    " dense_shapes for Ndense = ", num_dense);
  TX_RETURN_IF_ERROR(c->WithRank(0, 1));
  const int64_t batch = c->input(0).dims() == 1 ? c->input(0).dim_size(0) : -1;
  int out = 0;
  for (int64_t i = 0; i < num_sparse; ++i) c->set_output(out++, PartialTensorShape({-1, 2}));
  for (int64_t i = 0; i < num_sparse; ++i) c->set_output(out++, PartialTensorShape({-1}));
  for (int64_t i = 0; i < num_sparse; ++i) c->set_output(out++, PartialTensorShape({2}));
  for (const PartialTensorShape& s : dense_shapes) {
    if (s.unknown_rank()) {
      c->set_output(out++, PartialTensorShape::UnknownRank());
      continue;
    }
    std::vector<int64_t> dims = {batch};
    dims.insert(dims.end(), s.dim_sizes().begin(), s.dim_sizes().end());
    c->set_output(out++, PartialTensorShape(absl::MakeConstSpan(dims)));
  }
  return OkStatus();
}

// Every output has the records' shape; each default is a scalar, a [1] vector or empty.
Status DecodeCSVShape(InferenceContext* c) {
  for (int i = 1; i < c->num_inputs(); ++i) {
    const PartialTensorShape& d = c->input(i);
    if (!d.unknown_rank() && (d.dims() > 1 || (d.dims() == 1 && d.dim_size(0) > 1)))
      return c->Error("DecodeCSV '", c->node_def().name(), "': record_defaults[", i - 1,
                      "] must have at most one element, got shape ", d.DebugString());
  }
  for (int i = 0; i < c->num_outputs(); ++i) c->set_output(i, c->input(0));
  return OkStatus();
}

// serialized []; per sparse key: indices [?, 1], values [?], dense_shape [1]; dense i: dense_shapes[i].
Status ParseSingleExampleShape(InferenceContext* c) {
  int64_t num_sparse = 0;
  std::vector<std::string> sparse_keys, dense_keys;
  std::vector<PartialTensorShape> dense_shapes;
  TX_RETURN_IF_ERROR(c->GetAttr("num_sparse", &num_sparse));
  TX_RETURN_IF_ERROR(c->GetAttr("sparse_keys", &sparse_keys));
  TX_RETURN_IF_ERROR(c->GetAttr("dense_keys", &dense_keys));
  TX_RETURN_IF_ERROR(c->GetAttr("dense_shapes", &dense_shapes));
  if (static_cast<int64_t>(sparse_keys.size()) != num_sparse)
    return c->Error("ParseSingleExample '", c->node_def().name(), "': ", sparse_keys.size(),
                    " sparse_keys for num_sparse = ", num_sparse);
  if (dense_keys.size() != dense_shapes.size())
    return c->Error("ParseSingleExample '", c->node_def().name(), "': ", dense_keys.size(),
                    " dense_keys for ", dense_shapes.size(), " dense_shapes");
  TX_RETURN_IF_ERROR(c->WithRank(0, 0));
  int out = 0;
  for (int64_t i = 0; i < num_sparse; ++i) c->set_output(out++, PartialTensorShape({-1, 1}));
  for (int64_t i = 0; i < num_sparse; ++i) c->set_output(out++, PartialTensorShape({-1}));
  for (int64_t i = 0; i < num_sparse; ++i) c->set_output(out++, PartialTensorShape({1}));
  for (const PartialTensorShape& s : dense_shapes) c->set_output(out++, s);
  return OkStatus();
}

}  // namespace

REGISTER_OP("DecodeCSV")
    .Input("records: string")
    .Input("record_defaults: OUT_TYPE")
    .Output("output: OUT_TYPE")
    .Attr("OUT_TYPE: list({float,double,int32,int64,string})")
    .Attr("field_delim: string = ','")
    .Attr("use_quote_delim: bool = true")
    .Attr("na_value: string = ''")
    .Attr("select_cols: list(int) = []")
    .SetShapeFn(DecodeCSVShape)
    .Doc("Converts CSV records to one tensor per column (TF's DecodeCSV): record_defaults give "
         "each column's type and the value of an empty field (an empty default: required).");

REGISTER_OP("ParseExample")
    .Input("serialized: string")
    .Input("names: string")
    .Input("sparse_keys: Nsparse * string")
    .Input("dense_keys: Ndense * string")
    .Input("dense_defaults: Tdense")
    .Output("sparse_indices: Nsparse * int64")
    .Output("sparse_values: sparse_types")
    .Output("sparse_shapes: Nsparse * int64")
    .Output("dense_values: Tdense")
    .Attr("Nsparse: int >= 0")
    .Attr("Ndense: int >= 0")
    .Attr("sparse_types: list({float,int64,string}) >= 0")
    .Attr("Tdense: list({float,int64,string}) >= 0")
    .Attr("dense_shapes: list(shape) >= 0")
    .SetShapeFn(ParseExampleShape)
    .Doc("Parses a batch of serialized tf.train.Example protos into sparse and dense tensors "
         "(TF's signature).");

REGISTER_OP("ParseSingleExample")
    .Input("serialized: string")
    .Input("dense_defaults: Tdense")
    .Output("sparse_indices: num_sparse * int64")
    .Output("sparse_values: sparse_types")
    .Output("sparse_shapes: num_sparse * int64")
    .Output("dense_values: Tdense")
    .Attr("num_sparse: int >= 0")
    .Attr("sparse_keys: list(string) >= 0")
    .Attr("dense_keys: list(string) >= 0")
    .Attr("sparse_types: list({float,int64,string}) >= 0")
    .Attr("Tdense: list({float,int64,string}) >= 0")
    .Attr("dense_shapes: list(shape) >= 0")
    .SetShapeFn(ParseSingleExampleShape)
    .Doc("Parses one serialized tf.train.Example proto into sparse and dense tensors (TF's "
         "signature; keys are attrs, outputs have no batch dimension).");

}  // namespace tensorflux
