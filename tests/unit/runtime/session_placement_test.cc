// LocalSession with several CPU devices and the Placer: a resource variable and its ops placed
// together on the requested device (its ResourceMgr holds it), stateful placements kept across
// signatures and Extend, soft placement on by default and hard placement errors when it is off,
// log_device_placement from ConfigProto and RunOptions, and steps spanning two devices.
#include <algorithm>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tensorflux/runtime/local_session.h"
#include "../kernels/variable_test_util.h"

namespace tensorflux {
namespace {

using var_test::AddConstNode;
using var_test::AddOp;
using var_test::HasText;
using var_test::RunStep;
using var_test::Vec;

constexpr char kCpu0[] = "/job:localhost/replica:0/task:0/device:CPU:0";
constexpr char kCpu1[] = "/job:localhost/replica:0/task:0/device:CPU:1";

SessionOptions Options(int cpus, int soft = -1, bool log = false) {
  SessionOptions o;
  (*o.config.mutable_device_count())["CPU"] = cpus;
  if (soft >= 0) o.config.set_allow_soft_placement(soft != 0);
  o.config.set_log_device_placement(log);
  return o;
}

// v: float [2] resource variable (request `var_device`); init assigns [1, 2]; read reads it;
// twice = read + read (also requesting `var_device`).
GraphDef VarGraph(const std::string& var_device) {
  GraphDef g;
  NodeDef* h = AddOp(&g, "v", "VarHandleOp");
  AddNodeAttr("dtype", DT_FLOAT, h);
  AddNodeAttr("shape", PartialTensorShape({2}), h);
  h->set_device(var_device);
  AddConstNode(&g, "init_value", Vec({1, 2}));
  AddNodeAttr("dtype", DT_FLOAT, AddOp(&g, "init", "AssignVariableOp", {"v", "init_value"}));
  AddNodeAttr("dtype", DT_FLOAT, AddOp(&g, "read", "ReadVariableOp", {"v"}));
  NodeDef* twice = AddOp(&g, "twice", "AddV2", {"read", "read"});
  AddNodeAttr("T", DT_FLOAT, twice);
  twice->set_device(var_device);  // not colocated with the variable: it reads a value
  return g;
}

// The device a step ran on, from its step stats.
std::string StepDevice(Session* s, const std::vector<std::string>& fetches,
                       const std::vector<std::string>& targets, std::vector<Tensor>* out,
                       const RunOptions& base = RunOptions()) {
  RunOptions ro = base;
  ro.set_trace_level(RunOptions::FULL_TRACE);
  RunMetadata md;
  Status st = s->Run(ro, {}, fetches, targets, out, &md);
  EXPECT_TRUE(st.ok()) << st;
  if (!st.ok() || md.step_stats().dev_stats_size() != 1) return "<none>";
  return md.step_stats().dev_stats(0).device();
}

TEST(SessionPlacementTest, VariableAndItsOpsRunOnTheRequestedDevice) {
  LocalSession s(Options(2, /*soft=*/0));
  ASSERT_TRUE(s.Create(VarGraph("/device:CPU:1")).ok());
  std::vector<Tensor> out;
  EXPECT_EQ(StepDevice(&s, {}, {"init"}, &out), kCpu1);
  EXPECT_EQ(StepDevice(&s, {"twice:0"}, {}, &out), kCpu1);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].data<float>()[0], 2.0f);
  EXPECT_EQ(out[0].data<float>()[1], 4.0f);
  EXPECT_EQ(StepDevice(&s, {"read:0"}, {}, &out), kCpu1);  // the fetch stays with its input
  EXPECT_EQ(out[0].data<float>()[1], 2.0f);
}

TEST(SessionPlacementTest, StatefulNodesKeepTheirDevice) {
  // The variable is first placed (CPU:0) by a step without requests; a reader added later that
  // asks for CPU:1 must not move it.
  LocalSession s(Options(2));
  ASSERT_TRUE(s.Create(VarGraph("")).ok());
  std::vector<Tensor> out;
  EXPECT_EQ(StepDevice(&s, {}, {"init"}, &out), kCpu0);
  GraphDef ext;
  NodeDef* r = AddOp(&ext, "read1", "ReadVariableOp", {"v"});
  AddNodeAttr("dtype", DT_FLOAT, r);
  r->set_device("/cpu:1");
  ASSERT_TRUE(s.Extend(ext).ok());
  EXPECT_EQ(StepDevice(&s, {"read1:0"}, {}, &out), kCpu0);  // soft: stays with the variable
  EXPECT_EQ(out[0].data<float>()[1], 2.0f);

  // Without soft placement the same request is an error naming the node.
  LocalSession hard(Options(2, /*soft=*/0));
  ASSERT_TRUE(hard.Create(VarGraph("")).ok());
  ASSERT_TRUE(RunStep(&hard, {}, {"init"}, &out).ok());
  ASSERT_TRUE(hard.Extend(ext).ok());
  Status st = RunStep(&hard, {"read1:0"}, {}, &out);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
  EXPECT_TRUE(HasText(st, "'read1'")) << st;
  EXPECT_TRUE(HasText(st, "already on " + std::string(kCpu0))) << st;
}

