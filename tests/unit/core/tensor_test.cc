#include "tensorflux/core/tensor.h"
#include "tensorflux/core/variant.h"

#include <cstdint>
#include <vector>

#include "gtest/gtest.h"

namespace tensorflux {
namespace {

bool Aligned64(const void* p) { return reinterpret_cast<uintptr_t>(p) % 64 == 0; }

Tensor Iota(const TensorShape& shape) {
  Tensor t(DT_FLOAT, shape);
  auto f = t.flat<float>();
  for (size_t i = 0; i < f.size(); ++i) f[i] = static_cast<float>(i);
  return t;
}

TEST(TensorTest, DefaultIsUninitialized) {
  Tensor t;
  EXPECT_FALSE(t.IsInitialized());
  EXPECT_EQ(t.dtype(), DT_INVALID);
  EXPECT_EQ(t.raw_data(), nullptr);
  EXPECT_EQ(t.DebugString(), "Tensor<uninitialized>");
}

TEST(TensorTest, AllocateIsAlignedAndSized) {
  for (DataType dt : {DT_FLOAT, DT_DOUBLE, DT_INT8, DT_UINT16, DT_HALF, DT_BOOL, DT_INT64}) {
    Tensor t(dt, TensorShape({3, 5}));
    ASSERT_TRUE(t.IsInitialized());
    EXPECT_EQ(t.NumElements(), 15);
    EXPECT_EQ(t.TotalBytes(), 15 * DataTypeSize(dt));
    EXPECT_TRUE(Aligned64(t.raw_data())) << DataTypeString(dt);
  }
}

TEST(TensorTest, ZeroElementTensorIsInitializedWithoutBuffer) {
  Tensor t(DT_FLOAT, TensorShape({0, 4}));
  EXPECT_TRUE(t.IsInitialized());
  EXPECT_EQ(t.NumElements(), 0);
  EXPECT_EQ(t.TotalBytes(), 0u);
  EXPECT_EQ(t.SummarizeValue(), "[]");
}

TEST(TensorTest, AllocateRejectsBadDtypes) {
  for (DataType dt : {DT_INVALID, DT_COMPLEX64, DT_QINT8, DT_FLOAT_REF}) {
    auto t = Tensor::Allocate(dt, TensorShape({2}));
    ASSERT_FALSE(t.ok()) << DataTypeString(dt);
    EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_FALSE(Tensor(dt, TensorShape({2})).IsInitialized());
  }
}

// A VariantValue for the test: an int with a name.
class Boxed : public VariantValue {
 public:
  explicit Boxed(int v) : v_(v) {}
  std::string TypeName() const override { return "Boxed"; }
  std::string DebugString() const override { return "Boxed(" + std::to_string(v_) + ")"; }
  int v() const { return v_; }

 private:
  int v_;
};

TEST(TensorTest, VariantElementsAreSharedValues) {
  auto t = Tensor::Allocate(DT_VARIANT, TensorShape({2}));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_TRUE(t->flat<Variant>()[0].empty());
  t->flat<Variant>()[1] = Variant(std::make_shared<Boxed>(7));
  Tensor copy = t->DeepCopy();
  ASSERT_NE(copy.flat<Variant>()[1].get<Boxed>(), nullptr);
  EXPECT_EQ(copy.flat<Variant>()[1].get<Boxed>()->v(), 7);
  // A deep copy copies the references: both tensors point at one value.
  EXPECT_EQ(copy.flat<Variant>()[1].value(), t->flat<Variant>()[1].value());
  EXPECT_EQ(t->SummarizeValue(), "[<Variant<empty>> <Boxed(7)>]");
  // No wire form: the proto keeps dtype and shape, values cannot be decoded.
  TensorProto p;
  t->AsProtoField(&p);
  EXPECT_EQ(p.dtype(), DT_VARIANT);
  EXPECT_EQ(p.variant_val_size(), 0);
  p.add_variant_val();
  p.add_variant_val();
  EXPECT_EQ(Tensor::FromProto(p).status().code(), absl::StatusCode::kUnimplemented);
}

TEST(TensorTest, AllocateHugeIsResourceExhausted) {
  auto t = Tensor::Allocate(DT_DOUBLE, TensorShape({int64_t{1} << 40, int64_t{1} << 20}));
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), absl::StatusCode::kResourceExhausted);
}

