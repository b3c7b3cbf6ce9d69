// TensorFlow graphs with checkpoints (tests/data/tf-graphs, see its README): TF Serving's
// half_plus_two SavedModel gives its values after `init`, after restoring its variables/ through
// save/restore_all, and through LoadSavedModel; its sharded save path (ShardedFilename,
// StringJoin, SaveV2, MergeV2Checkpoints) writes a bundle that restores. tensorflow/rust's
// regression_checkpoint trains (reference variables, TF 1.x gradient ops, ApplyGradientDescent)
// and its save/restore nodes round-trip.
#include <gtest/gtest.h>

#include <filesystem>
#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "checkpoint_test_util.h"
#include "tensorflux/graph/graph_def_io.h"
#include "tensorflux/graph/saved_model.h"
#include "tensorflux/runtime/session.h"
#include "tensorflux/train/saved_model_loader.h"
#include "tensorflux/train/tensor_bundle.h"

namespace tensorflux {
namespace {

const std::string kServing = std::string(TX_TEST_DATA_DIR) + "/tf-graphs/serving_half_plus_two_cpu";

std::vector<float> Values(const Tensor& t) {
  return std::vector<float>(t.data<float>(), t.data<float>() + t.NumElements());
}

// x:0 = [[1],[2],[5]] -> y:0 = a*x + b, y2:0 = a*x + c with TF's a=0.5, b=2, c=3.
void ExpectHalfPlusTwo(Session* session) {
  const Tensor x = Tensor::FromVector<float>({1.f, 2.f, 5.f}, TensorShape({3, 1}));
  std::vector<Tensor> out;
  Status s = session->Run({{"x:0", x}}, {"y:0", "y2:0"}, {}, &out);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(out[0].shape(), TensorShape({3, 1}));
  EXPECT_EQ(Values(out[0]), (std::vector<float>{2.5f, 3.f, 4.5f}));
  EXPECT_EQ(Values(out[1]), (std::vector<float>{3.5f, 4.f, 5.5f}));
}

std::unique_ptr<Session> SessionWith(const GraphDef& g) {
  auto s = NewSession(SessionOptions());
  EXPECT_TRUE(s.ok()) << s.status();
  Status c = (*s)->Create(g);
  EXPECT_TRUE(c.ok()) << c;
  return std::move(*s);
}

class TfCheckpointGraphsTest : public test::CheckpointDirTest {};

TEST_F(TfCheckpointGraphsTest, ServingHalfPlusTwoAfterInitAndAfterRestore) {
  auto mg = LoadSavedModelMetaGraph(kServing);
  ASSERT_TRUE(mg.ok()) << mg.status();
  EXPECT_EQ(mg->saver_def().restore_op_name(), "save/restore_all");

  auto by_init = SessionWith(mg->graph_def());
  std::vector<Tensor> out;
  // Unrestored, uninitialized variables are an error, not garbage.
  const Tensor x = Tensor::FromVector<float>({1.f}, TensorShape({1, 1}));
  EXPECT_EQ(by_init->Run({{"x:0", x}}, {"y:0"}, {}, &out).code(),
            absl::StatusCode::kFailedPrecondition);
  ASSERT_TRUE(by_init->Run({}, {}, {"init"}, &out).ok());
  ExpectHalfPlusTwo(by_init.get());

  auto by_restore = SessionWith(mg->graph_def());
  ASSERT_TRUE(RestoreSavedModelVariables(by_restore.get(), *mg, kServing).ok());
  ExpectHalfPlusTwo(by_restore.get());

  auto bundle = LoadSavedModel(SessionOptions(), {"serve"}, kServing);
  ASSERT_TRUE(bundle.ok()) << bundle.status();
  ExpectHalfPlusTwo(bundle->session.get());
}

TEST_F(TfCheckpointGraphsTest, ServingHalfPlusTwoSavesThroughItsShardedSaver) {
  auto mg = LoadSavedModelMetaGraph(kServing);
  ASSERT_TRUE(mg.ok());
  auto session = SessionWith(mg->graph_def());
  std::vector<Tensor> out;
  ASSERT_TRUE(session->Run({}, {}, {"init"}, &out).ok());
  // Change b to 7 through its Assign: save must write the current values.
  ASSERT_TRUE(session->Run({{"b/initial_value:0", Tensor::Scalar<float>(7)}}, {}, {"b/Assign"},
                           &out)
                  .ok());
  const std::string prefix = Prefix("model");
  Status s = session->Run({{"save/Const:0", Tensor::Scalar<std::string>(prefix)}},
                          {"save/Identity:0"}, {}, &out);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(out[0].scalar<std::string>(), prefix);
  // TF's sharded layout: the temporary part directory was merged away.
  EXPECT_TRUE(std::filesystem::exists(BundleIndexFilename(prefix)));
  EXPECT_TRUE(std::filesystem::exists(BundleDataFilename(prefix, 0, 1)));
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir_),
                          std::filesystem::directory_iterator()),
            2);
  auto reader = BundleReader::Open(prefix);
  ASSERT_TRUE(reader.ok()) << reader.status();
  EXPECT_EQ((*reader)->Lookup("b")->scalar<float>(), 7.f);
  EXPECT_EQ((*reader)->Lookup("c2")->scalar<float>(), 3.f);

  // A fresh session restores those values through save/restore_all.
  auto fresh = SessionWith(mg->graph_def());
  ASSERT_TRUE(fresh->Run({{"save/Const:0", Tensor::Scalar<std::string>(prefix)}}, {},
                         {"save/restore_all"}, &out)
                  .ok());
  const Tensor x = Tensor::FromVector<float>({2.f}, TensorShape({1, 1}));
  ASSERT_TRUE(fresh->Run({{"x:0", x}}, {"y:0", "y2:0"}, {}, &out).ok());
  EXPECT_EQ(Values(out[0]), std::vector<float>{0.5f * 2 + 7});
  EXPECT_EQ(Values(out[1]), std::vector<float>{0.5f * 2 + 3});
}

