// Datasets that run a function per element (TF's MapDataset, ParallelMapDatasetV2,
// FilterDataset). The function (attr `f` / `predicate`: a FunctionDef of the graph's library or
// a registered C++ callable, data/captured_function.h) takes the element's components followed by
// `other_arguments` (captured tensors) and runs through the session's FunctionLibraryRuntime
// with no Python involved.
//
// Map: the function's results are the new element; their dtypes must be output_types and
// their shapes compatible with output_shapes (INVALID_ARGUMENT otherwise).
// ParallelMapDatasetV2: num_parallel_calls (> 0, or -1 = AUTOTUNE: one per core) worker threads
// of the iterator (started by its first GetNext) each take the next input element (in input
// order), run the function and store the result; at most 4 * num_parallel_calls elements
// (2 * num_parallel_calls + 32 for more than 16 calls) are in flight or finished and not yet
// taken, so memory is bounded. `deterministic` "true" / "default" returns results in input
// order; "false" returns whichever is done first. Workers sleep only when that buffer is full; a
// consumer that finds nothing ready sleeps until 2 * num_parallel_calls (at most 32) results are
// (or 0.5 ms has passed and one is): no thread hand-off per element, which on a 2-core machine
// costs more than a small function (docs/PERFORMANCE.md). An error (from the input or the
// function) is returned in the element's place; later elements still follow. Destroying the
// iterator waits for the calls in flight (it starts no new ones).
// Filter: the predicate returns a bool scalar (INVALID_ARGUMENT otherwise); elements for which
// it is false are dropped.
// Errors from the function name the function's node ("{{node add}} (op AddV2): ...").
#include <algorithm>
#include <chrono>
#include <deque>

#include "absl/strings/str_cat.h"
#include "tensorflux/core/threadpool.h"
#include "tensorflux/data/captured_function.h"
#include "tensorflux/data/dataset.h"
#include "tensorflux/data/parallel_iterator.h"

namespace tensorflux {
namespace {

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
        deterministic_(deterministic),
        map_function_{input_, fn_.name(), fn_.captured()} {}

  const DataTypeVector& output_dtypes() const override { return types_; }
  const std::vector<PartialTensorShape>& output_shapes() const override { return shapes_; }
  const DatasetPtr& input() const { return input_; }
  const MapFunction* map_function() const override { return &map_function_; }
  std::string DebugString() const override {
    return num_parallel_calls_ == 0
               ? absl::StrCat("MapDatasetOp::Dataset(", fn_.name(), ")")
               : absl::StrCat("ParallelMapDatasetV2Op::Dataset(", fn_.name(), ", ",
                              num_parallel_calls_, ")");
  }

 protected:
  std::unique_ptr<IteratorBase> MakeIteratorInternal() const override {
    if (num_parallel_calls_ == 0) return std::make_unique<Iterator>(this);
    return std::make_unique<ParallelIterator>(this);
  }

 private:
  class Iterator : public UnaryDatasetIterator<MapDataset> {
   public:
    using UnaryDatasetIterator::UnaryDatasetIterator;
    Status Initialize(IteratorContext* ctx) override {
      TX_RETURN_IF_ERROR(dataset()->fn_.Instantiate(ctx, dataset()->types_, &fn_));
      return UnaryDatasetIterator::Initialize(ctx);
    }
    Status GetNextInternal(IteratorContext* ctx, std::vector<Tensor>* out, bool* end) override {
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
      TX_RETURN_IF_ERROR(dataset()->fn_.Run(fn_, std::move(in), out));
      return dataset()->CheckResult(*out);
    }

   private:
    FunctionInstance fn_;
  };

  class ParallelIterator : public ParallelDatasetIterator<MapDataset> {
   public:
    explicit ParallelIterator(const MapDataset* d)
        : ParallelDatasetIterator(d),
          wake_batch_(std::min<size_t>(2 * static_cast<size_t>(d->num_parallel_calls_), 32)),
          capacity_(wake_batch_ + 2 * static_cast<size_t>(d->num_parallel_calls_)) {}
    ~ParallelIterator() override { StopWorkers(); }
    Status Initialize(IteratorContext* ctx) override {
      const MapDataset& d = *dataset();
      return InitializeParallel(ctx, d.fn_, d.types_, d.input());
    }
    Status GetNextInternal(IteratorContext* ctx, std::vector<Tensor>* out, bool* end) override {
      StartWorkersOnce(ctx, dataset()->num_parallel_calls_, [this] { WorkerLoop(); });
      std::shared_ptr<Result> r;
      {
        std::unique_lock<std::mutex> l(mu_);
        if (ReadyCount() == 0 && !AtEnd()) {
          // Wait for a run of wake_batch_ results, but never more than kBatchWait for it.
          consumer_waiting_ = true;
          wake_at_ = wake_batch_;
          if (!cv_.wait_for(l, kBatchWait, [&] { return ConsumerCanGo(); })) {
            wake_at_ = 1;
            cv_.wait(l, [&] { return ConsumerCanGo(); });
          }
          consumer_waiting_ = false;
        }
        r = TakeDone();
      }
      if (r == nullptr) {
        *end = true;
        return OkStatus();
      }
      worker_cv_.notify_one();  // a slot is free
      TX_RETURN_IF_ERROR(r->status);
      *out = std::move(r->out);
      return dataset()->CheckResult(*out);
    }

