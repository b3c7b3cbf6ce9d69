// ShuffleDataset (a random-draw buffer) and PrefetchDataset (a background producer thread).
//
// Shuffle: the iterator keeps up to buffer_size input elements; each GetNext refills the
// buffer, draws a uniform index from a Philox stream (core/philox.h), returns that element and
// moves the last one into its slot. The stream of an iterator comes from (seed, seed2):
//   - reshuffle_each_iteration = false: every iterator restarts the stream at (seed, seed2), so
//     every pass has the same order;
//   - reshuffle_each_iteration = true: the kernel keeps one generator per (seed, seed2) for as
//     long as the session keeps it (TF 1.x keeps it in the resource manager), and every new
//     iterator (each repeat() epoch, each re-run initializer) starts at the next range of it, so
//     passes differ but the sequence of passes is the same in every fresh session.
//   seed == seed2 == 0 draws a nondeterministic generator.
//
// Prefetch: a thread started by the iterator calls the input's GetNext and keeps up to
// buffer_size results (elements, errors or the end) in order; GetNext takes the oldest. The
// iterator's destructor cancels and joins the thread (it finishes the input GetNext in
// progress first). buffer_size -1 (AUTOTUNE) uses kAutotuneBufferSize; 0 returns the input.
#include <algorithm>
#include <condition_variable>
#include <deque>
#include <thread>

#include "absl/strings/str_cat.h"
#include "tensorflux/core/philox.h"
#include "tensorflux/data/dataset.h"

namespace tensorflux {
namespace {

// ---------------------------------------------------------------- Shuffle

class ShuffleDataset : public SameSpecDataset {
 public:
  // `generator` non-null: reshuffle each iteration from it; null: every iterator starts at
  // `fixed`.
  ShuffleDataset(DatasetPtr input, int64_t buffer_size, std::shared_ptr<random::GuardedPhilox> gen,
                 random::Philox4x32 fixed)
      : SameSpecDataset(std::move(input)),
        buffer_size_(buffer_size),
        generator_(std::move(gen)),
        fixed_(fixed) {}
  std::string DebugString() const override {
    return absl::StrCat("ShuffleDatasetOp::Dataset(", buffer_size_, ")");
  }

 protected:
  std::unique_ptr<IteratorBase> MakeIteratorInternal() const override {
    // 2^40 counters per iterator: more words than any pass can draw.
    return std::make_unique<Iterator>(
        this, generator_ != nullptr ? generator_->Reserve(uint64_t{1} << 40) : fixed_);
  }

 private:
  class Iterator : public UnaryDatasetIterator<ShuffleDataset> {
   public:
    Iterator(const ShuffleDataset* d, random::Philox4x32 gen)
        : UnaryDatasetIterator(d), words_(gen) {}
    Status GetNextInternal(IteratorContext* ctx, std::vector<Tensor>* out, bool* end) override {
      const size_t width = dataset()->output_dtypes().size();
      while (input_ != nullptr &&
             static_cast<int64_t>(buffer_.size() / width) < dataset()->buffer_size_) {
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
        for (Tensor& t : scratch_) buffer_.push_back(std::move(t));
        scratch_.clear();
      }
      const size_t n = buffer_.size() / width;
      if (n == 0) {
        *end = true;
        return OkStatus();
      }
      // Element i goes out; the last one takes its slot. The draws use the word stream in
      // order, one word ahead, so that the next draw's slot can be prefetched now.
      if (!have_next_) next_word_ = words_.Next64();
      const size_t i = next_word_ % n;
      next_word_ = words_.Next64();
      have_next_ = true;
      auto slot = buffer_.begin() + static_cast<ptrdiff_t>(i * width);
      auto last = buffer_.end() - static_cast<ptrdiff_t>(width);
      out->assign(std::make_move_iterator(slot), std::make_move_iterator(slot + width));
      if (i + 1 != n) std::move(last, buffer_.end(), slot);
      buffer_.erase(last, buffer_.end());
      Prefetch(*out, input_ != nullptr ? n : n - 1);
      return OkStatus();
    }

   private:
    // A random draw from a large buffer is a cache miss per slot and per element buffer: start
    // loading the next draw's slot (if the buffer is still `next_n` elements then) and the
    // first bytes of the element going out, which its consumer (e.g. a batch) reads next.
    void Prefetch(const std::vector<Tensor>& element, size_t next_n) const {
      const size_t width = element.size();
      if (next_n > 0 && (next_word_ % next_n + 1) * width <= buffer_.size())
        __builtin_prefetch(&buffer_[(next_word_ % next_n) * width]);
      for (const Tensor& t : element) {
        const char* p = static_cast<const char*>(t.raw_data());
        const size_t bytes = std::min<size_t>(t.TotalBytes(), 4096);
        for (size_t b = 0; p != nullptr && b < bytes; b += 64) __builtin_prefetch(p + b);
      }
    }


    // The buffered elements back to back, output_dtypes().size() tensors each: no allocation
    // per element (an element's vector would be one).
    std::vector<Tensor> buffer_;
    std::vector<Tensor> scratch_;  // the input's next element
    random::PhiloxWordStream words_;
    uint64_t next_word_ = 0;  // the next draw's word (valid when have_next_)
    bool have_next_ = false;
  };

  const int64_t buffer_size_;
  const std::shared_ptr<random::GuardedPhilox> generator_;
  const random::Philox4x32 fixed_;
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
    std::shared_ptr<random::GuardedPhilox> gen;
    {
      std::lock_guard<std::mutex> l(mu_);
      if (generator_ == nullptr || seed != seed_ || seed2 != seed2_ || (seed == 0 && seed2 == 0)) {
        generator_ = std::make_shared<random::GuardedPhilox>();
        generator_->Init(seed, seed2);
        seed_ = seed;
        seed2_ = seed2;
      }
      gen = generator_;
    }
    random::Philox4x32 fixed;
    if (!reshuffle_) {
      fixed = gen->Reserve(1);  // (seed, seed2)'s first range, or a random one for (0, 0)
      if (seed != 0 || seed2 != 0) fixed = random::Philox4x32::FromSeeds(seed, seed2);
      gen = nullptr;
    }
    return DatasetPtr(
        std::make_shared<ShuffleDataset>(std::move(input), buffer_size, std::move(gen), fixed));
  }

 private:
  bool reshuffle_ = true;
  std::mutex mu_;
  std::shared_ptr<random::GuardedPhilox> generator_;
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
