// LoadSavedModel / RestoreSavedModelVariables: tag sets, SavedModels without variables, and the
// restore step (TF's serving_half_plus_two: its variables come from variables/ through
// save/restore_all).
#include "tensorflux/train/saved_model_loader.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tensorflux/graph/saved_model.h"

namespace tensorflux {
namespace {

const std::string kTfGraphs = std::string(TX_TEST_DATA_DIR) + "/tf-graphs/";

TEST(SavedModelLoaderTest, PathsOfTheCheckpoint) {
  EXPECT_EQ(SavedModelVariablesPrefix("/m/1"), "/m/1/variables/variables");
  const std::string dir = kTfGraphs + "serving_matrix_half_plus_two";
  EXPECT_EQ(SavedModelExportDir(dir), dir);
  EXPECT_EQ(SavedModelExportDir(dir + "/saved_model.pb"), dir);
}

TEST(SavedModelLoaderTest, LoadsAModelWithoutVariables) {
  auto bundle = LoadSavedModel(SessionOptions(), {"serve"}, kTfGraphs + "serving_matrix_half_plus_two");
  ASSERT_TRUE(bundle.ok()) << bundle.status();
  std::vector<Tensor> out;
  Tensor x(DT_FLOAT, TensorShape({1, 3, 3}));
  for (int i = 0; i < 9; ++i) x.flat<float>()[i] = static_cast<float>(i);
  ASSERT_TRUE(bundle->session->Run({{"x:0", x}}, {"y:0"}, {}, &out).ok());
  EXPECT_EQ(out[0].flat<float>()[8], 0.5f * 8 + 2);

  auto wrong = LoadSavedModel(SessionOptions(), {"serve", "gpu"},
                              kTfGraphs + "serving_matrix_half_plus_two");
  EXPECT_EQ(wrong.status().code(), absl::StatusCode::kNotFound) << wrong.status();
  auto none = LoadSavedModel(SessionOptions(), {"serve"}, kTfGraphs + "nope");
  EXPECT_EQ(none.status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace tensorflux
