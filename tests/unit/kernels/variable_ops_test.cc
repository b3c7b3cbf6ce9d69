// Resource variables (VarHandleOp, ReadVariableOp, Assign*VariableOp, VarIsInitializedOp,
// DestroyResourceOp) and reference variables (VariableV2, Assign, AssignAdd/Sub, Identity of a
// ref, IsVariableInitialized) through LocalSession: values across Run calls, snapshot reads,
// concurrent updates, and the errors for uninitialized reads and mismatched assignments.
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "tensorflux/runtime/local_session.h"
#include "variable_test_util.h"

namespace tensorflux {
namespace {

using var_test::AddConstNode;
using var_test::AddOp;
using var_test::HasText;
using var_test::RunStep;
using var_test::Vec;

// v: float [2] resource variable; init assigns [1, 2]; read; add/sub add [10, 20].
GraphDef ResourceGraph() {
  GraphDef g;
  NodeDef* h = AddOp(&g, "v", "VarHandleOp");
  AddNodeAttr("dtype", DT_FLOAT, h);
  AddNodeAttr("shape", PartialTensorShape({2}), h);
  AddConstNode(&g, "init_value", Vec({1, 2}));
  AddConstNode(&g, "delta", Vec({10, 20}));
  AddNodeAttr("dtype", DT_FLOAT, AddOp(&g, "init", "AssignVariableOp", {"v", "init_value"}));
  AddNodeAttr("dtype", DT_FLOAT, AddOp(&g, "read", "ReadVariableOp", {"v"}));
  AddNodeAttr("dtype", DT_FLOAT, AddOp(&g, "add", "AssignAddVariableOp", {"v", "delta"}));
  AddNodeAttr("dtype", DT_FLOAT, AddOp(&g, "sub", "AssignSubVariableOp", {"v", "delta"}));
  AddOp(&g, "is_init", "VarIsInitializedOp", {"v"});
  AddOp(&g, "destroy", "DestroyResourceOp", {"v"});
  return g;
}

std::unique_ptr<LocalSession> NewSession(const GraphDef& g) {
  auto s = std::make_unique<LocalSession>(SessionOptions());
  Status st = s->Create(g);
  EXPECT_TRUE(st.ok()) << st;
  return s;
}

std::vector<float> Floats(const Tensor& t) {
  return std::vector<float>(t.data<float>(), t.data<float>() + t.NumElements());
}

TEST(ResourceVariableTest, ValueLivesAcrossRunsAndUpdates) {
  auto s = NewSession(ResourceGraph());
  std::vector<Tensor> out;
  ASSERT_TRUE(RunStep(s.get(), {"is_init:0"}, {}, &out).ok());
  EXPECT_FALSE(out[0].scalar<bool>());
  ASSERT_TRUE(RunStep(s.get(), {}, {"init"}, &out).ok());
  ASSERT_TRUE(RunStep(s.get(), {"read:0", "is_init:0"}, {}, &out).ok());
  EXPECT_EQ(Floats(out[0]), (std::vector<float>{1, 2}));
  EXPECT_TRUE(out[1].scalar<bool>());
  ASSERT_TRUE(RunStep(s.get(), {}, {"add"}, &out).ok());
  ASSERT_TRUE(RunStep(s.get(), {}, {"add"}, &out).ok());
  ASSERT_TRUE(RunStep(s.get(), {}, {"sub"}, &out).ok());
  ASSERT_TRUE(RunStep(s.get(), {"read:0"}, {}, &out).ok());
  EXPECT_EQ(Floats(out[0]), (std::vector<float>{11, 22}));
  // A new session has its own variables.
  auto s2 = NewSession(ResourceGraph());
  Status st = RunStep(s2.get(), {"read:0"}, {}, &out);
  EXPECT_EQ(st.code(), absl::StatusCode::kFailedPrecondition) << st;
}

// As TF: ReadVariableOp says FAILED_PRECONDITION, AssignAdd/SubVariableOp NOT_FOUND.
TEST(ResourceVariableTest, UninitializedReadIsFailedPreconditionAndUpdateNotFound) {
  auto s = NewSession(ResourceGraph());
  std::vector<Tensor> out;
  Status st = RunStep(s.get(), {"read:0"}, {}, &out);
  EXPECT_EQ(st.code(), absl::StatusCode::kFailedPrecondition) << st;
  EXPECT_TRUE(HasText(st, "Error while reading resource variable v from Container: localhost"))
      << st;
  EXPECT_TRUE(HasText(st, "uninitialized")) << st;
  EXPECT_TRUE(HasText(st, "read")) << st;  // the node
  st = RunStep(s.get(), {}, {"add"}, &out);
  EXPECT_EQ(st.code(), absl::StatusCode::kNotFound) << st;
  EXPECT_TRUE(HasText(st, "Could not find variable v")) << st;
  // After DestroyResourceOp the handle names nothing again.
  ASSERT_TRUE(RunStep(s.get(), {}, {"init"}, &out).ok());
  ASSERT_TRUE(RunStep(s.get(), {}, {"destroy"}, &out).ok());
  GraphDef g;
  NodeDef* h = AddOp(&g, "w", "VarHandleOp");
  AddNodeAttr("dtype", DT_FLOAT, h);
  AddNodeAttr("shape", PartialTensorShape({2}), h);
  AddNodeAttr("dtype", DT_FLOAT, AddOp(&g, "wread", "ReadVariableOp", {"w"}));
  AddConstNode(&g, "wval", Vec({5, 6}));
  AddNodeAttr("dtype", DT_FLOAT, AddOp(&g, "winit", "AssignVariableOp", {"w", "wval"}));
  NodeDef* destroy = AddOp(&g, "wdestroy", "DestroyResourceOp", {"w"});
  AddNodeAttr("ignore_lookup_error", false, destroy);
  NodeDef* read_after = AddOp(&g, "wread2", "ReadVariableOp", {"w", "^wdestroy"});
  AddNodeAttr("dtype", DT_FLOAT, read_after);
  ASSERT_TRUE(s->Extend(g).ok());
  ASSERT_TRUE(RunStep(s.get(), {}, {"winit"}, &out).ok());
  st = RunStep(s.get(), {"wread2:0"}, {}, &out);
  EXPECT_EQ(st.code(), absl::StatusCode::kFailedPrecondition) << st;
  EXPECT_TRUE(HasText(st, "Error while reading resource variable w")) << st;
  // Destroying it again: NOT_FOUND unless ignore_lookup_error.
  st = RunStep(s.get(), {}, {"wdestroy"}, &out);
  EXPECT_EQ(st.code(), absl::StatusCode::kNotFound) << st;
  EXPECT_TRUE(RunStep(s.get(), {}, {"destroy"}, &out).ok());
}

TEST(ResourceVariableTest, AssignChecksDtypeAndShape) {
  GraphDef g = ResourceGraph();
  AddConstNode(&g, "ints", Tensor::FromVector<int32_t>({1, 2}, TensorShape({2})));
  AddConstNode(&g, "three", Vec({1, 2, 3}));
  AddNodeAttr("dtype", DT_INT32, AddOp(&g, "assign_int", "AssignVariableOp", {"v", "ints"}));
  NodeDef* a3 = AddOp(&g, "assign3", "AssignVariableOp", {"v", "three"});
  AddNodeAttr("dtype", DT_FLOAT, a3);
  AddNodeAttr("validate_shape", true, a3);
  NodeDef* a3free = AddOp(&g, "assign3_free", "AssignVariableOp", {"v", "three"});
  AddNodeAttr("dtype", DT_FLOAT, a3free);
  AddNodeAttr("dtype", DT_FLOAT, AddOp(&g, "add3", "AssignAddVariableOp", {"v", "three"}));
  NodeDef* read_int = AddOp(&g, "read_int", "ReadVariableOp", {"v"});
  AddNodeAttr("dtype", DT_INT32, read_int);
  auto s = NewSession(g);
  std::vector<Tensor> out;
  ASSERT_TRUE(RunStep(s.get(), {}, {"init"}, &out).ok());
  Status st = RunStep(s.get(), {}, {"assign_int"}, &out);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
  EXPECT_TRUE(HasText(st, "wrong dtype")) << st;
  st = RunStep(s.get(), {"read_int:0"}, {}, &out);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
  st = RunStep(s.get(), {}, {"assign3"}, &out);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
  EXPECT_TRUE(HasText(st, "wrong shape")) << st;
  EXPECT_TRUE(HasText(st, "assign3")) << st;
  st = RunStep(s.get(), {}, {"add3"}, &out);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
  EXPECT_TRUE(HasText(st, "shapes must be equal")) << st;
  // validate_shape=false (AssignVariableOp's default) replaces the shape.
  ASSERT_TRUE(RunStep(s.get(), {}, {"assign3_free"}, &out).ok());
  ASSERT_TRUE(RunStep(s.get(), {"read:0"}, {}, &out).ok());
  EXPECT_EQ(Floats(out[0]), (std::vector<float>{1, 2, 3}));
}

// A read that is still held is a snapshot: an update ordered after it does not change it.
TEST(ResourceVariableTest, ReadsAreSnapshots) {
  GraphDef g = ResourceGraph();
  AddNodeAttr("dtype", DT_FLOAT,
              AddOp(&g, "add_after", "AssignAddVariableOp", {"v", "delta", "^read"}));
  AddNodeAttr("dtype", DT_FLOAT, AddOp(&g, "read_after", "ReadVariableOp", {"v", "^add_after"}));
  auto s = NewSession(g);
  std::vector<Tensor> out;
  ASSERT_TRUE(RunStep(s.get(), {}, {"init"}, &out).ok());
  ASSERT_TRUE(RunStep(s.get(), {"read:0", "read_after:0"}, {}, &out).ok());
  EXPECT_EQ(Floats(out[0]), (std::vector<float>{1, 2}));
  EXPECT_EQ(Floats(out[1]), (std::vector<float>{11, 22}));
  EXPECT_FALSE(out[0].SharesBufferWith(out[1]));
  // Holding a fetched value across Run calls: later updates leave it alone.
  std::vector<Tensor> held;
  ASSERT_TRUE(RunStep(s.get(), {"read:0"}, {}, &held).ok());
  ASSERT_TRUE(RunStep(s.get(), {}, {"add"}, &out).ok());
  EXPECT_EQ(Floats(held[0]), (std::vector<float>{11, 22}));
  ASSERT_TRUE(RunStep(s.get(), {"read:0"}, {}, &out).ok());
  EXPECT_EQ(Floats(out[0]), (std::vector<float>{21, 42}));
}

// N threads x M steps of AssignAdd(1) on one variable: exactly N*M.
TEST(ResourceVariableTest, ConcurrentAssignAddIsExact) {
  GraphDef g;
  NodeDef* h = AddOp(&g, "c", "VarHandleOp");
  AddNodeAttr("dtype", DT_INT64, h);
  AddNodeAttr("shape", PartialTensorShape({4}), h);
  AddConstNode(&g, "zeros", Tensor::FromVector<int64_t>({0, 0, 0, 0}, TensorShape({4})));
  AddConstNode(&g, "ones", Tensor::FromVector<int64_t>({1, 1, 1, 1}, TensorShape({4})));
  AddNodeAttr("dtype", DT_INT64, AddOp(&g, "init", "AssignVariableOp", {"c", "zeros"}));
  AddNodeAttr("dtype", DT_INT64, AddOp(&g, "inc", "AssignAddVariableOp", {"c", "ones"}));
  AddNodeAttr("dtype", DT_INT64, AddOp(&g, "read", "ReadVariableOp", {"c"}));
  auto s = NewSession(g);
  std::vector<Tensor> out;
  ASSERT_TRUE(RunStep(s.get(), {}, {"init"}, &out).ok());
  constexpr int kThreads = 8, kSteps = 200;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      std::vector<Tensor> o;
      for (int i = 0; i < kSteps; ++i) {
        // Half the steps also read, so updates often find the buffer shared (copy-on-write).
        Status st =
            i % 2 ? RunStep(s.get(), {}, {"inc"}, &o) : RunStep(s.get(), {"read:0"}, {"inc"}, &o);
        if (!st.ok()) ++failures;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  ASSERT_TRUE(RunStep(s.get(), {"read:0"}, {}, &out).ok());
  for (int i = 0; i < 4; ++i) EXPECT_EQ(out[0].data<int64_t>()[i], kThreads * kSteps);
}

// ---------------------------------------------------------------- reference variables

// x: VariableV2 float [2]; assign = Assign(x, [1, 2]); read = Identity(x).
GraphDef RefGraph() {
  GraphDef g;
  NodeDef* x = AddOp(&g, "x", "VariableV2");
  AddNodeAttr("dtype", DT_FLOAT, x);
  AddNodeAttr("shape", PartialTensorShape({2}), x);
  AddConstNode(&g, "x_init", Vec({1, 2}));
  AddConstNode(&g, "delta", Vec({10, 20}));
  AddConstNode(&g, "three", Vec({1, 2, 3}));
  AddNodeAttr("T", DT_FLOAT, AddOp(&g, "assign", "Assign", {"x", "x_init"}));
  AddNodeAttr("T", DT_FLOAT, AddOp(&g, "read", "Identity", {"x"}));
  AddNodeAttr("T", DT_FLOAT, AddOp(&g, "add", "AssignAdd", {"x", "delta"}));
  AddNodeAttr("T", DT_FLOAT, AddOp(&g, "sub", "AssignSub", {"x", "delta"}));
  AddNodeAttr("T", DT_FLOAT, AddOp(&g, "assign3", "Assign", {"x", "three"}));
  AddNodeAttr("dtype", DT_FLOAT, AddOp(&g, "is_init", "IsVariableInitialized", {"x"}));
  return g;
}

TEST(RefVariableTest, AssignIdentityAndUpdates) {
  auto s = NewSession(RefGraph());
  std::vector<Tensor> out;
  ASSERT_TRUE(RunStep(s.get(), {"is_init:0"}, {}, &out).ok());
  EXPECT_FALSE(out[0].scalar<bool>());
  Status st = RunStep(s.get(), {"read:0"}, {}, &out);
  EXPECT_EQ(st.code(), absl::StatusCode::kFailedPrecondition) << st;
  EXPECT_TRUE(HasText(st, "Attempting to use uninitialized value x")) << st;
  // Fetching Assign's ref output gives the assigned value.
  ASSERT_TRUE(RunStep(s.get(), {"assign:0"}, {}, &out).ok());
  EXPECT_EQ(Floats(out[0]), (std::vector<float>{1, 2}));
  ASSERT_TRUE(RunStep(s.get(), {"add:0"}, {}, &out).ok());
  EXPECT_EQ(Floats(out[0]), (std::vector<float>{11, 22}));
  ASSERT_TRUE(RunStep(s.get(), {}, {"add"}, &out).ok());
  ASSERT_TRUE(RunStep(s.get(), {}, {"sub"}, &out).ok());
  ASSERT_TRUE(RunStep(s.get(), {"read:0", "x:0", "is_init:0"}, {}, &out).ok());
  EXPECT_EQ(Floats(out[0]), (std::vector<float>{11, 22}));
  EXPECT_EQ(Floats(out[1]), (std::vector<float>{11, 22}));  // fetching the ref itself
  EXPECT_TRUE(out[2].scalar<bool>());
  // validate_shape (Assign's default): the declared shape [2] rejects [3].
  st = RunStep(s.get(), {}, {"assign3"}, &out);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
  EXPECT_TRUE(HasText(st, "Assign requires shapes of both tensors to match")) << st;
}

TEST(RefVariableTest, ValueIsReadWhenTheConsumerStarts) {
  // read_late = Identity(x) after ^add: it sees the update although x ran before add.
  GraphDef g = RefGraph();
  AddNodeAttr("T", DT_FLOAT, AddOp(&g, "read_late", "Identity", {"x", "^add"}));
  auto s = NewSession(g);
  std::vector<Tensor> out;
  ASSERT_TRUE(RunStep(s.get(), {}, {"assign"}, &out).ok());
  ASSERT_TRUE(RunStep(s.get(), {"read_late:0"}, {}, &out).ok());
  EXPECT_EQ(Floats(out[0]), (std::vector<float>{11, 22}));
}

TEST(RefVariableTest, RefInputCannotBeFed) {
  auto s = NewSession(RefGraph());
  std::vector<Tensor> out;
  Status st = s->Run({{"x:0", Vec({5, 6})}}, {"add:0"}, {}, &out);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
  // Feeding the variable's value to a non-ref consumer is allowed (TF does the same).
  ASSERT_TRUE(s->Run({{"x:0", Vec({5, 6})}}, {"read:0"}, {}, &out).ok());
  EXPECT_EQ(Floats(out[0]), (std::vector<float>{5, 6}));
}

}  // namespace
}  // namespace tensorflux
