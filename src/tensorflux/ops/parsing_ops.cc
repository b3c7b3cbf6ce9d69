// ParseExample's registration (TF's signature, so that graphs holding it, such as TF Serving's
// SavedModels that feed the parsed tensor directly, import and run). Its CPU kernel, parsing
// tf.train.Example protos, belongs to the input pipeline (issue 5) and is not registered yet:
// running the node is NOT_FOUND ("No registered 'ParseExample' OpKernel").
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

}  // namespace

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
         "(TF's signature; no CPU kernel yet, see the file comment).");

}  // namespace tensorflux
