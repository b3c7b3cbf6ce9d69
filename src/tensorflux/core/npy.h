// NumPy .npy files: the array format the CLI reads feeds from and writes fetches to.
//
// Format (numpy.lib.format): the magic "\x93NUMPY", a major and minor version byte, a
// little-endian header length (uint16 for version 1.0, uint32 for 2.0 and 3.0), then an ASCII
// (3.0: UTF-8) Python dict literal such as
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// padded with spaces and a final '\n', then the raw elements in C (row-major) order.
//
// Supported element types ('descr'): b1 (bool), i1 i2 i4 i8, u1 u2 u4 u8, f2 (half), f4, f8,
// little-endian ('<'), native ('='; this library only runs on little-endian hosts) or, for
// one-byte types, '|'. Big-endian multi-byte data, structured dtypes, object arrays and
// fortran_order True are rejected. Rank is limited to TensorShape::kMaxDims.
#pragma once

#include <string>
#include <string_view>

#include "tensorflux/core/status.h"
#include "tensorflux/core/tensor.h"

namespace tensorflux {

// Decodes a whole .npy file held in memory. INVALID_ARGUMENT (naming what is wrong) for a bad
// magic or version, a malformed or truncated header, an unsupported descr, fortran_order True, a
// bad shape, or a data section whose size differs from shape x element size. Bool bytes other
// than 0 and 1 are read as true.
StatusOr<Tensor> ParseNpy(std::string_view bytes);

// Reads `path`. NOT_FOUND when it cannot be opened; ParseNpy's errors (prefixed with the path)
// otherwise.
StatusOr<Tensor> ReadNpyFile(const std::string& path);

// Encodes `t` as a version 1.0 .npy file (2.0 if the header would exceed 65535 bytes), header
// padded so the data starts on a 64-byte boundary. UNIMPLEMENTED for dtypes .npy has no code for
// (bfloat16, string, resource, ...).
StatusOr<std::string> EncodeNpy(const Tensor& t);

// EncodeNpy then writes `path`. NOT_FOUND naming the path when the file cannot be created
// (e.g. a missing directory), DATA_LOSS when writing fails part-way.
Status WriteNpyFile(const std::string& path, const Tensor& t);

}  // namespace tensorflux
