// Runs build/bin/tensorflux as a subprocess for the CLI tests: stdout, stderr and exit status.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

namespace tensorflux {
namespace cli_test {

struct CliResult {
  int code = -1;
  std::string out;
  std::string err;
};

inline std::string ReadAll(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// Runs `tensorflux ARGS` through the shell (ARGS is shell text: quote brackets). stderr goes to a
// file named by pid and a counter, so tests running in parallel processes never share it.
inline CliResult RunCli(const std::string& args) {
  static int counter = 0;
  const std::string err_path =
      (std::filesystem::path(::testing::TempDir()) /
       ("cli_stderr_" + std::to_string(getpid()) + "_" + std::to_string(counter++)))
          .string();
  const std::string cmd = std::string(TX_BIN_DIR) + "/tensorflux " + args + " 2>" + err_path;
  CliResult r;
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) r.out.append(buf, n);
  int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.err = ReadAll(err_path);
  std::filesystem::remove(err_path);
  return r;
}

// Exit status 1, nothing on stdout, and exactly one stderr line "CODE: message" with the given
// code and containing `fragment`.
inline void ExpectError(const CliResult& r, const std::string& code,
                        const std::string& fragment = "") {
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_TRUE(std::regex_match(r.err, std::regex("[A-Z_]+: [^\n]+\n"))) << "stderr: " << r.err;
  EXPECT_EQ(r.err.substr(0, code.size() + 2), code + ": ") << r.err;
  EXPECT_NE(r.err.find(fragment), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
}

}  // namespace cli_test
}  // namespace tensorflux
