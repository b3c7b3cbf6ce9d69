#include "tensorflux/core/max_parallelism.h"

namespace tensorflux {
namespace {

thread_local int tls_max_parallelism = 0;

}  // namespace

ScopedMaxParallelism::ScopedMaxParallelism(int max) : previous_(tls_max_parallelism) {
  tls_max_parallelism = max > 0 ? max : 0;
}

ScopedMaxParallelism::~ScopedMaxParallelism() { tls_max_parallelism = previous_; }

int ScopedMaxParallelism::Current() { return tls_max_parallelism; }

}  // namespace tensorflux
