// The C++ op wrapper generator: a class for every registered op, deterministic output.
#include <gtest/gtest.h>
#include <unistd.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "tensorflux/framework/op.h"

namespace tensorflux {
namespace {

namespace fs = std::filesystem;

std::string ReadAll(const fs::path& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// The wrappers the build generated (build/gen/tensorflux/cc/ops/ops.h).
const fs::path kGenerated = fs::path(TX_BIN_DIR) / ".." / "gen" / "tensorflux" / "cc" / "ops";

TEST(OpGenTest, EveryRegisteredOpHasAWrapper) {
  const std::string h = ReadAll(kGenerated / "ops.h");
  ASSERT_FALSE(h.empty());
  // The ops the library registers, as the generator sees them (this test binary also registers
  // test-only ops, which have no wrappers).
  std::string names;
  FILE* p = popen((std::string(TX_BIN_DIR) + "/tx_cc_op_gen --list").c_str(), "r");
  ASSERT_NE(p, nullptr);
  char buf[4096];
  size_t got;
  while ((got = fread(buf, 1, sizeof(buf), p)) > 0) names.append(buf, got);
  ASSERT_EQ(pclose(p), 0);
  int n = 0;
  std::istringstream lines(names);
  for (std::string op; std::getline(lines, op);) {
    EXPECT_TRUE(OpRegistry::Global()->LookUp(op).ok()) << op;
    if (op == "Const") {
      // Hand-written in const_op.h, which ops.h includes.
      EXPECT_NE(h.find("#include \"tensorflux/cc/const_op.h\""), std::string::npos);
      continue;
    }
    std::string cls = op;
    while (!cls.empty() && cls[0] == '_') cls.erase(0, 1);
    EXPECT_NE(h.find("\nclass " + cls + " {\n"), std::string::npos) << op;
    ++n;
  }
  EXPECT_GT(n, 25);
  for (const char* op : {"MatMul", "AddV2", "Placeholder", "_Arg", "IdentityN"})
    EXPECT_NE(names.find(std::string(op) + "\n"), std::string::npos) << op;
}

TEST(OpGenTest, OutputIsDeterministic) {
  const fs::path tmp = fs::path(::testing::TempDir()) / ("op_gen_test_" + std::to_string(getpid()));
  fs::remove_all(tmp);
  fs::create_directories(tmp / "a");
  fs::create_directories(tmp / "b");
  const std::string gen = std::string(TX_BIN_DIR) + "/tx_cc_op_gen ";
  ASSERT_EQ(std::system((gen + (tmp / "a").string()).c_str()), 0);
  ASSERT_EQ(std::system((gen + (tmp / "b").string()).c_str()), 0);
  for (const char* f : {"ops.h", "ops.cc"}) {
    const std::string a = ReadAll(tmp / "a" / f);
    EXPECT_FALSE(a.empty()) << f;
    EXPECT_EQ(a, ReadAll(tmp / "b" / f)) << f;
    // And equal to what the build compiled, since the registry is the same.
    EXPECT_EQ(a, ReadAll(kGenerated / f)) << f;
  }
  fs::remove_all(tmp);
  // Usage error.
  EXPECT_NE(std::system((std::string(TX_BIN_DIR) + "/tx_cc_op_gen 2>/dev/null").c_str()), 0);
}

}  // namespace
}  // namespace tensorflux
