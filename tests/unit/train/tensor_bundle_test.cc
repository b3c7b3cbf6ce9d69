// Tensor-bundle checkpoints: round trips of every fixed-size dtype, TensorFlow's own bundle (the
// half_plus_two SavedModel's variables/), and corrupt or hand-made bad files: each is an error
// Status (DATA_LOSS, NOT_FOUND, UNIMPLEMENTED), never a crash.
#include "tensorflux/train/tensor_bundle.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "leveldb/env.h"
#include "leveldb/options.h"
#include "leveldb/table_builder.h"
#include "tensorflux/core/crc32c.h"
#include "../kernels/kernel_test_util.h"
#include "checkpoint_test_util.h"

namespace tensorflux {
namespace {

namespace fs = std::filesystem;

const std::string kTfVariables =
    std::string(TX_TEST_DATA_DIR) + "/tf-graphs/serving_half_plus_two_cpu/variables/variables";

class TensorBundleTest : public test::CheckpointDirTest {};
using test::ReadFile;
using test::WriteFile;

// One tensor of each fixed-size dtype, with values that differ per element.
std::map<std::string, Tensor> AllDtypeTensors() {
  std::map<std::string, Tensor> out;
  const DataType types[] = {DT_FLOAT, DT_DOUBLE, DT_HALF,  DT_BFLOAT16, DT_INT8,  DT_INT16, DT_INT32,
                            DT_INT64, DT_UINT8,  DT_UINT16, DT_UINT32,  DT_UINT64, DT_BOOL};
  int k = 0;
  for (DataType dt : types) {
    std::vector<double> v;
    for (int i = 0; i < 6; ++i) v.push_back(dt == DT_BOOL ? (i + k) % 2 : 1.5 * i - 2 * k + 3);
    if (DataTypeIsInteger(dt) && !(dt == DT_INT8 || dt == DT_INT16 || dt == DT_INT32 || dt == DT_INT64))
      for (double& x : v) x = std::abs(std::round(x));
    else if (DataTypeIsInteger(dt))
      for (double& x : v) x = std::round(x);
    out["t_" + DataTypeString(dt)] = test::FromDoubles(dt, TensorShape({2, 3}), v);
    ++k;
  }
  out["scalar"] = Tensor::Scalar<float>(-7.25f);
  out["empty"] = Tensor(DT_FLOAT, TensorShape({0, 4}));
  out["big_int64"] = test::AsTensor<int64_t>({INT64_MIN, INT64_MAX, 1LL << 53 | 1}, {3});
  return out;
}

bool SameBytes(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() && a.TotalBytes() == b.TotalBytes() &&
         (a.TotalBytes() == 0 || std::memcmp(a.raw_data(), b.raw_data(), a.TotalBytes()) == 0);
}

void WriteBundle(const std::string& prefix, const std::map<std::string, Tensor>& tensors) {
  BundleWriter w(prefix);
  ASSERT_TRUE(w.status().ok()) << w.status();
  for (const auto& [k, t] : tensors) ASSERT_TRUE(w.Add(k, t).ok()) << k;
  ASSERT_TRUE(w.Finish().ok()) << w.status();
}

TEST_F(TensorBundleTest, RoundTripsEveryDtypeBitForBit) {
  const auto tensors = AllDtypeTensors();
  WriteBundle(Prefix("ckpt"), tensors);
  EXPECT_TRUE(fs::exists(Prefix("ckpt") + ".index"));
  EXPECT_TRUE(fs::exists(Prefix("ckpt") + ".data-00000-of-00001"));
  // Only the two files: the temporaries were renamed away.
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 2);

  auto r = BundleReader::Open(Prefix("ckpt"));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)->header().num_shards(), 1);
  for (const auto& [k, t] : tensors) {
    auto got = (*r)->Lookup(k);
    ASSERT_TRUE(got.ok()) << k << ": " << got.status();
    EXPECT_TRUE(SameBytes(*got, t)) << k << ": " << got->DebugString() << " vs " << t.DebugString();
  }
  // Entries come back in bytewise key order, with TF's masked CRC of the bytes.
  std::vector<std::string> keys;
  ASSERT_TRUE((*r)->ForEachEntry([&](const std::string& k, const BundleEntryProto& e) {
    keys.push_back(k);
    const Tensor& t = tensors.at(k);
    EXPECT_EQ(e.crc32c(), crc32c::Mask(crc32c::Value(t.raw_data(), t.TotalBytes()))) << k;
    return OkStatus();
  }).ok());
  std::vector<std::string> want;
  for (const auto& [k, t] : tensors) want.push_back(k);
  EXPECT_EQ(keys, want);
}

