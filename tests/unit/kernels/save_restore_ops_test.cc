// SaveV2 / RestoreV2 / MergeV2Checkpoints / ShardedFilename kernels: round trips, TensorFlow's
// bundle, and every bad input as an error naming what is wrong.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "../train/checkpoint_test_util.h"
#include "kernel_test_util.h"

namespace tensorflux {
namespace {

namespace fs = std::filesystem;

const std::string kTfVariables =
    std::string(TX_TEST_DATA_DIR) + "/tf-graphs/serving_half_plus_two_cpu/variables/variables";

Tensor Strings(std::vector<std::string> v) {
  return test::AsTensor<std::string>(v, {static_cast<int64_t>(v.size())});
}

class SaveRestoreTest : public test::CheckpointDirTest {
 protected:
  Status Save(const std::string& prefix, std::vector<std::string> names,
              const std::vector<Tensor>& tensors, std::vector<std::string> slices = {}) {
    if (slices.empty()) slices.assign(names.size(), "");
    test::KernelRunner run("SaveV2", "save");
    run.Input(Tensor::Scalar<std::string>(prefix)).Input(Strings(names)).Input(Strings(slices));
    for (const Tensor& t : tensors) run.Input(t);
    return run.Run().status();
  }
  StatusOr<std::vector<Tensor>> Restore(const std::string& prefix, std::vector<std::string> names,
                                        std::vector<DataType> dtypes,
                                        std::vector<std::string> slices = {}) {
    if (slices.empty()) slices.assign(names.size(), "");
    return test::KernelRunner("RestoreV2", "restore")
        .Input(Tensor::Scalar<std::string>(prefix))
        .Input(Strings(names))
        .Input(Strings(slices))
        .Attr("dtypes", absl::Span<const DataType>(dtypes))
        .Run();
  }
};

TEST_F(SaveRestoreTest, RoundTripEveryDtype) {
  const std::vector<DataType> types = {DT_FLOAT, DT_DOUBLE, DT_HALF,   DT_BFLOAT16, DT_INT8,
                                       DT_INT16, DT_INT32,  DT_INT64,  DT_UINT8,    DT_UINT16,
                                       DT_UINT32, DT_UINT64, DT_BOOL};
  std::vector<std::string> names;
  std::vector<Tensor> tensors;
  for (size_t i = 0; i < types.size(); ++i) {
    std::vector<double> v = {0, 1, static_cast<double>(i), 3, 1, 0};
    names.push_back("var_" + std::to_string(i));
    tensors.push_back(test::FromDoubles(types[i], TensorShape({3, 2}), v));
  }
  ASSERT_TRUE(Save(Prefix("model"), names, tensors).ok());
  // Restore in another order, a subset.
  auto out = Restore(Prefix("model"), {names[7], names[0], names[12]},
                     {types[7], types[0], types[12]});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 3u);
  EXPECT_EQ(test::ToDoubles((*out)[0]), test::ToDoubles(tensors[7]));
  EXPECT_EQ((*out)[0].dtype(), DT_INT64);
  EXPECT_EQ(test::ToDoubles((*out)[1]), test::ToDoubles(tensors[0]));
  EXPECT_EQ((*out)[2].shape(), TensorShape({3, 2}));
  EXPECT_EQ(test::ToDoubles((*out)[2]), (std::vector<double>{0, 1, 1, 1, 1, 0}));
  for (size_t i = 0; i < types.size(); ++i) {
    auto one = Restore(Prefix("model"), {names[i]}, {types[i]});
    ASSERT_TRUE(one.ok()) << DataTypeString(types[i]) << ": " << one.status();
    EXPECT_EQ(test::ToDoubles((*one)[0]), test::ToDoubles(tensors[i])) << DataTypeString(types[i]);
  }
}

TEST_F(SaveRestoreTest, RestoresTensorFlowsCheckpoint) {
  auto out = Restore(kTfVariables, {"a", "b", "c"}, {DT_FLOAT, DT_FLOAT, DT_FLOAT});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].scalar<float>(), 0.5f);
  EXPECT_EQ((*out)[1].scalar<float>(), 2.f);
  EXPECT_EQ((*out)[2].scalar<float>(), 3.f);
}

