#include "tensorflux/core/status.h"

#include <string_view>

#include "gtest/gtest.h"

namespace tensorflux {
namespace {

TEST(StatusTest, ErrorHelpersKeepCodeAndConcatenate) {
  Status s = errors::InvalidArgument("bad dim ", 3, " in ", std::string("x"));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "bad dim 3 in x");
  std::string_view sv = "view";
  EXPECT_EQ(errors::NotFound("no ", sv).message(), "no view");
}

TEST(StatusTest, AttachNodeContextPrefixesOnce) {
  Status s = errors::InvalidArgument("Matrix size-incompatible");
  Status a = errors::AttachNodeContext(s, "mm", "MatMul");
  EXPECT_EQ(a.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(a.message(), "{{node mm}} (op MatMul): Matrix size-incompatible");
  // Attaching the same node again does not double-prefix.
  EXPECT_EQ(errors::AttachNodeContext(a, "mm", "MatMul"), a);
  // A different node is still added.
  Status b = errors::AttachNodeContext(a, "outer", "Call");
  EXPECT_EQ(b.message(), "{{node outer}} (op Call): {{node mm}} (op MatMul): Matrix size-incompatible");
}

TEST(StatusTest, AttachNodeContextPassesOkThrough) {
  EXPECT_TRUE(errors::AttachNodeContext(OkStatus(), "n", "Op").ok());
}

TEST(StatusTest, CodeNamesAreTensorFlowSpellings) {
  EXPECT_EQ(errors::CodeName(absl::StatusCode::kOk), "OK");
  EXPECT_EQ(errors::CodeName(absl::StatusCode::kInvalidArgument), "INVALID_ARGUMENT");
  EXPECT_EQ(errors::CodeName(absl::StatusCode::kNotFound), "NOT_FOUND");
  EXPECT_EQ(errors::CodeName(absl::StatusCode::kFailedPrecondition), "FAILED_PRECONDITION");
  EXPECT_EQ(errors::CodeName(absl::StatusCode::kResourceExhausted), "RESOURCE_EXHAUSTED");
  EXPECT_EQ(errors::CodeName(absl::StatusCode::kDataLoss), "DATA_LOSS");
  EXPECT_EQ(errors::CodeName(absl::StatusCode::kUnauthenticated), "UNAUTHENTICATED");
}

TEST(StatusTest, StatusToString) {
  EXPECT_EQ(StatusToString(errors::OutOfRange("end of sequence")), "OUT_OF_RANGE: end of sequence");
  EXPECT_EQ(StatusToString(OkStatus()), "OK");
}

StatusOr<int> Half(int x) {
  if (x % 2 != 0) return errors::InvalidArgument(x, " is odd");
  return x / 2;
}

Status UseMacros(int x, int* out) {
  TX_ASSIGN_OR_RETURN(int h, Half(x));
  TX_RETURN_IF_ERROR(h > 10 ? errors::OutOfRange("too big") : OkStatus());
  *out = h;
  return OkStatus();
}

TEST(StatusTest, Macros) {
  int out = 0;
  EXPECT_TRUE(UseMacros(8, &out).ok());
  EXPECT_EQ(out, 4);
  EXPECT_EQ(UseMacros(3, &out).message(), "3 is odd");
  EXPECT_EQ(UseMacros(40, &out).code(), absl::StatusCode::kOutOfRange);
}

}  // namespace
}  // namespace tensorflux
