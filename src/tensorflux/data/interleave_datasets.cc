// Interleave datasets (TF's InterleaveDataset). f (data/captured_function.h) maps each input
// element to a dataset (a DT_VARIANT scalar); cycle_length (> 0, -1 = one per core) of them are
// open at once and read round-robin, block_length (> 0) elements each turn; an exhausted one is
// replaced (in its slot) by the next input element's dataset.
#include "absl/strings/str_cat.h"
#include "tensorflux/core/threadpool.h"
#include "tensorflux/data/captured_function.h"
#include "tensorflux/data/dataset.h"

namespace tensorflux {
namespace {

class InterleaveDataset : public DatasetBase {
 public:
  InterleaveDataset(DatasetPtr input, CapturedFunction fn, int64_t cycle_length,
                    int64_t block_length, DataTypeVector types,
                    std::vector<PartialTensorShape> shapes)
      : input_(std::move(input)),
        fn_(std::move(fn)),
        cycle_length_(cycle_length),
        block_length_(block_length),
        types_(std::move(types)),
        shapes_(std::move(shapes)) {}

  const DataTypeVector& output_dtypes() const override { return types_; }
  const std::vector<PartialTensorShape>& output_shapes() const override { return shapes_; }
  const DatasetPtr& input() const { return input_; }
  std::string DebugString() const override {
    return absl::StrCat("InterleaveDatasetOp::Dataset(", fn_.name(), ", ", cycle_length_, ", ",
                        block_length_, ")");
  }

 protected:
  std::unique_ptr<IteratorBase> MakeIteratorInternal() const override {
    return std::make_unique<Iterator>(this);
  }

 private:
  class Iterator : public UnaryDatasetIterator<InterleaveDataset> {
   public:
    using UnaryDatasetIterator::UnaryDatasetIterator;
    Status Initialize(IteratorContext* ctx) override {
      TX_RETURN_IF_ERROR(dataset()->fn_.Instantiate(ctx, {DT_VARIANT}, &fn_));
      cycle_.resize(static_cast<size_t>(dataset()->cycle_length_));
      return UnaryDatasetIterator::Initialize(ctx);
    }
    Status GetNextInternal(IteratorContext* ctx, std::vector<Tensor>* out, bool* end) override {
      const InterleaveDataset& d = *dataset();
      while (true) {
        if (input_ == nullptr && open_ == 0) {
          *end = true;
          return OkStatus();
        }
        std::unique_ptr<IteratorBase>& slot = cycle_[pos_];
        if (slot == nullptr && input_ != nullptr) TX_RETURN_IF_ERROR(Open(ctx, &slot));
        if (slot != nullptr) {
          bool slot_end = false;
          TX_RETURN_IF_ERROR(slot->GetNext(ctx, out, &slot_end));
          if (!slot_end) {
            if (++in_block_ >= d.block_length_) Advance();
            return d.CheckComponents(*out);
          }
          slot.reset();
          --open_;
        }
        Advance();
      }
    }

   private:
    void Advance() {
      pos_ = (pos_ + 1) % cycle_.size();
      in_block_ = 0;
    }
    // The iterator of f(next input element) into *slot, or nothing when the input has ended.
    Status Open(IteratorContext* ctx, std::unique_ptr<IteratorBase>* slot) {
      std::vector<Tensor> in;
      bool in_end = false;
      TX_RETURN_IF_ERROR(input_->GetNext(ctx, &in, &in_end));
      if (in_end) {
        input_.reset();
        return OkStatus();
      }
      std::vector<Tensor> rets;
      TX_RETURN_IF_ERROR(dataset()->fn_.Run(fn_, std::move(in), &rets));
      TX_ASSIGN_OR_RETURN(DatasetPtr inner, GetDatasetFromVariantTensor(rets.at(0)));
      TX_ASSIGN_OR_RETURN(*slot, inner->MakeIterator(ctx));
      ++open_;
      return OkStatus();
    }

    FunctionInstance fn_;
    std::vector<std::unique_ptr<IteratorBase>> cycle_;
    size_t pos_ = 0;
    int64_t in_block_ = 0;
    int open_ = 0;  // non-null slots
  };

  Status CheckComponents(const std::vector<Tensor>& out) const {
    if (out.size() != types_.size()) {
      return errors::InvalidArgument("The dataset returned by ", fn_.name(), " has ", out.size(),
                                     " components, expected ", types_.size());
    }
    for (size_t i = 0; i < out.size(); ++i) {
      TX_RETURN_IF_ERROR(CheckElementComponent("Interleaved element", static_cast<int>(i),
                                               out[i], types_[i], shapes_[i]));
    }
    return OkStatus();
  }

  const DatasetPtr input_;
  const CapturedFunction fn_;
  const int64_t cycle_length_, block_length_;
  const DataTypeVector types_;
  const std::vector<PartialTensorShape> shapes_;
};

// Inputs: input_dataset, other_arguments, cycle_length, block_length.
class InterleaveDatasetOp : public UnaryDatasetOpKernel {
 public:
  explicit InterleaveDatasetOp(OpKernelConstruction* ctx) : UnaryDatasetOpKernel(ctx) {
    OP_REQUIRES_OK(ctx, fn_.Read(ctx, "f"));
  }

 protected:
  StatusOr<DatasetPtr> MakeDataset(OpKernelContext* ctx, DatasetPtr input) override {
    TX_ASSIGN_OR_RETURN(int64_t cycle, ParseScalarInt64(ctx, 1 + fn_.num_captured,
                                                        "cycle_length"));
    TX_ASSIGN_OR_RETURN(int64_t block, ParseScalarInt64(ctx, 2 + fn_.num_captured,
                                                        "block_length"));
    if (cycle == -1) cycle = ThreadPool::DefaultNumThreads();  // AUTOTUNE
    if (cycle <= 0 || cycle > 4096) {
      return errors::InvalidArgument("cycle_length must be in [1, 4096] or -1, got ", cycle);
    }
    if (block <= 0) return errors::InvalidArgument("block_length must be > 0, got ", block);
    return DatasetPtr(std::make_shared<InterleaveDataset>(std::move(input), fn_.Capture(ctx),
                                                          cycle, block, output_types_,
                                                          output_shapes_));
  }

 private:
  FunctionAttrs fn_;
};

REGISTER_KERNEL_BUILDER(Name("InterleaveDataset").Device(DEVICE_CPU), InterleaveDatasetOp);

}  // namespace
}  // namespace tensorflux