TEST_F(TensorBundleTest, ReadsTensorFlowsBundle) {
  // tensorflow/serving's half_plus_two SavedModel (TF 1.14): a=0.5, b=2, c=3, a2=0.5, c2=3.
  auto r = BundleReader::Open(kTfVariables);
  ASSERT_TRUE(r.ok()) << r.status();
  const std::map<std::string, float> want = {{"a", 0.5f}, {"a2", 0.5f}, {"b", 2}, {"c", 3}, {"c2", 3}};
  for (const auto& [k, v] : want) {
    auto t = (*r)->Lookup(k);
    ASSERT_TRUE(t.ok()) << k << ": " << t.status();
    EXPECT_EQ(t->dtype(), DT_FLOAT);
    EXPECT_EQ(t->shape(), TensorShape());
    EXPECT_EQ(t->scalar<float>(), v) << k;
  }
  // Writing the same values gives an index with the same entries (dtype, shape, size, crc).
  std::map<std::string, Tensor> same;
  for (const auto& [k, v] : want) same[k] = Tensor::Scalar<float>(v);
  WriteBundle(Prefix("again"), same);
  auto ours = BundleReader::Open(Prefix("again"));
  ASSERT_TRUE(ours.ok());
  for (const auto& [k, v] : want) {
    auto a = (*r)->LookupEntry(k);
    auto b = (*ours)->LookupEntry(k);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(a->dtype(), b->dtype());
    EXPECT_EQ(a->size(), b->size());
    EXPECT_EQ(a->crc32c(), b->crc32c()) << k;
  }
  // TF wrote the data in its key order, 4 bytes each.
  EXPECT_EQ(ReadFile(Prefix("again") + ".data-00000-of-00001"),
            ReadFile(kTfVariables + ".data-00000-of-00001"));
}

TEST_F(TensorBundleTest, MissingBundleAndKeyAreNotFound) {
  auto none = BundleReader::Open(Prefix("nope"));
  EXPECT_EQ(none.status().code(), absl::StatusCode::kNotFound) << none.status();
  WriteBundle(Prefix("ckpt"), {{"w", Tensor::Scalar<float>(1)}});
  auto r = BundleReader::Open(Prefix("ckpt"));
  ASSERT_TRUE(r.ok());
  auto t = (*r)->Lookup("x");
  EXPECT_EQ(t.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(t.status().message().find("'x'"), std::string::npos) << t.status();
  EXPECT_EQ((*r)->Lookup("v").status().code(), absl::StatusCode::kNotFound);  // sorts before w
}

// TF's string layout: varint64 lengths, the masked CRC32C of the lengths (as 4-byte values),
// the bytes; the entry's CRC covers the three.
TEST_F(TensorBundleTest, StringTensorsRoundTripInTensorFlowsLayout) {
  Tensor t = test::AsTensor<std::string>({"ab", "", std::string(200, 'x'), std::string("\0\xff", 2)},
                                         {2, 2});
  {
    BundleWriter w(Prefix("s"));
    ASSERT_TRUE(w.Add("strings", t).ok());
    ASSERT_TRUE(w.Add("empty", test::AsTensor<std::string>({}, {0})).ok());
    ASSERT_TRUE(w.Finish().ok());
  }
  auto r = BundleReader::Open(Prefix("s"));
  ASSERT_TRUE(r.ok()) << r.status();
  auto got = (*r)->Lookup("strings");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->shape(), TensorShape({2, 2}));
  for (int i = 0; i < 4; ++i) EXPECT_EQ(got->data<std::string>()[i], t.data<std::string>()[i]);
  auto empty = (*r)->Lookup("empty");
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_EQ(empty->NumElements(), 0);
  // The data file: lengths 2, 0, 200 (two varint bytes), 2; their checksum; the bytes.
  const std::string data = ReadFile(BundleDataFilename(Prefix("s"), 0, 1));
  auto entry = (*r)->LookupEntry("strings");
  ASSERT_TRUE(entry.ok());
  const std::string head = data.substr(static_cast<size_t>(entry->offset()), 5);
  EXPECT_EQ(head, std::string("\x02\x00\xc8\x01\x02", 5));
  uint32_t crc = 0;
  for (uint32_t len : {2u, 0u, 200u, 2u}) crc = crc32c::Extend(crc, &len, 4);
  uint32_t stored = 0;
  std::memcpy(&stored, data.data() + entry->offset() + 5, 4);
  EXPECT_EQ(stored, crc32c::Mask(crc));
  EXPECT_EQ(entry->size(), 5 + 4 + 2 + 0 + 200 + 2);
}

