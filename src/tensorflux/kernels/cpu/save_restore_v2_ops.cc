// CPU kernels of the checkpoint ops (ops/io_ops.cc): SaveV2, RestoreV2, MergeV2Checkpoints on
// TensorFlow's tensor-bundle format (train/tensor_bundle.h, a format library that depends on
// core/ only), and ShardedFilename / ShardedFilespec.
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "tensorflux/framework/op_kernel.h"
#include "tensorflux/train/tensor_bundle.h"

namespace tensorflux {
namespace {

// Validates (prefix, tensor_names, shape_and_slices) of SaveV2/RestoreV2 for `n` tensors: a
// scalar prefix, two vectors of n names, every slice spec "" (whole tensors) unless
// `allow_slices` (RestoreV2 reads a slice of a whole saved tensor).
Status CheckSaveRestoreArgs(OpKernelContext* ctx, int64_t n, bool allow_slices = false) {
  const Tensor& prefix = ctx->input(0);
  const Tensor& names = ctx->input(1);
  const Tensor& slices = ctx->input(2);
  if (prefix.NumElements() != 1)
    return errors::InvalidArgument("Input prefix should have a single element, got shape ",
                                   prefix.shape().DebugString());
  if (names.dims() != 1 || names.NumElements() != n)
    return errors::InvalidArgument("Input tensor_names should be a 1-D tensor of ", n,
                                   " names, got shape ", names.shape().DebugString());
  if (slices.dims() != 1 || slices.NumElements() != n)
    return errors::InvalidArgument("Input shape_and_slices should be a 1-D tensor of ", n,
                                   " specs, got shape ", slices.shape().DebugString());
  for (int64_t i = 0; i < n && !allow_slices; ++i) {
    const std::string& spec = slices.flat<std::string>()[i];
    if (!spec.empty())
      return errors::Unimplemented("shape_and_slices[", i, "] = '", spec, "' for tensor '",
                                   names.flat<std::string>()[i],
                                   "': only whole tensors (an empty spec) are supported");
  }
  return OkStatus();
}

class SaveV2Op : public OpKernel {
 public:
  explicit SaveV2Op(OpKernelConstruction* ctx) : OpKernel(ctx) {}

