// IdxDataset's decoded payload: decoded once per file version and shared by every iterator of
// the kernel's datasets (elements are slices of one buffer, no copy), reloaded when the file
// changes, and a file that cannot be decoded whole is streamed so its error comes at its item.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>

#include "../io/io_test_util.h"
#include "../kernels/kernel_test_util.h"
#include "dataset_test_util.h"
#include "tensorflux/data/dataset.h"

namespace tensorflux {
namespace {

using io::testutil::Gzip;
using io::testutil::WriteFile;

// A uint8 IDX file of `items` items of [2, 3]: item i holds base + 6i .. base + 6i + 5.
std::string IdxBytes(uint32_t items, int base) {
  std::string b = {0, 0, 0x08, 3};
  for (uint32_t d : {items, 2u, 3u})
    for (int s = 24; s >= 0; s -= 8) b.push_back(static_cast<char>(d >> s));
  for (uint32_t i = 0; i < 6 * items; ++i) b.push_back(static_cast<char>(base + i));
  return b;
}

struct Iter {
  std::unique_ptr<IteratorBase> it;
  IteratorContext ctx;
  StatusOr<std::vector<Tensor>> All() {
    TX_ASSIGN_OR_RETURN(auto elements, test::DrainIterator(it.get(), &ctx));
    std::vector<Tensor> out;
    for (auto& e : elements) out.push_back(std::move(e[0]));
    return out;
  }
};

StatusOr<Iter> MakeIter(const DatasetPtr& d) {
  Iter i;
  TX_ASSIGN_OR_RETURN(i.it, d->MakeIterator(&i.ctx));
  return i;
}

StatusOr<DatasetPtr> IdxDataset(test::KernelRunner* r, const std::string& path) {
  const std::vector<DataType> types = {DT_UINT8};
  const std::vector<PartialTensorShape> shapes = {PartialTensorShape({2, 3})};
  r->Input(Tensor::Scalar(path))
      .Attr("output_types", absl::Span<const DataType>(types))
      .Attr("output_shapes", absl::Span<const PartialTensorShape>(shapes));
  TX_ASSIGN_OR_RETURN(Tensor h, r->RunOne());
  return GetDatasetFromVariantTensor(h);
}

TEST(IdxDatasetTest, PayloadIsSharedByIteratorsAndReloadedWhenTheFileChanges) {
  const std::string path = WriteFile("shared.idx.gz", Gzip(IdxBytes(4, 0)));
  test::KernelRunner r("IdxDataset");
  auto d = IdxDataset(&r, path);
  ASSERT_TRUE(d.ok()) << d.status();
  auto a = MakeIter(*d), b = MakeIter(*d);
  ASSERT_TRUE(a.ok() && b.ok());
  auto ea = a->All(), eb = b->All();
  ASSERT_TRUE(ea.ok() && eb.ok()) << ea.status() << eb.status();
  ASSERT_EQ(ea->size(), 4u);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ((*ea)[i].shape(), TensorShape({2, 3}));
    EXPECT_EQ(test::ToDoubles((*ea)[i]),
              (std::vector<double>{6.0 * i, 6.0 * i + 1, 6.0 * i + 2, 6.0 * i + 3, 6.0 * i + 4,
                                   6.0 * i + 5}));
    EXPECT_TRUE((*ea)[i].SharesBufferWith((*ea)[0]));  // slices of one payload
    EXPECT_TRUE((*eb)[i].SharesBufferWith((*ea)[0]));  // the same one for both iterators
  }
  // New content (same header) with a later mtime: the next iterator decodes it again, while
  // the elements already handed out keep the old payload.
  WriteFile("shared.idx.gz", Gzip(IdxBytes(4, 100)));
  std::filesystem::last_write_time(
      path, std::filesystem::last_write_time(path) + std::chrono::seconds(5));
  auto c = MakeIter(*d);
  ASSERT_TRUE(c.ok()) << c.status();
  auto ec = c->All();
  ASSERT_TRUE(ec.ok()) << ec.status();
  EXPECT_EQ(test::ToDoubles((*ec)[1])[0], 106.0);
  EXPECT_FALSE((*ec)[0].SharesBufferWith((*ea)[0]));
  EXPECT_EQ(test::ToDoubles((*ea)[1])[0], 6.0);
  // A new header (5 items of [3, 2] would be a different element shape) is refused.
  std::string other = IdxBytes(5, 0);
  other[11] = 3;  // dims [5, 3, 2]
  other[15] = 2;
  WriteFile("shared.idx.gz", Gzip(other));
  std::filesystem::last_write_time(
      path, std::filesystem::last_write_time(path) + std::chrono::seconds(10));
  auto bad = MakeIter(*d);
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("changed since the dataset was made"), std::string::npos)
      << bad.status();
}

TEST(IdxDatasetTest, TruncatedFileStreamsUpToTheMissingItem) {
  // 4 items announced, 2 and a half present: two elements, then DATA_LOSS naming item 2.
  const std::string bytes = IdxBytes(4, 0);
  const std::string path = WriteFile("short.idx.gz", Gzip(bytes.substr(0, 16 + 6 * 2 + 3)));
  test::KernelRunner r("IdxDataset");
  auto d = IdxDataset(&r, path);
  ASSERT_TRUE(d.ok()) << d.status();
  auto it = MakeIter(*d);
  ASSERT_TRUE(it.ok()) << it.status();
  std::vector<Tensor> e;
  bool end = false;
  for (int i = 0; i < 2; ++i) ASSERT_TRUE(it->it->GetNext(&it->ctx, &e, &end).ok());
  Status s = it->it->GetNext(&it->ctx, &e, &end);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
  EXPECT_NE(s.message().find("item 2 of 4"), std::string::npos) << s;
  EXPECT_NE(s.message().find(path), std::string::npos) << s;
  // Sticky: later calls repeat the error, never a quiet end of data.
  for (int i = 0; i < 2; ++i) {
    Status again = it->it->GetNext(&it->ctx, &e, &end);
    EXPECT_EQ(again, s);
    EXPECT_FALSE(end);
  }
  // Under ignore_errors the one file ends instead.
  auto it2 = MakeIter(*d);
  ASSERT_TRUE(it2.ok()) << it2.status();
  it2->ctx.errors_are_ignored = true;
  for (int i = 0; i < 2; ++i) ASSERT_TRUE(it2->it->GetNext(&it2->ctx, &e, &end).ok());
  EXPECT_EQ(it2->it->GetNext(&it2->ctx, &e, &end).code(), absl::StatusCode::kDataLoss);
  ASSERT_TRUE(it2->it->GetNext(&it2->ctx, &e, &end).ok());
  EXPECT_TRUE(end);
}

}  // namespace
}  // namespace tensorflux
