// Chrome trace writer (summary/timeline.h) on hand-made step stats: processes, tracks (with an
// overlapping async node moved to a second track of its thread), op events and their args,
// dataflow and Send/Recv flows, memory counters worked by hand; then on a real traced step.
#include "tensorflux/summary/timeline.h"

#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tensorflux/framework/node_def_util.h"
#include "tensorflux/runtime/session.h"

namespace tensorflux {
namespace {

using Json = nlohmann::json;

constexpr char kCpu0[] = "/job:localhost/replica:0/task:0/device:CPU:0";
constexpr char kCpu1[] = "/job:localhost/replica:0/task:0/device:CPU:1";

// A node on `d` from `start` to `end` nanos (absolute; 1'000'000'000'000 is added so that the
// origin is not zero), op from start + op_start.
NodeExecStats* Node(DeviceStepStats* d, const std::string& name, uint32_t thread, int64_t start,
                    int64_t end, const std::string& label, int64_t op_start = 0) {
  constexpr int64_t kBase = 1'000'000'000'000;
  NodeExecStats* n = d->add_node_stats();
  n->set_node_name(name);
  n->set_thread_id(thread);
  n->set_all_start_nanos(kBase + start);
  n->set_all_start_micros((kBase + start) / 1000);
  n->set_op_start_rel_nanos(op_start);
  n->set_op_end_rel_nanos(end - start);
  n->set_all_end_rel_nanos(end - start);
  n->set_timeline_label(label);
  return n;
}

void AddOutput(NodeExecStats* n, int slot, int64_t bytes, const std::string& allocator) {
  NodeOutput* o = n->add_output();
  o->set_slot(slot);
  o->mutable_tensor_description()->set_dtype(DT_FLOAT);
  o->mutable_tensor_description()->mutable_shape()->add_dim()->set_size(bytes / 4);
  AllocationDescription* a = o->mutable_tensor_description()->mutable_allocation_description();
  a->set_requested_bytes(bytes);
  a->set_allocator_name(allocator);
}

// CPU:0: x [1000, 3000] t1; y = Neg(x) [2000, 5000] t2; z = AddV2(x, ^y) [3500, 4000] t1;
//        send of y [5000, 6000] t1 (op starts at 5100); w [6500, 9000] t1; v [7000, 10000] t1
//        (overlaps w without nesting).
// CPU:1: recv [4000, 7000] t3; u = Square(recv) [7100, 8000] t3; bad label [8000, 8500] t3.
StepStats HandMade() {
  StepStats s;
  DeviceStepStats* d0 = s.add_dev_stats();
  d0->set_device(kCpu0);
  AddOutput(Node(d0, "x", 1, 1000, 3000, "x = Const()"), 0, 16, "cpu");
  AddOutput(Node(d0, "y", 2, 2000, 5000, "y = Neg(x)"), 0, 16, "cpu");
  Node(d0, "z", 1, 3500, 4000, "z = AddV2(x, ^y)");
  Node(d0, "send", 1, 5000, 6000, absl::StrCat("send = _Send(edge_1_y @", kCpu1, ")"), 100);
  Node(d0, "w", 1, 6500, 9000, "w = TxAsync(z)");
  Node(d0, "v", 1, 7000, 10000, "v = Neg(z)");
  DeviceStepStats* d1 = s.add_dev_stats();
  d1->set_device(kCpu1);
  Node(d1, "recv", 3, 4000, 7000, absl::StrCat("recv = _Recv(edge_1_y @", kCpu0, ")"));
  Node(d1, "u", 3, 7100, 8000, "u = Square(recv)");
  Node(d1, "bad", 3, 8000, 8500, "not a label");
  return s;
}

struct Trace {
  Json json;
  std::map<int, std::string> process;                  // pid -> name
  std::map<std::pair<int, int>, std::string> thread;   // (pid, tid) -> name
  std::map<std::string, Json> op;                      // node name -> X event
  std::map<int, std::vector<Json>> flow;               // id -> its s/f events
  std::vector<Json> counters, objects;
};

Trace Parse(const std::string& text) {
  Trace t;
  t.json = Json::parse(text);
  for (const Json& e : t.json.at("traceEvents")) {
    const std::string ph = e.at("ph");
    if (ph == "M" && e.at("name") == "process_name") {
      t.process[e.at("pid")] = e.at("args").at("name");
    } else if (ph == "M" && e.at("name") == "thread_name") {
      t.thread[{e.at("pid"), e.at("tid")}] = e.at("args").at("name");
    } else if (ph == "X") {
      EXPECT_TRUE(t.op.emplace(e.at("args").at("name"), e).second) << e;
    } else if (ph == "s" || ph == "f") {
      t.flow[e.at("id")].push_back(e);
    } else if (ph == "C") {
      t.counters.push_back(e);
    } else if (ph == "N" || ph == "O" || ph == "D") {
      t.objects.push_back(e);
    }
  }
  return t;
}

// The X event containing flow event `f` on its own track.
bool Inside(const Json& f, const Json& x) {
  const double ts = f.at("ts");
  return f.at("pid") == x.at("pid") && f.at("tid") == x.at("tid") &&
         ts >= x.at("ts").get<double>() && ts <= x.at("ts").get<double>() + x.at("dur").get<double>();
}

TEST(TimelineTest, ProcessesTracksAndOps) {
  ChromeTraceOptions opts;
  opts.show_dataflow = false;
  Trace t = Parse(ChromeTraceFromStepStats(HandMade(), opts));
  EXPECT_EQ(t.json.at("otherData").at("origin_nanos"), 1'000'000'001'000);
  ASSERT_EQ(t.process.size(), 2u);
  std::set<std::string> names;
  for (const auto& [pid, name] : t.process) names.insert(name);
  EXPECT_EQ(names, (std::set<std::string>{absl::StrCat(kCpu0, " Compute"),
                                          absl::StrCat(kCpu1, " Compute")}));
  ASSERT_EQ(t.op.size(), 9u);
  const Json& x = t.op.at("x");
  EXPECT_EQ(x.at("name"), "Const");
  EXPECT_EQ(x.at("cat"), "Op");
  EXPECT_DOUBLE_EQ(x.at("ts").get<double>(), 0.0);  // the origin
  EXPECT_DOUBLE_EQ(x.at("dur").get<double>(), 2.0);
  EXPECT_EQ(t.process.at(x.at("pid")), absl::StrCat(kCpu0, " Compute"));
  EXPECT_EQ(t.thread.at({x.at("pid"), x.at("tid")}), "thread 1");
  EXPECT_EQ(t.op.at("y").at("args"), (Json{{"name", "y"}, {"op", "Neg"}, {"input0", "x"}}));
  EXPECT_EQ(t.op.at("z").at("args").at("input1"), "^y");
  EXPECT_DOUBLE_EQ(t.op.at("z").at("ts").get<double>(), 2.5);
  EXPECT_EQ(t.op.at("send").at("args"),
            (Json{{"name", "send"}, {"op", "_Send"}, {"tensor_name", "edge_1_y"},
                  {"recv_device", kCpu1}}));
  EXPECT_EQ(t.op.at("recv").at("args").at("send_device"), kCpu0);
  EXPECT_EQ(t.op.at("bad").at("name"), "unknown");
  // Same thread, nested or after one another: one track. v overlaps w without nesting in it:
  // a second track of thread 1.
  EXPECT_EQ(t.op.at("z").at("tid"), x.at("tid"));
  EXPECT_EQ(t.op.at("w").at("tid"), x.at("tid"));
  EXPECT_NE(t.op.at("v").at("tid"), x.at("tid"));
  EXPECT_EQ(t.thread.at({x.at("pid"), t.op.at("v").at("tid")}), "thread 1 #2");
  EXPECT_NE(t.op.at("y").at("tid"), x.at("tid"));
  EXPECT_TRUE(t.flow.empty());
  EXPECT_TRUE(t.counters.empty());
}

TEST(TimelineTest, DataflowAndSendRecvFlows) {
  Trace t = Parse(ChromeTraceFromStepStats(HandMade()));
  std::multiset<std::string> flows;
  for (const auto& [id, evs] : t.flow) {
    ASSERT_EQ(evs.size(), 2u) << id;
    ASSERT_EQ(evs[0].at("ph"), "s");
    ASSERT_EQ(evs[1].at("ph"), "f");
    EXPECT_EQ(evs[0].at("name"), evs[1].at("name"));
    flows.insert(evs[0].at("name"));
    const std::string name = evs[0].at("name");
    if (name == "x") {  // x (thread 1) -> y (thread 2); z is on x's track: no arrow
      EXPECT_TRUE(Inside(evs[0], t.op.at("x"))) << evs[0];
      EXPECT_TRUE(Inside(evs[1], t.op.at("y"))) << evs[1];
    } else if (name == "edge_1_y") {  // at the send's op start, to the recv's end
      EXPECT_TRUE(Inside(evs[0], t.op.at("send")));
      EXPECT_DOUBLE_EQ(evs[0].at("ts").get<double>(), 4.1);
      EXPECT_TRUE(Inside(evs[1], t.op.at("recv")));
      EXPECT_NEAR(evs[1].at("ts").get<double>(), 6.0, 0.0011);
    } else if (name == "z") {  // z (thread 1 track) -> v (the second track)
      EXPECT_TRUE(Inside(evs[0], t.op.at("z")));
      EXPECT_TRUE(Inside(evs[1], t.op.at("v")));
    }
  }
  EXPECT_EQ(flows, (std::multiset<std::string>{"x", "edge_1_y", "z"}));
}

TEST(TimelineTest, MemoryCountersWorkedByHand) {
  ChromeTraceOptions opts;
  opts.show_memory = true;
  Trace t = Parse(ChromeTraceFromStepStats(HandMade(), opts));
  EXPECT_EQ(t.process.at(0), "Allocators");
  EXPECT_EQ(t.process.size(), 5u);  // + a Tensors process per device
  // x: 16 bytes from 0 us until its last consumer y ends (4 us); y: 16 bytes from 1 us until it
  // ends (4 us; nothing reads it but a control edge).
  std::vector<std::pair<double, int64_t>> series;
  for (const Json& c : t.counters) {
    EXPECT_EQ(c.at("name"), "cpu");
    series.push_back({c.at("ts").get<double>(), c.at("args").at("cpu").get<int64_t>()});
  }
  EXPECT_EQ(series, (std::vector<std::pair<double, int64_t>>{{0, 16}, {1, 32}, {4, 16}, {4, 0}}));
  std::map<std::string, std::vector<std::string>> phases;
  for (const Json& o : t.objects) phases[o.at("name")].push_back(o.at("ph"));
  EXPECT_EQ(phases["x"], (std::vector<std::string>{"N", "O", "D"}));
  EXPECT_EQ(phases["y"], (std::vector<std::string>{"N", "O", "D"}));
  EXPECT_EQ(phases.size(), 2u);
}

TEST(TimelineTest, MicrosOnlyStatsAndEmptyStats) {
  StepStats s;
  DeviceStepStats* d = s.add_dev_stats();
  d->set_device(kCpu0);
  NodeExecStats* n = d->add_node_stats();  // TF 1.x fills only the micros fields
  n->set_node_name("a");
  n->set_all_start_micros(5'000'000);
  n->set_all_end_rel_micros(7);
  n->set_timeline_label("a = Const()");
  Trace t = Parse(ChromeTraceFromStepStats(s));
  EXPECT_DOUBLE_EQ(t.op.at("a").at("dur").get<double>(), 7.0);
  EXPECT_EQ(t.json.at("otherData").at("origin_nanos"), 5'000'000'000);
  Trace empty = Parse(ChromeTraceFromStepStats(StepStats()));
  EXPECT_TRUE(empty.op.empty());
  EXPECT_TRUE(empty.process.empty());
}

// A real step: every node the step stats record appears once, inside the step's wall-clock
// interval.
TEST(TimelineTest, TracedSessionStep) {
  GraphDef g;
  auto add_node = [&](const std::string& name, const std::string& op,
                      std::vector<std::string> inputs) {
    NodeDef* n = g.add_node();
    n->set_name(name);
    n->set_op(op);
    for (auto& in : inputs) n->add_input(in);
    AddNodeAttr("T", DT_FLOAT, n);
    return n;
  };
  // A fed input, so that constant folding leaves the MatMul and Neg to run.
  NodeDef* c = add_node("c", "Placeholder", {});
  c->mutable_attr()->erase("T");
  AddNodeAttr("dtype", DT_FLOAT, c);
  add_node("m", "MatMul", {"c", "c"});
  add_node("n", "Neg", {"m"});
  auto session = NewSession(SessionOptions());
  ASSERT_TRUE(session.ok());
  ASSERT_TRUE((*session)->Create(g).ok());
  RunOptions ro;
  ro.set_trace_level(RunOptions::FULL_TRACE);
  RunMetadata md;
  std::vector<Tensor> out;
  const int64_t before = absl::GetCurrentTimeNanos();
  const Tensor feed = Tensor::FromVector<float>({1, 2, 3, 4}, TensorShape({2, 2}));
  ASSERT_TRUE((*session)->Run(ro, {{"c", feed}}, {"n"}, {}, &out, &md).ok());
  EXPECT_EQ(out[0].flat<float>()[3], -22.0f);  // -(3*2 + 4*4)
  const int64_t after = absl::GetCurrentTimeNanos();
  Trace t = Parse(ChromeTraceFromStepStats(md.step_stats()));
  const double origin = t.json.at("otherData").at("origin_nanos").get<double>();
  std::set<std::string> names;
  for (const auto& ns : md.step_stats().dev_stats(0).node_stats()) names.insert(ns.node_name());
  ASSERT_EQ(names.size(), t.op.size());
  for (const auto& [name, e] : t.op) {
    EXPECT_EQ(names.count(name), 1u) << name;
    const double start = origin + e.at("ts").get<double>() * 1000;
    const double dur = e.at("dur").get<double>();
    EXPECT_GE(dur, 0) << name;
    EXPECT_GE(start, before - 1) << name;
    EXPECT_LE(start + dur * 1000, after + 1) << name;
  }
  EXPECT_EQ(t.op.at("m").at("args").at("op"), "MatMul");
  EXPECT_EQ(t.op.at("n").at("args").at("input0"), "m");
}

}  // namespace
}  // namespace tensorflux
