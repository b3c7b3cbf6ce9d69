// ResourceMgr: typed create/lookup/delete, its error codes, LookupOrCreate, Cleanup, and that a
// looked-up resource outlives its deletion from the manager.
#include "tensorflux/framework/resource_mgr.h"

#include "gtest/gtest.h"

namespace tensorflux {
namespace {

struct Counter : ResourceBase {
  static constexpr const char* kTypeName = "Counter";
  int value = 0;
  std::string DebugString() const override { return "Counter"; }
};
struct Other : ResourceBase {
  static constexpr const char* kTypeName = "Other";
  std::string DebugString() const override { return "Other"; }
};

TEST(ResourceMgrTest, CreateLookupDelete) {
  ResourceMgr rm;
  auto c = std::make_shared<Counter>();
  c->value = 7;
  ASSERT_TRUE(rm.Create<Counter>("", "a", c).ok());
  Status st = rm.Create<Counter>("localhost", "a", std::make_shared<Counter>());
  EXPECT_EQ(st.code(), absl::StatusCode::kAlreadyExists) << st;  // "" is the default container
  auto found = rm.Lookup<Counter>("localhost", "a");
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_EQ((*found)->value, 7);
  EXPECT_EQ(found->get(), c.get());
  auto missing = rm.Lookup<Counter>("", "b");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(missing.status().message(), "Resource localhost/b/Counter does not exist.");
  auto wrong = rm.Lookup<Other>("", "a");
  EXPECT_EQ(wrong.status().code(), absl::StatusCode::kInvalidArgument) << wrong.status();
  EXPECT_EQ(rm.Delete<Other>("", "a").code(), absl::StatusCode::kInvalidArgument);
  ASSERT_TRUE(rm.Delete<Counter>("", "a").ok());
  EXPECT_EQ(rm.Delete<Counter>("", "a").code(), absl::StatusCode::kNotFound);
  // The holder of a looked-up resource keeps it alive after the deletion.
  EXPECT_EQ((*found)->value, 7);
  EXPECT_EQ(found->use_count(), 2);  // `found` and `c`
}

TEST(ResourceMgrTest, LookupOrCreateCallsTheCreatorOnce) {
  ResourceMgr rm;
  int calls = 0;
  auto make = [&]() -> StatusOr<std::shared_ptr<Counter>> {
    ++calls;
    auto c = std::make_shared<Counter>();
    c->value = calls;
    return c;
  };
  auto a = rm.LookupOrCreate<Counter>("ctr", "x", make);
  auto b = rm.LookupOrCreate<Counter>("ctr", "x", make);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->get(), b->get());
  EXPECT_EQ(calls, 1);
  auto failing = rm.LookupOrCreate<Counter>("ctr", "y", []() -> StatusOr<std::shared_ptr<Counter>> {
    return errors::InvalidArgument("no");
  });
  EXPECT_EQ(failing.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(rm.Lookup<Counter>("ctr", "y").status().code(), absl::StatusCode::kNotFound);
  auto other = rm.LookupOrCreate<Other>("ctr", "x", [] {
    return StatusOr<std::shared_ptr<Other>>(std::make_shared<Other>());
  });
  EXPECT_EQ(other.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(ResourceMgrTest, CleanupDropsOneContainer) {
  ResourceMgr rm;
  ASSERT_TRUE(rm.Create<Counter>("c1", "a", std::make_shared<Counter>()).ok());
  ASSERT_TRUE(rm.Create<Counter>("c2", "a", std::make_shared<Counter>()).ok());
  ASSERT_TRUE(rm.Create<Other>("c2", "b", std::make_shared<Other>()).ok());
  EXPECT_EQ(rm.DebugList(),
            (std::vector<std::string>{"c1/a (Counter)", "c2/a (Counter)", "c2/b (Other)"}));
  rm.Cleanup("c2");
  rm.Cleanup("none");
  EXPECT_EQ(rm.DebugList(), (std::vector<std::string>{"c1/a (Counter)"}));
  ResourceHandle h;
  h.container = "c1";
  h.name = "a";
  ASSERT_TRUE(rm.Delete(h).ok());
  EXPECT_TRUE(rm.DebugList().empty());
}

}  // namespace
}  // namespace tensorflux
