// EventsWriter: the file name, the version record and summary records, read back with the
// TFRecord reader and compared byte for byte with encodings verified against TF (spec/tf-wire.md
// 1.13).
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <utility>

#include "tensorflux/event.pb.h"
#include "tensorflux/io/record_io.h"
#include "tensorflux/summary/events_writer.h"

namespace tensorflux {
namespace {

namespace fs = std::filesystem;

std::string TempDir() {
  std::string tmpl = (fs::temp_directory_path() / "tx_events_XXXXXX").string();
  EXPECT_NE(mkdtemp(tmpl.data()), nullptr);
  return tmpl;
}

TEST(EventsWriterTest, WritesVersionThenEvents) {
  const std::string dir = TempDir();
  auto w = summary::EventsWriter::Open(dir + "/events", ".suffix");
  ASSERT_TRUE(w.ok()) << w.status();
  const std::string name = fs::path((*w)->filename()).filename().string();
  // events.out.tfevents.<10 digits>.<host>.suffix
  ASSERT_EQ(name.rfind("events.out.tfevents.", 0), 0u) << name;
  const std::string stamp = name.substr(20, 10);
  for (char c : stamp) EXPECT_TRUE(c >= '0' && c <= '9') << name;
  EXPECT_EQ(name[30], '.');
  EXPECT_EQ(name.substr(name.size() - 7), ".suffix");

  Event e;
  e.set_wall_time(1700000001);
  e.set_step(1);
  Summary::Value* v = e.mutable_summary()->add_value();
  v->set_tag("loss");
  v->set_simple_value(0.5f);
  ASSERT_TRUE((*w)->WriteEvent(e).ok());
  ASSERT_TRUE((*w)->WriteSerializedEvent(e.SerializeAsString()).ok());
  EXPECT_EQ((*w)->WriteSerializedEvent("\xff\xff").code(), absl::StatusCode::kInvalidArgument);
  ASSERT_TRUE((*w)->Close().ok());
  EXPECT_EQ((*w)->WriteEvent(e).code(), absl::StatusCode::kFailedPrecondition);

  auto r = io::RecordReader::Open((*w)->filename());
  ASSERT_TRUE(r.ok()) << r.status();
  std::string rec;
  ASSERT_TRUE((*r)->ReadRecord(&rec).ok());
  Event first;
  ASSERT_TRUE(first.ParseFromString(rec));
  EXPECT_EQ(first.file_version(), "brain.Event:2");
  EXPECT_EQ(first.wall_time(), std::stod(stamp));
  // The summary record's bytes as TF writes them (spec/tf-wire.md 1.13).
  const unsigned char want[] = {0x09, 0x00, 0x00, 0x40, 0x40, 0xfc, 0x54, 0xd9, 0x41, 0x10,
                                0x01, 0x2a, 0x0d, 0x0a, 0x0b, 0x0a, 0x04, 0x6c, 0x6f, 0x73,
                                0x73, 0x15, 0x00, 0x00, 0x00, 0x3f};
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE((*r)->ReadRecord(&rec).ok());
    EXPECT_EQ(rec, std::string(reinterpret_cast<const char*>(want), sizeof(want)));
  }
  EXPECT_EQ((*r)->ReadRecord(&rec).code(), absl::StatusCode::kOutOfRange);
  fs::remove_all(dir);
}

TEST(EventsWriterTest, TwoWritersOfOneSecondGetTheirOwnFiles) {
  const std::string dir = TempDir();
  auto a = summary::EventsWriter::Open(dir + "/events");
  auto b = summary::EventsWriter::Open(dir + "/events");
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_NE((*a)->filename(), (*b)->filename());
  // events.out.tfevents.<10 digits>.<host>.<pid>.<n> (TF 2.15's summary writers' scheme).
  const std::string pid = "." + std::to_string(getpid()) + ".";
  EXPECT_NE((*a)->filename().find(pid), std::string::npos) << (*a)->filename();
  Event e;
  e.set_step(7);
  ASSERT_TRUE((*a)->WriteEvent(e).ok());
  e.set_step(8);
  ASSERT_TRUE((*b)->WriteEvent(e).ok());
  ASSERT_TRUE((*a)->Close().ok());
  ASSERT_TRUE((*b)->Close().ok());
  int files = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    (void)entry;
    ++files;
  }
  EXPECT_EQ(files, 2);
  for (const auto& [writer, step] : {std::pair{a->get(), 7}, std::pair{b->get(), 8}}) {
    auto r = io::RecordReader::Open(writer->filename());
    ASSERT_TRUE(r.ok()) << r.status();
    std::string rec;
    ASSERT_TRUE((*r)->ReadRecord(&rec).ok());  // the version event
    ASSERT_TRUE((*r)->ReadRecord(&rec).ok());
    Event got;
    ASSERT_TRUE(got.ParseFromString(rec));
    EXPECT_EQ(got.step(), step) << writer->filename();
  }
  fs::remove_all(dir);
}

TEST(EventsWriterTest, VersionEventBytes) {
  Event e;
  e.set_wall_time(1700000000);
  e.set_file_version(summary::EventsWriter::kVersion);
  const unsigned char want[] = {0x09, 0x00, 0x00, 0x00, 0x40, 0xfc, 0x54, 0xd9, 0x41, 0x1a,
                                0x0d, 0x62, 0x72, 0x61, 0x69, 0x6e, 0x2e, 0x45, 0x76, 0x65,
                                0x6e, 0x74, 0x3a, 0x32};
  EXPECT_EQ(e.SerializeAsString(), std::string(reinterpret_cast<const char*>(want), sizeof(want)));
}

TEST(EventsWriterTest, MissingDirectoryIsAnError) {
  auto w = summary::EventsWriter::Open("/nonexistent-dir-tx/sub/events");
  EXPECT_FALSE(w.ok());
  EXPECT_NE(std::string(w.status().message()).find("/nonexistent-dir-tx/sub"), std::string::npos)
      << w.status();
}

}  // namespace
}  // namespace tensorflux