TEST(TensorTest, ScalarAndFromVector) {
  Tensor s = Tensor::Scalar<int32_t>(7);
  EXPECT_EQ(s.dtype(), DT_INT32);
  EXPECT_EQ(s.dims(), 0);
  EXPECT_EQ(s.scalar<int32_t>(), 7);
  std::vector<double> v = {1.5, 2.5, 3.5, 4.5};
  Tensor t = Tensor::FromVector<double>(v, TensorShape({2, 2}));
  EXPECT_EQ(t.flat<double>()[3], 4.5);
  Tensor str = Tensor::Scalar<std::string>("hello");
  EXPECT_EQ(str.scalar<std::string>(), "hello");
}

TEST(TensorTest, CopiesShareAndRefCount) {
  Tensor a = Iota(TensorShape({4}));
  EXPECT_TRUE(a.RefCountIsOne());
  {
    Tensor b = a;
    EXPECT_TRUE(b.SharesBufferWith(a));
    EXPECT_FALSE(a.RefCountIsOne());
    b.flat<float>()[0] = 42;
    EXPECT_EQ(a.flat<float>()[0], 42);
  }
  EXPECT_TRUE(a.RefCountIsOne());
  EXPECT_FALSE(Tensor().SharesBufferWith(Tensor()));
}

TEST(TensorTest, ReshapeSharesMemory) {
  Tensor a = Iota(TensorShape({2, 6}));
  Tensor r;
  ASSERT_TRUE(r.CopyFrom(a, TensorShape({3, 4})));
  EXPECT_TRUE(r.SharesBufferWith(a));
  EXPECT_EQ(r.raw_data(), a.raw_data());
  EXPECT_EQ(r.shape(), TensorShape({3, 4}));
  EXPECT_EQ(r.flat<float>()[11], 11.0f);
  // Element counts must match; a failed CopyFrom leaves the target alone.
  Tensor keep = Iota(TensorShape({3}));
  EXPECT_FALSE(keep.CopyFrom(a, TensorShape({5})));
  EXPECT_EQ(keep.shape(), TensorShape({3}));
  EXPECT_FALSE(keep.SharesBufferWith(a));
}

TEST(TensorTest, SliceSharesAndOffsets) {
  Tensor a = Iota(TensorShape({6, 16}));  // a 16-float row is 64 bytes
  Tensor s = a.Slice(2, 5);
  EXPECT_EQ(s.shape(), TensorShape({3, 16}));
  EXPECT_TRUE(s.SharesBufferWith(a));
  EXPECT_EQ(static_cast<char*>(s.raw_data()) - static_cast<char*>(a.raw_data()),
            2 * 16 * static_cast<ptrdiff_t>(sizeof(float)));
  EXPECT_TRUE(Aligned64(s.raw_data()));  // offset a multiple of 64 bytes
  EXPECT_EQ(s.flat<float>()[0], 32.0f);
  s.flat<float>()[0] = -1;
  EXPECT_EQ(a.flat<float>()[32], -1.0f);
  // A slice of a slice offsets again.
  Tensor ss = s.Slice(1, 2);
  EXPECT_EQ(ss.flat<float>()[0], 48.0f);
  EXPECT_EQ(static_cast<char*>(ss.raw_data()) - static_cast<char*>(a.raw_data()), 3 * 64);
  // Empty slice and full slice.
  EXPECT_EQ(a.Slice(3, 3).NumElements(), 0);
  EXPECT_EQ(a.Slice(0, 6).raw_data(), a.raw_data());
  // Out-of-range arguments give an uninitialized tensor, never a crash.
  EXPECT_FALSE(a.Slice(4, 7).IsInitialized());
  EXPECT_FALSE(a.Slice(-1, 2).IsInitialized());
  EXPECT_FALSE(a.Slice(3, 2).IsInitialized());
  EXPECT_FALSE(Tensor::Scalar<float>(1).Slice(0, 1).IsInitialized());
}

