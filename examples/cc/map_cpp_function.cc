// A dataset mapped by a C++ function (no FunctionDef, no Python): register the function, build
// Range(8) -> map(f, 2 threads) -> batch(4) with the C++ client API, and pull the batches through
// an iterator. Built by CMake as build/bin/example_map_cpp_function.
#include <cmath>
#include <cstdio>
#include <vector>

#include "tensorflux/cc/client_session.h"
#include "tensorflux/cc/dataset_ops.h"
#include "tensorflux/cc/ops/ops.h"
#include "tensorflux/framework/cc_function.h"

int main() {
  using namespace tensorflux;
  // f(i) = [sqrt(i), i / 2] as a float [2] vector. It runs on the map's threads: keep it
  // thread-safe. A Status it returns becomes IteratorGetNext's error.
  CppFunction f;
  f.arg_types = {DT_INT64};
  f.ret_types = {DT_FLOAT};
  f.ret_shapes = {PartialTensorShape({2})};
  f.fn = [](const std::vector<Tensor>& in, std::vector<Tensor>* out) {
    const int64_t i = in[0].scalar<int64_t>();
    if (i < 0) return errors::InvalidArgument("negative element ", i);
    Tensor y(DT_FLOAT, TensorShape({2}));
    y.data<float>()[0] = std::sqrt(static_cast<float>(i));
    y.data<float>()[1] = static_cast<float>(i) / 2;
    out->push_back(std::move(y));
    return OkStatus();
  };
  Status s = RegisterCppFunction("sqrt_and_half", std::move(f));

  Scope root = Scope::NewRootScope();
  auto range = ops::RangeDataset(root, int64_t{0}, int64_t{8}, int64_t{1}, {DT_INT64},
                                 {PartialTensorShape({})});
  auto mapped = ops::MapDatasetWithCppFunction(root, range, "sqrt_and_half",
                                               /*num_parallel_calls=*/2);
  const PartialTensorShape batch_shape({-1, 2});
  auto batched = ops::BatchDatasetV2(root, mapped, int64_t{4}, false, {DT_FLOAT}, {batch_shape});
  auto it = ops::IteratorV2(root, "", "", {DT_FLOAT}, {batch_shape});
  auto init = ops::MakeIterator(root, batched, it);
  auto next = ops::IteratorGetNext(root, it, {DT_FLOAT}, {batch_shape});

  ClientSession session(root);
  std::vector<Tensor> out;
  if (s.ok()) s = session.Run({}, {}, {init}, &out);
  while (s.ok()) {
    s = session.Run({next[0]}, &out);
    if (s.ok()) std::printf("batch %s\n", out[0].SummarizeValue().c_str());
  }
  if (!absl::IsOutOfRange(s)) {  // OUT_OF_RANGE: the end of the data
    std::fprintf(stderr, "%s\n", StatusToString(s).c_str());
    return 1;
  }
  return 0;
}