TEST(SessionPlacementTest, SoftPlacementIsOnByDefault) {
  GraphDef g = VarGraph("/device:GPU:0");  // no GPU here
  {
    LocalSession s(Options(1));
    ASSERT_TRUE(s.Create(g).ok());
    std::vector<Tensor> out;
    testing::internal::CaptureStderr();
    const std::string dev = StepDevice(&s, {}, {"init"}, &out);
    const std::string err = testing::internal::GetCapturedStderr();
    EXPECT_EQ(dev, kCpu0);
    EXPECT_NE(err.find("{{node v}} (op VarHandleOp) asked for '/device:GPU:0' but no devices "
                       "matching that specification are registered in this process; placed on " +
                       std::string(kCpu0)),
              std::string::npos)
        << err;
  }
  {
    // Many moved nodes: five notes and a count.
    GraphDef many;
    for (int i = 0; i < 8; ++i) {
      AddConstNode(&many, "c" + std::to_string(i), Vec({1}))->set_device("/gpu:0");
    }
    LocalSession s(Options(1));
    ASSERT_TRUE(s.Create(many).ok());
    std::vector<Tensor> out;
    testing::internal::CaptureStderr();
    ASSERT_TRUE(RunStep(&s, {"c0:0", "c7:0"}, {"c1", "c2", "c3", "c4", "c5", "c6"}, &out).ok());
    const std::string err = testing::internal::GetCapturedStderr();
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 6) << err;
    EXPECT_NE(err.find("... and 3 more nodes placed by soft placement"), std::string::npos)
        << err;
  }
  LocalSession hard(Options(1, /*soft=*/0));
  ASSERT_TRUE(hard.Create(g).ok());
  std::vector<Tensor> out;
  Status st = RunStep(&hard, {}, {"init"}, &out);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
  EXPECT_TRUE(HasText(st, "Cannot assign a device for operation 'v'")) << st;
  EXPECT_TRUE(HasText(st, "'/device:GPU:0'")) << st;
  EXPECT_TRUE(HasText(st, std::string("Devices with a kernel for it: ") + kCpu0)) << st;
}

TEST(SessionPlacementTest, LogDevicePlacement) {
  GraphDef g = VarGraph("/cpu:1");
  std::vector<Tensor> out;
  {
    LocalSession s(Options(2, -1, /*log=*/true));
    ASSERT_TRUE(s.Create(g).ok());
    testing::internal::CaptureStderr();
    ASSERT_TRUE(RunStep(&s, {}, {"init"}, &out).ok());
    ASSERT_TRUE(RunStep(&s, {}, {"init"}, &out).ok());  // cached: logged once
    const std::string err = testing::internal::GetCapturedStderr();
    const std::string line = std::string("init: (AssignVariableOp): ") + kCpu1 + "\n";
    ASSERT_NE(err.find(line), std::string::npos) << err;
    EXPECT_EQ(err.find(line, err.find(line) + 1), std::string::npos) << err;
    EXPECT_NE(err.find(std::string("v: (VarHandleOp): ") + kCpu1), std::string::npos) << err;
  }
  // RunOptions.log_device_placement: on every step that asks, only those.
  LocalSession s(Options(2));
  ASSERT_TRUE(s.Create(g).ok());
  RunOptions log;
  log.set_log_device_placement(true);
  testing::internal::CaptureStderr();
  ASSERT_TRUE(RunStep(&s, {}, {"init"}, &out).ok());
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
  testing::internal::CaptureStderr();
  ASSERT_TRUE(s.Run(log, {}, {}, {"init"}, &out, nullptr).ok());
  ASSERT_TRUE(s.Run(log, {}, {}, {"init"}, &out, nullptr).ok());
  const std::string err = testing::internal::GetCapturedStderr();
  const std::string line = std::string("init: (AssignVariableOp): ") + kCpu1 + "\n";
  const size_t first = err.find(line);
  ASSERT_NE(first, std::string::npos) << err;
  EXPECT_NE(err.find(line, first + 1), std::string::npos) << err;
}

TEST(SessionPlacementTest, StepAcrossTwoDevices) {
  // The step is partitioned: a on CPU:0 is sent to b's device CPU:1 (or the reverse).
  GraphDef g;
  AddConstNode(&g, "a", Vec({1}))->set_device("/cpu:0");
  AddConstNode(&g, "b", Vec({2}))->set_device("/cpu:1");
  AddNodeAttr("T", DT_FLOAT, AddOp(&g, "sum", "AddV2", {"a", "b"}));
  LocalSession s(Options(2));
  ASSERT_TRUE(s.Create(g).ok());
  std::vector<Tensor> out;
  RunOptions ro;
  ro.set_output_partition_graphs(true);
  RunMetadata md;
  Status st = s.Run(ro, {}, {"sum:0"}, {}, &out, &md);
  ASSERT_TRUE(st.ok()) << st;
  EXPECT_EQ(out[0].data<float>()[0], 3.0f);
  ASSERT_EQ(md.partition_graphs_size(), 2);
  std::vector<std::string> devices;
  for (const GraphDef& p : md.partition_graphs()) devices.push_back(p.node(0).device());
  std::sort(devices.begin(), devices.end());
  EXPECT_EQ(devices, (std::vector<std::string>{kCpu0, kCpu1}));
  // Each half alone runs on its device.
  EXPECT_EQ(StepDevice(&s, {"b:0"}, {}, &out), kCpu1);
  EXPECT_EQ(out[0].data<float>()[0], 2.0f);
}

}  // namespace
}  // namespace tensorflux