// A slice spec (TF's "shape start,length:-") reads a box of a whole saved tensor.
TEST_F(SaveRestoreTest, RestoresASliceOfAWholeTensor) {
  ASSERT_TRUE(
      Save(Prefix("m"), {"w"}, {test::AsTensor<float>({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11},
                                                      {3, 4})})
          .ok());
  auto out = Restore(Prefix("m"), {"w"}, {DT_FLOAT}, {"3 4 1,2:1,2"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), TensorShape({2, 2}));
  EXPECT_EQ(test::ToDoubles((*out)[0]), (std::vector<double>{5, 6, 9, 10}));
  out = Restore(Prefix("m"), {"w"}, {DT_FLOAT}, {"3 4 -:3,1"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(test::ToDoubles((*out)[0]), (std::vector<double>{3, 7, 11}));
}

TEST_F(SaveRestoreTest, RestoreErrors) {
  ASSERT_TRUE(Save(Prefix("m"), {"w"}, {test::AsTensor<float>({1, 2}, {2})}).ok());
  // dtype mismatch names the tensor and both dtypes.
  auto s = Restore(Prefix("m"), {"w"}, {DT_INT32}).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("w"), std::string::npos);
  EXPECT_NE(s.message().find("int32"), std::string::npos) << s;
  // missing tensor, missing checkpoint.
  EXPECT_EQ(Restore(Prefix("m"), {"nope"}, {DT_FLOAT}).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(Restore(Prefix("other"), {"w"}, {DT_FLOAT}).status().code(),
            absl::StatusCode::kNotFound);
  // a slice spec of another shape than the saved one, a malformed one.
  s = Restore(Prefix("m"), {"w"}, {DT_FLOAT}, {"5 0,1"}).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  s = Restore(Prefix("m"), {"w"}, {DT_FLOAT}, {"2 0;1"}).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  // names/specs that do not match dtypes, a non-scalar prefix.
  s = test::KernelRunner("RestoreV2")
          .Input(Tensor::Scalar<std::string>(Prefix("m")))
          .Input(Strings({"w", "w"}))
          .Input(Strings({"", ""}))
          .Attr("dtypes", absl::Span<const DataType>(std::vector<DataType>{DT_FLOAT}))
          .Run()
          .status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  s = test::KernelRunner("RestoreV2")
          .Input(Strings({Prefix("m"), Prefix("m")}))
          .Input(Strings({"w"}))
          .Input(Strings({""}))
          .Attr("dtypes", absl::Span<const DataType>(std::vector<DataType>{DT_FLOAT}))
          .Run()
          .status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  // a corrupt data file.
  const std::string data = Prefix("m") + ".data-00000-of-00001";
  fs::resize_file(data, 4);
  EXPECT_EQ(Restore(Prefix("m"), {"w"}, {DT_FLOAT}).status().code(), absl::StatusCode::kDataLoss);
}

TEST_F(SaveRestoreTest, SaveErrors) {
  const Tensor t = Tensor::Scalar<float>(1);
  EXPECT_EQ(Save(Prefix("m"), {"a", "b"}, {t}).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Save(Prefix("m"), {"a", "a"}, {t, t}).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Save(Prefix("m"), {"a"}, {t}, {"1 0,1"}).code(), absl::StatusCode::kUnimplemented);
  EXPECT_FALSE(fs::exists(Prefix("m") + ".index"));  // failed saves leave no files
  EXPECT_TRUE(fs::is_empty(dir_));
  // A prefix whose parent is a file cannot be created.
  ASSERT_TRUE(Save(Prefix("ok"), {"a"}, {t}).ok());
  EXPECT_FALSE(Save(Prefix("ok.index/sub"), {"a"}, {t}).ok());
}

TEST_F(SaveRestoreTest, MergeV2CheckpointsAndShardedFilename) {
  auto name = test::KernelRunner("ShardedFilename")
                  .Input(Tensor::Scalar<std::string>(Prefix("tmp/part")))
                  .Input(Tensor::Scalar<int32_t>(0))
                  .Input(Tensor::Scalar<int32_t>(1))
                  .RunOne();
  ASSERT_TRUE(name.ok()) << name.status();
  EXPECT_EQ(name->scalar<std::string>(), Prefix("tmp/part") + "-00000-of-00001");
  auto spec = test::KernelRunner("ShardedFilespec")
                  .Input(Tensor::Scalar<std::string>("x"))
                  .Input(Tensor::Scalar<int32_t>(12))
                  .RunOne();
  ASSERT_TRUE(spec.ok());
  EXPECT_EQ(spec->scalar<std::string>(), "x-\?\?\?\?\?-of-00012");

  const std::string shard = name->scalar<std::string>();
  ASSERT_TRUE(Save(shard, {"v"}, {test::AsTensor<int32_t>({7, 8}, {2})}).ok());
  auto merged = test::KernelRunner("MergeV2Checkpoints")
                    .Input(Strings({shard}))
                    .Input(Tensor::Scalar<std::string>(Prefix("final")))
                    .Run();
  ASSERT_TRUE(merged.ok()) << merged.status();
  EXPECT_FALSE(fs::exists(dir_ / "tmp"));  // delete_old_dirs removed the emptied directory
  auto out = Restore(Prefix("final"), {"v"}, {DT_INT32});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(test::ToDoubles((*out)[0]), (std::vector<double>{7, 8}));

  auto bad = test::KernelRunner("MergeV2Checkpoints")
                 .Input(Tensor::Scalar<std::string>(shard))
                 .Input(Tensor::Scalar<std::string>(Prefix("final2")))
                 .Run();
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument) << bad.status();
  auto bad2 = test::KernelRunner("ShardedFilename")
                  .Input(Strings({"a", "b"}))
                  .Input(Tensor::Scalar<int32_t>(0))
                  .Input(Tensor::Scalar<int32_t>(1))
                  .Run();
  EXPECT_EQ(bad2.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(SaveRestoreTest, ShapeFunctionsCheckRanksAndCounts) {
  auto infer = [](int64_t names_length) {
    return test::KernelRunner("RestoreV2")
        .Input(Tensor::Scalar<std::string>("p"))
        .Input(Strings({"a", "b"}))
        .Input(Strings({"", ""}))
        .Attr("dtypes", absl::Span<const DataType>(std::vector<DataType>{DT_FLOAT, DT_INT32}))
        .InferShapes({PartialTensorShape::Scalar(), PartialTensorShape({names_length}),
                      PartialTensorShape({2})});
  };
  auto shapes = infer(2);
  ASSERT_TRUE(shapes.ok()) << shapes.status();
  EXPECT_EQ(shapes->size(), 2u);
  EXPECT_EQ(infer(3).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tensorflux
