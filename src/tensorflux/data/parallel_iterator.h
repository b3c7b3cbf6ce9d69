// Base of the iterators whose worker threads pull their input themselves (ParallelMapDatasetV2 in
// data/map_datasets.cc, ParallelInterleaveDatasetV4 in data/parallel_interleave_dataset.cc).
//
// The workers are plain std::threads started by the iterator's first GetNext (with a copy of its
// context) and joined by StopWorkers, which the derived iterator's destructor must call first
// (its members outlive the threads that way). Idle workers block on worker_cv_ instead of
// spinning, and no element is handed from thread to thread: a worker takes the next input
// element itself (PullInput, in input order) and the consumer only waits on cv_ when nothing is
// ready. Lock order: input_mu_ before mu_.
#pragma once

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "tensorflux/data/captured_function.h"
#include "tensorflux/data/dataset.h"

namespace tensorflux {

template <typename DatasetType>
class ParallelDatasetIterator : public DatasetIterator<DatasetType> {
 public:
  using DatasetIterator<DatasetType>::DatasetIterator;
  ~ParallelDatasetIterator() override { StopWorkers(); }

 protected:
  // Instantiates `fn` (returning `rets`) and makes the input's iterator.
  Status InitializeParallel(IteratorContext* ctx, const CapturedFunction& fn,
                            const DataTypeVector& rets, const DatasetPtr& input) {
    TX_RETURN_IF_ERROR(fn.Instantiate(ctx, rets, &fn_));
    TX_ASSIGN_OR_RETURN(input_, input->MakeIterator(ctx));
    return OkStatus();
  }
  // On the first call: copies *ctx and starts n threads running `loop`, which must return once
  // it sees cancelled_.
  void StartWorkersOnce(IteratorContext* ctx, int n, const std::function<void()>& loop) {
    if (!threads_.empty()) return;
    ctx_ = *ctx;
    for (int i = 0; i < n; ++i) threads_.emplace_back(loop);
  }
  void StopWorkers() {
    {
      std::lock_guard<std::mutex> l(mu_);
      cancelled_ = true;
    }
    worker_cv_.notify_all();
    for (std::thread& t : threads_) t.join();
    threads_.clear();
  }
  // Takes the next input element into *in under input_mu_ (dropping the input at its end), then
  // calls queue(status, input_ended) with mu_ held as well, so that what `queue` records is in
  // input order. Returns queue's result.
  template <typename Queue>
  auto PullInput(std::vector<Tensor>* in, Queue&& queue) {
    std::lock_guard<std::mutex> il(input_mu_);
    bool in_end = input_ == nullptr;
    Status s;
    if (!in_end) s = input_->GetNext(&ctx_, in, &in_end);
    in_end = in_end && s.ok();
    if (in_end) input_.reset();
    std::lock_guard<std::mutex> l(mu_);
    return queue(s, in_end);
  }

  FunctionInstance fn_;
  IteratorContext ctx_;  // the first GetNext's, for the workers

  std::mutex mu_;
  std::condition_variable cv_;         // the consumer waits here
  std::condition_variable worker_cv_;  // idle workers wait here
  bool cancelled_ = false;             // guarded by mu_
  bool consumer_waiting_ = false;      // guarded by mu_

 private:
  std::mutex input_mu_;
  std::unique_ptr<IteratorBase> input_;  // guarded by input_mu_
  std::vector<std::thread> threads_;
};

}  // namespace tensorflux
