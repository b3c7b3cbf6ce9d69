#include "tensorflux/io/input_stream.h"

#include <fcntl.h>
#include <isa-l/igzip_lib.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace tensorflux {
namespace io {
namespace {

const char* InflateError(int rc) {
  switch (rc) {
    case ISAL_INVALID_BLOCK: return "invalid deflate block";
    case ISAL_INVALID_SYMBOL: return "invalid deflate symbol";
    case ISAL_INVALID_LOOKBACK: return "invalid deflate lookback distance";
    case ISAL_INVALID_WRAPPER: return "invalid gzip header";
    case ISAL_UNSUPPORTED_METHOD: return "gzip header names a method other than deflate";
    case ISAL_INCORRECT_CHECKSUM: return "gzip CRC-32 or length check failed";
    case ISAL_NEED_DICT: return "stream needs a preset dictionary";
    default: return "unknown inflate error";
  }
}

// At most this many bytes per isal_inflate / readv call (their lengths are 32-bit).
constexpr size_t kMaxChunk = size_t{1} << 30;

}  // namespace

// ISA-L's inflate state over a compressed-input buffer `in`. state.next_in / avail_in are the
// unread compressed bytes; the 8 bytes before next_in stay in `in` across refills, so that the
// bytes ISA-L buffered past the end of a member (at most 8, in state.read_in) can be given back
// before the next member starts.
struct InputStream::Gzip {
  inflate_state state;
  std::unique_ptr<uint8_t[]> in{new uint8_t[kCompressedBufferBytes]};
  const bool zlib;           // one zlib stream (TF's "ZLIB") rather than gzip members
  bool eof = false;          // the file has no more compressed bytes
  bool between = false;      // a member has ended: another one starts, or the data ends
  bool finished = false;     // the last member has ended

  explicit Gzip(bool zlib_stream) : zlib(zlib_stream) {
    isal_inflate_init(&state);
    // Parse the gzip (zlib) header, check the CRC-32 and length (Adler-32) trailer.
    state.crc_flag = zlib ? ISAL_ZLIB : ISAL_GZIP;
    state.next_in = in.get();
    state.avail_in = 0;
  }
  const char* kind() const { return zlib ? "zlib" : "gzip"; }
};

StatusOr<std::unique_ptr<InputStream>> InputStream::Open(const std::string& path, bool zlib) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errors::NotFound("cannot open file '", path, "': ", std::strerror(errno));
  // Plain files are read with read(2); gzip files (magic 1f 8b) and zlib ones through
  // isal_inflate.
  unsigned char magic[2] = {0, 0};
  const bool gzip = ::pread(fd, magic, 2, 0) == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
  return std::unique_ptr<InputStream>(new InputStream(
      path, fd, zlib || gzip ? std::make_unique<Gzip>(zlib) : nullptr));
}

InputStream::InputStream(std::string path, int fd, std::unique_ptr<Gzip> gz)
    : path_(std::move(path)), fd_(fd), gz_(std::move(gz)), buf_(new char[kBufferBytes]) {}

InputStream::~InputStream() { ::close(fd_); }

std::string InputStream::Where(int64_t at) const {
  return absl::StrCat("file '", path_, "' at offset ", at);
}

StatusOr<size_t> InputStream::RawRead(char* dst, size_t n) {
  while (true) {
    const ssize_t got = ::read(fd_, dst, std::min(n, kMaxChunk));
    if (got >= 0) return static_cast<size_t>(got);
    if (errno != EINTR)
      return errors::DataLoss("read error in ", Where(offset_), ": ", std::strerror(errno));
  }
}

StatusOr<bool> InputStream::FillCompressed() {
  Gzip& g = *gz_;
  inflate_state& s = g.state;
  const size_t keep = std::min<size_t>(8, s.next_in - g.in.get());
  std::memmove(g.in.get(), s.next_in - keep, keep + s.avail_in);
  s.next_in = g.in.get() + keep;
  const size_t used = keep + s.avail_in;
  TX_ASSIGN_OR_RETURN(size_t got,
                      RawRead(reinterpret_cast<char*>(g.in.get()) + used,
                              kCompressedBufferBytes - used));
  s.avail_in += static_cast<uint32_t>(got);
  if (got == 0) g.eof = true;
  return got > 0;
}

