#include "tensorflux/data/dataset.h"

#include "absl/strings/str_cat.h"
#include "tensorflux/core/max_parallelism.h"

namespace tensorflux {

IteratorContext IteratorContext::FromKernel(OpKernelContext* ctx) {
  IteratorContext ic;
  StatusOr<std::shared_ptr<FunctionLibraryRuntime>> flr = GetFunctionLibrary(ctx);
  if (flr.ok()) ic.function_library = std::move(*flr);
  ic.allocator = ctx->allocator();
  return ic;
}

Status IteratorBase::GetNext(IteratorContext* ctx, std::vector<Tensor>* out,
                             bool* end_of_sequence) {
  std::lock_guard<std::mutex> l(mu_);
  ScopedMaxParallelism cap(ctx->options.max_intra_op_parallelism);
  out->clear();
  *end_of_sequence = false;
  return GetNextInternal(ctx, out, end_of_sequence);
}

StatusOr<std::unique_ptr<IteratorBase>> DatasetBase::MakeIterator(IteratorContext* ctx) const {
  std::unique_ptr<IteratorBase> it = MakeIteratorInternal();
  TX_RETURN_IF_ERROR(it->Initialize(ctx));
  return it;
}

StatusOr<DatasetPtr> GetDatasetFromVariantTensor(const Tensor& t) {
  if (t.dtype() != DT_VARIANT || t.dims() != 0) {
    return errors::InvalidArgument("Dataset tensor must be a scalar of dtype variant, got ",
                                   DataTypeString(t.dtype()), " ", t.shape().DebugString());
  }
  const auto* dv = t.scalar<Variant>().get<DatasetVariant>();
  if (dv == nullptr) {
    return errors::InvalidArgument("Tensor holds ", t.scalar<Variant>().TypeName(),
                                   ", not a dataset");
  }
  return dv->dataset();
}

Tensor DatasetToVariantTensor(DatasetPtr dataset) {
  return Tensor::Scalar(Variant(std::make_shared<DatasetVariant>(std::move(dataset))));
}

Status CheckElementComponent(const std::string& what, int component, const Tensor& value,
                             DataType dtype, const PartialTensorShape& shape) {
  if (value.dtype() != dtype) {
    return errors::InvalidArgument(what, " component ", component, " has dtype ",
                                   DataTypeString(value.dtype()), " but the dataset expects ",
                                   DataTypeString(dtype));
  }
  if (!shape.IsCompatibleWith(PartialTensorShape(value.shape()))) {
    return errors::InvalidArgument(what, " component ", component, " has shape ",
                                   value.shape().DebugString(), " but the dataset expects ",
                                   shape.DebugString());
  }
  return OkStatus();
}

// ---------------------------------------------------------------- kernels

DatasetOpKernel::DatasetOpKernel(OpKernelConstruction* ctx) : OpKernel(ctx) {
  // Building a dataset only wires objects together; it is always cheap.
  set_expensive(false);
  for (const char* types_attr : {"output_types", "Toutput_types"}) {
    if (ctx->HasAttr(types_attr)) {
      std::vector<DataType> types;
      Status s = ctx->GetAttr(types_attr, &types);
      if (!s.ok()) {
        ctx->SetStatus(s);
        return;
      }
      output_types_.assign(types.begin(), types.end());
    }
  }
  if (ctx->HasAttr("output_shapes")) {
    Status s = ctx->GetAttr("output_shapes", &output_shapes_);
    if (!s.ok()) {
      ctx->SetStatus(s);
      return;
    }
    if (!output_types_.empty() && output_shapes_.size() != output_types_.size()) {
      ctx->SetStatus(errors::InvalidArgument("output_types has ", output_types_.size(),
                                             " entries but output_shapes has ",
                                             output_shapes_.size()));
    }
  }
}

void DatasetOpKernel::Compute(OpKernelContext* ctx) {
  StatusOr<DatasetPtr> d = MakeDataset(ctx);
  OP_REQUIRES_OK(ctx, d.status());
  const DatasetBase& ds = **d;
  if (!output_types_.empty()) {
    OP_REQUIRES(ctx, ds.output_dtypes() == output_types_,
                errors::InvalidArgument("The dataset produces elements of types [",
                                        DataTypeVectorString(ds.output_dtypes()),
                                        "] but output_types is [",
                                        DataTypeVectorString(output_types_), "]"));
  }
  if (!output_shapes_.empty()) {
    const auto& shapes = ds.output_shapes();
    OP_REQUIRES(ctx, shapes.size() == output_shapes_.size(),
                errors::InvalidArgument("The dataset produces ", shapes.size(),
                                        " components but output_shapes has ",
                                        output_shapes_.size()));
    for (size_t i = 0; i < shapes.size(); ++i) {
      OP_REQUIRES(ctx, shapes[i].IsCompatibleWith(output_shapes_[i]),
                  errors::InvalidArgument("The dataset's component ", i, " has shape ",
                                          shapes[i].DebugString(), " but output_shapes[", i,
                                          "] is ", output_shapes_[i].DebugString()));
    }
  }
  ctx->set_output(0, DatasetToVariantTensor(std::move(*d)));
}

StatusOr<DatasetPtr> UnaryDatasetOpKernel::MakeDataset(OpKernelContext* ctx) {
  StatusOr<DatasetPtr> input = GetDatasetFromVariantTensor(ctx->input(0));
  if (!input.ok()) {
    return errors::InvalidArgument("input_dataset: ", input.status().message());
  }
  return MakeDataset(ctx, std::move(*input));
}

StatusOr<int64_t> ParseScalarInt64(OpKernelContext* ctx, int i, const char* name) {
  const Tensor& t = ctx->input(i);
  if (t.dtype() != DT_INT64 || t.dims() != 0) {
    return errors::InvalidArgument(name, " must be an int64 scalar, got ",
                                   DataTypeString(t.dtype()), " ", t.shape().DebugString());
  }
  return t.scalar<int64_t>();
}

StatusOr<bool> ParseScalarBool(OpKernelContext* ctx, int i, const char* name) {
  const Tensor& t = ctx->input(i);
  if (t.dtype() != DT_BOOL || t.dims() != 0) {
    return errors::InvalidArgument(name, " must be a bool scalar, got ",
                                   DataTypeString(t.dtype()), " ", t.shape().DebugString());
  }
  return t.scalar<bool>();
}

}  // namespace tensorflux
