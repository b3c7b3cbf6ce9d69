#include "tensorflux/framework/rendezvous.h"

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <memory>
#include <mutex>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"

namespace tensorflux {
namespace {

absl::string_view AV(std::string_view s) { return absl::string_view(s.data(), s.size()); }

// 16 lower-case hex digits, as TF's FpToString.
std::string IncarnationString(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(v));
  return std::string(buf, 16);
}

bool ParseHex64(absl::string_view s, uint64_t* out) {
  if (s.empty() || s.size() > 16) return false;
  uint64_t v = 0;
  for (char c : s) {
    int d;
    if (c >= '0' && c <= '9') {
      d = c - '0';
    } else if (c >= 'a' && c <= 'f') {
      d = c - 'a' + 10;
    } else if (c >= 'A' && c <= 'F') {
      d = c - 'A' + 10;
    } else {
      return false;
    }
    v = (v << 4) | static_cast<uint64_t>(d);
  }
  *out = v;
  return true;
}

}  // namespace

std::string Rendezvous::CreateKey(std::string_view src_device, uint64_t src_incarnation,
                                  std::string_view dst_device, std::string_view name,
                                  const FrameAndIter& frame_iter) {
  return absl::StrCat(AV(src_device), ";", IncarnationString(src_incarnation), ";",
                      AV(dst_device), ";", AV(name), ";", frame_iter.frame_id, ":",
                      frame_iter.iter_id);
}

StatusOr<Rendezvous::ParsedKey> Rendezvous::ParseKey(std::string_view key) {
  std::vector<absl::string_view> parts = absl::StrSplit(AV(key), ';');
  auto bad = [&](const char* why) {
    return errors::InvalidArgument("Invalid rendezvous key: '", key, "' (", why, ")");
  };
  if (parts.size() != 5) return bad("expected 5 fields separated by ';'");
  if (parts[0].empty() || parts[0][0] != '/') return bad("bad send device");
  if (parts[2].empty() || parts[2][0] != '/') return bad("bad recv device");
  if (parts[3].empty()) return bad("empty tensor name");
  ParsedKey out;
  if (!ParseHex64(parts[1], &out.src_incarnation)) return bad("bad incarnation");
  std::vector<absl::string_view> fi = absl::StrSplit(parts[4], ':');
  if (fi.size() != 2 || !absl::SimpleAtoi(fi[0], &out.frame_iter.frame_id) ||
      !absl::SimpleAtoi(fi[1], &out.frame_iter.iter_id)) {
    return bad("bad frame:iter");
  }
  out.full_key = std::string(key);
  out.src_device = std::string(parts[0]);
  out.dst_device = std::string(parts[2]);
  out.edge_name = std::string(parts[3]);
  return out;
}

Status Rendezvous::Recv(const ParsedKey& key, const Args& args, Tensor* tensor, bool* is_dead,
                        int64_t timeout_ms) {
  // Shared with the callback, which may run after a timed-out Recv has returned.
  struct Result {
    std::mutex mu;
    std::condition_variable cv;
    bool done = false;
    Status status;
    Tensor tensor;
    bool is_dead = false;
  };
  auto r = std::make_shared<Result>();
  RecvAsync(key, args,
            [r](const Status& s, const Args&, const Args&, const Tensor& t, bool dead) {
              std::lock_guard<std::mutex> l(r->mu);
              r->status = s;
              r->tensor = t;
              r->is_dead = dead;
              r->done = true;
              r->cv.notify_all();
            });
  std::unique_lock<std::mutex> l(r->mu);
  if (timeout_ms > 0) {
    if (!r->cv.wait_for(l, std::chrono::milliseconds(timeout_ms), [&] { return r->done; })) {
      return errors::DeadlineExceeded("Timed out after ", timeout_ms,
                                      " ms waiting for rendezvous key ", key.full_key);
    }
  } else {
    r->cv.wait(l, [&] { return r->done; });
  }
  if (!r->status.ok()) return r->status;
  *tensor = std::move(r->tensor);
  *is_dead = r->is_dead;
  return OkStatus();
}

}  // namespace tensorflux
