// InterleaveDataset and ParallelInterleaveDatasetV4 (TF's Dataset.interleave without and with
// num_parallel_calls; the parallel one is in data/parallel_interleave_dataset.cc, this file holds
// the kernel of both). f (data/captured_function.h) maps each input element to a dataset (a
// DT_VARIANT scalar); cycle_length of them are open at once and read round-robin, block_length
// elements each turn; an exhausted one is replaced (in its slot) by the next input element's
// dataset. An error (opening an input element, or reading an element) is returned in the
// element's place.
//
// Inputs: input_dataset, other_arguments, cycle_length, block_length, and for V4
// buffer_output_elements, prefetch_input_elements, num_parallel_calls; V4 attr deterministic
// ("true", "false", "default" = true). Each int64 scalar is INVALID_ARGUMENT (naming it) unless:
// cycle_length in [1, 4096] or -1 (AUTOTUNE: one per core); block_length > 0;
// buffer_output_elements > 0 or -1 (2 * block_length); prefetch_input_elements >= 0 or -1
// (cycle_length); num_parallel_calls in [1, cycle_length] or -1 (cycle_length), as TF requires.
#include "absl/strings/str_cat.h"
#include "tensorflux/core/threadpool.h"
#include "tensorflux/data/interleave.h"

namespace tensorflux {
namespace interleave {

StatusOr<std::unique_ptr<IteratorBase>> OpenElement(const CapturedFunction& fn,
                                                    const FunctionInstance& inst,
                                                    std::vector<Tensor> element,
                                                    IteratorContext* ctx) {
  std::vector<Tensor> rets;
  TX_RETURN_IF_ERROR(fn.Run(inst, std::move(element), &rets));
  if (rets.size() != 1) {
    return errors::InvalidArgument("Function ", fn.name(), " returned ", rets.size(),
                                   " values, expected one dataset");
  }
  TX_ASSIGN_OR_RETURN(DatasetPtr inner, GetDatasetFromVariantTensor(rets[0]));
  return inner->MakeIterator(ctx);
}

Status CheckElement(const std::string& fn_name, const std::vector<Tensor>& out,
                    const DataTypeVector& types, const std::vector<PartialTensorShape>& shapes) {
  if (out.size() != types.size()) {
    return errors::InvalidArgument("The dataset returned by ", fn_name, " has ", out.size(),
                                   " components, expected ", types.size());
  }
  for (size_t i = 0; i < out.size(); ++i) {
    TX_RETURN_IF_ERROR(CheckElementComponent("Interleaved element", static_cast<int>(i), out[i],
                                             types[i], shapes[i]));
  }
  return OkStatus();
}

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
      TX_ASSIGN_OR_RETURN(*slot, OpenElement(dataset()->fn_, fn_, std::move(in), ctx));
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
    return CheckElement(fn_.name(), out, types_, shapes_);
  }

  const DatasetPtr input_;
  const CapturedFunction fn_;
  const int64_t cycle_length_, block_length_;
  const DataTypeVector types_;
  const std::vector<PartialTensorShape> shapes_;
};

class InterleaveDatasetOp : public UnaryDatasetOpKernel {
 public:
  explicit InterleaveDatasetOp(OpKernelConstruction* ctx) : UnaryDatasetOpKernel(ctx) {
    OP_REQUIRES_OK(ctx, fn_.Read(ctx, "f"));
    parallel_ = ctx->def().op() == "ParallelInterleaveDatasetV4";
    if (parallel_) OP_REQUIRES_OK(ctx, ReadDeterministicAttr(ctx, &deterministic_));
  }

 protected:
  StatusOr<DatasetPtr> MakeDataset(OpKernelContext* ctx, DatasetPtr input) override {
    const int first = 1 + fn_.num_captured;
    TX_ASSIGN_OR_RETURN(int64_t cycle, ParseScalarInt64(ctx, first, "cycle_length"));
    TX_ASSIGN_OR_RETURN(int64_t block, ParseScalarInt64(ctx, first + 1, "block_length"));
    if (cycle == -1) cycle = ThreadPool::DefaultNumThreads();  // AUTOTUNE
    if (cycle <= 0 || cycle > 4096) {
      return errors::InvalidArgument("cycle_length must be in [1, 4096] or -1, got ", cycle);
    }
    if (block <= 0) return errors::InvalidArgument("block_length must be > 0, got ", block);
    if (!parallel_) {
      return DatasetPtr(std::make_shared<InterleaveDataset>(std::move(input), fn_.Capture(ctx),
                                                            cycle, block, output_types_,
                                                            output_shapes_));
    }
    ParallelParams p;
    p.cycle_length = cycle;
    p.block_length = block;
    p.deterministic = deterministic_;
    TX_ASSIGN_OR_RETURN(p.buffer_output_elements,
                        ParseScalarInt64(ctx, first + 2, "buffer_output_elements"));
    TX_ASSIGN_OR_RETURN(p.prefetch_input_elements,
                        ParseScalarInt64(ctx, first + 3, "prefetch_input_elements"));
    TX_ASSIGN_OR_RETURN(int64_t calls, ParseScalarInt64(ctx, first + 4, "num_parallel_calls"));
    if (p.buffer_output_elements == -1) p.buffer_output_elements = 2 * block;
    if (p.buffer_output_elements <= 0) {
      return errors::InvalidArgument("buffer_output_elements must be > 0 or -1 (AUTOTUNE), got ",
                                     p.buffer_output_elements);
    }
    if (p.prefetch_input_elements == -1) p.prefetch_input_elements = cycle;
    if (p.prefetch_input_elements < 0) {
      return errors::InvalidArgument("prefetch_input_elements must be >= 0 or -1 (AUTOTUNE), "
                                     "got ", p.prefetch_input_elements);
    }
    if (calls == -1) calls = cycle;
    if (calls <= 0 || calls > cycle) {
      return errors::InvalidArgument("num_parallel_calls must be in [1, cycle_length = ", cycle,
                                     "] or -1 (AUTOTUNE), got ", calls);
    }
    p.num_parallel_calls = static_cast<int>(calls);
    return NewParallelInterleaveDataset(std::move(input), fn_.Capture(ctx), p, output_types_,
                                        output_shapes_);
  }

 private:
  FunctionAttrs fn_;
  bool parallel_ = false;
  bool deterministic_ = true;
};

REGISTER_KERNEL_BUILDER(Name("InterleaveDataset").Device(DEVICE_CPU), InterleaveDatasetOp);
REGISTER_KERNEL_BUILDER(Name("ParallelInterleaveDatasetV4").Device(DEVICE_CPU),
                        InterleaveDatasetOp);

}  // namespace
}  // namespace interleave
}  // namespace tensorflux
