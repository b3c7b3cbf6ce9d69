// Helpers for the dataset tests.
#pragma once

#include <memory>
#include <vector>

#include "tensorflux/data/dataset.h"

namespace tensorflux {
namespace test {

// Every remaining element of `it` (GetNext until the end, or its first error).
inline StatusOr<std::vector<std::vector<Tensor>>> DrainIterator(IteratorBase* it,
                                                                IteratorContext* ctx) {
  std::vector<std::vector<Tensor>> out;
  while (true) {
    std::vector<Tensor> e;
    bool end = false;
    TX_RETURN_IF_ERROR(it->GetNext(ctx, &e, &end));
    if (end) return out;
    out.push_back(std::move(e));
  }
}

}  // namespace test
}  // namespace tensorflux
