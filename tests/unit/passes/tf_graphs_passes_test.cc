// The graph files made by TensorFlow (tests/data/tf-graphs) and the examples' graphs give the
// same bits with the graph passes on (the default) and off: each runs the same sequence of steps
// in two sessions. Includes a fed Const (the checkpoint path fed to save/Const), TF 1.x
// reference variables with Assign/Identity snapshots, and a training graph.
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "pass_test_util.h"
#include "tensorflux/graph/graph_def_io.h"
#include "tensorflux/graph/saved_model.h"

namespace tensorflux {
namespace {

const std::string kDir = std::string(TX_TEST_DATA_DIR) + "/tf-graphs/";

struct Step {
  std::vector<std::pair<std::string, Tensor>> feeds;
  std::vector<std::string> fetches;
  std::vector<std::string> targets;
};

// Runs the steps in one session; returns every fetched tensor in order.
std::vector<Tensor> RunSteps(const GraphDef& g, const ConfigProto& config,
                             const std::vector<Step>& steps) {
  SessionOptions opts;
  opts.config = config;
  LocalSession session(opts);
  Status s = session.Create(g);
  EXPECT_TRUE(s.ok()) << s;
  std::vector<Tensor> all;
  for (const Step& step : steps) {
    std::vector<Tensor> out;
    s = session.Run(step.feeds, step.fetches, step.targets, &out);
    EXPECT_TRUE(s.ok()) << s;
    if (!s.ok()) break;
    all.insert(all.end(), out.begin(), out.end());
  }
  return all;
}

void ExpectSame(const GraphDef& g, const std::vector<Step>& steps, size_t fetched) {
  const std::vector<Tensor> on = RunSteps(g, ConfigProto(), steps);
  const std::vector<Tensor> off = RunSteps(g, pass_test::PassesOff(), steps);
  ASSERT_EQ(on.size(), fetched);
  ASSERT_EQ(off.size(), fetched);
  for (size_t i = 0; i < on.size(); ++i) {
    SCOPED_TRACE("fetched tensor " + std::to_string(i));
    pass_test::ExpectBitIdentical(on[i], off[i]);
  }
}

Tensor Floats(std::vector<float> v, TensorShape shape) { return Tensor::FromVector<float>(v, shape); }

TEST(TfGraphsPassesTest, ServingMatrixHalfPlusTwo) {
  auto mg = LoadSavedModelMetaGraph(kDir + "serving_matrix_half_plus_two");
  ASSERT_TRUE(mg.ok()) << mg.status();
  Tensor x = Floats({0, 1, 2, 3, 4, 5, 6, 7, 8, -2, -2, -2, 0, 0, 0, 2, 2, 2}, {2, 3, 3});
  ExpectSame(mg->graph_def(), {{{{"x:0", x}}, {"y:0"}, {}}}, 1);
}

TEST(TfGraphsPassesTest, RustAdditionAndMultiplication) {
  auto add = ReadGraphDefFile(kDir + "rust_addition/model.pb");
  ASSERT_TRUE(add.ok()) << add.status();
  ExpectSame(*add,
             {{{{"x", Tensor::FromVector<int32_t>({2}, TensorShape({1}))},
                {"y", Tensor::FromVector<int32_t>({40}, TensorShape({1}))}},
               {"z"},
               {}}},
             1);
  auto mul = ReadGraphDefFile(kDir + "rust_multiplication/multiplication.pb");
  ASSERT_TRUE(mul.ok()) << mul.status();
  ExpectSame(*mul, {{{{"a", Floats({1, 2, 3}, {3})}, {"b", Floats({4, 5, 6}, {3})}}, {"c"}, {}}},
             1);
}

TEST(TfGraphsPassesTest, ServingHalfPlusTwoRestoredFromItsCheckpoint) {
  auto mg = LoadSavedModelMetaGraph(kDir + "serving_half_plus_two_cpu");
  ASSERT_TRUE(mg.ok()) << mg.status();
  const Tensor prefix = Tensor::Scalar<std::string>(kDir + "serving_half_plus_two_cpu/variables/variables");
  const Tensor x = Floats({1, 2, 5}, {3, 1});
  ExpectSame(mg->graph_def(),
             {{{{"save/Const:0", prefix}}, {}, {"save/restore_all"}},
              {{{"x:0", x}}, {"y:0", "y2:0"}, {}}},
             2);
  // And the values are TF's (a = 0.5, b = 2, c = 3).
  auto on = RunSteps(mg->graph_def(), ConfigProto(),
                     {{{{"save/Const:0", prefix}}, {}, {"save/restore_all"}},
                      {{{"x:0", x}}, {"y:0"}, {}}});
  ASSERT_EQ(on.size(), 1u);
  EXPECT_EQ(std::vector<float>(on[0].flat<float>().begin(), on[0].flat<float>().end()),
            (std::vector<float>{2.5f, 3.f, 4.5f}));
}

TEST(TfGraphsPassesTest, RustRegressionTraining) {
  auto g = ReadGraphDefFile(kDir + "rust_regression_checkpoint/model.pb");
  ASSERT_TRUE(g.ok()) << g.status();
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  Tensor x(DT_FLOAT, TensorShape({100})), y(DT_FLOAT, TensorShape({100}));
  for (int i = 0; i < 100; ++i) {
    x.flat<float>()[i] = u(rng);
    y.flat<float>()[i] = 0.1f * x.flat<float>()[i] + 0.3f;
  }
  // init draws w from an unseeded RandomUniform (a new value each session, as in TF); feeding
  // the draw makes both sessions start from the same w.
  std::vector<Step> steps = {
      {{{"random_uniform/RandomUniform:0", Floats({0.7f}, {1})}}, {}, {"init"}}};
  for (int i = 0; i < 10; ++i) steps.push_back({{{"x", x}, {"y", y}}, {}, {"train"}});
  steps.push_back({{}, {"w", "b"}, {}});
  ExpectSame(*g, steps, 2);
}

}  // namespace
}  // namespace tensorflux
