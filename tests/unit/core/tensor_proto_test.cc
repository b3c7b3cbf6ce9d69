// Tensor <-> TensorProto, following TF's Tensor::FromProto rules (spec/tf-wire.md §1.4).
#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tensorflux/attr_value.pb.h"
#include "tensorflux/core/tensor.h"

namespace tensorflux {
namespace {

template <typename T>
T MakeValue(int i) {
  if constexpr (std::is_same_v<T, Half>) return Half(static_cast<float>(i) * 0.5f - 3);
  else if constexpr (std::is_same_v<T, BFloat16>) return BFloat16(static_cast<float>(i) * 0.25f - 1);
  else if constexpr (std::is_same_v<T, bool>) return i % 3 == 1;
  else if constexpr (std::is_same_v<T, std::string>) return std::string(static_cast<size_t>(i) * 37 % 300, 'a' + i % 26);
  else if constexpr (std::is_floating_point_v<T>) return static_cast<T>(i) * T(0.75) - T(2);
  else if constexpr (std::is_signed_v<T>) return static_cast<T>(i * 13 - 40);
  else return static_cast<T>(i * 13 + 200);
}

template <typename T>
bool Same(const T& a, const T& b) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) return a.bits == b.bits;
  else return a == b;
}

template <typename T>
Tensor MakeTensor(const TensorShape& shape) {
  Tensor t(DataTypeToEnum<T>::value, shape);
  auto f = t.flat<T>();
  for (size_t i = 0; i < f.size(); ++i) f[i] = MakeValue<T>(static_cast<int>(i));
  return t;
}

template <typename T>
void ExpectEqualTensors(const Tensor& a, const Tensor& b) {
  ASSERT_EQ(a.dtype(), b.dtype());
  ASSERT_EQ(a.shape(), b.shape());
  auto fa = a.flat<T>();
  auto fb = b.flat<T>();
  for (size_t i = 0; i < fa.size(); ++i) EXPECT_TRUE(Same(fa[i], fb[i])) << "element " << i;
}

template <typename T>
class TensorProtoRoundTrip : public ::testing::Test {};

using AllTypes = ::testing::Types<float, double, int32_t, int64_t, uint8_t, int8_t, int16_t,
                                  uint16_t, uint32_t, uint64_t, bool, Half, BFloat16,
                                  std::string>;
TYPED_TEST_SUITE(TensorProtoRoundTrip, AllTypes);

TYPED_TEST(TensorProtoRoundTrip, ViaTypedField) {
  using T = TypeParam;
  Tensor t = MakeTensor<T>(TensorShape({2, 3, 2}));
  TensorProto p;
  t.AsProtoField(&p);
  EXPECT_EQ(p.dtype(), DataTypeToEnum<T>::value);
  EXPECT_TRUE(p.tensor_content().empty());
  // Serialize and parse, so the wire form is exercised too.
  TensorProto wire;
  ASSERT_TRUE(wire.ParseFromString(p.SerializeAsString()));
  auto back = Tensor::FromProto(wire);
  ASSERT_TRUE(back.ok()) << back.status();
  ExpectEqualTensors<T>(t, *back);
}

TYPED_TEST(TensorProtoRoundTrip, ViaTensorContent) {
  using T = TypeParam;
  Tensor t = MakeTensor<T>(TensorShape({5, 2}));
  TensorProto p;
  t.AsProtoTensorContent(&p);
  if constexpr (!std::is_same_v<T, std::string>) {
    EXPECT_EQ(p.tensor_content().size(), 10 * sizeof(T));
  } else {
    EXPECT_EQ(p.string_val_size(), 10);  // strings fall back to string_val
  }
  TensorProto wire;
  ASSERT_TRUE(wire.ParseFromString(p.SerializeAsString()));
  auto back = Tensor::FromProto(wire);
  ASSERT_TRUE(back.ok()) << back.status();
  ExpectEqualTensors<T>(t, *back);
}

