// DecodeCSV: typed columns with defaults, quoting, na_value, select_cols, and every error (field
// count, required field, unparsable number, int32 overflow, bad quotes) naming the record.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kernel_test_util.h"

namespace tensorflux {
namespace {

Tensor Strings(std::vector<std::string> v) {
  const int64_t n = static_cast<int64_t>(v.size());
  return test::AsTensor<std::string>(v, {n});
}

// Columns: float (default 0.5), int32 (required), int64 (default -1), string (default "none").
StatusOr<std::vector<Tensor>> Decode(std::vector<std::string> records,
                                     std::vector<int64_t> select_cols = {},
                                     std::string na_value = "") {
  return test::KernelRunner("DecodeCSV")
      .Input(Strings(records))
      .Input(test::AsTensor<float>({0.5f}, {1}))
      .Input(Tensor(DT_INT32, TensorShape({0})))
      .Input(Tensor::Scalar<int64_t>(-1))
      .Input(Tensor::Scalar<std::string>("none"))
      .Attr("OUT_TYPE", absl::Span<const DataType>(
                            std::vector<DataType>{DT_FLOAT, DT_INT32, DT_INT64, DT_STRING}))
      .Attr("na_value", na_value)
      .Attr("select_cols", absl::Span<const int64_t>(select_cols))
      .Run();
}

TEST(DecodeCSVTest, TypedColumnsDefaultsAndQuotes) {
  auto out = Decode({"1.25,7,9000000000,abc", ",-3,,", "2e3,0,5,\"x,\"\"y\"\"\""});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 4u);
  EXPECT_EQ((*out)[0].flat<float>()[0], 1.25f);
  EXPECT_EQ((*out)[0].flat<float>()[1], 0.5f);  // default
  EXPECT_EQ((*out)[0].flat<float>()[2], 2000.0f);
  EXPECT_EQ((*out)[1].flat<int32_t>()[1], -3);
  EXPECT_EQ((*out)[2].flat<int64_t>()[0], 9000000000);
  EXPECT_EQ((*out)[2].flat<int64_t>()[1], -1);  // default
  EXPECT_EQ((*out)[3].flat<std::string>()[0], "abc");
  EXPECT_EQ((*out)[3].flat<std::string>()[1], "none");
  EXPECT_EQ((*out)[3].flat<std::string>()[2], "x,\"y\"");  // quoted delimiter and quotes
}

TEST(DecodeCSVTest, NaValueAndSelectCols) {
  auto out = Decode({"NA,4,NA,s"}, {}, "NA");
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].flat<float>()[0], 0.5f);
  EXPECT_EQ((*out)[2].flat<int64_t>()[0], -1);
  // Columns 0, 2, 3, 5 of a six-column record.
  out = Decode({"1.5,skip,2,3,skip,t"}, {0, 2, 3, 5});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].flat<float>()[0], 1.5f);
  EXPECT_EQ((*out)[1].flat<int32_t>()[0], 2);
  EXPECT_EQ((*out)[2].flat<int64_t>()[0], 3);
  EXPECT_EQ((*out)[3].flat<std::string>()[0], "t");
}

void ExpectError(StatusOr<std::vector<Tensor>> out, const std::string& a, const std::string& b) {
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument) << out.status();
  EXPECT_NE(out.status().message().find(a), std::string::npos) << out.status();
  EXPECT_NE(out.status().message().find(b), std::string::npos) << out.status();
}

TEST(DecodeCSVTest, ErrorsNameTheRecord) {
  ExpectError(Decode({"1,2,3,a", "1,2,3"}), "record 1", "expected 4 fields but found 3");
  ExpectError(Decode({"1,2,3,a,b"}), "record 0", "found 5");
  ExpectError(Decode({"1,2,3,a", "1,,3,a"}), "record 1: field 1 is required", "missing");
  ExpectError(Decode({"1,2,3,a", "1,2,3,a", "x1,2,3,a"}), "record 2", "not a valid float: 'x1'");
  ExpectError(Decode({"1,3000000000,3,a"}), "record 0", "not a valid int32");
  ExpectError(Decode({"1,2,3,\"open"}), "record 0", "not closed");
  ExpectError(Decode({"1,2,3,\"a\"b"}), "record 0", "escaped");
  ExpectError(Decode({"1,2,3,a\"b"}), "record 0", "cannot hold a quote");
  ExpectError(Decode({"1,2,3"}, {0, 1, 2, 5}), "expected 6 fields", "found 3");
}

}  // namespace
}  // namespace tensorflux
