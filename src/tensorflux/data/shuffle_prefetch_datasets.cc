// ShuffleDataset (a random-draw buffer) and PrefetchDataset (a background producer thread).
//
// Shuffle, TF's algorithm draw for draw (so a seeded pipeline gives TF's order): the iterator
// keeps the next up to buffer_size input elements in input order; each GetNext refills that
// window, draws a 32-bit word w from its Philox stream (core/philox.h, one word at a time as
// TF's SingleSampleAdapter), returns the element at offset w % n of the window (n elements),
// moves the window's first element into that slot and drops the first slot. An iterator's
// stream is Philox seeded (s1, s2):
//   - reshuffle_each_iteration = false: (s1, s2) = (seed, seed2) for every iterator, so every
//     pass has the same order (TF's FixedSeedGenerator);
//   - reshuffle_each_iteration = true: the kernel keeps one seed generator per (seed, seed2),
//     a Philox stream seeded (seed, seed2), for as long as the session keeps the kernel (TF 1.x
//     keeps it in the resource manager); every new iterator (each repeat() epoch, each re-run
//     initializer) takes its next two words as (s1, s2) (TF's RandomSeedGenerator), so passes
//     differ, the first one included, but the sequence of passes is the same in every fresh
//     session.
//   seed == seed2 == 0 draws nondeterministic seeds instead.
//
// Prefetch: a thread started by the iterator calls the input's GetNext and keeps up to
// buffer_size results (elements, errors or the end) in order; GetNext takes the oldest. The
// iterator's destructor cancels and joins the thread (it finishes the input GetNext in
// progress first). buffer_size -1 (AUTOTUNE) uses kAutotuneBufferSize; 0 returns the input.
#include <algorithm>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <random>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "tensorflux/core/philox.h"
#include "tensorflux/data/dataset.h"

namespace tensorflux {
namespace {

// ---------------------------------------------------------------- Shuffle

// TF's seed generators: the seeds of each new iterator of a shuffle dataset.
class SeedGenerator {
 public:
  // reshuffle: a stream of seed pairs from Philox(seed, seed2); otherwise (seed, seed2) always.
  // seed == seed2 == 0: nondeterministic seeds.
  SeedGenerator(int64_t seed, int64_t seed2, bool reshuffle) : reshuffle_(reshuffle) {
    if (seed == 0 && seed2 == 0) {
      std::random_device rd;
      auto next64 = [&rd]() { return (uint64_t{rd()} << 32) | uint64_t{rd()}; };
      seed = static_cast<int64_t>(next64());
      seed2 = static_cast<int64_t>(next64());
    }
    seed_ = seed;
    seed2_ = seed2;
    words_ = random::PhiloxWordStream(random::Philox4x32::FromSeeds(seed, seed2));
  }
  std::pair<int64_t, int64_t> Next() {
    if (!reshuffle_) return {seed_, seed2_};
    std::lock_guard<std::mutex> l(mu_);
    const int64_t s1 = words_.Next32();
    return {s1, static_cast<int64_t>(words_.Next32())};
  }

 private:
  const bool reshuffle_;
  int64_t seed_ = 0, seed2_ = 0;
  std::mutex mu_;
  random::PhiloxWordStream words_{random::Philox4x32()};
};

class ShuffleDataset : public SameSpecDataset {
 public:
  ShuffleDataset(DatasetPtr input, int64_t buffer_size, std::shared_ptr<SeedGenerator> seeds)
      : SameSpecDataset(std::move(input)), buffer_size_(buffer_size), seeds_(std::move(seeds)) {}
  std::string DebugString() const override {
    return absl::StrCat("ShuffleDatasetOp::Dataset(", buffer_size_, ")");
  }

 protected:
  std::unique_ptr<IteratorBase> MakeIteratorInternal() const override {
    const auto [s1, s2] = seeds_->Next();
    return std::make_unique<Iterator>(this, random::Philox4x32::FromSeeds(s1, s2));
  }

