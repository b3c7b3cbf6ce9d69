// EventsWriter: writes an event file, the TensorBoard log format (TF's core/util/events_writer):
// a TFRecord stream (io/record_io.h) of serialized Event protos (proto/tensorflux/event.proto),
// named "<prefix>.out.tfevents.<seconds, 10 digits>.<hostname>.<pid>.<n><suffix>", n counting
// the files this process opened from 0 (TF 2.15's summary file writers' scheme; TensorBoard
// finds files by "tfevents" in the name). The name is claimed with O_EXCL, so two writers never
// share a file, even in one second and one directory. The first record is Event{wall_time =
// those seconds, file_version = "brain.Event:2"}, flushed at once.
//
// Memory: the stdio buffer of the open file. Writes go through that buffer; Flush() makes them
// reach the OS (a crash loses what was not flushed, never corrupts earlier records).
// Errors name the file: the directory must exist (NOT_FOUND / PERMISSION_DENIED otherwise).
// Not thread-safe.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "tensorflux/core/status.h"
#include "tensorflux/event.pb.h"
#include "tensorflux/io/record_io.h"

namespace tensorflux {
namespace summary {

class EventsWriter {
 public:
  // `file_prefix` is usually "<logdir>/events". Opens the file and writes the version event.
  static StatusOr<std::unique_ptr<EventsWriter>> Open(const std::string& file_prefix,
                                                      const std::string& file_suffix = "");

  // Appends a serialized Event (INVALID_ARGUMENT if `serialized` does not parse as one).
  Status WriteSerializedEvent(std::string_view serialized);
  Status WriteEvent(const Event& event);
  Status Flush();
  // Flushes and closes; later writes fail with FAILED_PRECONDITION.
  Status Close();

  const std::string& filename() const { return filename_; }

  // The file's version string.
  static constexpr const char* kVersion = "brain.Event:2";

 private:
  EventsWriter() = default;
  std::string filename_;
  std::unique_ptr<io::RecordWriter> writer_;
};

}  // namespace summary
}  // namespace tensorflux