TEST_F(TensorBundleTest, WriterErrors) {
  BundleWriter w(Prefix("ckpt"));
  ASSERT_TRUE(w.Add("a", Tensor::Scalar<float>(1)).ok());
  EXPECT_EQ(w.Add("a", Tensor::Scalar<float>(2)).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(w.Add("", Tensor::Scalar<float>(2)).code(), absl::StatusCode::kInvalidArgument);
  ASSERT_TRUE(w.Finish().ok());
  EXPECT_EQ(w.Finish().code(), absl::StatusCode::kFailedPrecondition);
}

TEST_F(TensorBundleTest, UnfinishedWriterLeavesNothingAndCreatesDirectories) {
  {
    BundleWriter w(Prefix("sub/dir/ckpt"));
    ASSERT_TRUE(w.status().ok()) << w.status();
    ASSERT_TRUE(w.Add("a", Tensor::Scalar<float>(1)).ok());
  }
  EXPECT_TRUE(fs::is_directory(dir_ / "sub/dir"));
  EXPECT_TRUE(fs::is_empty(dir_ / "sub/dir"));
}

TEST_F(TensorBundleTest, CorruptDataIsDataLoss) {
  WriteBundle(Prefix("ckpt"), {{"a", test::AsTensor<float>({1, 2, 3, 4}, {4})},
                               {"b", test::AsTensor<float>({5, 6}, {2})}});
  const std::string data_path = Prefix("ckpt") + ".data-00000-of-00001";
  const std::string good = ReadFile(data_path);
  ASSERT_EQ(good.size(), 24u);

  // One flipped bit anywhere: the tensor holding it fails its checksum, the other still reads.
  for (size_t i = 0; i < good.size(); ++i) {
    std::string bad = good;
    bad[i] ^= 0x10;
    WriteFile(data_path, bad);
    auto r = BundleReader::Open(Prefix("ckpt"));
    ASSERT_TRUE(r.ok());
    const std::string hit = i < 16 ? "a" : "b", other = i < 16 ? "b" : "a";
    auto t = (*r)->Lookup(hit);
    EXPECT_EQ(t.status().code(), absl::StatusCode::kDataLoss) << i;
    EXPECT_NE(t.status().message().find("checksum"), std::string::npos) << t.status();
    EXPECT_TRUE((*r)->Lookup(other).ok()) << i;
  }
  // Truncated: the tensor that no longer fits is DATA_LOSS naming it.
  WriteFile(data_path, good.substr(0, 20));
  auto r = BundleReader::Open(Prefix("ckpt"));
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE((*r)->Lookup("a").ok());
  auto b = (*r)->Lookup("b");
  EXPECT_EQ(b.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(b.status().message().find("'b'"), std::string::npos) << b.status();
  // Missing data file.
  fs::remove(data_path);
  auto r2 = BundleReader::Open(Prefix("ckpt"));
  ASSERT_TRUE(r2.ok());
  EXPECT_EQ((*r2)->Lookup("a").status().code(), absl::StatusCode::kDataLoss);
}

TEST_F(TensorBundleTest, CorruptOrTruncatedIndexNeverCrashes) {
  const std::map<std::string, Tensor> tensors = {{"alpha", test::AsTensor<float>({1, 2}, {2})},
                                                 {"beta", Tensor::Scalar<int64_t>(9)}};
  WriteBundle(Prefix("ckpt"), tensors);
  const std::string index_path = Prefix("ckpt") + ".index";
  const std::string good = ReadFile(index_path);
  auto check = [&](const std::string& what) {
    auto r = BundleReader::Open(Prefix("ckpt"));
    if (!r.ok()) {
      EXPECT_TRUE(absl::IsDataLoss(r.status()) || absl::IsUnimplemented(r.status()))
          << what << ": " << r.status();
      return;
    }
    for (const auto& [k, t] : tensors) {
      auto got = (*r)->Lookup(k);
      // A damaged byte may sit in padding or be caught only by the CRC: either the exact tensor
      // comes back or an error does.
      if (got.ok()) {
        EXPECT_TRUE(SameBytes(*got, t)) << what << " " << k;
      } else {
        EXPECT_TRUE(absl::IsDataLoss(got.status()) || absl::IsNotFound(got.status()) ||
                    absl::IsUnimplemented(got.status()) || absl::IsResourceExhausted(got.status()))
            << what << " " << k << ": " << got.status();
      }
    }
  };
  for (size_t n = 0; n < good.size(); ++n) {
    WriteFile(index_path, good.substr(0, n));
    check("truncated to " + std::to_string(n));
    auto r = BundleReader::Open(Prefix("ckpt"));
    EXPECT_FALSE(r.ok()) << "an index cut to " << n << " bytes opened";
  }
  for (size_t i = 0; i < good.size(); ++i) {
    for (unsigned char flip : {0x01, 0x80}) {
      std::string bad = good;
      bad[i] ^= static_cast<char>(flip);
      WriteFile(index_path, bad);
      check("byte " + std::to_string(i) + " ^ " + std::to_string(flip));
    }
  }
}

// Hand-made indexes whose protos decode but lie: each is refused with the right code.
class BadEntryTest : public TensorBundleTest {
 protected:
  // Writes P.index with `header` and one entry "x", and a 16-byte data shard 0.
  void Write(const BundleHeaderProto& header, const BundleEntryProto& entry) {
    leveldb::WritableFile* file = nullptr;
    ASSERT_TRUE(leveldb::Env::Default()->NewWritableFile(Prefix("bad") + ".index", &file).ok());
    {
      leveldb::Options options;
      options.compression = leveldb::kNoCompression;
      leveldb::TableBuilder b(options, file);
      b.Add("", header.SerializeAsString());
      b.Add("x", entry.SerializeAsString());
      ASSERT_TRUE(b.Finish().ok());
    }
    ASSERT_TRUE(file->Close().ok());
    delete file;
    WriteFile(BundleDataFilename(Prefix("bad"), 0, std::max(header.num_shards(), 1)),
              std::string(16, '\0'));
  }
  Status Read() {
    auto r = BundleReader::Open(Prefix("bad"));
    if (!r.ok()) return r.status();
    return (*r)->Lookup("x").status();
  }
  static BundleHeaderProto Header(int shards = 1) {
    BundleHeaderProto h;
    h.set_num_shards(shards);
    return h;
  }
  // A valid entry for float[4] of zeros.
  static BundleEntryProto Entry() {
    BundleEntryProto e;
    e.set_dtype(DT_FLOAT);
    e.mutable_shape()->add_dim()->set_size(4);
    e.set_size(16);
    const std::string zeros(16, '\0');
    e.set_crc32c(crc32c::Mask(crc32c::Value(zeros.data(), zeros.size())));
    return e;
  }
};

TEST_F(BadEntryTest, EachLieIsCaught) {
  Write(Header(), Entry());
  ASSERT_TRUE(Read().ok()) << Read();  // the baseline is valid

  struct Case {
    const char* what;
    std::function<void(BundleHeaderProto*, BundleEntryProto*)> edit;
    absl::StatusCode code;
  };
  const std::vector<Case> cases = {
      {"size != dtype x shape", [](auto*, auto* e) { e->set_size(12); }, absl::StatusCode::kDataLoss},
      {"offset past the end", [](auto*, auto* e) { e->set_offset(8); }, absl::StatusCode::kDataLoss},
      {"negative offset", [](auto*, auto* e) { e->set_offset(-4); }, absl::StatusCode::kDataLoss},
      {"huge offset", [](auto*, auto* e) { e->set_offset(INT64_MAX - 4); }, absl::StatusCode::kDataLoss},
      {"shard id >= num_shards", [](auto*, auto* e) { e->set_shard_id(1); }, absl::StatusCode::kDataLoss},
      {"negative shard id", [](auto*, auto* e) { e->set_shard_id(-1); }, absl::StatusCode::kDataLoss},
      {"bad crc", [](auto*, auto* e) { e->set_crc32c(e->crc32c() + 1); }, absl::StatusCode::kDataLoss},
      {"negative dim", [](auto*, auto* e) { e->mutable_shape()->mutable_dim(0)->set_size(-4); },
       absl::StatusCode::kDataLoss},
      {"overflowing shape",
       [](auto*, auto* e) {
         e->mutable_shape()->mutable_dim(0)->set_size(1LL << 40);
         e->mutable_shape()->add_dim()->set_size(1LL << 40);
       },
       absl::StatusCode::kDataLoss},
      {"dtype out of the enum", [](auto*, auto* e) { e->set_dtype(static_cast<DataType>(77)); },
       absl::StatusCode::kDataLoss},
      {"float bytes read as strings", [](auto*, auto* e) { e->set_dtype(DT_STRING); },
       absl::StatusCode::kDataLoss},
      {"sliced entry", [](auto*, auto* e) { e->add_slices(); }, absl::StatusCode::kUnimplemented},
      {"big-endian bundle", [](auto* h, auto*) { h->set_endianness(BundleHeaderProto::BIG); },
       absl::StatusCode::kUnimplemented},
      {"zero shards", [](auto* h, auto*) { h->set_num_shards(0); }, absl::StatusCode::kDataLoss},
      {"newer min_consumer", [](auto* h, auto*) { h->mutable_version()->set_min_consumer(2); },
       absl::StatusCode::kUnimplemented},
  };
  for (const Case& c : cases) {
    BundleHeaderProto h = Header();
    BundleEntryProto e = Entry();
    c.edit(&h, &e);
    Write(h, e);
    Status s = Read();
    EXPECT_EQ(s.code(), c.code) << c.what << ": " << s;
  }
  // A bool tensor whose byte is neither 0 nor 1 (with a matching CRC) is corrupt too.
  BundleEntryProto e = Entry();
  e.set_dtype(DT_BOOL);
  e.mutable_shape()->mutable_dim(0)->set_size(16);
  std::string bytes(16, '\0');
  bytes[3] = 2;
  e.set_crc32c(crc32c::Mask(crc32c::Value(bytes.data(), bytes.size())));
  Write(Header(), e);
  WriteFile(BundleDataFilename(Prefix("bad"), 0, 1), bytes);
  EXPECT_EQ(Read().code(), absl::StatusCode::kDataLoss);
}

TEST_F(TensorBundleTest, MergeRenamesShardsAndWritesOneIndex) {
  WriteBundle(Prefix("tmp/part0"), {{"b", test::AsTensor<float>({1, 2}, {2})},
                                    {"d", Tensor::Scalar<int32_t>(4)}});
  WriteBundle(Prefix("tmp/part1"), {{"a", test::AsTensor<double>({3}, {1})},
                                    {"c", Tensor::Scalar<bool>(true)}});
  ASSERT_TRUE(MergeBundles({Prefix("tmp/part0"), Prefix("tmp/part1")}, Prefix("merged")).ok());
  EXPECT_TRUE(fs::exists(Prefix("merged") + ".data-00000-of-00002"));
  EXPECT_TRUE(fs::exists(Prefix("merged") + ".data-00001-of-00002"));
  EXPECT_TRUE(fs::is_empty(dir_ / "tmp"));  // sources' data renamed, indexes deleted
  auto r = BundleReader::Open(Prefix("merged"));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)->header().num_shards(), 2);
  EXPECT_EQ((*r)->Lookup("a")->scalar<double>(), 3.0);
  EXPECT_EQ((*r)->Lookup("b")->flat<float>()[1], 2.f);
  EXPECT_EQ((*r)->Lookup("c")->scalar<bool>(), true);
  EXPECT_EQ((*r)->Lookup("d")->scalar<int32_t>(), 4);
  EXPECT_EQ((*r)->LookupEntry("a")->shard_id(), 1);

  // The same key in two sources, a missing source, no source, dst == src.
  WriteBundle(Prefix("p0"), {{"k", Tensor::Scalar<float>(1)}});
  WriteBundle(Prefix("p1"), {{"k", Tensor::Scalar<float>(2)}});
  EXPECT_EQ(MergeBundles({Prefix("p0"), Prefix("p1")}, Prefix("m")).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(fs::exists(Prefix("p0") + ".index"));  // nothing was moved
  EXPECT_EQ(MergeBundles({Prefix("p0"), Prefix("zz")}, Prefix("m")).code(),
            absl::StatusCode::kInvalidArgument);  // TF's code for a missing source
  EXPECT_TRUE(MergeBundles({Prefix("p0"), Prefix("zz")}, Prefix("m"), true).ok());
  EXPECT_EQ(MergeBundles({}, Prefix("m2")).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(MergeBundles({Prefix("p1")}, Prefix("p1")).code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tensorflux
