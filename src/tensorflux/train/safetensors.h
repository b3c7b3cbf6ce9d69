// Safetensors files: TensorFlux's checkpoint format (tx.train.Saver), readable by any
// safetensors reader (Hugging Face's library, or json + numpy).
//
// Layout: an 8-byte little-endian unsigned header length N; N bytes of UTF-8 JSON (an object,
// padded with trailing spaces so the data starts 8-byte aligned) mapping each tensor name to
// {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]} plus an optional
// "__metadata__": {string: string}; then the data: every tensor's raw little-endian row-major
// bytes, offsets relative to the first byte after the header.
//
// dtypes: F64 F32 F16 BF16 I64 I32 I16 I8 U64 U32 U16 U8 BOOL (double, float, half, bfloat16,
// int64 ... uint8, bool). Other dtypes (string, resource) are UNIMPLEMENTED when writing.
//
// Reading validates everything before trusting it, as the reference implementation does: the
// header length against the file size (and at most 100 MiB), the JSON (valid, an object, no
// duplicate names, every field present with the right type, no unknown fields, shapes of rank
// <= 8 without overflow), each tensor's byte length == elements x dtype size, and the ranges
// sorted by offset tile the data exactly (no overlap, no gap, no trailing bytes). Any violation is
// DATA_LOSS naming the file and, where there is one, the tensor. Bool bytes must be 0 or 1.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tensorflux/core/status.h"
#include "tensorflux/core/tensor.h"

namespace tensorflux {

// "F32" for DT_FLOAT, ...; UNIMPLEMENTED for a dtype safetensors has no name for here.
StatusOr<std::string> SafetensorsDtypeName(DataType dt);
// The inverse; INVALID_ARGUMENT for an unknown name.
StatusOr<DataType> SafetensorsDtypeFromName(std::string_view name);

// Writes `tensors` (names unique, non-empty, not "__metadata__") and `metadata` to `path`
// atomically: a temporary file in the same directory, fsync, rename onto `path`, fsync of the
// directory. A crash at any point leaves the old `path` (or none) intact. Tensors are laid out in
// name order. INVALID_ARGUMENT for a bad or duplicate name (or a name or metadata string that is
// not valid UTF-8), UNIMPLEMENTED for an unsupported
// dtype, I/O errors as in train/file_io.h.
Status WriteSafetensors(const std::string& path,
                        const std::vector<std::pair<std::string, Tensor>>& tensors,
                        const std::map<std::string, std::string>& metadata = {});

// One tensor as the header describes it (validated).
struct SafetensorsEntry {
  std::string name;
  DataType dtype = DT_INVALID;
  TensorShape shape;
  int64_t begin = 0;  // byte range in the data section
  int64_t end = 0;
};

// Opens and validates a file's header; tensors are read one at a time.
class SafetensorsReader {
 public:
  // NOT_FOUND when `path` does not exist, DATA_LOSS for any violation of the layout.
  static StatusOr<std::unique_ptr<SafetensorsReader>> Open(const std::string& path);
  ~SafetensorsReader();

  const std::string& path() const { return path_; }
  // Sorted by name.
  const std::vector<SafetensorsEntry>& entries() const { return entries_; }
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  // The entry named `name`, or nullptr.
  const SafetensorsEntry* Find(std::string_view name) const;
  // Reads the tensor `name`: NOT_FOUND naming it when absent, DATA_LOSS when the file changed
  // under the reader (short read) or a bool byte is not 0/1.
  StatusOr<Tensor> Read(std::string_view name) const;

 private:
  SafetensorsReader() = default;

  std::string path_;
  int fd_ = -1;
  int64_t data_start_ = 0;
  std::vector<SafetensorsEntry> entries_;
  std::map<std::string, std::string> metadata_;
};

}  // namespace tensorflux
