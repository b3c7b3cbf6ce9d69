// Datasets that run a library function per element (TF's MapDataset, ParallelMapDatasetV2,
// FilterDataset). The function (attr `f` / `predicate`, a FunctionDef of the graph's library)
// takes the element's components followed by `other_arguments` (captured tensors) and runs
// through the session's FunctionLibraryRuntime (framework/function.h) with no Python involved.
//
// Map: the function's results are the new element; their dtypes must be output_types and
// their shapes compatible with output_shapes (INVALID_ARGUMENT otherwise).
// ParallelMapDatasetV2: up to num_parallel_calls (> 0, or -1 = AUTOTUNE: one per core) calls
// run at once on the iterator's own thread pool, fed from the input in order. `deterministic`
// "true" / "default" returns results in input order; "false" returns whichever is done first.
// Filter: the predicate returns a bool scalar (INVALID_ARGUMENT otherwise); elements for which
// it is false are dropped.
// Interleave: f returns a dataset per input element; cycle_length (> 0, -1 = one per core) of
// them are read round-robin, block_length (> 0) elements each turn.
// Errors from the function name the function's node ("{{node add}} (op AddV2): ...").
#include <condition_variable>
#include <deque>

#include "absl/strings/str_cat.h"
#include "tensorflux/core/threadpool.h"
#include "tensorflux/data/dataset.h"
#include "tensorflux/framework/function.h"

namespace tensorflux {
namespace {

// A function instantiated in an iterator's runtime (which it keeps alive).
struct FunctionInstance {
  std::shared_ptr<FunctionLibraryRuntime> flr;
  FunctionLibraryRuntime::Handle handle = -1;
};

// A function attr plus its captured arguments, instantiated per iterator.
class CapturedFunction {
 public:
  CapturedFunction(std::string name, std::vector<Tensor> captured)
      : name_(std::move(name)), captured_(std::move(captured)) {}
  const std::string& name() const { return name_; }

  // Instantiates the function in ctx's runtime; INVALID_ARGUMENT unless it returns `rets`.
  Status Instantiate(IteratorContext* ctx, const DataTypeVector& rets,
                     FunctionInstance* out) const {
    if (ctx->function_library == nullptr) {
      return errors::FailedPrecondition("No function runtime to run ", name_);
    }
    out->flr = ctx->function_library;
    TX_ASSIGN_OR_RETURN(out->handle, out->flr->Instantiate(name_));
    if (out->flr->RetTypes(out->handle) != rets) {
      return errors::InvalidArgument("Function ", name_, " returns [",
                                     DataTypeVectorString(out->flr->RetTypes(out->handle)),
                                     "] but the dataset needs [", DataTypeVectorString(rets),
                                     "]");
    }
    return OkStatus();
  }

  Status Run(const FunctionInstance& f, std::vector<Tensor> element,
             std::vector<Tensor>* rets) const {
    for (const Tensor& c : captured_) element.push_back(c);
    return f.flr->Run(f.handle, std::move(element), rets);
  }

 private:
  const std::string name_;
  const std::vector<Tensor> captured_;
};

// ---------------------------------------------------------------- Map / ParallelMap

class MapDataset : public DatasetBase {
 public:
  // num_parallel_calls 0: sequential (MapDataset).
  MapDataset(DatasetPtr input, CapturedFunction fn, DataTypeVector types,
             std::vector<PartialTensorShape> shapes, int num_parallel_calls, bool deterministic)
      : input_(std::move(input)),
        fn_(std::move(fn)),
        types_(std::move(types)),
        shapes_(std::move(shapes)),
        num_parallel_calls_(num_parallel_calls),
        deterministic_(deterministic) {}

  const DataTypeVector& output_dtypes() const override { return types_; }
  const std::vector<PartialTensorShape>& output_shapes() const override { return shapes_; }
  const DatasetPtr& input() const { return input_; }
  std::string DebugString() const override {
    return num_parallel_calls_ == 0
               ? absl::StrCat("MapDatasetOp::Dataset(", fn_.name(), ")")
               : absl::StrCat("ParallelMapDatasetV2Op::Dataset(", fn_.name(), ", ",
                              num_parallel_calls_, ")");
  }

 protected:
  std::unique_ptr<IteratorBase> MakeIteratorInternal() const override {
    return std::make_unique<Iterator>(this);
  }

 private:
  // One call of the function: its result once done.
  // One call of the function; its fields are guarded by CallState::mu.
  struct Call {
    bool done = false;
    Status status;
    std::vector<Tensor> out;
  };
  // Shared by an iterator and its calls in flight: cv is notified whenever a call finishes.
  struct CallState {
    std::mutex mu;
    std::condition_variable cv;
  };

