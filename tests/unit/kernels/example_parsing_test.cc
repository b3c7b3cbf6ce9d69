// ParseExample / ParseSingleExample kernels on hand-encoded tf.train.Example wire bytes (TF's field
// numbers, packed and unpacked lists) and Examples built with the proto API: dense with defaults,
// sparse (VarLen) indices/values/shape, and every error (missing required feature, wrong type,
// wrong length, unparsable record, bad attrs).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kernel_test_util.h"
#include "tensorflux/example.pb.h"

namespace tensorflux {
namespace {

Tensor Strings(std::vector<std::string> v, TensorShape shape) {
  return test::AsTensor<std::string>(v, shape);
}

// Example{features{feature{key:"a" value{int64_list{value:[1, 2]}}}}} written by hand:
// Example.features(1) > Features.feature(1) map entry {key(1) "a", value(2) Feature} >
// Feature.int64_list(3) > Int64List.value(1), packed (0a 02 01 02) or unpacked (08 01 08 02).
const std::string kPacked("\x0a\x0d\x0a\x0b\x0a\x01" "a" "\x12\x06\x1a\x04\x0a\x02\x01\x02", 15);
const std::string kUnpacked("\x0a\x0d\x0a\x0b\x0a\x01" "a" "\x12\x06\x1a\x04\x08\x01\x08\x02", 15);

std::string MakeExample(const std::vector<float>& x, const std::vector<std::string>& tags) {
  Example ex;
  auto& f = *ex.mutable_features()->mutable_feature();
  if (!x.empty())
    for (float v : x) f["x"].mutable_float_list()->add_value(v);
  for (const std::string& t : tags) f["tags"].mutable_bytes_list()->add_value(t);
  return ex.SerializeAsString();
}

StatusOr<std::vector<Tensor>> Parse(const std::vector<std::string>& records, Tensor x_default,
                               std::vector<PartialTensorShape> dense_shapes,
                               DataType sparse_type = DT_STRING, DataType dense_type = DT_FLOAT) {
  test::KernelRunner run("ParseExample");
  run.Input(Strings(records, {static_cast<int64_t>(records.size())}))
      .Input(Strings({}, {0}))
      .Input(Tensor::Scalar<std::string>("tags"))
      .Input(Tensor::Scalar<std::string>("x"))
      .Input(x_default)
      .Attr("Nsparse", int64_t{1})
      .Attr("Ndense", int64_t{1})
      .Attr("sparse_types", absl::Span<const DataType>(std::vector<DataType>{sparse_type}))
      .Attr("Tdense", absl::Span<const DataType>(std::vector<DataType>{dense_type}))
      .Attr("dense_shapes", absl::Span<const PartialTensorShape>(dense_shapes));
  return run.Run();
}

TEST(ParseExampleKernelTest, HandEncodedWireBytesPackedAndUnpacked) {
  for (const std::string& rec : {kPacked, kUnpacked}) {
    std::vector<PartialTensorShape> shapes = {PartialTensorShape({2})};
    auto out = test::KernelRunner("ParseExample")
                   .Input(Strings({rec}, {1}))
                   .Input(Strings({}, {0}))
                   .Input(Tensor::Scalar<std::string>("a"))
                   .Input(Tensor(DT_INT64, TensorShape({0})))
                   .Attr("Nsparse", int64_t{0})
                   .Attr("Ndense", int64_t{1})
                   .Attr("sparse_types", absl::Span<const DataType>())
                   .Attr("Tdense", absl::Span<const DataType>(std::vector<DataType>{DT_INT64}))
                   .Attr("dense_shapes", absl::Span<const PartialTensorShape>(shapes))
                   .Run();
    ASSERT_TRUE(out.ok()) << out.status();
    ASSERT_EQ(out->size(), 1u);
    EXPECT_EQ((*out)[0].shape(), TensorShape({1, 2}));
    EXPECT_EQ((*out)[0].flat<int64_t>()[0], 1);
    EXPECT_EQ((*out)[0].flat<int64_t>()[1], 2);
  }
}

TEST(ParseExampleKernelTest, DenseDefaultsAndSparseLists) {
  // Record 0: x = [1, 2], tags = [p, q, r]; record 1: no x (default [7, 8]), no tags;
  // record 2: x = [3, 4], tags = [s].
  const std::vector<std::string> records = {MakeExample({1, 2}, {"p", "q", "r"}),
                                            MakeExample({}, {}), MakeExample({3, 4}, {"s"})};
  auto out = Parse(records, test::AsTensor<float>({7, 8}, {2}), {PartialTensorShape({2})});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 4u);  // indices, values, shape, dense
  const Tensor& idx = (*out)[0];
  ASSERT_EQ(idx.shape(), TensorShape({4, 2}));
  EXPECT_EQ(std::vector<int64_t>(idx.flat<int64_t>().begin(), idx.flat<int64_t>().end()),
            (std::vector<int64_t>{0, 0, 0, 1, 0, 2, 2, 0}));
  const auto vals = (*out)[1].flat<std::string>();
  EXPECT_EQ(std::vector<std::string>(vals.begin(), vals.end()),
            (std::vector<std::string>{"p", "q", "r", "s"}));
  EXPECT_EQ((*out)[2].flat<int64_t>()[0], 3);
  EXPECT_EQ((*out)[2].flat<int64_t>()[1], 3);
  const Tensor& x = (*out)[3];
  ASSERT_EQ(x.shape(), TensorShape({3, 2}));
  EXPECT_EQ(std::vector<float>(x.flat<float>().begin(), x.flat<float>().end()),
            (std::vector<float>{1, 2, 7, 8, 3, 4}));
}

void ExpectError(StatusOr<std::vector<Tensor>> out, const std::vector<std::string>& parts) {
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument) << out.status();
  for (const std::string& p : parts)
    EXPECT_NE(out.status().message().find(p), std::string::npos) << out.status();
}

