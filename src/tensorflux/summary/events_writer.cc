#include "tensorflux/summary/events_writer.h"

#include <unistd.h>

#include <cstdio>
#include <ctime>

namespace tensorflux {
namespace summary {

StatusOr<std::unique_ptr<EventsWriter>> EventsWriter::Open(const std::string& file_prefix,
                                                           const std::string& file_suffix) {
  char host[256] = {0};
  if (gethostname(host, sizeof(host) - 1) != 0) std::snprintf(host, sizeof(host), "localhost");
  const long long seconds = static_cast<long long>(std::time(nullptr));
  char stamp[32];
  std::snprintf(stamp, sizeof(stamp), "%010lld", seconds);
  std::unique_ptr<EventsWriter> w(new EventsWriter);
  w->filename_ = file_prefix + ".out.tfevents." + stamp + "." + host + file_suffix;
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
