// A per-thread cap on ThreadPool::ParallelFor (TF's ScopedPerThreadMaxParallelism): while a
// ScopedMaxParallelism lives, ParallelFor calls made by its thread use at most `max` threads
// (1: they run inline on the caller); 0 lifts the cap. Scopes nest (the innermost wins) and
// restore the previous cap when they end. tf.data iterators set it from
// DatasetOptions::max_intra_op_parallelism around each GetNext (data/dataset.cc).
#pragma once

namespace tensorflux {

class ScopedMaxParallelism {
 public:
  explicit ScopedMaxParallelism(int max);
  ~ScopedMaxParallelism();
  ScopedMaxParallelism(const ScopedMaxParallelism&) = delete;
  ScopedMaxParallelism& operator=(const ScopedMaxParallelism&) = delete;

  // The calling thread's cap; 0 when none.
  static int Current();

 private:
  int previous_;
};

}  // namespace tensorflux
