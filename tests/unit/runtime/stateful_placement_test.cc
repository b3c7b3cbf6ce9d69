// Where a session puts a variable does not depend on the order its run signatures are first
// run (issue 6): a step that initializes it, one that reads it under another device scope, one
// that assigns it and one with an optimizer update that also takes a slot variable, on 4 CPU
// devices, in several orders, with and without device requests, soft placement on and off.
// The session places the whole graph before the first step that needs an unplaced stateful
// node (passes/placer.h: PlaceStatefulNodes); the Placer keeps a variable's request over its
// readers' (TF's "Ignoring device specification ... reference connection").
#include <map>
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
using var_test::Vec;

std::string Cpu(int i) { return "/job:localhost/replica:0/task:0/device:CPU:" + std::to_string(i); }

SessionOptions FourCpus(bool soft) {
  SessionOptions o;
  (*o.config.mutable_device_count())["CPU"] = 4;
  o.config.set_allow_soft_placement(soft);
  return o;
}

// Device requests of the graph's parts ("" = none).
struct Requests {
  std::string var;          // w and its initializer
  std::string slot;         // m (the momentum accumulator) and its initializer
  bool slot_colocated;      // m carries `_class: loc:@w`, as tx's optimizers create slots
  std::string read;         // read = ReadVariableOp(w), twice = read + read
  std::string assign;       // bump = AssignAddVariableOp(w, 1)
  std::string train;        // train = ResourceApplyMomentum(w, m, lr, grad, momentum)
};

GraphDef TrainGraph(const Requests& r) {
  GraphDef g;
  auto var = [&](const std::string& name, const std::string& device, const Tensor& init) {
    NodeDef* h = AddOp(&g, name, "VarHandleOp");
    AddNodeAttr("dtype", DT_FLOAT, h);
    AddNodeAttr("shape", PartialTensorShape({2}), h);
    h->set_device(device);
    AddConstNode(&g, name + "_value", init)->set_device(device);
    NodeDef* a = AddOp(&g, name + "_init", "AssignVariableOp", {name, name + "_value"});
    AddNodeAttr("dtype", DT_FLOAT, a);
    a->set_device(device);
    return std::vector<NodeDef*>{h, g.mutable_node(g.node_size() - 2), a};
  };
  var("w", r.var, Vec({1, 2}));
  for (NodeDef* n : var("m", r.slot, Vec({0, 0}))) {
    if (r.slot_colocated) AddNodeAttr("_class", std::vector<std::string>{"loc:@w"}, n);
  }
  NodeDef* read = AddOp(&g, "read", "ReadVariableOp", {"w"});
  AddNodeAttr("dtype", DT_FLOAT, read);
  read->set_device(r.read);
  NodeDef* twice = AddOp(&g, "twice", "AddV2", {"read", "read"});
  AddNodeAttr("T", DT_FLOAT, twice);
  twice->set_device(r.read);
  AddConstNode(&g, "one", Vec({1, 1}))->set_device(r.assign);
  NodeDef* bump = AddOp(&g, "bump", "AssignAddVariableOp", {"w", "one"});
  AddNodeAttr("dtype", DT_FLOAT, bump);
  bump->set_device(r.assign);
  for (const char* c : {"lr", "momentum"}) {
    NodeDef* n = AddConstNode(&g, c, Tensor::Scalar<float>(0.5f));
    n->set_device(r.train);
  }
  AddConstNode(&g, "grad", Vec({2, 4}))->set_device(r.train);
  NodeDef* train =
      AddOp(&g, "train", "ResourceApplyMomentum", {"w", "m", "lr", "grad", "momentum"});
  AddNodeAttr("T", DT_FLOAT, train);
  train->set_device(r.train);
  return g;
}

// The steps, by name: each a (fetches, targets) signature.
const std::map<std::string, std::pair<std::vector<std::string>, std::vector<std::string>>>&
Steps() {
  static const auto* steps =
      new std::map<std::string, std::pair<std::vector<std::string>, std::vector<std::string>>>{
          {"init_w", {{}, {"w_init"}}},
          {"init_m", {{}, {"m_init"}}},
          {"read", {{"twice:0"}, {}}},
          {"bump", {{}, {"bump"}}},
          {"train", {{}, {"train"}}},
      };
  return *steps;
}

