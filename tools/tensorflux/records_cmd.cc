// tensorflux convert idx2tfrecord IMAGES LABELS OUT.tfrecord, and `inspect` of a TFRecord file
// (record count and the first record's tf.train.Example features).
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "cli.h"
#include "tensorflux/core/crc32c.h"
#include "tensorflux/example.pb.h"
#include "tensorflux/io/idx_reader.h"
#include "tensorflux/io/input_stream.h"
#include "tensorflux/io/record_io.h"

namespace tensorflux {
namespace cli {

const char kConvertUsage[] =
    "usage: tensorflux convert idx2tfrecord IMAGES LABELS OUT.tfrecord\n"
    "\n"
    "Writes one tf.train.Example per item of the IDX files IMAGES (uint8 items, e.g. MNIST's\n"
    "[28,28] images; plain or gzip) and LABELS (integer scalars): feature `image` holds the\n"
    "item's raw bytes (bytes_list), `label` the label (int64_list). The item counts must match.\n";

namespace {

int64_t LabelValue(const Tensor& t) {
  switch (t.dtype()) {
    case DT_UINT8: return t.scalar<uint8_t>();
    case DT_INT8: return t.scalar<int8_t>();
    case DT_INT16: return t.scalar<int16_t>();
    default: return t.scalar<int32_t>();
  }
}

Status IdxToTfRecord(const std::string& images_path, const std::string& labels_path,
                     const std::string& out_path, int64_t* written) {
  TX_ASSIGN_OR_RETURN(auto images, io::IdxReader::Open(images_path));
  TX_ASSIGN_OR_RETURN(auto labels, io::IdxReader::Open(labels_path));
  if (images->dtype() != DT_UINT8)
    return errors::InvalidArgument("IMAGES '", images_path, "' holds ",
                                   DataTypeString(images->dtype()), " items; expected uint8");
  const DataType lt = labels->dtype();
  if (labels->item_shape().dims() != 0 ||
      (lt != DT_UINT8 && lt != DT_INT8 && lt != DT_INT16 && lt != DT_INT32))
    return errors::InvalidArgument("LABELS '", labels_path, "' must hold integer scalars, got ",
                                   DataTypeString(lt), " items of shape ",
                                   labels->item_shape().DebugString());
  if (images->num_items() != labels->num_items())
    return errors::InvalidArgument("IMAGES has ", images->num_items(), " items but LABELS has ",
                                   labels->num_items());
  TX_ASSIGN_OR_RETURN(auto writer, io::RecordWriter::Open(out_path));
  Example ex;
  auto& features = *ex.mutable_features()->mutable_feature();
  std::string record;
  for (int64_t i = 0; i < images->num_items(); ++i) {
    Tensor image, label;
    TX_RETURN_IF_ERROR(images->ReadItem(&image));
    TX_RETURN_IF_ERROR(labels->ReadItem(&label));
    BytesList* b = features["image"].mutable_bytes_list();
    b->clear_value();
    b->add_value(static_cast<const char*>(image.raw_data()), image.TotalBytes());
    Int64List* l = features["label"].mutable_int64_list();
    l->clear_value();
    l->add_value(LabelValue(label));
    ex.SerializeToString(&record);
    TX_RETURN_IF_ERROR(writer->WriteRecord(record));
  }
  *written = images->num_items();
  return writer->Close();
}

std::string Summarize(const Feature& f) {
  constexpr int kMax = 8;
  std::vector<std::string> shown;
  auto more = [&](int n) { return n > kMax ? absl::StrCat(" ... (", n, " values)") : ""; };
  switch (f.kind_case()) {
    case Feature::kBytesList: {
      const auto& v = f.bytes_list().value();
      for (int i = 0; i < v.size() && i < kMax; ++i) {
        bool printable = v[i].size() <= 32;
        for (char c : v[i]) printable = printable && c >= 0x20 && c < 0x7f;
        shown.push_back(printable ? absl::StrCat("\"", v[i], "\"")
                                  : absl::StrCat("<", v[i].size(), " bytes>"));
      }
      return absl::StrCat("bytes[", v.size(), "] ", absl::StrJoin(shown, " "), more(v.size()));
    }
    case Feature::kFloatList: {
      const auto& v = f.float_list().value();
      for (int i = 0; i < v.size() && i < kMax; ++i) shown.push_back(absl::StrCat(v[i]));
      return absl::StrCat("float[", v.size(), "] ", absl::StrJoin(shown, " "), more(v.size()));
    }
    case Feature::kInt64List: {
      const auto& v = f.int64_list().value();
      for (int i = 0; i < v.size() && i < kMax; ++i) shown.push_back(absl::StrCat(v[i]));
      return absl::StrCat("int64[", v.size(), "] ", absl::StrJoin(shown, " "), more(v.size()));
    }
    default:
      return "empty";
  }
}

}  // namespace

bool LooksLikeTfRecord(const std::string& path) {
  auto in = io::InputStream::Open(path);
  if (!in.ok()) return false;
  char header[12];
  size_t got = 0;
  if (!(*in)->Read(header, sizeof(header), &got).ok() || got < sizeof(header)) return false;
  uint32_t stored = 0;
  for (int i = 0; i < 4; ++i) stored |= uint32_t{static_cast<unsigned char>(header[8 + i])} << (8 * i);
  return crc32c::Unmask(stored) == crc32c::Value(header, 8);
}

int InspectRecords(const std::string& path) {
  auto reader = io::RecordReader::Open(path);
  if (!reader.ok()) return ReportError(reader.status());
  std::string record, first;
  int64_t count = 0;
  Status s;
  while ((s = (*reader)->ReadRecord(&record)).ok()) {
    if (count++ == 0) first = record;
  }
  if (s.code() != absl::StatusCode::kOutOfRange) return ReportError(s);
  std::printf("tfrecord: %s (%lld records)\n", path.c_str(), static_cast<long long>(count));
  if (count == 0) return 0;
  Example ex;
  if (!ex.ParseFromString(first)) {
    std::printf("first record: %zu bytes, not a tf.train.Example\n", first.size());
    return 0;
  }
  std::printf("first Example features:\n");
  const std::map<std::string, Feature> sorted(ex.features().feature().begin(),
                                              ex.features().feature().end());
  for (const auto& [key, f] : sorted) std::printf("  %s: %s\n", key.c_str(), Summarize(f).c_str());
  return 0;
}

int ConvertMain(const std::vector<std::string>& args) {
  if (!args.empty() && (args[0] == "-h" || args[0] == "--help")) {
    std::fputs(kConvertUsage, stdout);
    return 0;
  }
  if (args.empty() || args[0] != "idx2tfrecord")
    return ReportError(errors::InvalidArgument(
        "convert needs a conversion: idx2tfrecord (got '", args.empty() ? "" : args[0], "')"));
  if (args.size() != 4)
    return ReportError(errors::InvalidArgument(
        "convert idx2tfrecord takes IMAGES LABELS OUT.tfrecord (got ", args.size() - 1,
        " arguments)"));
  int64_t written = 0;
  Status s = IdxToTfRecord(args[1], args[2], args[3], &written);
  if (!s.ok()) return ReportError(s);
  std::printf("wrote %lld Examples to %s\n", static_cast<long long>(written), args[3].c_str());
  return 0;
}

}  // namespace cli
}  // namespace tensorflux
