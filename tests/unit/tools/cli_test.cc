// The `tensorflux` command-line tool, run as a subprocess: output format, --save, inspect, and
// `CODE: message` errors with exit status 1.
#include <gtest/gtest.h>
#include <unistd.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "absl/strings/ascii.h"
#include "tensorflux/core/npy.h"

#include "cli_runner.h"

namespace tensorflux {
namespace {

namespace fs = std::filesystem;

const std::string kGraphs = std::string(TX_TEST_DATA_DIR) + "/tf-graphs/";
const std::string kHalfPlusTwo = kGraphs + "serving_matrix_half_plus_two";

using cli_test::CliResult;
using cli_test::ExpectError;
using cli_test::ReadAll;
using cli_test::RunCli;

TEST(CliTest, Help) {
  auto r = RunCli("--help");
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("run"), std::string::npos);
  EXPECT_NE(r.out.find("inspect"), std::string::npos);
  r = RunCli("run --help");
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("--feed NAME=VALUE"), std::string::npos);
  EXPECT_NE(r.out.find("--save DIR"), std::string::npos);
  r = RunCli("help inspect");
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("usage: tensorflux inspect GRAPH"), std::string::npos);
}

TEST(CliTest, ServingMatrixHalfPlusTwo) {
  auto r = RunCli("run " + kHalfPlusTwo +
                  " --feed 'x:0=[[[0,1,2],[3,4,5],[6,7,8]]]' --fetch y:0");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "y:0 float[1,3,3] [[[2 2.5 3][3.5 4 4.5][5 5.5 6]]]\n");
  EXPECT_EQ(r.err, "");
  // The saved_model.pb file itself, signature keys, and the same output fetched twice.
  r = RunCli("run " + kHalfPlusTwo + "/saved_model.pb --signature serving_default"
             " --feed 'x=[[[0,1,2],[3,4,5],[6,7,8]],[[1,1,1],[1,1,1],[1,1,1]]]' --fetch y --fetch y");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out,
            "y float[2,3,3] [[[2 2.5 3][3.5 4 4.5][5 5.5 6]][[2.5 2.5 2.5][2.5 2.5 2.5][2.5 2.5 2.5]]]\n"
            "y float[2,3,3] [[[2 2.5 3][3.5 4 4.5][5 5.5 6]][[2.5 2.5 2.5][2.5 2.5 2.5][2.5 2.5 2.5]]]\n");
}

// With --signature, feed names are the signature's input aliases and fetch names its output
// aliases, nothing else: a name that is not an alias is INVALID_ARGUMENT naming it and listing
// the aliases, even where the graph has a tensor of that name (it is never fed behind the user's
// back). TF's saved_model_cli refuses such keys too ("x:0" is not a valid input key).
TEST(CliTest, SignatureNamesAreOnlyItsAliases) {
  // Signature "serving_default": input x -> placeholder b, output out -> Identity(b). The graph
  // also has a placeholder named x (read by w), and b is a graph tensor but not an alias.
  const fs::path dir = fs::path(::testing::TempDir()) /
                       ("cli_alias_model_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "saved_model.pbtxt") << R"pb(
    meta_graphs {
      meta_info_def { tags: "serve" }
      graph_def {
        node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
        node { name: "b" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
        node { name: "out" op: "Identity" input: "b" attr { key: "T" value { type: DT_FLOAT } } }
        node { name: "w" op: "Identity" input: "x" attr { key: "T" value { type: DT_FLOAT } } }
      }
      signature_def {
        key: "serving_default"
        value {
          inputs { key: "x" value { name: "b:0" dtype: DT_FLOAT } }
          outputs { key: "out" value { name: "out:0" dtype: DT_FLOAT } }
        }
      }
    })pb";
  const std::string model = dir.string();
  auto r = RunCli("run " + model + " --signature serving_default --feed x=3 --fetch out");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "out float[] 3\n");
  // `b` is the graph tensor behind x, not an alias: refused, not fed to b.
  ExpectError(RunCli("run " + model + " --signature serving_default --feed b=3 --fetch out"),
              "INVALID_ARGUMENT",
              "signature 'serving_default' has no input named 'b' (its inputs: x)");
  // Every unknown name is listed, once.
  ExpectError(RunCli("run " + model + " --signature serving_default --feed x=3 --feed bogus=1"
                     " --feed b:0=2 --feed bogus=4 --fetch out"),
              "INVALID_ARGUMENT", "has no input named 'bogus', 'b:0' (its inputs: x)");
  // Fetches likewise: a graph tensor that is not an output alias is refused.
  ExpectError(RunCli("run " + model + " --signature serving_default --feed x=3 --fetch w"),
              "INVALID_ARGUMENT", "has no output named 'w' (its outputs: out)");
  ExpectError(RunCli("run " + kHalfPlusTwo + " --signature serving_default --feed x:0=1"
                     " --fetch y"),
              "INVALID_ARGUMENT", "has no input named 'x:0' (its inputs: x)");
  // Without --signature names are graph tensors, as before.
  r = RunCli("run " + model + " --feed b=5 --fetch out:0");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "out:0 float[] 5\n");
  fs::remove_all(dir);
}