 private:
  class Iterator : public UnaryDatasetIterator<ShuffleDataset> {
   public:
    Iterator(const ShuffleDataset* d, random::Philox4x32 gen)
        : UnaryDatasetIterator(d), words_(gen) {}
    Status GetNextInternal(IteratorContext* ctx, std::vector<Tensor>* out, bool* end) override {
      const size_t width = dataset()->output_dtypes().size();
      while (input_ != nullptr && count_ < dataset()->buffer_size_) {
        bool e_end = false;
        TX_RETURN_IF_ERROR(input_->GetNext(ctx, &scratch_, &e_end));
        if (e_end) {
          input_.reset();
          break;
        }
        if (scratch_.size() != width) {
          return errors::Internal("shuffle input gave ", scratch_.size(), " components, not ",
                                  width);
        }
        if (count_ == capacity_) Grow(width);
        Tensor* slot = Slot((head_ + count_) % capacity_, width);
        for (size_t c = 0; c < width; ++c) slot[c] = std::move(scratch_[c]);
        scratch_.clear();
        ++count_;
      }
      if (count_ == 0) {
        *end = true;
        return OkStatus();
      }
      // TF: the element at offset w % n goes out, the window's first element takes its slot.
      const int64_t offset = words_.Next32() % static_cast<uint64_t>(count_);
      Tensor* first = Slot(head_, width);
      Tensor* chosen = Slot((head_ + offset) % capacity_, width);
      out->assign(std::make_move_iterator(chosen), std::make_move_iterator(chosen + width));
      if (offset != 0) {
        for (size_t c = 0; c < width; ++c) chosen[c] = std::move(first[c]);
      }
      for (size_t c = 0; c < width; ++c) first[c] = Tensor();
      head_ = (head_ + 1) % capacity_;
      --count_;
      return OkStatus();
    }

   private:
    Tensor* Slot(int64_t i, size_t width) { return &ring_[static_cast<size_t>(i) * width]; }

    // Doubles the ring (up to buffer_size elements), its elements in window order from 0.
    void Grow(size_t width) {
      const int64_t cap =
          std::min<int64_t>(dataset()->buffer_size_, std::max<int64_t>(16, capacity_ * 2));
      std::vector<Tensor> ring(static_cast<size_t>(cap) * width);
      for (int64_t k = 0; k < count_; ++k) {
        Tensor* from = Slot((head_ + k) % capacity_, width);
        for (size_t c = 0; c < width; ++c) ring[k * width + c] = std::move(from[c]);
      }
      ring_ = std::move(ring);
      capacity_ = cap;
      head_ = 0;
    }

    // The window: count_ elements from slot head_ of a ring of capacity_ slots, output_dtypes()
    // .size() tensors each, back to back (no allocation per element).
    std::vector<Tensor> ring_;
    int64_t capacity_ = 0, head_ = 0, count_ = 0;
    std::vector<Tensor> scratch_;  // the input's next element
    random::PhiloxWordStream words_;
  };

  const int64_t buffer_size_;
  const std::shared_ptr<SeedGenerator> seeds_;
};

class ShuffleDatasetOp : public UnaryDatasetOpKernel {
 public:
  explicit ShuffleDatasetOp(OpKernelConstruction* ctx) : UnaryDatasetOpKernel(ctx) {
    Status s = ctx->GetAttr("reshuffle_each_iteration", &reshuffle_);
    if (!s.ok()) ctx->SetStatus(s);
  }

 protected:
  StatusOr<DatasetPtr> MakeDataset(OpKernelContext* ctx, DatasetPtr input) override {
    TX_ASSIGN_OR_RETURN(int64_t buffer_size, ParseScalarInt64(ctx, 1, "buffer_size"));
    TX_ASSIGN_OR_RETURN(int64_t seed, ParseScalarInt64(ctx, 2, "seed"));
    TX_ASSIGN_OR_RETURN(int64_t seed2, ParseScalarInt64(ctx, 3, "seed2"));
    if (buffer_size <= 0) {
      return errors::InvalidArgument("buffer_size must be greater than zero, got ",
                                     buffer_size);
    }
    std::shared_ptr<SeedGenerator> seeds;
    if (!reshuffle_) {
      seeds = std::make_shared<SeedGenerator>(seed, seed2, false);
    } else {
      std::lock_guard<std::mutex> l(mu_);
      if (generator_ == nullptr || seed != seed_ || seed2 != seed2_ || (seed == 0 && seed2 == 0)) {
        generator_ = std::make_shared<SeedGenerator>(seed, seed2, true);
        seed_ = seed;
        seed2_ = seed2;
      }
      seeds = generator_;
    }
    return DatasetPtr(
        std::make_shared<ShuffleDataset>(std::move(input), buffer_size, std::move(seeds)));
  }