  void Compute(OpKernelContext* ctx) override {
    const int64_t n = ctx->num_inputs() - 3;
    OP_REQUIRES_OK(ctx, CheckSaveRestoreArgs(ctx, n));
    const std::string& prefix = ctx->input(0).flat<std::string>()[0];
    const auto names = ctx->input(1).flat<std::string>();
    BundleWriter writer(prefix);
    OP_REQUIRES_OK(ctx, writer.status());
    for (int64_t i = 0; i < n; ++i) OP_REQUIRES_OK(ctx, writer.Add(names[i], ctx->input(3 + i)));
    OP_REQUIRES_OK(ctx, writer.Finish());
  }
};
REGISTER_KERNEL_BUILDER(Name("SaveV2").Device(DEVICE_CPU), SaveV2Op);

// A RestoreV2 spec "d0 d1 ... dk-1 s0:s1:...:sk-1" (TF's TensorSlice): the saved tensor's full
// shape, then per dim "start,length" or "-" (all of it).
struct SliceSpec {
  std::vector<int64_t> full, start, length;
};

StatusOr<SliceSpec> ParseSliceSpec(const std::string& spec) {
  auto bad = [&spec](std::string_view why) {
    return errors::InvalidArgument("Invalid shape_and_slice spec '", spec, "': ", why);
  };
  std::vector<std::string> words = absl::StrSplit(spec, ' ', absl::SkipEmpty());
  if (words.empty()) return bad("empty");
  SliceSpec out;
  for (size_t i = 0; i + 1 < words.size(); ++i) {
    int64_t d = 0;
    if (!absl::SimpleAtoi(words[i], &d) || d < 0) return bad("a dim is not a size");
    out.full.push_back(d);
  }
  std::vector<std::string> parts = absl::StrSplit(words.back(), ':');
  if (parts.size() != out.full.size()) return bad("the slice's rank is not the shape's");
  for (size_t i = 0; i < parts.size(); ++i) {
    int64_t start = 0, length = out.full[i];
    if (parts[i] != "-") {
      std::vector<std::string> se = absl::StrSplit(parts[i], ',');
      if (se.size() != 2 || !absl::SimpleAtoi(se[0], &start) ||
          !absl::SimpleAtoi(se[1], &length) || start < 0 || length < 0)
        return bad("a dim's slice is not 'start,length' or '-'");
    }
    if (start > out.full[i] || length > out.full[i] - start)
      return bad("a slice extends beyond the shape");
    out.start.push_back(start);
    out.length.push_back(length);
  }
  return out;
}

// The box `spec` selects of `t` (whose shape must be spec.full).
StatusOr<Tensor> Slice(const Tensor& t, const SliceSpec& spec, const std::string& name) {
  const TensorShape& shape = t.shape();
  bool same = shape.dims() == static_cast<int>(spec.full.size());
  for (int d = 0; same && d < shape.dims(); ++d) same = shape.dim_size(d) == spec.full[d];
  if (!same)
    return errors::InvalidArgument("tensor_name = ", name, "; shape in shape_and_slice spec [",
                                   absl::StrJoin(spec.full, ","),
                                   "] does not match the shape stored in checkpoint: ",
                                   shape.DebugString());
  TX_ASSIGN_OR_RETURN(Tensor out,
                      Tensor::Allocate(t.dtype(), TensorShape(absl::MakeConstSpan(spec.length))));
  const int rank = shape.dims();
  std::vector<int64_t> stride(rank, 1);
  for (int d = rank - 2; d >= 0; --d) stride[d] = stride[d + 1] * shape.dim_size(d + 1);
  std::vector<int64_t> idx(rank, 0);
  const size_t esize = t.dtype() == DT_STRING ? 0 : DataTypeSize(t.dtype());
  for (int64_t k = 0; k < out.NumElements(); ++k) {
    int64_t src = 0;
    for (int d = 0; d < rank; ++d) src += (spec.start[d] + idx[d]) * stride[d];
    if (t.dtype() == DT_STRING) {
      out.data<std::string>()[k] = t.data<std::string>()[src];
    } else {
      std::memcpy(static_cast<char*>(out.raw_data()) + k * esize,
                  static_cast<const char*>(t.raw_data()) + src * esize, esize);
    }
    for (int d = rank - 1; d >= 0; --d) {  // the next output index, row-major
      if (++idx[d] < spec.length[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

class RestoreV2Op : public OpKernel {
 public:
  explicit RestoreV2Op(OpKernelConstruction* ctx) : OpKernel(ctx) {}

  void Compute(OpKernelContext* ctx) override {
    const int n = num_outputs();
    OP_REQUIRES_OK(ctx, CheckSaveRestoreArgs(ctx, n, /*allow_slices=*/true));
    const std::string& prefix = ctx->input(0).flat<std::string>()[0];
    const auto names = ctx->input(1).flat<std::string>();
    const auto specs = ctx->input(2).flat<std::string>();
    auto reader = BundleReader::Open(prefix);
    OP_REQUIRES_OK(ctx, reader.status());
    for (int i = 0; i < n; ++i) {  // one tensor in memory at a time besides the outputs
      auto t = (*reader)->Lookup(names[i]);
      OP_REQUIRES_OK(ctx, t.status());
      OP_REQUIRES(ctx, t->dtype() == output_type(i),
                  errors::InvalidArgument("tensor_name = ", names[i], "; expected dtype ",
                                          DataTypeString(output_type(i)),
                                          " does not equal restored dtype ",
                                          DataTypeString(t->dtype())));
      if (!specs[i].empty()) {
        auto spec = ParseSliceSpec(specs[i]);
        OP_REQUIRES_OK(ctx, spec.status());
        t = Slice(*t, *spec, names[i]);
        OP_REQUIRES_OK(ctx, t.status());
      }
      ctx->set_output(i, *std::move(t));
    }
  }
};
REGISTER_KERNEL_BUILDER(Name("RestoreV2").Device(DEVICE_CPU), RestoreV2Op);

class MergeV2CheckpointsOp : public OpKernel {
 public:
  explicit MergeV2CheckpointsOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("delete_old_dirs", &delete_old_dirs_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("allow_missing_files", &allow_missing_files_));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& sources = ctx->input(0);
    const Tensor& dest = ctx->input(1);
    OP_REQUIRES(ctx, sources.dims() == 1,
                errors::InvalidArgument("Input checkpoint_prefixes should be a 1-D tensor, got ",
                                        sources.shape().DebugString()));
    OP_REQUIRES(ctx, dest.dims() == 0,
                errors::InvalidArgument("Input destination_prefix should be a scalar, got ",
                                        dest.shape().DebugString()));
    std::vector<std::string> srcs(sources.flat<std::string>().begin(),
                                  sources.flat<std::string>().end());
    OP_REQUIRES_OK(ctx, MergeBundles(srcs, dest.scalar<std::string>(), allow_missing_files_));
    if (!delete_old_dirs_) return;
    // Like TF: remove each source's directory when it is now empty (best effort, as TF).
    for (const std::string& src : srcs) {
      const std::filesystem::path dir = std::filesystem::path(src).parent_path();
      std::error_code ec;
      if (!dir.empty() && std::filesystem::is_empty(dir, ec) && !ec)
        std::filesystem::remove(dir, ec);
    }
  }

 private:
  bool delete_old_dirs_ = true;
  bool allow_missing_files_ = false;
};
REGISTER_KERNEL_BUILDER(Name("MergeV2Checkpoints").Device(DEVICE_CPU), MergeV2CheckpointsOp);

// ShardedFilename (3 inputs) and ShardedFilespec (2 inputs): TF's "%s-%05d-of-%05d" names.
class ShardedFilenameOp : public OpKernel {
 public:
  explicit ShardedFilenameOp(OpKernelConstruction* ctx) : OpKernel(ctx) { set_expensive(false); }

  void Compute(OpKernelContext* ctx) override {
    for (int i = 0; i < ctx->num_inputs(); ++i)
      OP_REQUIRES(ctx, ctx->input(i).dims() == 0,
                  errors::InvalidArgument(type_string(), " input ", i, " must be a scalar, got ",
                                          ctx->input(i).shape().DebugString()));
    const std::string& base = ctx->input(0).scalar<std::string>();
    const int32_t num_shards = ctx->input(ctx->num_inputs() - 1).scalar<int32_t>();
    std::string name;
    if (ctx->num_inputs() == 3) {
      name = absl::StrFormat("%s-%05d-of-%05d", base, ctx->input(1).scalar<int32_t>(), num_shards);
    } else {
      name = absl::StrFormat("%s-\?\?\?\?\?-of-%05d", base, num_shards);
    }
    ctx->set_output(0, Tensor::Scalar<std::string>(std::move(name)));
  }
};
REGISTER_KERNEL_BUILDER(Name("ShardedFilename").Device(DEVICE_CPU), ShardedFilenameOp);
REGISTER_KERNEL_BUILDER(Name("ShardedFilespec").Device(DEVICE_CPU), ShardedFilenameOp);

}  // namespace
}  // namespace tensorflux