TEST(CliTest, SavedModelVariablesAreRestoredFirst) {
  // half_plus_two_cpu's a, b, c live in its variables/ checkpoint (TF reference variables).
  auto r = RunCli("run " + kGraphs + "serving_half_plus_two_cpu --feed 'x:0=[[1],[2],[5]]'"
                  " --fetch y:0 --fetch y2:0");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "y:0 float[3,1] [[2.5][3][4.5]]\ny2:0 float[3,1] [[3.5][4][5.5]]\n");
  // x2 comes from ParseExample over the string placeholder tf_example, which the CLI cannot
  // feed: a clear error naming the placeholder (the Python test feeds a real Example).
  r = RunCli("run " + kGraphs + "serving_half_plus_two_cpu --fetch y3:0");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("INVALID_ARGUMENT"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("tf_example"), std::string::npos) << r.err;
}

TEST(CliTest, SavedModelWithoutItsVariablesWarns) {
  // half_plus_two_cpu without variables/: the restore is skipped (as TF), with a warning.
  const std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) / "half_plus_two_no_variables";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::filesystem::copy_file(kGraphs + "serving_half_plus_two_cpu/saved_model.pb",
                             dir / "saved_model.pb");
  auto r = RunCli("run " + dir.string() + " --feed 'x:0=[[1]]' --fetch y:0");
  EXPECT_NE(r.err.find("warning: the SavedModel has no " +
                       (dir / "variables" / "variables.index").string() +
                       "; no variables were restored"),
            std::string::npos)
      << r.err;
  std::filesystem::remove_all(dir);
  r = RunCli("run " + kGraphs + "serving_half_plus_two_cpu --feed 'x:0=[[1]]' --fetch y:0");
  EXPECT_EQ(r.err.find("warning"), std::string::npos) << r.err;
}

TEST(CliTest, RustAdditionAndMultiplication) {
  auto r = RunCli("run " + kGraphs + "rust_addition/model.pb --feed 'x=[2]' --feed 'y=[40]' --fetch z");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "z int32[1] [42]\n");
  r = RunCli("run " + kGraphs + "rust_addition/model.pb --feed x=2 --feed y:0=40 --fetch z:0");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "z:0 int32[] 42\n");
  r = RunCli("run " + kGraphs + "rust_multiplication/multiplication.pb --feed 'a=[1,2,3]' "
             "--feed 'b=[4,5,6]' --fetch c");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "c float[3] [4 10 18]\n");
}

