// Reader of IDX files (the MNIST / Fashion-MNIST format), plain or gzip-compressed, streamed one
// item at a time.
//
// Format (big-endian): bytes 0-1 zero; byte 2 the element type code (0x08 uint8, 0x09 int8,
// 0x0B int16, 0x0C int32, 0x0D float32, 0x0E float64); byte 3 the number of dimensions n >= 1;
// then n uint32 sizes; then the row-major elements, big-endian. An "item" is one slice along
// dimension 0: a uint8 [28, 28] image of an idx3 file, a uint8 scalar of an idx1 label file.
//
// Errors name the file and byte offset: bad magic, unknown type code, zero dimensions, a size
// over 2^31 or an element count overflowing int64 -> INVALID_ARGUMENT; a payload shorter than the
// header announces (found when the missing item is read) -> DATA_LOSS. Bytes after the last item
// are ignored, as other IDX readers do.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tensorflux/core/status.h"
#include "tensorflux/core/tensor.h"
#include "tensorflux/io/input_stream.h"

namespace tensorflux {
namespace io {

class IdxReader {
 public:
  static StatusOr<std::unique_ptr<IdxReader>> Open(const std::string& path);

  DataType dtype() const { return dtype_; }
  // All dimensions, dims()[0] being the item count.
  const std::vector<int64_t>& dims() const { return dims_; }
  int64_t num_items() const { return dims_[0]; }
  // The shape of one item: dims()[1:].
  const TensorShape& item_shape() const { return item_shape_; }

  // Reads the next item into `*item` (dtype(), item_shape(), host byte order). OUT_OF_RANGE after
  // the last item.
  Status ReadItem(Tensor* item);
  // Reads all remaining items into one tensor of shape [remaining] + item_shape().
  Status ReadAll(Tensor* all);

 private:
  IdxReader() = default;
  Status ReadItems(int64_t count, void* dst);

  std::unique_ptr<InputStream> in_;
  DataType dtype_ = DT_INVALID;
  std::vector<int64_t> dims_;
  TensorShape item_shape_;
  int64_t item_bytes_ = 0;
  int64_t next_item_ = 0;
};

// The TensorFlux dtype of an IDX element type code, or DT_INVALID.
DataType IdxTypeCodeToDataType(int code);

}  // namespace io
}  // namespace tensorflux
