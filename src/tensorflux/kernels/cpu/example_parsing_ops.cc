// CPU kernels of ParseExample and ParseSingleExample (ops/parsing_ops.cc, TF's signatures): both
// gather their keys, types, shapes and defaults into an io::ExampleParserConfig and call
// io::ParseExamples (io/example_parser.h documents the semantics and errors).
#include <string>
#include <vector>

#include "tensorflux/framework/op_kernel.h"
#include "tensorflux/io/example_parser.h"

namespace tensorflux {
namespace {

// Builds the config from the attrs shared by both ops; keys are filled in by the caller (inputs
// of ParseExample, attrs of ParseSingleExample).
Status ConfigFromAttrs(OpKernelConstruction* ctx, int64_t num_sparse,
                       io::ExampleParserConfig* config) {
  std::vector<DataType> sparse_types, dense_types;
  std::vector<PartialTensorShape> dense_shapes;
  TX_RETURN_IF_ERROR(ctx->GetAttr("sparse_types", &sparse_types));
  TX_RETURN_IF_ERROR(ctx->GetAttr("Tdense", &dense_types));
  TX_RETURN_IF_ERROR(ctx->GetAttr("dense_shapes", &dense_shapes));
  if (static_cast<int64_t>(sparse_types.size()) != num_sparse)
    return errors::InvalidArgument(sparse_types.size(), " sparse_types for ", num_sparse,
                                   " sparse features");
  if (dense_shapes.size() != dense_types.size())
    return errors::InvalidArgument(dense_shapes.size(), " dense_shapes for ", dense_types.size(),
                                   " dense features (Tdense)");
  for (DataType dt : sparse_types) config->sparse.push_back({"", dt});
  for (size_t j = 0; j < dense_types.size(); ++j) {
    StatusOr<TensorShape> shape = dense_shapes[j].AsTensorShape();
    if (!shape.ok())
      return errors::InvalidArgument("dense_shapes[", j, "] = ", dense_shapes[j].DebugString(),
                                     " is not fully defined (variable-length dense features "
                                     "are not supported)");
    config->dense.push_back({"", dense_types[j], *shape, Tensor()});
  }
  return OkStatus();
}

void EmitOutputs(OpKernelContext* ctx, io::ParsedExamples&& parsed) {
  int out = 0;
  for (auto* list : {&parsed.sparse_indices, &parsed.sparse_values, &parsed.sparse_shapes,
                     &parsed.dense_values})
    for (Tensor& t : *list) ctx->set_output(out++, std::move(t));
}

Status SetDefaults(OpKernelContext* ctx, int first_input, io::ExampleParserConfig* config) {
  for (size_t j = 0; j < config->dense.size(); ++j)
    config->dense[j].default_value = ctx->input(first_input + static_cast<int>(j));
  return OkStatus();
}

Status GetStrings(const Tensor& t, const char* what, std::vector<std::string>* out) {
  if (t.dims() > 1)
    return errors::InvalidArgument(what, " must be a scalar or vector, got shape ",
                                   t.shape().DebugString());
  auto flat = t.flat<std::string>();
  out->assign(flat.begin(), flat.end());
  return OkStatus();
}

class ParseExampleOp : public OpKernel {
 public:
  explicit ParseExampleOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("Nsparse", &num_sparse_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("Ndense", &num_dense_));
    OP_REQUIRES_OK(ctx, ConfigFromAttrs(ctx, num_sparse_, &config_));
    OP_REQUIRES(ctx, static_cast<int64_t>(config_.dense.size()) == num_dense_,
                errors::InvalidArgument("Tdense has ", config_.dense.size(), " types for Ndense = ",
                                        num_dense_));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& serialized = ctx->input(0);
    OP_REQUIRES(ctx, serialized.dims() == 1,
                errors::InvalidArgument("ParseExample: serialized must be a vector, got shape ",
                                        serialized.shape().DebugString()));
    std::vector<std::string> records, names;
    OP_REQUIRES_OK(ctx, GetStrings(serialized, "serialized", &records));
    OP_REQUIRES_OK(ctx, GetStrings(ctx->input(1), "names", &names));
    io::ExampleParserConfig config = config_;
    int in = 2;
    auto key = [&](const char* what, std::string* out) {
      const Tensor& k = ctx->input(in++);
      if (k.dims() != 0)
        return errors::InvalidArgument(what, " must be scalars, got shape ",
                                       k.shape().DebugString());
      *out = k.scalar<std::string>();
      return OkStatus();
    };
    for (auto& s : config.sparse) OP_REQUIRES_OK(ctx, key("sparse_keys", &s.key));
    for (auto& d : config.dense) OP_REQUIRES_OK(ctx, key("dense_keys", &d.key));
    OP_REQUIRES_OK(ctx, SetDefaults(ctx, in, &config));
    io::ParsedExamples parsed;
    OP_REQUIRES_OK(ctx, io::ParseExamples(config, records, names, /*single=*/false, &parsed));
    EmitOutputs(ctx, std::move(parsed));
  }

 private:
  int64_t num_sparse_ = 0, num_dense_ = 0;
  io::ExampleParserConfig config_;
};
REGISTER_KERNEL_BUILDER(Name("ParseExample").Device(DEVICE_CPU), ParseExampleOp);

class ParseSingleExampleOp : public OpKernel {
 public:
  explicit ParseSingleExampleOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    int64_t num_sparse = 0;
    std::vector<std::string> sparse_keys, dense_keys;
    OP_REQUIRES_OK(ctx, ctx->GetAttr("num_sparse", &num_sparse));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("sparse_keys", &sparse_keys));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("dense_keys", &dense_keys));
    OP_REQUIRES_OK(ctx, ConfigFromAttrs(ctx, num_sparse, &config_));
    OP_REQUIRES(ctx, static_cast<int64_t>(sparse_keys.size()) == num_sparse,
                errors::InvalidArgument(sparse_keys.size(), " sparse_keys for num_sparse = ",
                                        num_sparse));
    OP_REQUIRES(ctx, dense_keys.size() == config_.dense.size(),
                errors::InvalidArgument(dense_keys.size(), " dense_keys for ",
                                        config_.dense.size(), " Tdense"));
    for (size_t i = 0; i < sparse_keys.size(); ++i) config_.sparse[i].key = sparse_keys[i];
    for (size_t j = 0; j < dense_keys.size(); ++j) config_.dense[j].key = dense_keys[j];
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& serialized = ctx->input(0);
    OP_REQUIRES(ctx, serialized.dims() == 0,
                errors::InvalidArgument("ParseSingleExample: serialized must be a scalar, got "
                                        "shape ", serialized.shape().DebugString()));
    io::ExampleParserConfig config = config_;
    OP_REQUIRES_OK(ctx, SetDefaults(ctx, 1, &config));
    io::ParsedExamples parsed;
    const std::string record = serialized.scalar<std::string>();
    OP_REQUIRES_OK(ctx, io::ParseExamples(config, absl::MakeConstSpan(&record, 1), {},
                                          /*single=*/true, &parsed));
    EmitOutputs(ctx, std::move(parsed));
  }

 private:
  io::ExampleParserConfig config_;
};
REGISTER_KERNEL_BUILDER(Name("ParseSingleExample").Device(DEVICE_CPU), ParseSingleExampleOp);

}  // namespace
}  // namespace tensorflux