  class Iterator : public UnaryDatasetIterator<MapDataset> {
   public:
    using UnaryDatasetIterator::UnaryDatasetIterator;
    ~Iterator() override {
      // Wait for calls in flight: they reference the runtime and the dataset.
      std::unique_lock<std::mutex> l(state_->mu);
      for (auto& c : calls_) state_->cv.wait(l, [&] { return c->done; });
      l.unlock();
      pool_.reset();
    }
    Status Initialize(IteratorContext* ctx) override {
      const MapDataset& d = *dataset();
      TX_RETURN_IF_ERROR(d.fn_.Instantiate(ctx, d.types_, &fn_));
      TX_RETURN_IF_ERROR(UnaryDatasetIterator::Initialize(ctx));
      if (d.num_parallel_calls_ > 0) {
        pool_ = std::make_unique<ThreadPool>("tx_parallel_map", d.num_parallel_calls_);
      }
      return OkStatus();
    }
    Status GetNextInternal(IteratorContext* ctx, std::vector<Tensor>* out, bool* end) override {
      const MapDataset& d = *dataset();
      if (pool_ == nullptr) {
        if (input_ == nullptr) {
          *end = true;
          return OkStatus();
        }
        std::vector<Tensor> in;
        TX_RETURN_IF_ERROR(input_->GetNext(ctx, &in, end));
        if (*end) {
          input_.reset();
          return OkStatus();
        }
        TX_RETURN_IF_ERROR(d.fn_.Run(fn_, std::move(in), out));
        return d.CheckResult(*out);
      }
      // Parallel: keep num_parallel_calls calls in flight, then take one that is done.
      while (input_ != nullptr && static_cast<int>(calls_.size()) < d.num_parallel_calls_) {
        std::vector<Tensor> in;
        bool in_end = false;
        TX_RETURN_IF_ERROR(input_->GetNext(ctx, &in, &in_end));
        if (in_end) {
          input_.reset();
          break;
        }
        auto call = std::make_shared<Call>();
        calls_.push_back(call);
        pool_->Schedule([call, state = state_, in = std::move(in), inst = fn_, fn = &d.fn_]() {
          std::vector<Tensor> rets;
          Status s = fn->Run(inst, in, &rets);
          {
            std::lock_guard<std::mutex> l(state->mu);
            call->status = s;
            call->out = std::move(rets);
            call->done = true;
          }
          state->cv.notify_all();
        });
      }
      if (calls_.empty()) {
        *end = true;
        return OkStatus();
      }
      // Deterministic: the oldest call; otherwise the first (in input order) that is done.
      auto next = calls_.end();
      {
        std::unique_lock<std::mutex> l(state_->mu);
        state_->cv.wait(l, [&] {
          for (auto it = calls_.begin(); it != calls_.end(); ++it) {
            if ((*it)->done) {
              next = it;
              return true;
            }
            if (d.deterministic_) return false;
          }
          return false;
        });
      }
      std::shared_ptr<Call> call = *next;
      calls_.erase(next);
      TX_RETURN_IF_ERROR(call->status);
      *out = std::move(call->out);
      return d.CheckResult(*out);
    }

   private:
    FunctionInstance fn_;
    std::shared_ptr<CallState> state_ = std::make_shared<CallState>();
    std::deque<std::shared_ptr<Call>> calls_;  // in input order; only this iterator edits it
    std::unique_ptr<ThreadPool> pool_;
  };

  Status CheckResult(const std::vector<Tensor>& out) const {
    if (out.size() != types_.size()) {
      return errors::InvalidArgument("Function ", fn_.name(), " returned ", out.size(),
                                     " values, expected ", types_.size());
    }
    for (size_t i = 0; i < out.size(); ++i) {
      TX_RETURN_IF_ERROR(CheckElementComponent(absl::StrCat("Function ", fn_.name(), "'s result"),
                                               static_cast<int>(i), out[i], types_[i],
                                               shapes_[i]));
    }
    return OkStatus();
  }

  const DatasetPtr input_;
  const CapturedFunction fn_;
  const DataTypeVector types_;
  const std::vector<PartialTensorShape> shapes_;
  const int num_parallel_calls_;
  const bool deterministic_;
};

// A kernel's function attr (`f` / `predicate`) and number of captured arguments (Targuments).
struct FunctionAttrs {
  std::string func;
  int num_captured = 0;