TEST(ParseExampleKernelTest, ErrorsNameFeatureAndRecord) {
  const Tensor required(DT_FLOAT, TensorShape({0}));
  const std::vector<PartialTensorShape> two = {PartialTensorShape({2})};
  const std::string ok = MakeExample({1, 2}, {});
  ExpectError(Parse({ok, MakeExample({}, {"t"})}, required, two),
              {"record 1", "required feature 'x'"});
  ExpectError(Parse({ok, MakeExample({1, 2, 3}, {})}, required, two),
              {"record 1", "feature 'x'", "3 values", "needs 2"});
  ExpectError(Parse({MakeExample({1, 2}, {"t"})}, required, two, DT_INT64),
              {"record 0", "feature 'tags'", "expected a int64 list", "found a bytes"});
  ExpectError(Parse({ok, "\xff\xff not a proto"}, required, two),
              {"record 1", "could not parse"});
  ExpectError(Parse({ok}, test::AsTensor<float>({1, 2, 3}, {3}), two),
              {"default of dense feature 'x'", "3 elements"});
  ExpectError(Parse({ok}, required, {PartialTensorShape({-1})}),
              {"not fully defined"});
  ExpectError(Parse({ok}, required, two, DT_STRING, DT_INT64),
              {"feature 'x'", "expected a int64 list", "found a float"});
}

TEST(ParseSingleExampleKernelTest, NoBatchDimension) {
  std::vector<PartialTensorShape> shapes = {PartialTensorShape({2})};
  auto run = [&](const std::string& rec) {
    return test::KernelRunner("ParseSingleExample")
        .Input(Tensor::Scalar<std::string>(rec))
        .Input(test::AsTensor<float>({7, 8}, {2}))
        .Attr("num_sparse", int64_t{1})
        .Attr("sparse_keys", absl::Span<const std::string>(std::vector<std::string>{"tags"}))
        .Attr("dense_keys", absl::Span<const std::string>(std::vector<std::string>{"x"}))
        .Attr("sparse_types", absl::Span<const DataType>(std::vector<DataType>{DT_STRING}))
        .Attr("Tdense", absl::Span<const DataType>(std::vector<DataType>{DT_FLOAT}))
        .Attr("dense_shapes", absl::Span<const PartialTensorShape>(shapes))
        .Run();
  };
  auto out = run(MakeExample({}, {"u", "v"}));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), TensorShape({2, 1}));
  EXPECT_EQ((*out)[0].flat<int64_t>()[1], 1);
  EXPECT_EQ((*out)[1].flat<std::string>()[1], "v");
  EXPECT_EQ((*out)[2].shape(), TensorShape({1}));
  EXPECT_EQ((*out)[2].flat<int64_t>()[0], 2);
  EXPECT_EQ((*out)[3].shape(), TensorShape({2}));
  EXPECT_EQ((*out)[3].flat<float>()[0], 7);
  ExpectError(run(MakeExample({1, 2, 3}, {})), {"feature 'x'", "3 values"});
}

}  // namespace
}  // namespace tensorflux
