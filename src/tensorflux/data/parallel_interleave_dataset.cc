// ParallelInterleaveDatasetV4 (TF's parallel Dataset.interleave): InterleaveDataset's order
// (cycle_length input elements' datasets read round-robin, block_length elements each turn, an
// exhausted one replaced in its slot by the next input element's) with the reading done ahead by
// num_parallel_calls worker threads of the iterator (started by its first GetNext).
//
// Workers open input elements (pull the input in order, run f, make the dataset's iterator) into
// a queue of "future" elements, up to prefetch_input_elements beyond the cycle's empty slots,
// and read elements into per-element buffers of up to buffer_output_elements: first the
// elements in the cycle, starting at the one the consumer reads next, then the future ones.
// The consumer moves a future element into a cycle slot when it reaches the empty slot, so the
// deterministic order is exactly InterleaveDataset's. With deterministic = false the consumer
// skips an element that has nothing buffered yet (and is not finished) and takes the next slot's,
// waiting only when no slot has anything.
//
// Errors take the place of an element, as in InterleaveDataset: an error opening an input
// element (the input's, f's, or f returning no dataset) is returned when the consumer reaches
// the empty slot it was to fill, which then takes the next input element; an error reading an
// element is returned in the element's place and that element goes on. Memory: at most
// cycle_length + prefetch_input_elements open elements with at most buffer_output_elements
// elements each. Destroying the iterator waits for the workers' current
// step (one read or one open) and starts no other.
#include <deque>

#include "absl/strings/str_cat.h"
#include "tensorflux/data/interleave.h"
#include "tensorflux/data/parallel_iterator.h"

namespace tensorflux {
namespace interleave {
namespace {

class ParallelInterleaveDataset : public DatasetBase {
 public:
  ParallelInterleaveDataset(DatasetPtr input, CapturedFunction fn, const ParallelParams& p,
                            DataTypeVector types, std::vector<PartialTensorShape> shapes)
      : input_(std::move(input)),
        fn_(std::move(fn)),
        p_(p),
        types_(std::move(types)),
        shapes_(std::move(shapes)) {}

  const DataTypeVector& output_dtypes() const override { return types_; }
  const std::vector<PartialTensorShape>& output_shapes() const override { return shapes_; }
  std::string DebugString() const override {
    return absl::StrCat("ParallelInterleaveDatasetV4Op::Dataset(", fn_.name(), ", ",
                        p_.cycle_length, ", ", p_.block_length, ", ", p_.num_parallel_calls, ")");
  }

 protected:
  std::unique_ptr<IteratorBase> MakeIteratorInternal() const override {
    return std::make_unique<Iterator>(this);
  }

 private:
  class Iterator : public ParallelDatasetIterator<ParallelInterleaveDataset> {
   public:
    explicit Iterator(const ParallelInterleaveDataset* d)
        : ParallelDatasetIterator(d), cycle_(static_cast<size_t>(d->p_.cycle_length)) {}
    ~Iterator() override { StopWorkers(); }
    Status Initialize(IteratorContext* ctx) override {
      const ParallelInterleaveDataset& d = *dataset();
      return InitializeParallel(ctx, d.fn_, {DT_VARIANT}, d.input_);
    }
    Status GetNextInternal(IteratorContext* ctx, std::vector<Tensor>* out, bool* end) override;

   private:
    struct Item {
      Status status;
      std::vector<Tensor> value;
    };
    // One input element's dataset. Fields are guarded by mu_, except `it`, which only the worker
    // that set `busy` (or the opening worker) touches.
    struct Element {
      bool opening = true;       // f and MakeIterator not done yet
      bool busy = false;         // a worker is reading it
      bool ended = false;        // nothing more to read (end of sequence, or failed to open)
      bool open_failed = false;  // its only item is the error that opening it gave
      std::unique_ptr<IteratorBase> it;
      std::deque<Item> buffer;
    };
    using ElementPtr = std::shared_ptr<Element>;

