// ZipDataset (TF's tf.data.Dataset.zip; tensorflow/core/ops/dataset_ops.cc): element i is the
// concatenation of the components of element i of every input (input_datasets: N >= 1
// variants), in input order. The output spec is the inputs' specs concatenated, checked against
// the node's output_types / output_shapes attrs. It ends when the first input ends (the inputs
// after that one are not advanced further), as TF's does; inputs of different lengths are not
// an error.
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tensorflux/data/dataset.h"

namespace tensorflux {
namespace {

class ZipDataset : public DatasetBase {
 public:
  explicit ZipDataset(std::vector<DatasetPtr> inputs) : inputs_(std::move(inputs)) {
    for (const DatasetPtr& in : inputs_) {
      dtypes_.insert(dtypes_.end(), in->output_dtypes().begin(), in->output_dtypes().end());
      shapes_.insert(shapes_.end(), in->output_shapes().begin(), in->output_shapes().end());
    }
  }

  const DataTypeVector& output_dtypes() const override { return dtypes_; }
  const std::vector<PartialTensorShape>& output_shapes() const override { return shapes_; }
  std::string DebugString() const override {
    return absl::StrCat("ZipDatasetOp::Dataset(",
                        absl::StrJoin(inputs_, ", ",
                                      [](std::string* out, const DatasetPtr& d) {
                                        out->append(d->DebugString());
                                      }),
                        ")");
  }

 protected:
  std::unique_ptr<IteratorBase> MakeIteratorInternal() const override {
    return std::make_unique<Iterator>(this);
  }

 private:
  class Iterator : public DatasetIterator<ZipDataset> {
   public:
    using DatasetIterator::DatasetIterator;

    Status Initialize(IteratorContext* ctx) override {
      for (const DatasetPtr& in : dataset()->inputs_) {
        TX_ASSIGN_OR_RETURN(std::unique_ptr<IteratorBase> it, in->MakeIterator(ctx));
        inputs_.push_back(std::move(it));
      }
      return OkStatus();
    }

    Status GetNextInternal(IteratorContext* ctx, std::vector<Tensor>* out, bool* end) override {
      if (inputs_.empty()) {  // ended before (or zero inputs, which the op refuses)
        *end = true;
        return OkStatus();
      }
      std::vector<Tensor> part;
      for (const std::unique_ptr<IteratorBase>& it : inputs_) {
        TX_RETURN_IF_ERROR(it->GetNext(ctx, &part, end));
        if (*end) {
          out->clear();
          inputs_.clear();  // release the inputs' buffers; every later call ends too
          return OkStatus();
        }
        for (Tensor& t : part) out->push_back(std::move(t));
      }
      return OkStatus();
    }

   private:
    std::vector<std::unique_ptr<IteratorBase>> inputs_;
  };

  const std::vector<DatasetPtr> inputs_;
  DataTypeVector dtypes_;
  std::vector<PartialTensorShape> shapes_;
};

// Inputs: input_datasets (N variant scalars, each a dataset). Attrs: N >= 1, output_types,
// output_shapes (the concatenated specs; DatasetOpKernel checks them), metadata (ignored).
class ZipDatasetOp : public DatasetOpKernel {
 public:
  using DatasetOpKernel::DatasetOpKernel;

 protected:
  StatusOr<DatasetPtr> MakeDataset(OpKernelContext* ctx) override {
    if (ctx->num_inputs() < 1) {
      return errors::InvalidArgument("ZipDataset needs at least one input dataset");
    }
    std::vector<DatasetPtr> inputs;
    inputs.reserve(ctx->num_inputs());
    for (int i = 0; i < ctx->num_inputs(); ++i) {
      StatusOr<DatasetPtr> d = GetDatasetFromVariantTensor(ctx->input(i));
      if (!d.ok()) {
        return errors::InvalidArgument("input_datasets[", i, "]: ", d.status().message());
      }
      inputs.push_back(std::move(*d));
    }
    return DatasetPtr(std::make_shared<ZipDataset>(std::move(inputs)));
  }
};

REGISTER_KERNEL_BUILDER(Name("ZipDataset").Device(DEVICE_CPU), ZipDatasetOp);

}  // namespace
}  // namespace tensorflux