TYPED_TEST(TensorProtoRoundTrip, OneValueBroadcasts) {
  using T = TypeParam;
  Tensor one = MakeTensor<T>(TensorShape({1}));
  TensorProto p;
  one.AsProtoField(&p);
  TensorShape({4, 25}).AsProto(p.mutable_tensor_shape());
  auto t = Tensor::FromProto(p);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->NumElements(), 100);
  for (const T& v : t->flat<T>()) EXPECT_TRUE(Same(v, one.flat<T>()[0]));
}

TEST(TensorProtoTest, FieldsUsedPerDtype) {
  TensorProto p;
  MakeTensor<int8_t>(TensorShape({2})).AsProtoField(&p);
  EXPECT_EQ(p.int_val_size(), 2);
  MakeTensor<uint16_t>(TensorShape({2})).AsProtoField(&p);
  EXPECT_EQ(p.int_val_size(), 2);
  EXPECT_EQ(p.int_val(1), 213);
  Tensor h(DT_HALF, TensorShape({1}));
  h.flat<Half>()[0] = Half(1.0f);
  h.AsProtoField(&p);
  ASSERT_EQ(p.half_val_size(), 1);
  EXPECT_EQ(p.half_val(0), 0x3C00);
  Tensor bf(DT_BFLOAT16, TensorShape({1}));
  bf.flat<BFloat16>()[0] = BFloat16(1.0f);
  bf.AsProtoField(&p);
  ASSERT_EQ(p.half_val_size(), 1);
  EXPECT_EQ(p.half_val(0), 0x3F80);
  MakeTensor<uint64_t>(TensorShape({3})).AsProtoField(&p);
  EXPECT_EQ(p.uint64_val_size(), 3);
  MakeTensor<bool>(TensorShape({3})).AsProtoField(&p);
  EXPECT_EQ(p.bool_val_size(), 3);
}

// spec/tf-wire.md §1.3: AttrValue `tensor { dtype: DT_FLOAT tensor_shape {} float_val: 0.5 }`
// is 42 0a 08 01 12 00 2a 04 00 00 00 3f.
TEST(TensorProtoTest, SpecHexExample) {
  const std::string attr_bytes("\x42\x0a\x08\x01\x12\x00\x2a\x04\x00\x00\x00\x3f", 12);
  AttrValue attr;
  ASSERT_TRUE(attr.ParseFromString(attr_bytes));
  ASSERT_TRUE(attr.has_tensor());
  auto t = Tensor::FromProto(attr.tensor());
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->dtype(), DT_FLOAT);
  EXPECT_EQ(t->dims(), 0);
  EXPECT_EQ(t->scalar<float>(), 0.5f);
  // And back: encoding the scalar gives the same bytes.
  AttrValue out;
  Tensor::Scalar<float>(0.5f).AsProtoField(out.mutable_tensor());
  EXPECT_EQ(out.SerializeAsString(), attr_bytes);
}

TEST(TensorProtoTest, FloatContentIsLittleEndian) {
  TensorProto p;
  Tensor::FromVector<float>(std::vector<float>{1.0f}, TensorShape({1})).AsProtoTensorContent(&p);
  EXPECT_EQ(p.tensor_content(), std::string("\x00\x00\x80\x3f", 4));
}

TEST(TensorProtoTest, FewerValuesRepeatTheLast) {
  TensorProto p;
  p.set_dtype(DT_INT32);
  TensorShape({5}).AsProto(p.mutable_tensor_shape());
  p.add_int_val(4);
  p.add_int_val(9);
  auto t = Tensor::FromProto(p);
  ASSERT_TRUE(t.ok());
  const std::vector<int32_t> want = {4, 9, 9, 9, 9};
  EXPECT_EQ(std::vector<int32_t>(t->flat<int32_t>().begin(), t->flat<int32_t>().end()), want);
}