// Orders in which the signatures are first placed. Steps before both initializers may fail at
// run time (an uninitialized variable), never at placement.
const std::vector<std::vector<std::string>> kOrders = {
    {"init_w", "init_m", "read", "bump", "train"},
    {"init_w", "read", "bump", "init_m", "train"},
    {"train", "bump", "read", "init_w", "init_m"},
    {"read", "init_m", "train", "init_w", "bump"},
};

// Runs `order` (then every step again, now initialized) and returns the device each traced
// node ran on. Placement errors fail the test.
std::map<std::string, std::string> RunOrder(const GraphDef& g, bool soft,
                                            const std::vector<std::string>& order) {
  LocalSession s(FourCpus(soft));
  EXPECT_TRUE(s.Create(g).ok());
  std::map<std::string, std::string> device_of;
  std::vector<std::string> all = order;
  all.insert(all.end(), {"init_w", "init_m", "read", "bump", "train"});
  for (const std::string& step : all) {
    RunOptions ro;
    ro.set_trace_level(RunOptions::FULL_TRACE);
    RunMetadata md;
    std::vector<Tensor> out;
    const auto& [fetches, targets] = Steps().at(step);
    Status st = s.Run(ro, {}, fetches, targets, &out, &md);
    // A step that runs before the variables' initializers: reading is FAILED_PRECONDITION, an
    // AssignAddVariableOp NOT_FOUND (TF's codes).
    EXPECT_TRUE(st.ok() || st.code() == absl::StatusCode::kFailedPrecondition ||
                st.code() == absl::StatusCode::kNotFound)
        << step << ": " << st;
    for (const DeviceStepStats& d : md.step_stats().dev_stats()) {
      for (const NodeExecStats& n : d.node_stats()) {
        auto [it, inserted] = device_of.emplace(n.node_name(), d.device());
        EXPECT_EQ(it->second, d.device()) << n.node_name() << " moved at step " << step;
      }
    }
  }
  return device_of;
}

// Every order gives the nodes of `expected` the same device: the one named there, or (for an
// empty name) the one the first order gave.
void ExpectSamePlacementInEveryOrder(const GraphDef& g, bool soft,
                                     std::map<std::string, std::string> expected) {
  for (const auto& order : kOrders) {
    SCOPED_TRACE(::testing::PrintToString(order));
    std::map<std::string, std::string> got = RunOrder(g, soft, order);
    for (auto& [node, device] : expected) {
      EXPECT_NE(got[node], "") << node;
      if (device.empty()) device = got[node];
      EXPECT_EQ(got[node], device) << node;
    }
  }
}

TEST(StatefulPlacementTest, NoRequestsEverythingOnCpu0) {
  const GraphDef g = TrainGraph({});
  for (bool soft : {true, false}) {
    ExpectSamePlacementInEveryOrder(
        g, soft, {{"w", Cpu(0)}, {"m", Cpu(0)}, {"read", Cpu(0)}, {"bump", Cpu(0)},
                  {"train", Cpu(0)}});
  }
}

TEST(StatefulPlacementTest, VariableStaysWhereCreatedWhateverScopeUsesIt) {
  // w on CPU:1, its slot colocated with it, read under CPU:2, assigned under CPU:0, updated
  // under CPU:3: every op that takes w goes to CPU:1, soft placement or not; twice (which
  // takes a value) stays on CPU:2.
  const GraphDef g = TrainGraph({"/cpu:1", "/cpu:1", true, "/cpu:2", "/cpu:0", "/cpu:3"});
  for (bool soft : {true, false}) {
    ExpectSamePlacementInEveryOrder(
        g, soft, {{"w", Cpu(1)}, {"w_init", Cpu(1)}, {"m", Cpu(1)}, {"m_init", Cpu(1)},
                  {"read", Cpu(1)}, {"twice", Cpu(2)}, {"bump", Cpu(1)}, {"train", Cpu(1)}});
  }
  // The result is the optimizer's: w = [1, 2] - 0.5 * [2, 4], m = [2, 4].
  LocalSession s(FourCpus(true));
  ASSERT_TRUE(s.Create(g).ok());
  std::vector<Tensor> out;
  ASSERT_TRUE(s.Run({}, {}, {"w_init", "m_init"}, &out).ok());
  ASSERT_TRUE(s.Run({}, {}, {"train"}, &out).ok());
  ASSERT_TRUE(s.Run({}, {"twice:0"}, {}, &out).ok());
  EXPECT_EQ(out[0].data<float>()[0], 0.0f);
  EXPECT_EQ(out[0].data<float>()[1], 0.0f);
}

