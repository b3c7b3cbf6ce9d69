// `tensorflux gradients`, run as a subprocess: the printed `x -> gradient` lines, the written
// text GraphDef (loaded and run here against hand-derived derivatives), and the errors.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "google/protobuf/text_format.h"
#include "tensorflux/framework/op.h"
#include "tensorflux/graph.pb.h"
#include "tensorflux/runtime/session.h"

#include "cli_runner.h"

namespace tensorflux {
namespace {

namespace fs = std::filesystem;

using cli_test::CliResult;
using cli_test::ExpectError;
using cli_test::ReadAll;
using cli_test::RunCli;

// z = square(x * w), x: float[2] placeholder, w: const [3, -1]; u is unconnected.
const char kGraph[] = R"pb(
  node {
    name: "x"
    op: "Placeholder"
    attr { key: "dtype" value { type: DT_FLOAT } }
    attr { key: "shape" value { shape { dim { size: 2 } } } }
  }
  node {
    name: "u"
    op: "Placeholder"
    attr { key: "dtype" value { type: DT_FLOAT } }
  }
  node {
    name: "w"
    op: "Const"
    attr { key: "dtype" value { type: DT_FLOAT } }
    attr {
      key: "value"
      value {
        tensor {
          dtype: DT_FLOAT
          tensor_shape { dim { size: 2 } }
          float_val: 3
          float_val: -1
        }
      }
    }
  }
  node {
    name: "y"
    op: "Mul"
    input: "x"
    input: "w"
    attr { key: "T" value { type: DT_FLOAT } }
  }
  node {
    name: "z"
    op: "Square"
    input: "y"
    attr { key: "T" value { type: DT_FLOAT } }
  }
  versions { producer: 27 }
)pb";

class CliGradientsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           ("cli_gradients_" + std::string(
                                   ::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::create_directories(dir_);
    graph_ = (dir_ / "g.pbtxt").string();
    out_ = (dir_ / "out.pbtxt").string();
    std::ofstream(graph_) << kGraph;
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path dir_;
  std::string graph_, out_;
};

TEST_F(CliGradientsTest, WritesGraphAndPrintsOneLinePerX) {
  CliResult r = RunCli("gradients " + graph_ + " --ys z --xs x,u,w:0 -o " + out_);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(r.err.empty()) << r.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_match(
      r.out, m, std::regex("x -> (gradients/[^ \n]+:[0-9]+)\nu -> None\nw:0 -> "
                           "(gradients/[^ \n]+:[0-9]+)\n")))
      << r.out;
  const std::string gx = m[1], gw = m[2];

  GraphDef gdef;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(ReadAll(out_), &gdef));
  EXPECT_GT(gdef.node_size(), 5);
  auto session = NewSession(SessionOptions());
  ASSERT_TRUE(session.ok());
  ASSERT_TRUE((*session)->Create(gdef).ok());
  Tensor x = Tensor::FromVector<float>({2, 5}, TensorShape({2}));
  std::vector<Tensor> out;
  Status s = (*session)->Run({{"x", x}}, {gx, gw}, {}, &out);
  ASSERT_TRUE(s.ok()) << s;
  // z = (x w)^2: dz/dx = 2 x w^2 = [36, 10]; dz/dw = 2 x^2 w = [24, -50].
  ASSERT_EQ(out[0].NumElements(), 2);
  EXPECT_FLOAT_EQ(out[0].flat<float>()[0], 36);
  EXPECT_FLOAT_EQ(out[0].flat<float>()[1], 10);
  EXPECT_FLOAT_EQ(out[1].flat<float>()[0], 24);
  EXPECT_FLOAT_EQ(out[1].flat<float>()[1], -50);
}

TEST_F(CliGradientsTest, SeveralYsAndCustomScope) {
  if (!OpRegistry::Global()->LookUpOpDef("AddN").ok()) GTEST_SKIP() << "AddN not registered yet";
  CliResult r = RunCli("gradients " + graph_ + " --ys z,y --xs x --name grads -o " + out_);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(std::regex_match(r.out, std::regex("x -> grads/[^ \n]+:[0-9]+\n"))) << r.out;
}

TEST_F(CliGradientsTest, Help) {
  CliResult r = RunCli("gradients --help");
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("usage: tensorflux gradients GRAPH --ys"), std::string::npos) << r.out;
  r = RunCli("--help");
  EXPECT_NE(r.out.find("gradients"), std::string::npos) << r.out;
}

TEST_F(CliGradientsTest, Errors) {
  ExpectError(RunCli("gradients " + graph_ + " --xs x -o " + out_), "INVALID_ARGUMENT", "--ys");
  ExpectError(RunCli("gradients " + graph_ + " --ys z -o " + out_), "INVALID_ARGUMENT", "--xs");
  ExpectError(RunCli("gradients " + graph_ + " --ys z --xs x"), "INVALID_ARGUMENT", "-o");
  ExpectError(RunCli("gradients " + graph_ + " --ys z --xs nope -o " + out_), "NOT_FOUND",
              "nope");
  ExpectError(RunCli("gradients " + graph_ + " --ys z:3 --xs x -o " + out_), "INVALID_ARGUMENT",
              "z:3");
  ExpectError(RunCli("gradients " + graph_ + " --ys z --xs x, -o " + out_), "INVALID_ARGUMENT",
              "empty tensor name");
  ExpectError(RunCli("gradients " + graph_ + " --ys z --xs x --bogus -o " + out_),
              "INVALID_ARGUMENT", "--bogus");
  ExpectError(RunCli("gradients " + (dir_ / "missing.pbtxt").string() + " --ys z --xs x -o " +
                     out_),
              "NOT_FOUND", "missing.pbtxt");
  ExpectError(RunCli("gradients " + graph_ + " --ys z --xs x -o " +
                     (dir_ / "no_dir" / "out.pbtxt").string()),
              "NOT_FOUND", "out.pbtxt");
  EXPECT_FALSE(fs::exists(out_));
}

}  // namespace
}  // namespace tensorflux