    void WorkerLoop();
    // With mu_ held: the element a worker should read next (marked busy), or whether it should
    // open the next input element (*open); false when there is nothing to do.
    bool FindWork(ElementPtr* read, bool* open);
    bool Readable(const ElementPtr& e) const {
      return e != nullptr && !e->opening && !e->busy && !e->ended &&
             e->buffer.size() < static_cast<size_t>(dataset()->p_.buffer_output_elements);
    }
    void Open();
    void Read(const ElementPtr& e);
    void Advance() {
      pos_ = (pos_ + 1) % cycle_.size();
      in_block_ = 0;
    }
    // With mu_ held: one more input element is wanted for the cycle.
    void SlotEmptied(ElementPtr* slot) {
      slot->reset();
      --filled_;
      if (idle_workers_ > 0) worker_cv_.notify_one();
    }
    // Workers call these after changing the state (with mu_ released).
    void WakeConsumer(bool wake) {
      if (wake) cv_.notify_one();
    }
    void WakeWorker() {
      if (idle_workers_ > 0) worker_cv_.notify_one();
    }

    // Guarded by mu_.
    std::vector<ElementPtr> cycle_;      // the cycle's slots (nullptr: empty)
    size_t filled_ = 0;                  // non-null slots
    std::deque<ElementPtr> future_;      // opened (or opening) elements, in input order
    size_t pulling_ = 0;                 // workers now reading the input
    size_t pos_ = 0;
    int64_t in_block_ = 0;
    bool input_ended_ = false;
    int idle_workers_ = 0;
  };