TEST(StatefulPlacementTest, SlotAskingForAnotherDevice) {
  // The slot m is not colocated and asks for CPU:3 while w asks for CPU:1: one update takes
  // both, so they must share a device. Soft placement drops the conflicting ids (as TF's
  // MergeDevNames) and puts the whole group on one device, the same in every order...
  const GraphDef g = TrainGraph({"/cpu:1", "/cpu:3", false, "", "", ""});
  ExpectSamePlacementInEveryOrder(g, true, {{"w", ""}, {"m", ""}, {"read", ""}, {"train", ""}});
  const std::map<std::string, std::string> got = RunOrder(g, true, kOrders[0]);
  EXPECT_EQ(got.at("w"), got.at("m"));
  EXPECT_EQ(got.at("w"), got.at("train"));
  // ...without it, the step that needs both fails naming them, whatever ran before.
  for (const auto& order : kOrders) {
    LocalSession s(FourCpus(false));
    ASSERT_TRUE(s.Create(g).ok());
    Status train_status;
    for (const std::string& step : order) {
      std::vector<Tensor> out;
      const auto& [fetches, targets] = Steps().at(step);
      Status st = s.Run({}, fetches, targets, &out);
      if (step == "train") {
        train_status = st;
      } else {
        EXPECT_NE(st.code(), absl::StatusCode::kInvalidArgument) << step << ": " << st;
      }
    }
    EXPECT_EQ(train_status.code(), absl::StatusCode::kInvalidArgument) << train_status;
    EXPECT_TRUE(HasText(train_status, "{{node w}}")) << train_status;
    EXPECT_TRUE(HasText(train_status, "{{node m}}")) << train_status;
  }
}

TEST(StatefulPlacementTest, PinnedVariableAgainstALaterRequest) {
  // w placed (CPU:0) before a node colocated with it by `_class` asks for CPU:2: soft placement
  // keeps w's device and says so; hard placement names the node and w.
  GraphDef ext;
  NodeDef* peek = AddOp(&ext, "peek", "ReadVariableOp", {"w"});
  AddNodeAttr("dtype", DT_FLOAT, peek);
  AddNodeAttr("_class", std::vector<std::string>{"loc:@w"}, peek);
  peek->set_device("/cpu:2");
  for (bool soft : {true, false}) {
    LocalSession s(FourCpus(soft));
    ASSERT_TRUE(s.Create(TrainGraph({})).ok());
    std::vector<Tensor> out;
    ASSERT_TRUE(s.Run({}, {}, {"w_init"}, &out).ok());
    ASSERT_TRUE(s.Extend(ext).ok());
    testing::internal::CaptureStderr();
    Status st = s.Run({}, {"peek:0"}, {}, &out);
    const std::string err = testing::internal::GetCapturedStderr();
    if (soft) {
      ASSERT_TRUE(st.ok()) << st;
      EXPECT_EQ(out[0].data<float>()[1], 2.0f);
      EXPECT_NE(err.find("{{node peek}} (op ReadVariableOp) asked for '/cpu:2' but its "
                         "colocation group is already on " + Cpu(0) +
                         ", where {{node w}} (op VarHandleOp) is placed"),
                std::string::npos)
          << err;
    } else {
      EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
      EXPECT_TRUE(HasText(st, "Cannot assign a device for operation 'peek'")) << st;
      EXPECT_TRUE(HasText(st, "{{node w}}")) << st;
    }
  }
}

}  // namespace
}  // namespace tensorflux
