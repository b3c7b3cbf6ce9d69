#include "tensorflux/io/idx_reader.h"

#include <algorithm>
#include <cstring>

namespace tensorflux {
namespace io {
namespace {

uint32_t BigEndian32(const unsigned char* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

// Big-endian elements of `width` bytes to host (little-endian) order, in place.
void SwapToHost(char* data, int64_t count, size_t width) {
  if (width == 1) return;
  for (int64_t i = 0; i < count; ++i) std::reverse(data + i * width, data + (i + 1) * width);
}

}  // namespace

DataType IdxTypeCodeToDataType(int code) {
  switch (code) {
    case 0x08: return DT_UINT8;
    case 0x09: return DT_INT8;
    case 0x0B: return DT_INT16;
    case 0x0C: return DT_INT32;
    case 0x0D: return DT_FLOAT;
    case 0x0E: return DT_DOUBLE;
    default: return DT_INVALID;
  }
}

StatusOr<std::unique_ptr<IdxReader>> IdxReader::Open(const std::string& path) {
  StatusOr<std::unique_ptr<InputStream>> in = InputStream::Open(path);
  if (!in.ok()) return in.status();
  std::unique_ptr<IdxReader> r(new IdxReader());
  r->in_ = std::move(*in);
  InputStream& s = *r->in_;
  unsigned char magic[4];
  size_t got = 0;
  TX_RETURN_IF_ERROR(s.Read(magic, 4, &got));
  if (got < 4)
    return errors::DataLoss("IDX header cut short: ", got, " of 4 magic bytes in ", s.Where(got));
  if (magic[0] != 0 || magic[1] != 0)
    return errors::InvalidArgument("bad IDX magic: bytes 0-1 are 0x", absl::Hex(magic[0]), " 0x",
                                   absl::Hex(magic[1]), ", expected 0x0 0x0, in ", s.Where(0));
  r->dtype_ = IdxTypeCodeToDataType(magic[2]);
  if (r->dtype_ == DT_INVALID)
    return errors::InvalidArgument("unknown IDX element type code 0x", absl::Hex(magic[2]),
                                   " (expected 0x08, 0x09, 0x0B, 0x0C, 0x0D or 0x0E) in ",
                                   s.Where(2));
  const int ndims = magic[3];
  if (ndims == 0)
    return errors::InvalidArgument("IDX file has 0 dimensions (need >= 1) in ", s.Where(3));
  int64_t elements = 1;
  for (int d = 0; d < ndims; ++d) {
    unsigned char b[4];
    const int64_t at = s.offset();
    TX_RETURN_IF_ERROR(s.Read(b, 4, &got));
    if (got < 4)
      return errors::DataLoss("IDX header cut short in dimension ", d, " of ", ndims, " in ",
                              s.Where(at));
    const int64_t size = BigEndian32(b);
    if (size > (int64_t{1} << 31))
      return errors::InvalidArgument("IDX dimension ", d, " has size ", size,
                                     " (over 2^31) in ", s.Where(at));
    if (size != 0 && elements > (int64_t{1} << 50) / size)
      return errors::InvalidArgument("IDX dimensions overflow the element count at dimension ",
                                     d, " in ", s.Where(at));
    elements *= size;
    r->dims_.push_back(size);
  }
  r->item_shape_ = TensorShape(absl::MakeConstSpan(r->dims_).subspan(1));
  r->item_bytes_ = r->item_shape_.num_elements() * static_cast<int64_t>(DataTypeSize(r->dtype_));
  return r;
}

Status IdxReader::ReadItems(int64_t count, void* dst) {
  const int64_t want = count * item_bytes_;
  const int64_t at = in_->offset();
  size_t got = 0;
  TX_RETURN_IF_ERROR(in_->Read(dst, static_cast<size_t>(want), &got));
  if (static_cast<int64_t>(got) < want) {
    return errors::DataLoss("truncated IDX payload: item ", next_item_ + got / std::max<int64_t>(item_bytes_, 1),
                            " of ", dims_[0], " needs ", item_bytes_, " bytes but the file ends at ",
                            in_->Where(at + static_cast<int64_t>(got)));
  }
  SwapToHost(static_cast<char*>(dst), count * item_shape_.num_elements(), DataTypeSize(dtype_));
  next_item_ += count;
  return OkStatus();
}

Status IdxReader::ReadItem(Tensor* item) {
  if (next_item_ >= dims_[0])
    return errors::OutOfRange("end of IDX file '", in_->path(), "' after ", dims_[0], " items");
  Tensor t(dtype_, item_shape_);
  TX_RETURN_IF_ERROR(ReadItems(1, t.raw_data()));
  *item = std::move(t);
  return OkStatus();
}

Status IdxReader::ReadAll(Tensor* all) {
  std::vector<int64_t> d = {dims_[0] - next_item_};
  d.insert(d.end(), dims_.begin() + 1, dims_.end());
  StatusOr<Tensor> t = Tensor::Allocate(dtype_, TensorShape(absl::MakeConstSpan(d)));
  if (!t.ok()) return t.status();
  TX_RETURN_IF_ERROR(ReadItems(d[0], t->raw_data()));
  *all = std::move(*t);
  return OkStatus();
}

}  // namespace io
}  // namespace tensorflux
