// Device names: full, partial, legacy and local specifications, canonical spelling, matching a
// request against full names, merging colocated requests, and malformed specifications.
#include "tensorflux/devices/device_name_utils.h"

#include <string>

#include "gtest/gtest.h"

namespace tensorflux {
namespace {

using PN = DeviceNameUtils::ParsedName;

PN MustParse(const std::string& s) {
  auto p = DeviceNameUtils::Parse(s);
  EXPECT_TRUE(p.ok()) << s << ": " << p.status();
  return p.ok() ? *p : PN();
}

std::string Canon(const std::string& s) {
  auto c = DeviceNameUtils::Canonicalize(s);
  EXPECT_TRUE(c.ok()) << s << ": " << c.status();
  return c.ok() ? *c : "<error>";
}

TEST(DeviceNameUtilsTest, ParsesFullName) {
  PN p = MustParse("/job:localhost/replica:0/task:0/device:CPU:0");
  EXPECT_TRUE(p.IsFullySpecified());
  EXPECT_EQ(p.job, "localhost");
  EXPECT_EQ(p.replica, 0);
  EXPECT_EQ(p.task, 0);
  EXPECT_EQ(p.type, "CPU");
  EXPECT_EQ(p.id, 0);

  p = MustParse("/job:worker_2/replica:3/task:17/device:GPU:5");
  EXPECT_EQ(p.job, "worker_2");
  EXPECT_EQ(p.replica, 3);
  EXPECT_EQ(p.task, 17);
  EXPECT_EQ(p.type, "GPU");
  EXPECT_EQ(p.id, 5);
}

TEST(DeviceNameUtilsTest, ParsesPartialLegacyAndLocalSpecs) {
  PN p = MustParse("/device:GPU:0");
  EXPECT_FALSE(p.has_job || p.has_replica || p.has_task);
  EXPECT_TRUE(p.has_type && p.has_id);
  EXPECT_EQ(p.type, "GPU");

  p = MustParse("/cpu:0");
  EXPECT_EQ(p.type, "CPU");
  EXPECT_TRUE(p.has_id);
  p = MustParse("/gpu:1");
  EXPECT_EQ(p.type, "GPU");
  EXPECT_EQ(p.id, 1);
  p = MustParse("/GPU:2");
  EXPECT_EQ(p.type, "GPU");
  EXPECT_EQ(p.id, 2);

  p = MustParse("/job:worker/task:1");
  EXPECT_TRUE(p.has_job && p.has_task);
  EXPECT_FALSE(p.has_replica || p.has_type || p.has_id);
  EXPECT_EQ(p.job, "worker");
  EXPECT_EQ(p.task, 1);

  p = MustParse("CPU:0");
  EXPECT_TRUE(p.has_type && p.has_id);
  EXPECT_FALSE(p.has_job);
  EXPECT_EQ(p.type, "CPU");
  p = MustParse("gpu:3");
  EXPECT_EQ(p.type, "GPU");
  EXPECT_EQ(p.id, 3);

  EXPECT_TRUE(MustParse("").IsEmpty());
  EXPECT_TRUE(MustParse("/").IsEmpty());

  // Wildcards leave the field absent; a type without an id; fields in any order.
  p = MustParse("/job:*/device:GPU:*");
  EXPECT_FALSE(p.has_job || p.has_id);
  EXPECT_TRUE(p.has_type);
  p = MustParse("/device:CPU");
  EXPECT_TRUE(p.has_type);
  EXPECT_FALSE(p.has_id);
  p = MustParse("/device:CPU:1/job:w");
  EXPECT_EQ(p.job, "w");
  EXPECT_EQ(p.id, 1);
}

TEST(DeviceNameUtilsTest, CanonicalNames) {
  EXPECT_EQ(Canon("/job:localhost/replica:0/task:0/device:CPU:0"),
            "/job:localhost/replica:0/task:0/device:CPU:0");
  EXPECT_EQ(Canon("/cpu:0"), "/device:CPU:0");
  EXPECT_EQ(Canon("/gpu:1"), "/device:GPU:1");
  EXPECT_EQ(Canon("/device:cpu:2"), "/device:CPU:2");
  EXPECT_EQ(Canon("CPU:0"), "/device:CPU:0");
  EXPECT_EQ(Canon("/task:1/job:worker"), "/job:worker/task:1");
  EXPECT_EQ(Canon("/device:GPU"), "/device:GPU:*");
  EXPECT_EQ(Canon("/device:*:3"), "/device:*:3");
  EXPECT_EQ(Canon(""), "");
  EXPECT_EQ(Canon("/"), "");
  EXPECT_EQ(DeviceNameUtils::FullName("localhost", 0, 0, "CPU", 3),
            "/job:localhost/replica:0/task:0/device:CPU:3");
  // Canonical names parse back to the same fields.
  for (const char* s : {"/job:a/replica:1/task:2/device:XLA_CPU:7", "/device:GPU:*", "/task:4"}) {
    EXPECT_EQ(MustParse(Canon(s)), MustParse(s)) << s;
  }
}

TEST(DeviceNameUtilsTest, BadSpecsAreInvalidArgument) {
  for (const char* bad :
       {"cpu", "/cpu", "/cpu:x", "/gpu:-1", "/job:", "/job:1abc", "/job:a-b", "/replica:x",
        "/task:", "/device:", "/device:CPU:0:1", "/device:1CPU:0", "/foo:0", "//cpu:0",
        "/job:a/", "/job:a/job:b", "/cpu:0/gpu:0", "/device:CPU:0/cpu:1", "CPU", "CPU:",
        "CPU:x", "/task:99999999999", "/job:localhost/replica:0/task:0/device:CPU:0 ",
        "job:localhost"}) {
    auto p = DeviceNameUtils::Parse(bad);
    ASSERT_FALSE(p.ok()) << "'" << bad << "' parsed";
    EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(std::string(p.status().message()).find(std::string("'") + bad + "'"),
              std::string::npos)
        << p.status();
  }
}

TEST(DeviceNameUtilsTest, PartialRequestMatchesFullNames) {
  const PN cpu0 = MustParse("/job:localhost/replica:0/task:0/device:CPU:0");
  const PN cpu1 = MustParse("/job:localhost/replica:0/task:0/device:CPU:1");
  const PN gpu0 = MustParse("/job:localhost/replica:0/task:0/device:GPU:0");
  const PN worker = MustParse("/job:worker/replica:0/task:1/device:CPU:0");
  auto matches = [&](const char* req, const PN& n) {
    return DeviceNameUtils::IsSpecification(MustParse(req), n);
  };
  EXPECT_TRUE(matches("", cpu0));
  EXPECT_TRUE(matches("/cpu:0", cpu0));
  EXPECT_FALSE(matches("/cpu:0", cpu1));
  EXPECT_FALSE(matches("/cpu:0", gpu0));
  EXPECT_TRUE(matches("/device:CPU:*", cpu1));
  EXPECT_TRUE(matches("/gpu:0", gpu0));
  EXPECT_TRUE(matches("/job:localhost", gpu0));
  EXPECT_FALSE(matches("/job:worker", cpu0));
  EXPECT_TRUE(matches("/job:worker/task:1", worker));
  EXPECT_FALSE(matches("/job:worker/task:0", worker));
  EXPECT_TRUE(matches("CPU:1", cpu1));
  // A full pattern does not match a partial name that lacks its fields.
  EXPECT_FALSE(DeviceNameUtils::IsSpecification(cpu0, MustParse("/cpu:0")));
  EXPECT_TRUE(DeviceNameUtils::IsSameAddressSpace(cpu0, gpu0));
  EXPECT_FALSE(DeviceNameUtils::IsSameAddressSpace(cpu0, worker));
  EXPECT_FALSE(DeviceNameUtils::IsSameAddressSpace(cpu0, MustParse("/cpu:0")));
}

TEST(DeviceNameUtilsTest, MergeCompatibleSpecs) {
  PN t = MustParse("/job:worker");
  ASSERT_TRUE(DeviceNameUtils::MergeDevNames(&t, MustParse("/gpu:1"), false).ok());
  EXPECT_EQ(DeviceNameUtils::ToString(t), "/job:worker/device:GPU:1");
  ASSERT_TRUE(DeviceNameUtils::MergeDevNames(&t, MustParse("/task:2/device:GPU:1"), false).ok());
  EXPECT_EQ(DeviceNameUtils::ToString(t), "/job:worker/task:2/device:GPU:1");
  PN e;
  ASSERT_TRUE(DeviceNameUtils::MergeDevNames(&e, MustParse("/device:CPU:*"), false).ok());
  ASSERT_TRUE(DeviceNameUtils::MergeDevNames(&e, MustParse("/cpu:3"), false).ok());
  EXPECT_EQ(DeviceNameUtils::ToString(e), "/device:CPU:3");
}

TEST(DeviceNameUtilsTest, MergeConflicts) {
  struct Case {
    const char* a;
    const char* b;
    const char* what;
    const char* soft;  // result with soft placement; nullptr: an error anyway
  };
  for (const Case& c : {Case{"/job:a", "/job:b", "jobs", nullptr},
                        Case{"/replica:0", "/replica:1", "replicas", nullptr},
                        Case{"/job:w/task:0", "/task:1", "tasks", nullptr},
                        Case{"/job:w/gpu:0", "/cpu:0", "types", "/job:w"},
                        Case{"/job:w/cpu:0", "/cpu:1", "ids", "/job:w/device:CPU:*"}}) {
    PN t = MustParse(c.a);
    Status s = DeviceNameUtils::MergeDevNames(&t, MustParse(c.b), false);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << c.a << " + " << c.b;
    EXPECT_NE(std::string(s.message()).find(std::string("incompatible ") + c.what),
              std::string::npos)
        << s;
    PN soft = MustParse(c.a);
    s = DeviceNameUtils::MergeDevNames(&soft, MustParse(c.b), true);
    if (c.soft == nullptr) {
      EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << c.a << " + " << c.b;
    } else {
      ASSERT_TRUE(s.ok()) << s;
      EXPECT_EQ(DeviceNameUtils::ToString(soft), c.soft);
    }
  }
}

}  // namespace
}  // namespace tensorflux