TEST_F(TfCheckpointGraphsTest, RestoringAMissingOrCorruptCheckpointFails) {
  auto mg = LoadSavedModelMetaGraph(kServing);
  ASSERT_TRUE(mg.ok());
  auto session = SessionWith(mg->graph_def());
  std::vector<Tensor> out;
  Status s = session->Run({{"save/Const:0", Tensor::Scalar<std::string>(Prefix("none"))}}, {},
                          {"save/restore_all"}, &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound) << s;
  // A copy of TF's checkpoint with its data file cut short.
  const std::string src = SavedModelVariablesPrefix(kServing);
  const std::string copy = Prefix("cut");
  test::WriteFile(BundleIndexFilename(copy), test::ReadFile(BundleIndexFilename(src)));
  test::WriteFile(BundleDataFilename(copy, 0, 1),
                  test::ReadFile(BundleDataFilename(src, 0, 1)).substr(0, 10));
  s = session->Run({{"save/Const:0", Tensor::Scalar<std::string>(copy)}}, {}, {"save/restore_all"},
                   &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
  EXPECT_NE(s.message().find("save/RestoreV2"), std::string::npos) << s;
}

TEST_F(TfCheckpointGraphsTest, RustRegressionTrainsAndRoundTripsItsCheckpoint) {
  auto g = ReadGraphDefFile(std::string(TX_TEST_DATA_DIR) +
                            "/tf-graphs/rust_regression_checkpoint/model.pb");
  ASSERT_TRUE(g.ok()) << g.status();
  auto session = SessionWith(*g);
  std::vector<Tensor> out;
  ASSERT_TRUE(session->Run({}, {}, {"init"}, &out).ok());

  // 100 points of y = 0.1 x + 0.3, x ~ U(-1, 1); 201 steps of gradient descent at rate 0.5.
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  Tensor x(DT_FLOAT, TensorShape({100})), y(DT_FLOAT, TensorShape({100}));
  for (int i = 0; i < 100; ++i) {
    x.flat<float>()[i] = u(rng);
    y.flat<float>()[i] = 0.1f * x.flat<float>()[i] + 0.3f;
  }
  for (int step = 0; step < 201; ++step) {
    Status s = session->Run({{"x", x}, {"y", y}}, {}, {"train"}, &out);
    ASSERT_TRUE(s.ok()) << "step " << step << ": " << s;
  }
  ASSERT_TRUE(session->Run({}, {"w", "b"}, {}, &out).ok());
  const float w = out[0].flat<float>()[0], b = out[1].flat<float>()[0];
  EXPECT_LT(std::abs(w - 0.1f), 1e-3f) << w;
  EXPECT_LT(std::abs(b - 0.3f), 1e-3f) << b;

  // save/SaveV2 writes w and b to the prefix fed to save/Const (a Const: TF lets any tensor be
  // fed); init then re-draws w and zeros b; save/restore_all brings the trained values back.
  const Tensor prefix = Tensor::Scalar<std::string>(Prefix("model"));
  ASSERT_TRUE(session->Run({{"save/Const", prefix}}, {"save/control_dependency"}, {}, &out).ok());
  auto reader = BundleReader::Open(Prefix("model"));
  ASSERT_TRUE(reader.ok()) << reader.status();
  EXPECT_EQ((*reader)->Lookup("w")->flat<float>()[0], w);
  EXPECT_EQ((*reader)->Lookup("b")->flat<float>()[0], b);
  ASSERT_TRUE(session->Run({}, {}, {"init"}, &out).ok());
  ASSERT_TRUE(session->Run({}, {"b"}, {}, &out).ok());
  EXPECT_EQ(out[0].flat<float>()[0], 0.f);
  ASSERT_TRUE(session->Run({{"save/Const", prefix}}, {}, {"save/restore_all"}, &out).ok());
  ASSERT_TRUE(session->Run({}, {"w", "b"}, {}, &out).ok());
  EXPECT_EQ(out[0].flat<float>()[0], w);
  EXPECT_EQ(out[1].flat<float>()[0], b);
}

}  // namespace
}  // namespace tensorflux
