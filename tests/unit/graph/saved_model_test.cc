// Loading SavedModels: TF's serving_matrix_half_plus_two, tag selection, signatures and errors.
#include "tensorflux/graph/saved_model.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "google/protobuf/text_format.h"

namespace tensorflux {
namespace {

namespace fs = std::filesystem;

const std::string kHalfPlusTwo =
    std::string(TX_TEST_DATA_DIR) + "/tf-graphs/serving_matrix_half_plus_two";

std::string TempDir(const std::string& name) {
  fs::path p = fs::path(::testing::TempDir()) / ("saved_model_test_" + std::to_string(getpid()) + "_" + name);
  fs::remove_all(p);
  fs::create_directories(p);
  return p.string();
}

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary);
  f << bytes;
}

TEST(SavedModelTest, LoadsServingHalfPlusTwoFromDirAndFile) {
  for (const std::string& path : {kHalfPlusTwo, kHalfPlusTwo + "/saved_model.pb"}) {
    EXPECT_TRUE(IsSavedModelPath(path)) << path;
    auto mg = LoadSavedModelMetaGraph(path);
    ASSERT_TRUE(mg.ok()) << mg.status();
    ASSERT_EQ(mg->meta_info_def().tags_size(), 1);
    EXPECT_EQ(mg->meta_info_def().tags(0), "serve");
    EXPECT_EQ(mg->graph_def().versions().producer(), 24);
    // x, Const, Const_1, Mul, y, init.
    ASSERT_EQ(mg->graph_def().node_size(), 6);
    EXPECT_EQ(mg->graph_def().node(0).name(), "x");
    EXPECT_EQ(mg->graph_def().node(0).op(), "Placeholder");
    EXPECT_EQ(mg->graph_def().node(4).name(), "y");
    EXPECT_EQ(mg->graph_def().node(4).op(), "Add");

    auto sig = FindSignature(*mg, kDefaultServingSignature);
    ASSERT_TRUE(sig.ok()) << sig.status();
    EXPECT_EQ((*sig)->method_name(), "tensorflow/serving/predict");
    EXPECT_EQ(*SignatureTensorName(**sig, "x", /*is_input=*/true), "x:0");
    EXPECT_EQ(*SignatureTensorName(**sig, "y", /*is_input=*/false), "y:0");
    EXPECT_EQ((*sig)->inputs().at("x").dtype(), DT_FLOAT);
    EXPECT_EQ((*sig)->inputs().at("x").tensor_shape().dim_size(), 3);
    EXPECT_EQ((*sig)->inputs().at("x").tensor_shape().dim(0).size(), -1);
  }
}

TEST(SavedModelTest, GraphDefPathsAreNotSavedModels) {
  EXPECT_FALSE(IsSavedModelPath(std::string(TX_TEST_DATA_DIR) + "/tf-graphs/rust_addition/model.pb"));
  EXPECT_TRUE(IsSavedModelPath("somewhere/saved_model.pbtxt"));
}