TEST(CliTest, SaveAndNpyFeeds) {
  const fs::path dir = fs::path(::testing::TempDir()) / ("cli_test_save_" + std::to_string(getpid()));
  fs::remove_all(dir);
  // Feed x from a .npy file.
  Tensor x(DT_FLOAT, TensorShape({1, 3, 3}));
  for (int i = 0; i < 9; ++i) x.data<float>()[i] = static_cast<float>(2 * i);
  fs::create_directories(dir);
  const std::string x_path = (dir / "x.npy").string();
  ASSERT_TRUE(WriteNpyFile(x_path, x).ok());
  const std::string out_dir = (dir / "out").string();
  auto r = RunCli("run " + kHalfPlusTwo + " --feed x:0=" + x_path +
                  " --fetch y:0 --fetch x:0 --save " + out_dir);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out,
            "y:0 float[1,3,3] [[[2 3 4][5 6 7][8 9 10]]]\n"
            "x:0 float[1,3,3] [[[0 2 4][6 8 10][12 14 16]]]\n");
  auto y = ReadNpyFile(out_dir + "/fetch0.npy");
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(y->shape(), TensorShape({1, 3, 3}));
  for (int i = 0; i < 9; ++i) EXPECT_EQ(y->data<float>()[i], 0.5f * (2 * i) + 2) << i;
  auto x_back = ReadNpyFile(out_dir + "/fetch1.npy");
  ASSERT_TRUE(x_back.ok()) << x_back.status();
  EXPECT_EQ(x_back->data<float>()[8], 16.f);
  EXPECT_FALSE(fs::exists(out_dir + "/fetch2.npy"));
  fs::remove_all(dir);
}

