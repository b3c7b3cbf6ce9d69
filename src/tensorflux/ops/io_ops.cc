// Checkpoint I/O ops: SaveV2, RestoreV2, MergeV2Checkpoints (TensorFlow's tensor-bundle format,
// src/tensorflux/train/tensor_bundle.h) and the file-name helpers TF's Saver graphs use
// (ShardedFilename, ShardedFilespec). Names, inputs, attrs and defaults follow TensorFlow's
// io_ops registrations.
#include "tensorflux/framework/op.h"
#include "tensorflux/framework/shape_inference.h"

namespace tensorflux {
namespace {

// Input i, when its rank is known, must be `rank`; when its first dim is known too, it must be n.
Status VectorOfLength(InferenceContext* c, int i, int64_t n, std::string_view what) {
  TX_RETURN_IF_ERROR(c->WithRank(i, 1));
  const PartialTensorShape& s = c->input(i);
  if (s.dims() == 1 && s.dim_size(0) >= 0 && s.dim_size(0) != n)
    return c->Error(c->node_def().op(), " '", c->node_def().name(), "': ", what, " has ",
                    s.dim_size(0), " entries, expected ", n);
  return OkStatus();
}

Status SaveRestoreNamesShape(InferenceContext* c, int64_t n) {
  TX_RETURN_IF_ERROR(c->WithRank(0, 0));  // prefix
  TX_RETURN_IF_ERROR(VectorOfLength(c, 1, n, "tensor_names"));
  return VectorOfLength(c, 2, n, "shape_and_slices");
}

Status SaveV2Shape(InferenceContext* c) {
  return SaveRestoreNamesShape(c, c->num_inputs() - 3);
}

Status RestoreV2Shape(InferenceContext* c) {
  TX_RETURN_IF_ERROR(SaveRestoreNamesShape(c, c->num_outputs()));
  for (int i = 0; i < c->num_outputs(); ++i) c->set_output(i, PartialTensorShape::UnknownRank());
  return OkStatus();
}

Status MergeV2CheckpointsShape(InferenceContext* c) {
  TX_RETURN_IF_ERROR(c->WithRank(0, 1));
  return c->WithRank(1, 0);
}

Status ScalarInputsScalarOutput(InferenceContext* c) {
  for (int i = 0; i < c->num_inputs(); ++i) TX_RETURN_IF_ERROR(c->WithRank(i, 0));
  c->set_output(0, PartialTensorShape::Scalar());
  return OkStatus();
}

}  // namespace

REGISTER_OP("SaveV2")
    .Input("prefix: string")
    .Input("tensor_names: string")
    .Input("shape_and_slices: string")
    .Input("tensors: dtypes")
    .Attr("dtypes: list(type)")
    .SetIsStateful()
    .SetShapeFn(SaveV2Shape)
    .Doc("Writes `tensors` under `tensor_names` to the tensor bundle `prefix` (a scalar): "
         "prefix.index and prefix.data-00000-of-00001. shape_and_slices[i] must be \"\" (whole "
         "tensors; slices are UNIMPLEMENTED).");

REGISTER_OP("RestoreV2")
    .Input("prefix: string")
    .Input("tensor_names: string")
    .Input("shape_and_slices: string")
    .Output("tensors: dtypes")
    .Attr("dtypes: list(type) >= 1")
    .SetIsStateful()
    .SetShapeFn(RestoreV2Shape)
    .Doc("Reads tensors[i] = tensor `tensor_names[i]` of the bundle `prefix`, which must have "
         "dtype dtypes[i] (INVALID_ARGUMENT otherwise); NOT_FOUND for a missing bundle or name, "
         "DATA_LOSS for a corrupt one. shape_and_slices[i] \"\" reads the whole tensor; TF's "
         "slice spec (\"4 6 0,2:-\": the saved shape, then start,length or - per dim) reads "
         "that box of it (INVALID_ARGUMENT when the shape is not the saved one).");

REGISTER_OP("MergeV2Checkpoints")
    .Input("checkpoint_prefixes: string")
    .Input("destination_prefix: string")
    .Attr("delete_old_dirs: bool = true")
    .Attr("allow_missing_files: bool = false")
    .SetIsStateful()
    .SetShapeFn(MergeV2CheckpointsShape)
    .Doc("Merges the bundles `checkpoint_prefixes` (1-D) into one bundle at "
         "`destination_prefix` (scalar): data files are renamed, one index is written, the "
         "sources' index files are removed and, with delete_old_dirs, their directories when "
         "empty. allow_missing_files skips sources that do not exist.");

REGISTER_OP("ShardedFilename")
    .Input("basename: string")
    .Input("shard: int32")
    .Input("num_shards: int32")
    .Output("filename: string")
    .SetShapeFn(ScalarInputsScalarOutput)
    .Doc("\"<basename>-<shard, 5 digits>-of-<num_shards, 5 digits>\".");

REGISTER_OP("ShardedFilespec")
    .Input("basename: string")
    .Input("num_shards: int32")
    .Output("filename: string")
    .SetShapeFn(ScalarInputsScalarOutput)
    .Doc("\"<basename>-\?\?\?\?\?-of-<num_shards, 5 digits>\" (a glob of every shard).");

}  // namespace tensorflux
