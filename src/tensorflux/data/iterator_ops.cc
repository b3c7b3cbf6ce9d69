// Iterator resources and the ops that use them (TF 1.x's IteratorV2 / MakeIterator /
// IteratorGetNext). The iterator lives in the device's ResourceMgr under (container,
// shared_name), so it keeps its position across Session::Run calls; MakeIterator (the
// initializer) replaces its state with a fresh pass over a dataset.
//
// Errors: GetNext before MakeIterator is FAILED_PRECONDITION; the end of the data is
// OUT_OF_RANGE "End of sequence"; a dataset or element that does not match the iterator's
// output_types/output_shapes is INVALID_ARGUMENT.
#include "tensorflux/data/iterator_ops.h"

#include "absl/strings/str_cat.h"
#include "tensorflux/framework/resource_mgr.h"

namespace tensorflux {

IteratorResource::IteratorResource(DataTypeVector output_types,
                                   std::vector<PartialTensorShape> output_shapes)
    : output_types_(std::move(output_types)), output_shapes_(std::move(output_shapes)) {}

std::string IteratorResource::DebugString() const {
  return absl::StrCat("Iterator resource (", DataTypeVectorString(output_types_), ")");
}

Status IteratorResource::CheckSpec(const DataTypeVector& types,
                                   const std::vector<PartialTensorShape>& shapes) const {
  if (types != output_types_) {
    return errors::InvalidArgument("The iterator produces [", DataTypeVectorString(output_types_),
                                   "] but the dataset has types [",
                                   DataTypeVectorString(types), "]");
  }
  for (size_t i = 0; i < shapes.size() && i < output_shapes_.size(); ++i) {
    if (!shapes[i].IsCompatibleWith(output_shapes_[i])) {
      return errors::InvalidArgument("The iterator's component ", i, " has shape ",
                                     output_shapes_[i].DebugString(),
                                     " but the dataset's has shape ", shapes[i].DebugString());
    }
  }
  return OkStatus();
}

Status IteratorResource::Initialize(IteratorContext* ctx, const DatasetBase& dataset) {
  TX_RETURN_IF_ERROR(CheckSpec(dataset.output_dtypes(), dataset.output_shapes()));
  TX_ASSIGN_OR_RETURN(std::unique_ptr<IteratorBase> it, dataset.MakeIterator(ctx));
  std::shared_ptr<IteratorBase> old;
  {
    std::lock_guard<std::mutex> l(mu_);
    old = std::move(iterator_);
    iterator_ = std::move(it);
  }
  return OkStatus();  // `old` (a prefetch thread, say) stops here, outside the lock
}

Status IteratorResource::GetNext(IteratorContext* ctx, std::vector<Tensor>* out,
                                 bool* end_of_sequence) {
  std::shared_ptr<IteratorBase> it;
  {
    std::lock_guard<std::mutex> l(mu_);
    it = iterator_;
  }
  if (it == nullptr) {
    return errors::FailedPrecondition(
        "GetNext() failed because the iterator has not been initialized. Ensure that you have "
        "run the initializer operation for this iterator before getting the next element.");
  }
  TX_RETURN_IF_ERROR(it->GetNext(ctx, out, end_of_sequence));
  if (*end_of_sequence) return OkStatus();
  if (out->size() != output_types_.size()) {
    return errors::Internal("The iterator produced ", out->size(), " components, expected ",
                            output_types_.size());
  }
  for (size_t i = 0; i < out->size(); ++i) {
    TX_RETURN_IF_ERROR(CheckElementComponent("The iterator's next element", static_cast<int>(i),
                                             (*out)[i], output_types_[i], output_shapes_[i]));
  }
  return OkStatus();
}

namespace {

// IteratorV2: creates the resource on first run and outputs its handle.
class IteratorHandleOp : public OpKernel {
 public:
  explicit IteratorHandleOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    set_expensive(false);
    OP_REQUIRES_OK(ctx, ctx->GetAttr("shared_name", &name_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("container", &container_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("output_types", &types_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("output_shapes", &shapes_));
    OP_REQUIRES(ctx, types_.size() == shapes_.size(),
                errors::InvalidArgument("output_types has ", types_.size(),
                                        " entries but output_shapes has ", shapes_.size()));
    if (name_.empty()) name_ = ctx->def().name();
  }

  void Compute(OpKernelContext* ctx) override {
    const ResourceHandle h = MakeResourceHandle<IteratorResource>(ctx, container_, name_);
    StatusOr<ResourceMgr*> rm = GetResourceMgr(ctx);
    OP_REQUIRES_OK(ctx, rm.status());
    auto it = (*rm)->LookupOrCreate<IteratorResource>(
        h.container, h.name, [&]() -> StatusOr<std::shared_ptr<IteratorResource>> {
          return std::make_shared<IteratorResource>(types_, shapes_);
        });
    OP_REQUIRES_OK(ctx, it.status());
    OP_REQUIRES_OK(ctx, (*it)->CheckSpec(types_, shapes_));
    ctx->set_output(0, Tensor::Scalar(h));
  }

 private:
  std::string name_, container_;
  DataTypeVector types_;
  std::vector<PartialTensorShape> shapes_;
};

StatusOr<std::shared_ptr<IteratorResource>> IteratorFromInput(OpKernelContext* ctx, int i) {
  TX_ASSIGN_OR_RETURN(const ResourceHandle* h, HandleFromInput(ctx, i));
  return LookupResource<IteratorResource>(ctx, *h);
}

class MakeIteratorOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    StatusOr<DatasetPtr> dataset = GetDatasetFromVariantTensor(ctx->input(0));
    OP_REQUIRES_OK(ctx, dataset.status());
    auto it = IteratorFromInput(ctx, 1);
    OP_REQUIRES_OK(ctx, it.status());
    IteratorContext ic = IteratorContext::FromKernel(ctx);
    OP_REQUIRES_OK(ctx, (*it)->Initialize(&ic, **dataset));
  }
};

class IteratorGetNextOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    auto it = IteratorFromInput(ctx, 0);
    OP_REQUIRES_OK(ctx, it.status());
    OP_REQUIRES(ctx, (*it)->output_types().size() == static_cast<size_t>(ctx->num_outputs()),
                errors::InvalidArgument("The iterator has ", (*it)->output_types().size(),
                                        " components but this op has ", ctx->num_outputs(),
                                        " outputs"));
    IteratorContext ic = IteratorContext::FromKernel(ctx);
    std::vector<Tensor> element;
    bool end = false;
    OP_REQUIRES_OK(ctx, (*it)->GetNext(&ic, &element, &end));
    OP_REQUIRES(ctx, !end, errors::OutOfRange("End of sequence"));
    for (int i = 0; i < ctx->num_outputs(); ++i) {
      OP_REQUIRES(ctx, element[i].dtype() == ctx->expected_output_dtype(i),
                  errors::InvalidArgument("Component ", i, " has dtype ",
                                          DataTypeString(element[i].dtype()),
                                          " but the op's output_types has ",
                                          DataTypeString(ctx->expected_output_dtype(i))));
      ctx->set_output(i, std::move(element[i]));
    }
  }
};

REGISTER_KERNEL_BUILDER(Name("IteratorV2").Device(DEVICE_CPU), IteratorHandleOp);
REGISTER_KERNEL_BUILDER(Name("MakeIterator").Device(DEVICE_CPU), MakeIteratorOp);
REGISTER_KERNEL_BUILDER(Name("IteratorGetNext").Device(DEVICE_CPU), IteratorGetNextOp);

}  // namespace
}  // namespace tensorflux