   private:
    // One element: its slot in results_ from when it was taken from the input.
    struct Result {
      bool done = false;
      Status status;
      std::vector<Tensor> out;
    };

    // The results that can be returned without waiting (up to wake_at_ are counted):
    // deterministic, the run of done results at the front; otherwise every done result.
    size_t ReadyCount() const {
      if (!dataset()->deterministic_) return done_;
      size_t n = 0;
      while (n < results_.size() && n < wake_at_ && results_[n]->done) ++n;
      return n;
    }
    bool AtEnd() const { return input_ended_ && reserved_ == 0 && results_.empty(); }
    // A waiting consumer goes on when wake_at_ results are ready (or all that are left, once
    // the input has ended), or at the end. It waits for a run of results, not for each one,
    // since every wake-up costs two context switches on a core that a worker needs.
    bool ConsumerCanGo() const {
      const size_t ready = ReadyCount();
      if (!input_ended_) return ready >= wake_at_;
      return AtEnd() || ready >= std::min(wake_at_, results_.size() + reserved_);
    }
    // Called by workers with mu_ held after changing the state: whether to wake the consumer
    // (which they do after unlocking, so that it does not wake up only to wait for mu_).
    bool ShouldWakeConsumer() const { return consumer_waiting_ && ConsumerCanGo(); }

    // The result to return next, removed from results_; nullptr if none is done.
    std::shared_ptr<Result> TakeDone() {
      for (auto it = results_.begin(); it != results_.end(); ++it) {
        if ((*it)->done) {
          std::shared_ptr<Result> r = std::move(*it);
          results_.erase(it);
          --done_;
          return r;
        }
        if (dataset()->deterministic_) break;
      }
      return nullptr;
    }

    void WorkerLoop() {
      const MapDataset& d = *dataset();
      for (;;) {
        {
          std::unique_lock<std::mutex> l(mu_);
          worker_cv_.wait(l, [&] {
            return cancelled_ || input_ended_ || results_.size() + reserved_ < capacity_;
          });
          if (cancelled_ || input_ended_) return;
          ++reserved_;
        }
        // Take the next input element and queue its slot, in input order.
        auto r = std::make_shared<Result>();
        std::vector<Tensor> in;
        bool in_end = false;
        Status s;  // the input's error, then the function's
        bool wake = PullInput(&in, [&](const Status& in_status, bool ended) {
          --reserved_;
          s = in_status;
          in_end = ended;
          if (in_end) {
            input_ended_ = true;
          } else {
            results_.push_back(r);
            if (!s.ok()) Finish(r.get(), s, {});
          }
          return ShouldWakeConsumer();
        });
        if (wake) cv_.notify_one();
        if (in_end) {
          worker_cv_.notify_all();
          return;
        }
        if (!s.ok()) continue;  // an input error: returned in the element's place
        std::vector<Tensor> rets;
        s = d.fn_.Run(fn_, std::move(in), &rets);
        {
          std::lock_guard<std::mutex> l(mu_);
          Finish(r.get(), std::move(s), std::move(rets));
          wake = ShouldWakeConsumer();
        }
        if (wake) cv_.notify_one();
      }
    }
    void Finish(Result* r, Status s, std::vector<Tensor> out) {
      r->status = std::move(s);
      r->out = std::move(out);
      r->done = true;
      ++done_;
    }

    // A consumer that finds no result ready waits until wake_batch_ are, or kBatchWait has
    // passed and one is.
    static constexpr std::chrono::microseconds kBatchWait{500};
    const size_t wake_batch_;
    const size_t capacity_;    // elements in flight or done and not yet taken
    // Guarded by mu_ (workers wait on worker_cv_ for a free slot).
    std::deque<std::shared_ptr<Result>> results_;  // in input order
    size_t done_ = 0;      // results_ that are done
    size_t reserved_ = 0;  // slots claimed by workers now reading the input
    bool input_ended_ = false;
    size_t wake_at_ = 1;  // ready results the waiting consumer waits for
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
  const MapFunction map_function_;  // for map vectorization (a batch that follows)
};

class MapDatasetOp : public UnaryDatasetOpKernel {
 public:
  explicit MapDatasetOp(OpKernelConstruction* ctx) : UnaryDatasetOpKernel(ctx) {
    OP_REQUIRES_OK(ctx, fn_.Read(ctx, "f"));
    parallel_ = ctx->def().op() == "ParallelMapDatasetV2";
    if (parallel_) OP_REQUIRES_OK(ctx, ReadDeterministicAttr(ctx, &deterministic_));
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

}  // namespace
}  // namespace tensorflux