TEST(TensorProtoTest, NoValuesGiveZeros) {
  TensorProto p;
  p.set_dtype(DT_DOUBLE);
  TensorShape({3}).AsProto(p.mutable_tensor_shape());
  auto t = Tensor::FromProto(p);
  ASSERT_TRUE(t.ok());
  for (double v : t->flat<double>()) EXPECT_EQ(v, 0.0);
  p.set_dtype(DT_STRING);
  auto s = Tensor::FromProto(p);
  ASSERT_TRUE(s.ok());
  for (const std::string& v : s->flat<std::string>()) EXPECT_EQ(v, "");
}

TEST(TensorProtoTest, TensorContentWinsOverTypedField) {
  TensorProto p;
  p.set_dtype(DT_FLOAT);
  TensorShape({1}).AsProto(p.mutable_tensor_shape());
  p.add_float_val(7.0f);
  p.set_tensor_content(std::string("\x00\x00\x80\x3f", 4));
  auto t = Tensor::FromProto(p);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->flat<float>()[0], 1.0f);
}

TEST(TensorProtoTest, EmptyTensor) {
  TensorProto p;
  p.set_dtype(DT_FLOAT);
  TensorShape({0, 3}).AsProto(p.mutable_tensor_shape());
  auto t = Tensor::FromProto(p);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->NumElements(), 0);
  EXPECT_EQ(t->shape(), TensorShape({0, 3}));
}

TEST(TensorProtoTest, ResourceHandles) {
  TensorProto p;
  p.set_dtype(DT_RESOURCE);
  ResourceHandleProto* h = p.add_resource_handle_val();
  h->set_name("v");
  h->set_container("c");
  h->set_hash_code(99);
  auto t = Tensor::FromProto(p);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->scalar<ResourceHandle>().name, "v");
  EXPECT_EQ(t->scalar<ResourceHandle>().hash_code, 99u);
  TensorProto back;
  t->AsProtoTensorContent(&back);
  EXPECT_EQ(back.resource_handle_val(0).container(), "c");
}

std::string Varint(uint32_t v) {
  std::string out;
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
  return out;
}

TEST(TensorProtoTest, StringTensorContentDecodes) {
  const std::string long_str(200, 'z');  // 2-byte varint length
  TensorProto p;
  p.set_dtype(DT_STRING);
  TensorShape({3}).AsProto(p.mutable_tensor_shape());
  p.set_tensor_content(Varint(2) + Varint(0) + Varint(200) + "hi" + long_str);
  auto t = Tensor::FromProto(p);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->flat<std::string>()[0], "hi");
  EXPECT_EQ(t->flat<std::string>()[1], "");
  EXPECT_EQ(t->flat<std::string>()[2], long_str);
}

Status FromProtoStatus(const TensorProto& p) { return Tensor::FromProto(p).status(); }

TEST(TensorProtoTest, BadStringTensorContent) {
  TensorProto p;
  p.set_dtype(DT_STRING);
  TensorShape({2}).AsProto(p.mutable_tensor_shape());
  p.set_tensor_content(Varint(3));  // second length missing
  EXPECT_EQ(FromProtoStatus(p).code(), absl::StatusCode::kInvalidArgument);
  p.set_tensor_content(Varint(3) + Varint(4) + "abc");  // bytes short
  EXPECT_EQ(FromProtoStatus(p).code(), absl::StatusCode::kInvalidArgument);
  p.set_tensor_content(Varint(1) + Varint(1) + "abc");  // bytes left over
  EXPECT_EQ(FromProtoStatus(p).code(), absl::StatusCode::kInvalidArgument);
  p.set_tensor_content(std::string("\xff\xff\xff\xff\xff\xff", 6));  // overlong varint
  EXPECT_EQ(FromProtoStatus(p).code(), absl::StatusCode::kInvalidArgument);
  p.set_tensor_content(Varint(0xffffffffu) + Varint(1) + "a");  // huge length
  EXPECT_EQ(FromProtoStatus(p).code(), absl::StatusCode::kInvalidArgument);
  // A huge element count with a few bytes of content fails before allocating.
  TensorShape({int64_t{1} << 40}).AsProto(p.mutable_tensor_shape());
  p.set_tensor_content(Varint(1) + "a");
  EXPECT_EQ(FromProtoStatus(p).code(), absl::StatusCode::kInvalidArgument);
}