  const DatasetPtr input_;
  const CapturedFunction fn_;
  const ParallelParams p_;
  const DataTypeVector types_;
  const std::vector<PartialTensorShape> shapes_;
};

Status ParallelInterleaveDataset::Iterator::GetNextInternal(IteratorContext* ctx,
                                                            std::vector<Tensor>* out,
                                                            bool* end) {
  const ParallelInterleaveDataset& d = *dataset();
  StartWorkersOnce(ctx, d.p_.num_parallel_calls, [this] { WorkerLoop(); });
  std::unique_lock<std::mutex> l(mu_);
  size_t skipped = 0;  // deterministic = false: slots passed over since the last wait
  for (;;) {
    const bool no_more_input = input_ended_ && pulling_ == 0 && future_.empty();
    if (no_more_input && filled_ == 0) {
      *end = true;
      return OkStatus();
    }
    ElementPtr& slot = cycle_[pos_];
    bool wait = false;
    if (slot == nullptr) {
      if (!future_.empty()) {
        slot = std::move(future_.front());
        future_.pop_front();
        ++filled_;
        if (idle_workers_ > 0) worker_cv_.notify_one();  // one more to open, maybe one to read
      } else if (no_more_input) {
        Advance();
        continue;
      } else {
        wait = true;  // the next input element is being opened
      }
    }
    if (slot != nullptr) {
      Element& e = *slot;
      if (!e.buffer.empty()) {
        Item item = std::move(e.buffer.front());
        e.buffer.pop_front();
        if (idle_workers_ > 0) worker_cv_.notify_one();  // room to read more
        if (!item.status.ok()) {
          if (e.open_failed) SlotEmptied(&slot);  // it takes the next input element, as in
                                                  // InterleaveDataset
          return item.status;
        }
        if (++in_block_ >= d.p_.block_length) Advance();
        l.unlock();
        *out = std::move(item.value);
        return OkStatus();
      }
      if (e.ended) {
        SlotEmptied(&slot);
        Advance();
        continue;
      }
      wait = true;
    }
    if (!d.p_.deterministic && skipped + 1 < cycle_.size()) {
      ++skipped;
      Advance();
      continue;
    }
    skipped = 0;
    consumer_waiting_ = true;
    cv_.wait(l);
    consumer_waiting_ = false;
  }
}

bool ParallelInterleaveDataset::Iterator::FindWork(ElementPtr* read, bool* open) {
  const ParallelParams& p = dataset()->p_;
  for (size_t k = 0; k < cycle_.size(); ++k) {
    const ElementPtr& e = cycle_[(pos_ + k) % cycle_.size()];
    if (Readable(e)) {
      *read = e;
      return true;
    }
  }
  const size_t wanted = static_cast<size_t>(p.prefetch_input_elements) + cycle_.size() - filled_;
  if (!input_ended_ && future_.size() + pulling_ < wanted) {
    *open = true;
    return true;
  }
  for (const ElementPtr& e : future_) {
    if (Readable(e)) {
      *read = e;
      return true;
    }
  }
  return false;
}

void ParallelInterleaveDataset::Iterator::WorkerLoop() {
  for (;;) {
    ElementPtr read;
    bool open = false;
    {
      std::unique_lock<std::mutex> l(mu_);
      ++idle_workers_;
      worker_cv_.wait(l, [&] { return cancelled_ || FindWork(&read, &open); });
      --idle_workers_;
      if (cancelled_) return;
      if (read != nullptr) read->busy = true;
      if (open) ++pulling_;
    }
    if (open) {
      Open();
    } else {
      Read(read);
    }
  }
}

void ParallelInterleaveDataset::Iterator::Open() {
  const ParallelInterleaveDataset& d = *dataset();
  std::vector<Tensor> in;
  ElementPtr e;
  Status s;
  bool wake = PullInput(&in, [&](const Status& in_status, bool in_end) {
    --pulling_;
    s = in_status;
    if (in_end) {
      input_ended_ = true;
    } else {
      e = std::make_shared<Element>();
      future_.push_back(e);
      if (!s.ok()) {
        e->opening = false;
        e->ended = e->open_failed = true;
        e->buffer.push_back({s, {}});
      }
    }
    return consumer_waiting_;
  });
  WakeConsumer(wake);
  if (e == nullptr) {
    worker_cv_.notify_all();  // the input has ended: idle workers may have nothing left to do
    return;
  }
  if (!s.ok()) return;
  StatusOr<std::unique_ptr<IteratorBase>> it = OpenElement(d.fn_, fn_, std::move(in), &ctx_);
  {
    std::lock_guard<std::mutex> l(mu_);
    e->opening = false;
    if (it.ok()) {
      e->it = std::move(*it);
    } else {
      e->ended = e->open_failed = true;
      e->buffer.push_back({it.status(), {}});
    }
    wake = consumer_waiting_;
  }
  WakeConsumer(wake);
  WakeWorker();  // it can be read now
}

void ParallelInterleaveDataset::Iterator::Read(const ElementPtr& e) {
  const ParallelInterleaveDataset& d = *dataset();
  Item item;
  bool end = false;
  item.status = e->it->GetNext(&ctx_, &item.value, &end);
  if (item.status.ok() && !end) {
    item.status = CheckElement(d.fn_.name(), item.value, d.types_, d.shapes_);
  }
  std::unique_ptr<IteratorBase> finished;
  bool wake = false;
  {
    std::lock_guard<std::mutex> l(mu_);
    e->busy = false;
    if (item.status.ok() && end) {
      e->ended = true;
      finished = std::move(e->it);  // destroyed below, without mu_
    } else {
      e->buffer.push_back(std::move(item));
    }
    wake = consumer_waiting_;
  }
  WakeConsumer(wake);
}

}  // namespace

DatasetPtr NewParallelInterleaveDataset(DatasetPtr input, CapturedFunction fn,
                                        const ParallelParams& params, DataTypeVector types,
                                        std::vector<PartialTensorShape> shapes) {
  return std::make_shared<ParallelInterleaveDataset>(std::move(input), std::move(fn), params,
                                                     std::move(types), std::move(shapes));
}

}  // namespace interleave
}  // namespace tensorflux