TEST(SavedModelTest, UnknownSignatureAndKeysNameWhatExists) {
  auto mg = LoadSavedModelMetaGraph(kHalfPlusTwo);
  ASSERT_TRUE(mg.ok()) << mg.status();
  auto sig = FindSignature(*mg, "predict_images");
  EXPECT_EQ(sig.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(sig.status().message().find("serving_default"), std::string::npos) << sig.status();

  const SignatureDef& s = mg->signature_def().at("serving_default");
  auto in = SignatureTensorName(s, "y", /*is_input=*/true);
  EXPECT_EQ(in.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(in.status().message().find("inputs: x"), std::string::npos) << in.status();
  auto out = SignatureTensorName(s, "z", /*is_input=*/false);
  EXPECT_EQ(out.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(out.status().message().find("outputs: y"), std::string::npos) << out.status();
}

// A signature call's names: aliases only. Every name that is not one is named, with the
// signature's aliases, and a graph tensor name ("x:0", the tensor behind alias x) is not one.
TEST(SavedModelTest, SignatureCallNamesMustBeAliases) {
  auto mg = LoadSavedModelMetaGraph(kHalfPlusTwo);
  ASSERT_TRUE(mg.ok()) << mg.status();
  const SignatureDef& s = mg->signature_def().at("serving_default");
  auto ok = SignatureTensorNames(s, "serving_default", {"x", "x"}, /*is_input=*/true);
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(*ok, (std::vector<std::string>{"x:0", "x:0"}));
  EXPECT_EQ(*SignatureTensorNames(s, "serving_default", {"y"}, /*is_input=*/false),
            std::vector<std::string>{"y:0"});
  auto bad = SignatureTensorNames(s, "serving_default", {"x", "x:0", "bogus", "x:0"},
                                  /*is_input=*/true);
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.status().message(),
            "signature 'serving_default' has no input named 'x:0', 'bogus' (its inputs: x); a "
            "signature call takes only these aliases, not graph tensor names");
  auto out = SignatureTensorNames(s, "serving_default", {"y:0"}, /*is_input=*/false);
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(out.status().message().find("has no output named 'y:0' (its outputs: y)"),
            std::string::npos) << out.status();
}

TEST(SavedModelTest, PicksServeTagElseFirst) {
  SavedModel model;
  auto* a = model.add_meta_graphs();
  a->mutable_meta_info_def()->add_tags("train");
  a->mutable_graph_def()->add_node()->set_name("from_train");
  auto* b = model.add_meta_graphs();
  b->mutable_meta_info_def()->add_tags("gpu");
  b->mutable_meta_info_def()->add_tags("serve");
  b->mutable_graph_def()->add_node()->set_name("from_serve");

  auto mg = SelectMetaGraph(model);
  ASSERT_TRUE(mg.ok());
  EXPECT_EQ(mg->graph_def().node(0).name(), "from_serve");
  auto first = SelectMetaGraph(model, "no-such-tag");
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->graph_def().node(0).name(), "from_train");

  SavedModel empty;
  EXPECT_EQ(SelectMetaGraph(empty).status().code(), absl::StatusCode::kInvalidArgument);

  // By tag set (TF's loader): the set must be equal, order and repeats do not matter.
  auto exact = SelectMetaGraphByTags(model, {"serve", "gpu", "serve"});
  ASSERT_TRUE(exact.ok()) << exact.status();
  EXPECT_EQ(exact->graph_def().node(0).name(), "from_serve");
  EXPECT_EQ(SelectMetaGraphByTags(model, {"train"})->graph_def().node(0).name(), "from_train");
  auto subset = SelectMetaGraphByTags(model, {"serve"});
  EXPECT_EQ(subset.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(subset.status().message().find("{gpu, serve}"), std::string::npos) << subset.status();
}

TEST(SavedModelTest, ReadsTextSavedModel) {
  std::string dir = TempDir("pbtxt");
  WriteFile(dir + "/saved_model.pbtxt",
            "saved_model_schema_version: 1\n"
            "meta_graphs { meta_info_def { tags: 'serve' }\n"
            "  graph_def { node { name: 'n' op: 'NoOp' } } }\n");
  auto mg = LoadSavedModelMetaGraph(dir);
  ASSERT_TRUE(mg.ok()) << mg.status();
  EXPECT_EQ(mg->graph_def().node(0).op(), "NoOp");
}

TEST(SavedModelTest, ErrorCodes) {
  // Missing file, and a directory without a saved_model.pb.
  EXPECT_EQ(ReadSavedModel("/nonexistent/saved_model.pb").status().code(),
            absl::StatusCode::kNotFound);
  std::string empty_dir = TempDir("empty");
  auto r = ReadSavedModel(empty_dir);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(r.status().message().find("saved_model.pb"), std::string::npos);

  // Garbage bytes.
  std::string bad_dir = TempDir("garbage");
  WriteFile(bad_dir + "/saved_model.pb", std::string("\xff\xff\xff\xff garbage", 12));
  EXPECT_EQ(ReadSavedModel(bad_dir).status().code(), absl::StatusCode::kDataLoss);

  // A truncated copy of the real file.
  std::ifstream in(kHalfPlusTwo + "/saved_model.pb", std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_GT(bytes.size(), 100u);
  std::string cut_dir = TempDir("truncated");
  WriteFile(cut_dir + "/saved_model.pb", bytes.substr(0, bytes.size() / 2));
  EXPECT_EQ(ReadSavedModel(cut_dir).status().code(), absl::StatusCode::kDataLoss);

  // Parses, but has no meta graphs.
  std::string none_dir = TempDir("none");
  WriteFile(none_dir + "/saved_model.pb", std::string("\x08\x01", 2));  // schema version 1 only
  EXPECT_EQ(LoadSavedModelMetaGraph(none_dir).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tensorflux