TEST(TensorProtoTest, ContentLengthMismatchIsInvalidArgument) {
  TensorProto p;
  p.set_dtype(DT_FLOAT);
  TensorShape({2, 2}).AsProto(p.mutable_tensor_shape());
  p.set_tensor_content(std::string(12, '\0'));
  Status s = FromProtoStatus(p);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("12 bytes"), std::string::npos) << s;
  EXPECT_NE(s.message().find("16"), std::string::npos) << s;
  p.set_tensor_content(std::string(20, '\0'));
  EXPECT_EQ(FromProtoStatus(p).code(), absl::StatusCode::kInvalidArgument);
  // Content for a tensor with no elements.
  TensorShape({0}).AsProto(p.mutable_tensor_shape());
  p.set_tensor_content(std::string(4, '\0'));
  EXPECT_EQ(FromProtoStatus(p).code(), absl::StatusCode::kInvalidArgument);
}

TEST(TensorProtoTest, HugeShapeWithShortContentFailsWithoutAllocating) {
  TensorProto p;
  p.set_dtype(DT_FLOAT);
  TensorShape({int64_t{1} << 40}).AsProto(p.mutable_tensor_shape());
  p.set_tensor_content(std::string(4, '\0'));
  EXPECT_EQ(FromProtoStatus(p).code(), absl::StatusCode::kInvalidArgument);
}

TEST(TensorProtoTest, TooManyValuesIsInvalidArgument) {
  TensorProto p;
  p.set_dtype(DT_FLOAT);
  TensorShape({2}).AsProto(p.mutable_tensor_shape());
  for (int i = 0; i < 3; ++i) p.add_float_val(1.0f);
  Status s = FromProtoStatus(p);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("float_val"), std::string::npos) << s;
}

TEST(TensorProtoTest, BadShapesAndDtypes) {
  TensorProto p;
  p.set_dtype(DT_FLOAT);
  p.mutable_tensor_shape()->add_dim()->set_size(-3);
  EXPECT_EQ(FromProtoStatus(p).code(), absl::StatusCode::kInvalidArgument);

  TensorProto unknown;
  unknown.set_dtype(DT_FLOAT);
  unknown.mutable_tensor_shape()->set_unknown_rank(true);
  EXPECT_EQ(FromProtoStatus(unknown).code(), absl::StatusCode::kInvalidArgument);

  TensorProto overflow;
  overflow.set_dtype(DT_INT8);
  for (int i = 0; i < 3; ++i) overflow.mutable_tensor_shape()->add_dim()->set_size(int64_t{1} << 30);
  EXPECT_EQ(FromProtoStatus(overflow).code(), absl::StatusCode::kInvalidArgument);

  TensorProto rank9;
  rank9.set_dtype(DT_FLOAT);
  for (int i = 0; i < 9; ++i) rank9.mutable_tensor_shape()->add_dim()->set_size(1);
  EXPECT_EQ(FromProtoStatus(rank9).code(), absl::StatusCode::kInvalidArgument);

  for (DataType dt : {DT_INVALID, DT_COMPLEX64, DT_QINT8, DT_FLOAT_REF,
                      static_cast<DataType>(77)}) {
    TensorProto bad;
    bad.set_dtype(dt);
    Status s = FromProtoStatus(bad);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << DataTypeString(dt);
  }
}

TEST(TensorProtoTest, ResourceContentRejected) {
  TensorProto p;
  p.set_dtype(DT_RESOURCE);
  p.set_tensor_content("xx");
  EXPECT_EQ(FromProtoStatus(p).code(), absl::StatusCode::kInvalidArgument);
  p.set_dtype(DT_VARIANT);  // variants have no byte form either
  EXPECT_EQ(FromProtoStatus(p).code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tensorflux