  Status Read(OpKernelConstruction* ctx, const char* attr) {
    NameAttrList f;
    TX_RETURN_IF_ERROR(ctx->GetAttr(attr, &f));
    func = f.name();
    DataTypeVector targs;
    TX_RETURN_IF_ERROR(ctx->GetAttr("Targuments", &targs));
    num_captured = static_cast<int>(targs.size());
    return OkStatus();
  }
  // The function with the captured `other_arguments` (inputs 1 .. num_captured).
  CapturedFunction Capture(OpKernelContext* ctx) const {
    std::vector<Tensor> captured;
    for (int i = 0; i < num_captured; ++i) captured.push_back(ctx->input(1 + i));
    return CapturedFunction(func, std::move(captured));
  }
};

class MapDatasetOp : public UnaryDatasetOpKernel {
 public:
  explicit MapDatasetOp(OpKernelConstruction* ctx) : UnaryDatasetOpKernel(ctx) {
    OP_REQUIRES_OK(ctx, fn_.Read(ctx, "f"));
    parallel_ = ctx->def().op() == "ParallelMapDatasetV2";
    if (parallel_) {
      std::string det;
      OP_REQUIRES_OK(ctx, ctx->GetAttr("deterministic", &det));
      OP_REQUIRES(ctx, det == "true" || det == "false" || det == "default",
                  errors::InvalidArgument("deterministic must be 'true', 'false' or "
                                          "'default', got '", det, "'"));
      deterministic_ = det != "false";
    }
  }

 protected:
  StatusOr<DatasetPtr> MakeDataset(OpKernelContext* ctx, DatasetPtr input) override {
    int64_t parallel = 0;
    if (parallel_) {
      TX_ASSIGN_OR_RETURN(parallel, ParseScalarInt64(ctx, 1 + fn_.num_captured,
                                                     "num_parallel_calls"));
      if (parallel == -1) parallel = ThreadPool::DefaultNumThreads();
      if (parallel <= 0 || parallel > 4096) {
        return errors::InvalidArgument("num_parallel_calls must be in [1, 4096] or -1 "
                                       "(AUTOTUNE), got ", parallel);
      }
    }
    return DatasetPtr(std::make_shared<MapDataset>(std::move(input), fn_.Capture(ctx),
                                                   output_types_, output_shapes_,
                                                   static_cast<int>(parallel), deterministic_));
  }

 private:
  FunctionAttrs fn_;
  bool parallel_ = false;
  bool deterministic_ = true;
};

REGISTER_KERNEL_BUILDER(Name("MapDataset").Device(DEVICE_CPU), MapDatasetOp);
REGISTER_KERNEL_BUILDER(Name("ParallelMapDatasetV2").Device(DEVICE_CPU), MapDatasetOp);

// ---------------------------------------------------------------- Filter

class FilterDataset : public SameSpecDataset {
 public:
  FilterDataset(DatasetPtr input, CapturedFunction pred)
      : SameSpecDataset(std::move(input)), pred_(std::move(pred)) {}
  std::string DebugString() const override {
    return absl::StrCat("FilterDatasetOp::Dataset(", pred_.name(), ")");
  }

 protected:
  std::unique_ptr<IteratorBase> MakeIteratorInternal() const override {
    return std::make_unique<Iterator>(this);
  }

 private:
  class Iterator : public UnaryDatasetIterator<FilterDataset> {
   public:
    using UnaryDatasetIterator::UnaryDatasetIterator;
    Status Initialize(IteratorContext* ctx) override {
      TX_RETURN_IF_ERROR(dataset()->pred_.Instantiate(ctx, {DT_BOOL}, &fn_));
      return UnaryDatasetIterator::Initialize(ctx);
    }
    Status GetNextInternal(IteratorContext* ctx, std::vector<Tensor>* out, bool* end) override {
      while (input_ != nullptr) {
        TX_RETURN_IF_ERROR(input_->GetNext(ctx, out, end));
        if (*end) {
          input_.reset();
          return OkStatus();
        }
        std::vector<Tensor> keep;
        TX_RETURN_IF_ERROR(dataset()->pred_.Run(fn_, *out, &keep));
        if (keep.size() != 1 || keep[0].dtype() != DT_BOOL || keep[0].NumElements() != 1) {
          return errors::InvalidArgument("Filter predicate `", dataset()->pred_.name(),
                                         "` must return a scalar bool.");
        }
        if (keep[0].flat<bool>()[0]) return OkStatus();
        out->clear();
      }
      *end = true;
      return OkStatus();
    }

   private:
    FunctionInstance fn_;
  };

  const CapturedFunction pred_;
};

class FilterDatasetOp : public UnaryDatasetOpKernel {
 public:
  explicit FilterDatasetOp(OpKernelConstruction* ctx) : UnaryDatasetOpKernel(ctx) {
    OP_REQUIRES_OK(ctx, fn_.Read(ctx, "predicate"));
  }

 protected:
  StatusOr<DatasetPtr> MakeDataset(OpKernelContext* ctx, DatasetPtr input) override {
    return DatasetPtr(std::make_shared<FilterDataset>(std::move(input), fn_.Capture(ctx)));
  }

 private:
  FunctionAttrs fn_;
};

REGISTER_KERNEL_BUILDER(Name("FilterDataset").Device(DEVICE_CPU), FilterDatasetOp);

// ---------------------------------------------------------------- Interleave

// InterleaveDataset: f maps each input element to a dataset (a DT_VARIANT scalar); up to
// cycle_length of those are open at once and read round-robin, block_length elements at a
// time; an exhausted one is replaced (in its slot) by the next input element's dataset.
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
