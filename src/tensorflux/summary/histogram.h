// Histogram: the value distribution a HistogramSummary reports, with TensorFlow's default bucket
// limits (core/lib/histogram): 0, then +-1e-12 growing by a factor 1.1 up to 1e20, then +-DBL_MAX
// (1549 limits). Bucket i counts the values v with limit[i-1] <= v < limit[i].
#pragma once

#include <vector>

#include "tensorflux/summary.pb.h"

namespace tensorflux {
namespace summary {

class Histogram {
 public:
  Histogram();
  // Adds one value. The caller rejects NaN/Inf (HistogramSummary does, naming the tag); here an
  // infinity lands in the last (or first) bucket and a NaN in the last one.
  void Add(double value);
  // Min, max, count, sum, sum of squares and the buckets. Each run of empty buckets becomes one
  // empty bucket ending at the run's last limit (so the proto stays small), unless
  // preserve_zero_buckets, as TF.
  void EncodeToProto(HistogramProto* proto, bool preserve_zero_buckets) const;

  double num() const { return num_; }

 private:
  const std::vector<double>& limits_;
  std::vector<double> buckets_;
  double min_, max_, num_ = 0, sum_ = 0, sum_squares_ = 0;
};

// TF's default bucket limits (shared, built once).
const std::vector<double>& DefaultBucketLimits();

}  // namespace summary
}  // namespace tensorflux