 private:
  bool reshuffle_ = true;
  std::mutex mu_;
  std::shared_ptr<SeedGenerator> generator_;
  int64_t seed_ = 0, seed2_ = 0;
};

REGISTER_KERNEL_BUILDER(Name("ShuffleDataset").Device(DEVICE_CPU), ShuffleDatasetOp);

// ---------------------------------------------------------------- Prefetch

constexpr int64_t kAutotuneBufferSize = 16;

class PrefetchDataset : public SameSpecDataset {
 public:
  PrefetchDataset(DatasetPtr input, int64_t buffer_size)
      : SameSpecDataset(std::move(input)), buffer_size_(buffer_size) {}
  std::string DebugString() const override {
    return absl::StrCat("PrefetchDatasetOp::Dataset(", buffer_size_, ")");
  }

 protected:
  std::unique_ptr<IteratorBase> MakeIteratorInternal() const override {
    return std::make_unique<Iterator>(this);
  }

 private:
  class Iterator : public UnaryDatasetIterator<PrefetchDataset> {
   public:
    using UnaryDatasetIterator::UnaryDatasetIterator;
    ~Iterator() override {
      {
        std::lock_guard<std::mutex> l(mu_);
        cancelled_ = true;
      }
      cv_.notify_all();
      if (thread_.joinable()) thread_.join();
    }
    Status Initialize(IteratorContext* ctx) override {
      ctx_ = *ctx;
      TX_RETURN_IF_ERROR(UnaryDatasetIterator::Initialize(ctx));
      thread_ = std::thread([this] { Produce(); });
      return OkStatus();
    }
    Status GetNextInternal(IteratorContext*, std::vector<Tensor>* out, bool* end) override {
      std::unique_lock<std::mutex> l(mu_);
      cv_.wait(l, [this] { return !buffer_.empty(); });
      if (buffer_.front().end) {  // the end stays, so later calls see it too
        *end = true;
        return buffer_.front().status;
      }
      Result r = std::move(buffer_.front());
      buffer_.pop_front();
      l.unlock();
      cv_.notify_all();
      *out = std::move(r.element);
      *end = r.end;
      return r.status;
    }

   private:
    struct Result {
      Status status;
      std::vector<Tensor> element;
      bool end = false;
    };

    void Produce() {
      while (true) {
        {
          std::unique_lock<std::mutex> l(mu_);
          cv_.wait(l, [this] {
            return cancelled_ ||
                   static_cast<int64_t>(buffer_.size()) < dataset()->buffer_size_;
          });
          if (cancelled_) return;
        }
        Result r;
        r.status = input_->GetNext(&ctx_, &r.element, &r.end);
        const bool last = r.status.ok() && r.end;
        {
          std::lock_guard<std::mutex> l(mu_);
          buffer_.push_back(std::move(r));
        }
        cv_.notify_all();
        if (last) return;
      }
    }

    IteratorContext ctx_;
    std::mutex mu_;
    std::condition_variable cv_;
    std::deque<Result> buffer_;
    bool cancelled_ = false;
    std::thread thread_;  // last: joined (in the destructor) before the members above go
  };

  const int64_t buffer_size_;
};

class PrefetchDatasetOp : public UnaryDatasetOpKernel {
 public:
  using UnaryDatasetOpKernel::UnaryDatasetOpKernel;

 protected:
  StatusOr<DatasetPtr> MakeDataset(OpKernelContext* ctx, DatasetPtr input) override {
    TX_ASSIGN_OR_RETURN(int64_t buffer_size, ParseScalarInt64(ctx, 1, "buffer_size"));
    if (buffer_size < -1) {
      return errors::InvalidArgument("buffer_size must be >= 0 or -1 (AUTOTUNE), got ",
                                     buffer_size);
    }
    if (buffer_size == 0) return input;
    if (buffer_size == -1) buffer_size = kAutotuneBufferSize;
    return DatasetPtr(std::make_shared<PrefetchDataset>(std::move(input), buffer_size));
  }
};

REGISTER_KERNEL_BUILDER(Name("PrefetchDataset").Device(DEVICE_CPU), PrefetchDatasetOp);

}  // namespace
}  // namespace tensorflux
