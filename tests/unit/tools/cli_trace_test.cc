// `tensorflux run --trace FILE.json`: the step's Chrome trace next to the usual output, and its
// errors.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <string>

#include "cli_runner.h"
#include "nlohmann/json.hpp"

namespace tensorflux {
namespace {

namespace fs = std::filesystem;
using cli_test::ExpectError;
using cli_test::ReadAll;
using cli_test::RunCli;

const std::string kHalfPlusTwo =
    std::string(TX_TEST_DATA_DIR) + "/tf-graphs/serving_matrix_half_plus_two";

TEST(CliTraceTest, WritesTheStepAsAChromeTrace) {
  const fs::path path = fs::path(::testing::TempDir()) / "cli_trace.json";
  fs::remove(path);
  auto r = RunCli("run " + kHalfPlusTwo + " --feed 'x:0=[[[0,1,2],[3,4,5],[6,7,8]]]'" +
                  " --fetch y:0 --trace " + path.string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "y:0 float[1,3,3] [[[2 2.5 3][3.5 4 4.5][5 5.5 6]]]\n");
  const auto trace = nlohmann::json::parse(ReadAll(path.string()));
  std::set<std::string> processes, nodes, ops;
  for (const auto& e : trace.at("traceEvents")) {
    if (e.at("ph") == "M" && e.at("name") == "process_name") {
      processes.insert(e.at("args").at("name").get<std::string>());
    }
    if (e.at("ph") == "X") {
      EXPECT_TRUE(nodes.insert(e.at("args").at("name").get<std::string>()).second) << e;
      ops.insert(e.at("args").at("op").get<std::string>());
      EXPECT_GE(e.at("dur").get<double>(), 0.0);
    }
  }
  EXPECT_EQ(processes,
            std::set<std::string>{"/job:localhost/replica:0/task:0/device:CPU:0 Compute"});
  // y = x * 0.5 + 2: the feed, the arithmetic and the fetch all ran.
  EXPECT_EQ(ops.count("_Arg"), 1u);
  EXPECT_EQ(ops.count("_Retval"), 1u);
  EXPECT_EQ(ops.count("Mul"), 1u);
  EXPECT_EQ(nodes.count("y"), 1u);
}

TEST(CliTraceTest, Errors) {
  ExpectError(RunCli("run " + kHalfPlusTwo + " --fetch y:0 --trace"), "INVALID_ARGUMENT",
              "--trace needs a value");
  ExpectError(RunCli("run " + kHalfPlusTwo + " --feed 'x:0=[[[1]]]' --fetch y:0 --trace ''"),
              "INVALID_ARGUMENT", "--trace needs a file name");
  ExpectError(RunCli("run " + kHalfPlusTwo + " --feed 'x:0=[[[0,1,2],[3,4,5],[6,7,8]]]'" +
                     " --fetch y:0 --trace /nonexistent-dir/t.json"),
              "NOT_FOUND", "/nonexistent-dir/t.json");
}

}  // namespace
}  // namespace tensorflux