StatusOr<size_t> InputStream::Inflate(char* dst, size_t n) {
  Gzip& g = *gz_;
  inflate_state& s = g.state;
  s.next_out = reinterpret_cast<uint8_t*>(dst);
  s.avail_out = static_cast<uint32_t>(std::min(n, kMaxChunk));
  const uint32_t want = s.avail_out;
  while (s.avail_out > 0 && !g.finished) {
    if (g.between) {
      // Another member follows only if the next bytes are a gzip magic; anything else (zero
      // padding, other trailing bytes) ends the data, as in zlib's gzread. A zlib stream is
      // one member.
      if (g.zlib) {
        g.finished = true;
        break;
      }
      while (s.avail_in < 2 && !g.eof) TX_RETURN_IF_ERROR(FillCompressed().status());
      if (s.avail_in < 2 || s.next_in[0] != 0x1f || s.next_in[1] != 0x8b) {
        g.finished = true;
        break;
      }
      isal_inflate_reset(&s);
      g.between = false;
    }
    if (s.avail_in == 0 && !g.eof) TX_RETURN_IF_ERROR(FillCompressed().status());
    const uint32_t out_before = s.avail_out;
    const uint32_t in_before = s.avail_in;
    const int rc = isal_inflate(&s);
    const int64_t at = offset_ + static_cast<int64_t>(want - s.avail_out);
    if (rc != ISAL_DECOMP_OK) {
      return errors::DataLoss("corrupt ", g.kind(), " stream in ", Where(at), ": ",
                              InflateError(rc));
    }
    if (s.block_state == ISAL_BLOCK_FINISH) {
      // Give back the whole bytes ISA-L read ahead, then look for a next member.
      const uint32_t ahead = static_cast<uint32_t>(s.read_in_length / 8);
      s.next_in -= ahead;
      s.avail_in += ahead;
      s.read_in = 0;
      s.read_in_length = 0;
      g.between = true;
      continue;
    }
    if (s.avail_out > 0 && s.avail_in == 0 && g.eof) {
      return errors::DataLoss("truncated ", g.kind(), " stream in ", Where(at),
                              ": the file ends inside a ", g.kind(), " member");
    }
    if (s.avail_out == out_before && s.avail_in == in_before && s.avail_in > 0) {
      return errors::DataLoss("corrupt ", g.kind(), " stream in ", Where(at),
                              ": inflate made no progress");
    }
  }
  return static_cast<size_t>(want - s.avail_out);
}

StatusOr<size_t> InputStream::ReadDirect(char* dst, size_t n, size_t lookahead) {
  if (gz_ != nullptr) return Inflate(dst, n);
  iovec iov[2] = {{dst, std::min(n, kMaxChunk)}, {buf_.get(), std::min(lookahead, kBufferBytes)}};
  while (true) {
    const ssize_t got = ::readv(fd_, iov, 2);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0)
      return errors::DataLoss("read error in ", Where(offset_), ": ", std::strerror(errno));
    const size_t direct = std::min(static_cast<size_t>(got), iov[0].iov_len);
    pos_ = 0;
    end_ = static_cast<size_t>(got) - direct;
    return direct;
  }
}

StatusOr<bool> InputStream::Fill() {
  pos_ = end_ = 0;
  StatusOr<size_t> n = gz_ != nullptr ? Inflate(buf_.get(), kBufferBytes)
                                      : RawRead(buf_.get(), kBufferBytes);
  if (!n.ok()) return n.status();
  end_ = *n;
  return *n > 0;
}

Status InputStream::Read(void* dst, size_t n, size_t* got) {
  char* out = static_cast<char*>(dst);
  *got = 0;
  while (*got < n) {
    if (pos_ == end_) {
      const size_t want = n - *got;
      if (out != nullptr && want >= kDirectReadBytes) {
        // A large read goes straight to the destination (see the header).
        TX_ASSIGN_OR_RETURN(size_t k, ReadDirect(out + *got, want, kLookaheadBytes));
        if (k == 0) break;
        *got += k;
        offset_ += static_cast<int64_t>(k);
        continue;
      }
      StatusOr<bool> more = Fill();
      if (!more.ok()) return more.status();
      if (!*more) break;
    }
    const size_t k = std::min(n - *got, end_ - pos_);
    if (out != nullptr) std::memcpy(out + *got, buf_.get() + pos_, k);
    pos_ += k;
    *got += k;
    offset_ += static_cast<int64_t>(k);
  }
  return OkStatus();
}

Status InputStream::Skip(size_t n, size_t* got) { return Read(nullptr, n, got); }

Status InputStream::ReadLine(std::string* line) {
  line->clear();
  bool any = false;
  while (true) {
    if (pos_ == end_) {
      StatusOr<bool> more = Fill();
      if (!more.ok()) return more.status();
      if (!*more) break;
    }
    any = true;
    const char* begin = buf_.get() + pos_;
    const char* nl = static_cast<const char*>(std::memchr(begin, '\n', end_ - pos_));
    const size_t k = nl ? static_cast<size_t>(nl - begin) : end_ - pos_;
    line->append(begin, k);
    pos_ += k;
    offset_ += static_cast<int64_t>(k);
    if (nl) {
      ++pos_;
      ++offset_;
      if (!line->empty() && line->back() == '\r') line->pop_back();
      return OkStatus();
    }
  }
  if (!any) return errors::OutOfRange("end of file '", path_, "'");
  if (!line->empty() && line->back() == '\r') line->pop_back();
  return OkStatus();
}

}  // namespace io
}  // namespace tensorflux
