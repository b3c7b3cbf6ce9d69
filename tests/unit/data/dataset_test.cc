// tf.data framework: dataset kernels run one by one (KernelRunner), iterated through the C++
// iterator API, against hand-worked sequences.
#include "tensorflux/data/dataset.h"

#include <numeric>
#include <set>

#include "gtest/gtest.h"
#include "../kernels/kernel_test_util.h"
#include "dataset_test_util.h"

namespace tensorflux {
namespace {

Tensor I64(int64_t v) { return Tensor::Scalar<int64_t>(v); }

std::vector<PartialTensorShape> Shapes(std::vector<PartialTensorShape> s) { return s; }

// A RangeDataset handle for [start, stop) by step.
StatusOr<Tensor> Range(int64_t start, int64_t stop, int64_t step = 1) {
  std::vector<DataType> types{DT_INT64};
  return test::KernelRunner("RangeDataset")
      .Input(I64(start))
      .Input(I64(stop))
      .Input(I64(step))
      .Attr("output_types", absl::Span<const DataType>(types))
      .Attr("output_shapes",
            absl::Span<const PartialTensorShape>(Shapes({PartialTensorShape::Scalar()})))
      .RunOne();
}

// Applies a unary dataset op with extra scalar inputs; output spec taken from `spec_shapes`.
StatusOr<Tensor> Apply(const std::string& op, const Tensor& input, std::vector<Tensor> args,
                       std::vector<PartialTensorShape> spec_shapes = {PartialTensorShape::Scalar()},
                       std::vector<DataType> types = {DT_INT64}) {
  test::KernelRunner r(op);
  r.Input(input);
  for (Tensor& a : args) r.Input(std::move(a));
  r.Attr("output_types", absl::Span<const DataType>(types));
  r.Attr("output_shapes", absl::Span<const PartialTensorShape>(spec_shapes));
  return r.RunOne();
}

// All elements of the dataset in `handle`, component 0 of each as int64 values.
StatusOr<std::vector<std::vector<int64_t>>> Drain(const Tensor& handle, int64_t limit = 1000) {
  TX_ASSIGN_OR_RETURN(DatasetPtr d, GetDatasetFromVariantTensor(handle));
  IteratorContext ctx;
  TX_ASSIGN_OR_RETURN(std::unique_ptr<IteratorBase> it, d->MakeIterator(&ctx));
  std::vector<std::vector<int64_t>> out;
  for (int64_t n = 0; n < limit; ++n) {
    std::vector<Tensor> e;
    bool end = false;
    TX_RETURN_IF_ERROR(it->GetNext(&ctx, &e, &end));
    if (end) break;
    auto f = e[0].flat<int64_t>();
    out.emplace_back(f.begin(), f.end());
  }
  return out;
}

std::vector<std::vector<int64_t>> Scalars(std::vector<int64_t> v) {
  std::vector<std::vector<int64_t>> out;
  for (int64_t x : v) out.push_back({x});
  return out;
}

TEST(VariantTensorTest, HoldsDatasetSharedByCopies) {
  auto h = Range(0, 3);
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ(h->dtype(), DT_VARIANT);
  EXPECT_EQ(h->dims(), 0);
  Tensor copy = h->DeepCopy();
  auto a = GetDatasetFromVariantTensor(*h);
  auto b = GetDatasetFromVariantTensor(copy);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->get(), b->get());  // a deep copy copies the reference, not the dataset
  EXPECT_NE(h->DebugString().find("RangeDatasetOp::Dataset(0, 3, 1)"), std::string::npos);
  // An int tensor is not a dataset.
  EXPECT_EQ(GetDatasetFromVariantTensor(I64(1)).status().code(), absl::StatusCode::kInvalidArgument);
  // An empty variant is not a dataset either.
  Tensor empty(DT_VARIANT, TensorShape());
  EXPECT_EQ(GetDatasetFromVariantTensor(empty).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(DatasetTest, RangeFollowsPythonRange) {
  auto h = Range(0, 10, 3);
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(*Drain(*h), Scalars({0, 3, 6, 9}));
  EXPECT_EQ(*Drain(*Range(5, 0, -2)), Scalars({5, 3, 1}));
  EXPECT_TRUE(Drain(*Range(3, 3))->empty());
  EXPECT_EQ(Range(0, 5, 0).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(DatasetTest, TensorSliceRowsAndErrors) {
  Tensor m = test::FromDoubles(DT_INT64, TensorShape({3, 2}), {1, 2, 3, 4, 5, 6});
  std::vector<PartialTensorShape> row{PartialTensorShape({2})};
  auto h = test::KernelRunner("TensorSliceDataset")
               .Input(m)
               .Attr("output_shapes", absl::Span<const PartialTensorShape>(row))
               .RunOne();
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ(*Drain(*h), (std::vector<std::vector<int64_t>>{{1, 2}, {3, 4}, {5, 6}}));
  // Components with different dim 0.
  std::vector<PartialTensorShape> two{PartialTensorShape({2}), PartialTensorShape::Scalar()};
  auto bad = test::KernelRunner("TensorSliceDataset")
                 .Input(m)
                 .Input(test::FromDoubles(DT_INT64, TensorShape({4}), {1, 2, 3, 4}))
                 .Attr("output_shapes", absl::Span<const PartialTensorShape>(two))
                 .RunOne();
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  // A scalar cannot be sliced.
  std::vector<PartialTensorShape> scalar{PartialTensorShape::Scalar()};
  auto bad2 = test::KernelRunner("TensorSliceDataset")
                  .Input(I64(3))
                  .Attr("output_shapes", absl::Span<const PartialTensorShape>(scalar))
                  .RunOne();
  EXPECT_EQ(bad2.status().code(), absl::StatusCode::kInvalidArgument);
  // output_shapes that contradict the components.
  auto bad3 = test::KernelRunner("TensorSliceDataset")
                  .Input(m)
                  .Attr("output_shapes", absl::Span<const PartialTensorShape>(scalar))
                  .RunOne();
  EXPECT_EQ(bad3.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(DatasetTest, TakeSkipRepeatShard) {
  Tensor r = *Range(0, 5);
  EXPECT_EQ(*Drain(*Apply("TakeDataset", r, {I64(2)})), Scalars({0, 1}));
  EXPECT_EQ(*Drain(*Apply("TakeDataset", r, {I64(-1)})), Scalars({0, 1, 2, 3, 4}));
  EXPECT_EQ(*Drain(*Apply("SkipDataset", r, {I64(3)})), Scalars({3, 4}));
  EXPECT_TRUE(Drain(*Apply("SkipDataset", r, {I64(-1)}))->empty());
  EXPECT_EQ(*Drain(*Apply("RepeatDataset", *Range(0, 2), {I64(3)})),
            Scalars({0, 1, 0, 1, 0, 1}));
  EXPECT_TRUE(Drain(*Apply("RepeatDataset", r, {I64(0)}))->empty());
  // Forever over an empty input ends instead of spinning.
  EXPECT_TRUE(Drain(*Apply("RepeatDataset", *Range(0, 0), {I64(-1)}))->empty());
  // Forever: take 7 of it.
  auto forever = Apply("RepeatDataset", *Range(0, 3), {I64(-1)});
  EXPECT_EQ(*Drain(*Apply("TakeDataset", *forever, {I64(7)})), Scalars({0, 1, 2, 0, 1, 2, 0}));
  EXPECT_EQ(*Drain(*Apply("ShardDataset", *Range(0, 10), {I64(3), I64(1)})), Scalars({1, 4, 7}));
  EXPECT_EQ(Apply("ShardDataset", r, {I64(3), I64(3)}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Apply("ShardDataset", r, {I64(0), I64(0)}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Apply("ShardDataset", r, {I64(2), I64(-1)}).status().code(),
            absl::StatusCode::kInvalidArgument);
  // A non-dataset input names input_dataset.
  auto not_ds = Apply("TakeDataset", I64(3), {I64(1)});
  EXPECT_EQ(not_ds.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(not_ds.status().message()).find("input_dataset"), std::string::npos);
}

TEST(DatasetTest, BatchAndDropRemainder) {
  std::vector<PartialTensorShape> b{PartialTensorShape({-1})};
  auto h = Apply("BatchDatasetV2", *Range(0, 7), {I64(3), Tensor::Scalar(false)}, b);
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ(*Drain(*h), (std::vector<std::vector<int64_t>>{{0, 1, 2}, {3, 4, 5}, {6}}));
  std::vector<PartialTensorShape> b3{PartialTensorShape({3})};
  auto d = Apply("BatchDatasetV2", *Range(0, 7), {I64(3), Tensor::Scalar(true)}, b3);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(*Drain(*d), (std::vector<std::vector<int64_t>>{{0, 1, 2}, {3, 4, 5}}));
  EXPECT_EQ(Apply("BatchDatasetV2", *Range(0, 7), {I64(0), Tensor::Scalar(false)}, b)
                .status().code(),
            absl::StatusCode::kInvalidArgument);
  // Static output_shapes that do not match the dataset's (batch dim 3 without drop_remainder
  // is [?], compatible; rank 2 is not).
  std::vector<PartialTensorShape> wrong{PartialTensorShape({-1, 2})};
  EXPECT_EQ(Apply("BatchDatasetV2", *Range(0, 7), {I64(3), Tensor::Scalar(false)}, wrong)
                .status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(DatasetTest, PaddedBatchPadsToLargestAndToFixedShape) {
  // Elements of range(1, 4) batched after... built by hand: three vectors of lengths 1, 3, 2.
  Tensor rows = test::FromDoubles(DT_INT64, TensorShape({3, 3}), {1, 0, 0, 2, 3, 4, 5, 6, 0});
  std::vector<PartialTensorShape> row_shape{PartialTensorShape({3})};
  auto slices = test::KernelRunner("TensorSliceDataset")
                    .Input(rows)
                    .Attr("output_shapes", absl::Span<const PartialTensorShape>(row_shape))
                    .RunOne();
  ASSERT_TRUE(slices.ok());
  // Take the rows as they are (length 3), pad to [-1] and to [5] with -7.
  std::vector<PartialTensorShape> out{PartialTensorShape({-1, -1})};
  auto run = [&](std::vector<int64_t> padded, int64_t batch) {
    std::vector<DataType> types{DT_INT64};
    return test::KernelRunner("PaddedBatchDatasetV2")
        .Input(*slices)
        .Input(I64(batch))
        .Input(test::FromDoubles(DT_INT64, TensorShape({1}), {double(padded[0])}))
        .Input(I64(-7))
        .Input(Tensor::Scalar(false))
        .Attr("Toutput_types", absl::Span<const DataType>(types))
        .Attr("output_shapes", absl::Span<const PartialTensorShape>(out))
        .RunOne();
  };
  auto same = run({-1}, 2);
  ASSERT_TRUE(same.ok()) << same.status();
  EXPECT_EQ(*Drain(*same), (std::vector<std::vector<int64_t>>{{1, 0, 0, 2, 3, 4}, {5, 6, 0}}));
  auto five = run({5}, 2);
  ASSERT_TRUE(five.ok()) << five.status();
  EXPECT_EQ(*Drain(*five), (std::vector<std::vector<int64_t>>{
                               {1, 0, 0, -7, -7, 2, 3, 4, -7, -7}, {5, 6, 0, -7, -7}}));
  // Padding to a smaller size than an element fails when the batch is made (TF's DATA_LOSS).
  auto two = run({2}, 2);
  ASSERT_TRUE(two.ok());
  EXPECT_EQ(Drain(*two).status().code(), absl::StatusCode::kDataLoss);
}

// The permutation a ShuffleDataset(range(n), buffer, seed, seed2) produces on each of
// `passes` iterators of one dataset.
std::vector<std::vector<int64_t>> ShufflePasses(int64_t n, int64_t buffer, int64_t seed,
                                                int64_t seed2, bool reshuffle, int passes) {
  test::KernelRunner r("ShuffleDataset");
  std::vector<DataType> types{DT_INT64};
  std::vector<PartialTensorShape> shapes{PartialTensorShape::Scalar()};
  auto h = r.Input(*Range(0, n))
               .Input(I64(buffer))
               .Input(I64(seed))
               .Input(I64(seed2))
               .Attr("reshuffle_each_iteration", reshuffle)
               .Attr("output_types", absl::Span<const DataType>(types))
               .Attr("output_shapes", absl::Span<const PartialTensorShape>(shapes))
               .RunOne();
  EXPECT_TRUE(h.ok()) << h.status();
  std::vector<std::vector<int64_t>> out;
  for (int p = 0; p < passes; ++p) {
    std::vector<int64_t> order;
    auto pass = Drain(*h);
    EXPECT_TRUE(pass.ok()) << pass.status();
    for (const auto& e : *pass) order.push_back(e[0]);
    out.push_back(order);
  }
  return out;
}

TEST(DatasetTest, ShuffleIsADeterministicPermutation) {
  auto a = ShufflePasses(50, 10, 7, 3, /*reshuffle=*/true, 2);
  auto b = ShufflePasses(50, 10, 7, 3, /*reshuffle=*/true, 2);
  EXPECT_EQ(a, b);  // same seeds, fresh kernel: same sequence of passes
  std::vector<int64_t> sorted = a[0];
  std::sort(sorted.begin(), sorted.end());
  std::vector<int64_t> iota(50);
  std::iota(iota.begin(), iota.end(), 0);
  EXPECT_EQ(sorted, iota);
  EXPECT_NE(a[0], iota);
  EXPECT_NE(a[0], a[1]);  // reshuffled on the second pass
  // A buffer of b elements can move an element at most b - 1 places earlier.
  for (size_t i = 0; i < a[0].size(); ++i) EXPECT_LE(a[0][i], static_cast<int64_t>(i) + 9);
  auto fixed = ShufflePasses(50, 10, 7, 3, /*reshuffle=*/false, 2);
  EXPECT_EQ(fixed[0], fixed[1]);
  EXPECT_NE(ShufflePasses(50, 10, 8, 3, true, 1)[0], a[0]);
  // buffer 1 keeps the order.
  EXPECT_EQ(ShufflePasses(5, 1, 7, 3, true, 1)[0], (std::vector<int64_t>{0, 1, 2, 3, 4}));
}

// TensorFlow 2.15's orders (tests/data/oracle/conformance/dataset_ops: shuffle(seed=s) in a
// graph without a graph seed has seeds (87654321, s)).
TEST(DatasetTest, ShuffleGivesTensorFlowsOrder) {
  EXPECT_EQ(ShufflePasses(10, 4, 87654321, 7, /*reshuffle=*/true, 1)[0],
            (std::vector<int64_t>{0, 4, 2, 3, 5, 6, 1, 8, 7, 9}));
  EXPECT_EQ(ShufflePasses(10, 4, 87654321, 7, /*reshuffle=*/false, 1)[0],
            (std::vector<int64_t>{3, 4, 0, 5, 1, 8, 2, 7, 6, 9}));
  EXPECT_EQ(ShufflePasses(4, 4, 87654321, 11, /*reshuffle=*/true, 2),
            (std::vector<std::vector<int64_t>>{{3, 0, 1, 2}, {2, 1, 0, 3}}));
}

TEST(DatasetTest, PrefetchYieldsTheInputAndStopsCleanly) {
  auto p = Apply("PrefetchDataset", *Range(0, 100), {I64(4)});
  ASSERT_TRUE(p.ok()) << p.status();
  std::vector<int64_t> want(100);
  std::iota(want.begin(), want.end(), 0);
  std::vector<int64_t> got;
  auto all = Drain(*p);
  ASSERT_TRUE(all.ok()) << all.status();
  for (const auto& e : *all) got.push_back(e[0]);
  EXPECT_EQ(got, want);
  // An iterator over an endless input destroyed mid-way: the producer thread stops.
  auto forever = Apply("RepeatDataset", *Range(0, 3), {I64(-1)});
  auto pf = Apply("PrefetchDataset", *forever, {I64(2)});
  auto partial = Drain(*pf, 5);
  ASSERT_TRUE(partial.ok());
  EXPECT_EQ(*partial, Scalars({0, 1, 2, 0, 1}));
  EXPECT_EQ(Apply("PrefetchDataset", *Range(0, 3), {I64(-2)}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(DatasetTest, CacheReplaysTheFirstPass) {
  auto c = Apply("CacheDataset", *Range(0, 4), {Tensor::Scalar(std::string())});
  ASSERT_TRUE(c.ok()) << c.status();
  auto twice = Apply("RepeatDataset", *c, {I64(2)});
  EXPECT_EQ(*Drain(*twice), Scalars({0, 1, 2, 3, 0, 1, 2, 3}));
  // The filename must be a string scalar (file caches: tests/python/test_data_cache.py).
  EXPECT_EQ(Apply("CacheDataset", *Range(0, 4), {I64(3)}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// ZipDataset over `inputs` with the spec `types` / `shapes` (the inputs' specs concatenated).
StatusOr<Tensor> Zip(std::vector<Tensor> inputs, std::vector<DataType> types,
                     std::vector<PartialTensorShape> shapes) {
  test::KernelRunner r("ZipDataset");
  for (Tensor& t : inputs) r.Input(std::move(t));
  r.Attr("output_types", absl::Span<const DataType>(types));
  r.Attr("output_shapes", absl::Span<const PartialTensorShape>(shapes));
  return r.RunOne();
}

// Every element of the dataset in `handle`, all int64 components flattened and concatenated.
StatusOr<std::vector<std::vector<int64_t>>> DrainFlat(const Tensor& handle) {
  TX_ASSIGN_OR_RETURN(DatasetPtr d, GetDatasetFromVariantTensor(handle));
  IteratorContext ctx;
  TX_ASSIGN_OR_RETURN(std::unique_ptr<IteratorBase> it, d->MakeIterator(&ctx));
  TX_ASSIGN_OR_RETURN(auto elements, test::DrainIterator(it.get(), &ctx));
  std::vector<std::vector<int64_t>> out;
  for (const std::vector<Tensor>& e : elements) {
    out.emplace_back();
    for (const Tensor& t : e) {
      auto f = t.flat<int64_t>();
      out.back().insert(out.back().end(), f.begin(), f.end());
    }
  }
  // Ended iterators keep ending.
  std::vector<Tensor> e;
  bool end = false;
  TX_RETURN_IF_ERROR(it->GetNext(&ctx, &e, &end));
  if (!end || !e.empty()) return errors::Internal("GetNext after the end produced an element");
  return out;
}

TEST(DatasetTest, ZipConcatenatesComponentsAndEndsWithTheShortestInput) {
  const PartialTensorShape s = PartialTensorShape::Scalar();
  // rows: a 2-component dataset (TensorSlice of a [3, 2] matrix and a [3] vector).
  std::vector<PartialTensorShape> row_shapes{PartialTensorShape({2}), s};
  auto rows = test::KernelRunner("TensorSliceDataset")
                  .Input(test::FromDoubles(DT_INT64, TensorShape({3, 2}), {1, 2, 3, 4, 5, 6}))
                  .Input(test::FromDoubles(DT_INT64, TensorShape({3}), {-1, -2, -3}))
                  .Attr("output_shapes", absl::Span<const PartialTensorShape>(row_shapes))
                  .RunOne();
  ASSERT_TRUE(rows.ok()) << rows.status();
  const std::vector<DataType> three(3, DT_INT64);
  auto z = Zip({*Range(10, 15), *rows}, three, {s, PartialTensorShape({2}), s});
  ASSERT_TRUE(z.ok()) << z.status();
  // range has 5 elements, rows 3: the zip has 3, component order = input order.
  EXPECT_EQ(*DrainFlat(*z), (std::vector<std::vector<int64_t>>{
                                {10, 1, 2, -1}, {11, 3, 4, -2}, {12, 5, 6, -3}}));
  auto dataset = GetDatasetFromVariantTensor(*z);
  ASSERT_TRUE(dataset.ok());
  EXPECT_EQ((*dataset)->output_dtypes(), DataTypeVector(three.begin(), three.end()));
  EXPECT_NE((*dataset)->DebugString().find("ZipDatasetOp::Dataset(RangeDatasetOp"),
            std::string::npos);
  // The shorter input first ends it as well; one input is the input itself; an empty input
  // makes an empty zip.
  EXPECT_EQ(*DrainFlat(*Zip({*Range(0, 2), *Range(5, 9)}, {DT_INT64, DT_INT64}, {s, s})),
            (std::vector<std::vector<int64_t>>{{0, 5}, {1, 6}}));
  EXPECT_EQ(*DrainFlat(*Zip({*Range(3, 5)}, {DT_INT64}, {s})), Scalars({3, 4}));
  EXPECT_TRUE(DrainFlat(*Zip({*Range(0, 4), *Range(0, 0)}, {DT_INT64, DT_INT64}, {s, s}))
                  ->empty());
  // Zip of a zip (nested tuples flatten to 3 components) repeated twice.
  auto inner = Zip({*Range(0, 2), *Range(7, 9)}, {DT_INT64, DT_INT64}, {s, s});
  auto outer = Zip({*Range(4, 9), *inner}, three, {s, s, s});
  auto twice = Apply("RepeatDataset", *outer, {I64(2)}, {s, s, s}, three);
  ASSERT_TRUE(twice.ok()) << twice.status();
  EXPECT_EQ(*DrainFlat(*twice), (std::vector<std::vector<int64_t>>{
                                    {4, 0, 7}, {5, 1, 8}, {4, 0, 7}, {5, 1, 8}}));
}

TEST(DatasetTest, ZipRefusesBadInputsAndSpecs) {
  const PartialTensorShape s = PartialTensorShape::Scalar();
  // An input that is not a dataset: INVALID_ARGUMENT naming it.
  auto not_ds = Zip({*Range(0, 2), I64(3)}, {DT_INT64, DT_INT64}, {s, s});
  EXPECT_EQ(not_ds.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(not_ds.status().message()).find("input_datasets[1]"), std::string::npos)
      << not_ds.status();
  // output_types / output_shapes that do not match the inputs' specs.
  EXPECT_EQ(Zip({*Range(0, 2), *Range(0, 2)}, {DT_INT64, DT_FLOAT}, {s, s}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Zip({*Range(0, 2), *Range(0, 2)}, {DT_INT64}, {s}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Zip({*Range(0, 2), *Range(0, 2)}, {DT_INT64, DT_INT64},
                {s, PartialTensorShape({3})})
                .status().code(),
            absl::StatusCode::kInvalidArgument);
  // N = 0 is refused by the op's N >= 1.
  EXPECT_FALSE(Zip({}, {DT_INT64}, {s}).ok());
}

}  // namespace
}  // namespace tensorflux
