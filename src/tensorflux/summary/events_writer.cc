#include "tensorflux/summary/events_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <ctime>
#include <string>

namespace tensorflux {
namespace summary {

namespace {

// Numbers the event files this process opens, from 0, whatever their directory (as TF 2.15's
// summary file writers do): with the pid it keeps two writers of one second apart.
std::atomic<unsigned long long> next_file_id{0};

}  // namespace

StatusOr<std::unique_ptr<EventsWriter>> EventsWriter::Open(const std::string& file_prefix,
                                                           const std::string& file_suffix) {
  char host[256] = {0};
  if (gethostname(host, sizeof(host) - 1) != 0) std::snprintf(host, sizeof(host), "localhost");
  const long long seconds = static_cast<long long>(std::time(nullptr));
  char stamp[32];
  std::snprintf(stamp, sizeof(stamp), "%010lld", seconds);
  std::unique_ptr<EventsWriter> w(new EventsWriter);
  const std::string base = file_prefix + ".out.tfevents." + stamp + "." + host + "." +
                           std::to_string(static_cast<long long>(getpid())) + ".";
  // Claim the name with O_EXCL: a file left by an earlier process of the same pid and second
  // (pid reuse) is never truncated; the next number is taken instead.
  for (;;) {
    w->filename_ = base + std::to_string(next_file_id.fetch_add(1)) + file_suffix;
    const int fd = ::open(w->filename_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) {
      ::close(fd);
      break;
    }
    if (errno != EEXIST) break;  // RecordWriter::Open reports the error, naming the file
  }
  auto writer = io::RecordWriter::Open(w->filename_);
  if (!writer.ok()) return writer.status();
  w->writer_ = std::move(*writer);
  Event version;
  version.set_wall_time(static_cast<double>(seconds));
  version.set_file_version(kVersion);
  TX_RETURN_IF_ERROR(w->WriteEvent(version));
  TX_RETURN_IF_ERROR(w->Flush());
  return w;
}

Status EventsWriter::WriteSerializedEvent(std::string_view serialized) {
  Event check;
  if (!check.ParseFromArray(serialized.data(), static_cast<int>(serialized.size())))
    return errors::InvalidArgument("EventsWriter(", filename_, "): ", serialized.size(),
                                   " bytes that are not a serialized Event");
  if (!writer_) return errors::FailedPrecondition("EventsWriter(", filename_, ") is closed");
  return writer_->WriteRecord(serialized);
}

Status EventsWriter::WriteEvent(const Event& event) {
  if (!writer_) return errors::FailedPrecondition("EventsWriter(", filename_, ") is closed");
  return writer_->WriteRecord(event.SerializeAsString());
}

Status EventsWriter::Flush() {
  if (!writer_) return errors::FailedPrecondition("EventsWriter(", filename_, ") is closed");
  return writer_->Flush();
}

Status EventsWriter::Close() {
  if (!writer_) return OkStatus();
  Status s = writer_->Close();
  writer_.reset();
  return s;
}

}  // namespace summary
}  // namespace tensorflux
