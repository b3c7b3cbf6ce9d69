// The test binary's paths (tx_test_paths.h).
#include "tx_test_paths.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace tensorflux::test {
namespace {

[[noreturn]] void Fail(const std::string& what) {
  std::fprintf(stderr, "tensorflux_tests: %s\n", what.c_str());
  std::abort();
}

std::string FromEnv(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? std::string(v) : std::string();
}

std::string ExeDir() {
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) Fail("cannot read /proc/self/exe (" + ec.message() + "); set TX_BIN_DIR");
  return exe.parent_path().string();
}

}  // namespace

const std::string& BinDir() {
  static const std::string* dir = [] {
    std::string d = FromEnv("TX_BIN_DIR");
    return new std::string(d.empty() ? ExeDir() : d);
  }();
  return *dir;
}

const std::string& TestDataDir() {
  static const std::string* dir = [] {
    std::string d = FromEnv("TX_TEST_DATA_DIR");
    if (!d.empty()) return new std::string(d);
    const std::string file = ExeDir() + "/tensorflux_tests.source_dir";
    std::ifstream in(file);
    std::string source;
    if (!std::getline(in, source) || source.empty()) {
      Fail("cannot read the source folder from " + file + "; set TX_TEST_DATA_DIR");
    }
    return new std::string(source + "/tests/data");
  }();
  return *dir;
}

}  // namespace tensorflux::test