TEST(CliTest, Inspect) {
  auto r = RunCli("inspect " + kHalfPlusTwo);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("SavedModel, 6 nodes, producer 24"), std::string::npos) << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex("\n  Const +2\n"))) << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex("\n  Placeholder +1\n"))) << r.out;
  EXPECT_NE(r.out.find("placeholders:\n  x: float [?,3,3]\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("unconsumed nodes:\n  y (Add)\n  init (NoOp)\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("input  x -> x:0 float [?,3,3]"), std::string::npos) << r.out;

  r = RunCli("inspect " + kGraphs + "rust_multiplication/multiplication.pb");
  ASSERT_EQ(r.code, 0) << r.err;
  // Producer 9: the empty shape attr means unknown shape.
  EXPECT_NE(r.out.find("  a: float <unknown>\n  b: float <unknown>\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("unconsumed nodes:\n  c (Mul)\n"), std::string::npos) << r.out;

  r = RunCli("inspect " + kGraphs + "rust_addition/model.pb");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("  x: int32 []\n  y: int32 []\n"), std::string::npos) << r.out;
}

// A text GraphDef with one Placeholder -> Identity pair per dtype, for literal parsing.
std::string WriteDtypeGraph() {
  const std::string path = (fs::path(::testing::TempDir()) / ("cli_test_dtypes_" + std::to_string(getpid()) + ".pbtxt")).string();
  std::ofstream f(path);
  for (const char* dt : {"BOOL", "UINT8", "INT64", "DOUBLE", "HALF", "INT8"}) {
    std::string name = absl::AsciiStrToLower(dt);
    f << "node { name: '" << name << "' op: 'Placeholder' attr { key: 'dtype' value { type: DT_"
      << dt << " } } }\n"
      << "node { name: 'id_" << name << "' op: 'Identity' input: '" << name
      << "' attr { key: 'T' value { type: DT_" << dt << " } } }\n";
  }
  f << "versions { producer: 27 }\n";
  return path;
}

TEST(CliTest, LiteralsTakeTheFedTensorsDtype) {
  const std::string g = WriteDtypeGraph();
  struct Case {
    std::string feed, expect;
  };
  const std::vector<Case> cases = {
      {"bool='[true,false,1,0]'", "id_bool bool[4] [true false true false]\n"},
      {"bool=True", "id_bool bool[] true\n"},
      {"uint8='[[0,255],[7,8]]'", "id_uint8 uint8[2,2] [[0 255][7 8]]\n"},
      {"int64='[9007199254740993, -5]'", "id_int64 int64[2] [9007199254740993 -5]\n"},
      {"int64=+3.0", "id_int64 int64[] 3\n"},
      {"int64=9.2e18", "id_int64 int64[] 9200000000000000000\n"},
      {"double='[0.1,-2.5e-3,1e300]'", "id_double double[3] [0.1 -0.0025 1e+300]\n"},
      {"double='[]'", "id_double double[0] []\n"},
      {"double='[[],[]]'", "id_double double[2,0] [[][]]\n"},
      {"half='[0.5, 1.5, -2]'", "id_half half[3] [0.5 1.5 -2]\n"},
      {"int8=' [ [ -128 ] , [ 127 ] ] '", "id_int8 int8[2,1] [[-128][127]]\n"},
  };
  for (const Case& c : cases) {
    const std::string node = c.feed.substr(0, c.feed.find('='));
    auto r = RunCli("run " + g + " --feed=" + c.feed + " --fetch id_" + node);
    EXPECT_EQ(r.code, 0) << c.feed << ": " << r.err;
    EXPECT_EQ(r.out, c.expect) << c.feed;
  }
  ExpectError(RunCli("run " + g + " --feed uint8=256 --fetch id_uint8"), "INVALID_ARGUMENT",
              "out of range");
  ExpectError(RunCli("run " + g + " --feed uint8=-1 --fetch id_uint8"), "INVALID_ARGUMENT",
              "out of range");
  ExpectError(RunCli("run " + g + " --feed int8=128 --fetch id_int8"), "INVALID_ARGUMENT",
              "out of range");
  ExpectError(RunCli("run " + g + " --feed int64=9.3e18 --fetch id_int64"), "INVALID_ARGUMENT",
              "out of range");
  ExpectError(RunCli("run " + g + " --feed bool=2 --fetch id_bool"), "INVALID_ARGUMENT", "bool");
  ExpectError(RunCli("run " + g + " --feed 'double=[[[[[[[[[1]]]]]]]]]' --fetch id_double"),
              "INVALID_ARGUMENT", "nested");
  ExpectError(RunCli("run " + g + " --feed 'double=[1,[2]]' --fetch id_double"),
              "INVALID_ARGUMENT", "ragged");
  ExpectError(RunCli("run " + g + " --feed 'double=[1 2]' --fetch id_double"),
              "INVALID_ARGUMENT", "literal");
  fs::remove(g);
}

TEST(CliTest, Errors) {
  const std::string add = kGraphs + "rust_addition/model.pb";
  ExpectError(RunCli(""), "INVALID_ARGUMENT", "no command");
  ExpectError(RunCli("frobnicate"), "INVALID_ARGUMENT", "frobnicate");
  ExpectError(RunCli("run /no/such/graph.pb --fetch y"), "NOT_FOUND");
  ExpectError(RunCli("inspect /no/such/graph.pb"), "NOT_FOUND");
  ExpectError(RunCli("run /no/such/dir/saved_model.pb --fetch y"), "NOT_FOUND");
  ExpectError(RunCli("run " + add + " --bogus"), "INVALID_ARGUMENT", "--bogus");
  ExpectError(RunCli("run " + add), "INVALID_ARGUMENT", "--fetch");
  ExpectError(RunCli("run " + add + " --fetch"), "INVALID_ARGUMENT", "needs a value");
  ExpectError(RunCli("run " + add + " --feed x --fetch z"), "INVALID_ARGUMENT", "NAME=VALUE");
  // Bad literals.
  ExpectError(RunCli("run " + add + " --feed 'x=[[1,2],[3]]' --feed y=1 --fetch z"),
              "INVALID_ARGUMENT", "ragged");
  ExpectError(RunCli("run " + add + " --feed 'x=[1,,2]' --feed y=1 --fetch z"),
              "INVALID_ARGUMENT", "literal");
  ExpectError(RunCli("run " + add + " --feed 'x=[1,2' --feed y=1 --fetch z"),
              "INVALID_ARGUMENT", "literal");
  ExpectError(RunCli("run " + add + " --feed x=abc --feed y=1 --fetch z"),
              "INVALID_ARGUMENT", "abc");
  ExpectError(RunCli("run " + add + " --feed x=2.5 --feed y=1 --fetch z"),
              "INVALID_ARGUMENT", "whole");
  ExpectError(RunCli("run " + add + " --feed x=99999999999 --feed y=1 --fetch z"),
              "INVALID_ARGUMENT", "out of range");
  // Unknown fetch, feed of a missing tensor, missing feed.
  ExpectError(RunCli("run " + add + " --feed x=1 --feed y=1 --fetch nope:0"), "NOT_FOUND", "nope");
  ExpectError(RunCli("run " + add + " --feed nope=1 --fetch z"), "NOT_FOUND", "nope");
  ExpectError(RunCli("run " + add + " --feed x=1 --fetch z"), "INVALID_ARGUMENT", "y");
  // A .npy feed that does not exist.
  ExpectError(RunCli("run " + add + " --feed x=/no/such.npy --feed y=1 --fetch z"), "NOT_FOUND");
  // Signatures.
  ExpectError(RunCli("run " + add + " --signature serving_default --fetch z"), "INVALID_ARGUMENT",
              "SavedModel");
  ExpectError(RunCli("run " + kHalfPlusTwo + " --signature nope --fetch y"), "INVALID_ARGUMENT",
              "serving_default");
  // A file that is not a graph.
  const std::string junk = (fs::path(::testing::TempDir()) / ("cli_test_junk_" + std::to_string(getpid()) + ".pb")).string();
  {
    std::ofstream f(junk, std::ios::binary);
    f << std::string("\xff\xff\xff\xff\x0f not a graph", 16);
  }
  auto r = RunCli("run " + junk + " --fetch y");
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(r.err.rfind("DATA_LOSS: ", 0) == 0 || r.err.rfind("INVALID_ARGUMENT: ", 0) == 0)
      << r.err;
  fs::remove(junk);
}

// TX_CPU_ALLOCATION_LIMIT_MB caps one allocation: a 2 MiB Fill output under a 1 MiB limit is
// RESOURCE_EXHAUSTED naming the node; the same graph runs without the limit.
TEST(CliTest, AllocationLimitFromEnvironment) {
  const std::string path = (fs::path(::testing::TempDir()) /
                            ("cli_test_fill_" + std::to_string(getpid()) + ".pbtxt")).string();
  {
    std::ofstream f(path);
    f << "node { name: 'dims' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } }"
         " attr { key: 'value' value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 2 } }"
         " int_val: 512 int_val: 1024 } } } }\n"
         "node { name: 'one' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } }"
         " attr { key: 'value' value { tensor { dtype: DT_FLOAT tensor_shape { } float_val: 1 } } } }\n"
         "node { name: 'big' op: 'Fill' input: 'dims' input: 'one'"
         " attr { key: 'T' value { type: DT_FLOAT } } attr { key: 'index_type' value { type: DT_INT32 } } }\n";
  }
  setenv("TX_CPU_ALLOCATION_LIMIT_MB", "1", 1);
  auto limited = RunCli("run " + path + " --target big");
  unsetenv("TX_CPU_ALLOCATION_LIMIT_MB");
  EXPECT_NE(limited.code, 0);
  EXPECT_NE(limited.err.find("RESOURCE_EXHAUSTED"), std::string::npos) << limited.err;
  EXPECT_NE(limited.err.find("big"), std::string::npos) << limited.err;
  auto unlimited = RunCli("run " + path + " --target big");
  EXPECT_EQ(unlimited.code, 0) << unlimited.err;
  fs::remove(path);
}

}  // namespace
}  // namespace tensorflux