TEST(TensorTest, DeepCopyIsIndependent) {
  Tensor a = Iota(TensorShape({3, 2}));
  Tensor b = a.DeepCopy();
  EXPECT_FALSE(b.SharesBufferWith(a));
  EXPECT_EQ(b.shape(), a.shape());
  b.flat<float>()[1] = 100;
  EXPECT_EQ(a.flat<float>()[1], 1.0f);
  // DeepCopy of a slice copies just the slice.
  Tensor c = a.Slice(1, 2).DeepCopy();
  EXPECT_EQ(c.flat<float>()[0], 2.0f);
  EXPECT_EQ(c.NumElements(), 2);
}

TEST(TensorTest, StringTensorsConstructAndCopy) {
  Tensor s(DT_STRING, TensorShape({3}));
  for (const std::string& e : s.flat<std::string>()) EXPECT_EQ(e, "");
  s.flat<std::string>()[1] = std::string(1000, 'x');  // heap-allocated string, freed by the buffer
  Tensor d = s.DeepCopy();
  EXPECT_EQ(d.flat<std::string>()[1].size(), 1000u);
  s.flat<std::string>()[1] = "y";
  EXPECT_EQ(d.flat<std::string>()[1].size(), 1000u);
}

TEST(TensorTest, ResourceTensor) {
  Tensor r(DT_RESOURCE, TensorShape());
  r.scalar<ResourceHandle>().name = "var";
  Tensor c = r.DeepCopy();
  EXPECT_EQ(c.scalar<ResourceHandle>().name, "var");
}

TEST(TensorTest, SummarizeValueNestsLikeNumpy) {
  Tensor m = Tensor::FromVector<int32_t>(std::vector<int32_t>{1, 2, 3, 4}, TensorShape({2, 2}));
  EXPECT_EQ(m.SummarizeValue(), "[[1 2][3 4]]");
  EXPECT_EQ(m.DebugString(), "Tensor<type: int32 shape: [2,2] values: [1 2][3 4]>");
  Tensor v = Tensor::FromVector<float>(std::vector<float>{0.5f, 1.0f, 1.0f / 3}, TensorShape({3}));
  EXPECT_EQ(v.SummarizeValue(), "[0.5 1 0.333333]");
  EXPECT_EQ(Tensor::Scalar<float>(2.0f).SummarizeValue(), "2");
  EXPECT_EQ(Tensor::Scalar<float>(2.0f).DebugString(), "Tensor<type: float shape: [] values: 2>");
  Tensor b(DT_BOOL, TensorShape({2}));
  b.flat<bool>()[0] = true;
  b.flat<bool>()[1] = false;
  EXPECT_EQ(b.SummarizeValue(), "[true false]");
  Tensor u8 = Tensor::FromVector<uint8_t>(std::vector<uint8_t>{200, 7}, TensorShape({2}));
  EXPECT_EQ(u8.SummarizeValue(), "[200 7]");
  Tensor h(DT_HALF, TensorShape({1}));
  h.flat<Half>()[0] = Half(1.5f);
  EXPECT_EQ(h.SummarizeValue(), "[1.5]");
  Tensor s = Tensor::Scalar<std::string>("a\"b");
  EXPECT_EQ(s.SummarizeValue(), "\"a\\\"b\"");
}

TEST(TensorTest, SummarizeValueTruncates) {
  Tensor t = Iota(TensorShape({3, 3}));
  EXPECT_EQ(t.SummarizeValue(4), "[[0 1 2][3...]]");
  EXPECT_EQ(t.SummarizeValue(-1), "[[0 1 2][3 4 5][6 7 8]]");
  Tensor big = Iota(TensorShape({100}));
  EXPECT_EQ(big.SummarizeValue(3), "[0 1 2...]");
}

}  // namespace
}  // namespace tensorflux
