#include "tensorflux/summary/histogram.h"

#include <algorithm>
#include <cfloat>

namespace tensorflux {
namespace summary {

const std::vector<double>& DefaultBucketLimits() {
  static const std::vector<double>* limits = [] {
    std::vector<double> positive;
    for (double v = 1.0e-12; v < 1.0e20; v *= 1.1) positive.push_back(v);
    positive.push_back(DBL_MAX);
    auto* all = new std::vector<double>;
    all->reserve(2 * positive.size() + 1);
    for (auto it = positive.rbegin(); it != positive.rend(); ++it) all->push_back(-*it);
    all->push_back(0.0);
    all->insert(all->end(), positive.begin(), positive.end());
    return all;
  }();
  return *limits;
}

Histogram::Histogram()
    : limits_(DefaultBucketLimits()), buckets_(limits_.size(), 0.0), min_(DBL_MAX),
      max_(-DBL_MAX) {}

// Each square is rounded before it is summed, as TF's (non-FMA) build does: with
// -march=native GCC would fuse `sum_squares_ += value * value` into one FMA and change the
// low bits of sum_squares.
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("fp-contract=off")))
#endif
void Histogram::Add(double value) {
  size_t b = std::upper_bound(limits_.begin(), limits_.end(), value) - limits_.begin();
  if (b >= buckets_.size()) b = buckets_.size() - 1;  // DBL_MAX itself, +Inf, NaN
  buckets_[b] += 1.0;
  min_ = std::min(min_, value);
  max_ = std::max(max_, value);
  num_ += 1.0;
  sum_ += value;
  sum_squares_ += value * value;
}

void Histogram::EncodeToProto(HistogramProto* proto, bool preserve_zero_buckets) const {
  proto->Clear();
  proto->set_min(min_);
  proto->set_max(max_);
  proto->set_num(num_);
  proto->set_sum(sum_);
  proto->set_sum_squares(sum_squares_);
  for (size_t i = 0; i < buckets_.size();) {
    double limit = limits_[i];
    double count = buckets_[i];
    ++i;
    if (!preserve_zero_buckets && count == 0.0) {
      // A run of empty buckets becomes one bucket ending where the run ends.
      while (i < buckets_.size() && buckets_[i] == 0.0) limit = limits_[i++];
    }
    proto->add_bucket_limit(limit);
    proto->add_bucket(count);
  }
}

}  // namespace summary
}  // namespace tensorflux
