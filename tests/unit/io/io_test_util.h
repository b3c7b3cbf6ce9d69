// Helpers for the reader tests: scratch files and gzip compression of hand-made bytes.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace tensorflux {
namespace io {
namespace testutil {

inline std::string ScratchPath(const std::string& name) {
  return (std::filesystem::path(::testing::TempDir()) /
          ("io_test_" + std::to_string(getpid()) + "_" + name))
      .string();
}

inline std::string WriteFile(const std::string& name, const std::string& bytes) {
  const std::string path = ScratchPath(name);
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

inline std::string ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

// `bytes` as a gzip member (deflate with the gzip wrapper), through zlib directly.
inline std::string Gzip(const std::string& bytes, int level = 6) {
  z_stream z{};
  deflateInit2(&z, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&z, bytes.size()) + 32, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  z.avail_in = bytes.size();
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = out.size();
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

}  // namespace testutil
}  // namespace io
}  // namespace tensorflux
