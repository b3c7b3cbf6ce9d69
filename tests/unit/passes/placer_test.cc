// The Placer over a fake device set (CPU:0, CPU:1, GPU:0) with test ops whose kernels exist on
// CPU, GPU or both: explicit and partial requests, GPU preference, int32 shape arithmetic on
// CPU, colocation of resource / ref variables and `_class` groups (merged requests, conflicts),
// soft placement and its notes, hard placement errors, pinned nodes, bad specs, no kernel.
#include "tensorflux/passes/placer.h"

#include <map>

#include "gtest/gtest.h"
#include "tensorflux/framework/node_def_util.h"
#include "tensorflux/framework/op_kernel.h"
#include "tensorflux/graph/graph_def_io.h"

namespace tensorflux {
namespace {

// Kernels are never run here: placement only asks the registry which device types have one.
class NeverRun : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    ctx->SetStatus(errors::Internal("placer test kernel ran"));
  }
};

REGISTER_OP("TxPlTestSrc").Output("y: float");
REGISTER_OP("TxPlTestAny").Input("x: float").Output("y: float");
REGISTER_OP("TxPlTestCpuOnly").Input("x: float").Output("y: float");
REGISTER_OP("TxPlTestGpuOnly").Input("x: float").Output("y: float");
REGISTER_OP("TxPlTestIntSrc").Output("y: int32");
REGISTER_OP("TxPlTestIntMath").Input("a: int32").Input("b: int32").Output("y: int32");
REGISTER_OP("TxPlTestVar").Output("h: resource").SetIsStateful();
REGISTER_OP("TxPlTestReadCpu").Input("h: resource").Output("y: float");
REGISTER_OP("TxPlTestReadGpu").Input("h: resource").Output("y: float");
REGISTER_OP("TxPlTestRefVar").Output("ref: Ref(float)").SetIsStateful();
REGISTER_OP("TxPlTestAssign").Input("ref: Ref(float)").Input("v: float").Output("y: Ref(float)");
REGISTER_OP("TxPlTestNoKernel").Input("x: float").Output("y: float");

#define TX_PL_KERNEL(op, dev) \
  REGISTER_KERNEL_BUILDER(Name(op).Device(dev), NeverRun)
TX_PL_KERNEL("TxPlTestSrc", DEVICE_CPU);
TX_PL_KERNEL("TxPlTestSrc", DEVICE_GPU);
TX_PL_KERNEL("TxPlTestAny", DEVICE_CPU);
TX_PL_KERNEL("TxPlTestAny", DEVICE_GPU);
TX_PL_KERNEL("TxPlTestCpuOnly", DEVICE_CPU);
TX_PL_KERNEL("TxPlTestGpuOnly", DEVICE_GPU);
TX_PL_KERNEL("TxPlTestIntSrc", DEVICE_CPU);
TX_PL_KERNEL("TxPlTestIntSrc", DEVICE_GPU);
TX_PL_KERNEL("TxPlTestIntMath", DEVICE_CPU);
TX_PL_KERNEL("TxPlTestIntMath", DEVICE_GPU);
TX_PL_KERNEL("TxPlTestVar", DEVICE_CPU);
TX_PL_KERNEL("TxPlTestVar", DEVICE_GPU);
TX_PL_KERNEL("TxPlTestReadCpu", DEVICE_CPU);
TX_PL_KERNEL("TxPlTestReadGpu", DEVICE_GPU);
TX_PL_KERNEL("TxPlTestRefVar", DEVICE_CPU);
TX_PL_KERNEL("TxPlTestRefVar", DEVICE_GPU);
TX_PL_KERNEL("TxPlTestAssign", DEVICE_CPU);
TX_PL_KERNEL("TxPlTestAssign", DEVICE_GPU);
#undef TX_PL_KERNEL

constexpr char kCpu0[] = "/job:localhost/replica:0/task:0/device:CPU:0";
constexpr char kCpu1[] = "/job:localhost/replica:0/task:0/device:CPU:1";
constexpr char kGpu0[] = "/job:localhost/replica:0/task:0/device:GPU:0";

class FakeDevice : public Device {
 public:
  explicit FakeDevice(const std::string& name) : Device(name, 0, "fake") {}
  Allocator* GetAllocator() override { return nullptr; }
};

class PlacerTest : public ::testing::Test {
 protected:
  PlacerTest() {
    for (const char* n : {kCpu0, kCpu1, kGpu0}) owned_.push_back(std::make_unique<FakeDevice>(n));
    for (auto& d : owned_) with_gpu_.push_back(d.get());
    cpus_only_ = {with_gpu_[0], with_gpu_[1]};
  }

  // Adds a node; `device` is its request.
  NodeDef* Add(const std::string& name, const std::string& op,
               std::initializer_list<std::string> inputs = {}, const std::string& device = "") {
    NodeDef* n = gdef_.add_node();
    n->set_name(name);
    n->set_op(op);
    for (const auto& in : inputs) n->add_input(in);
    n->set_device(device);
    return n;
  }

  // Places the graph; the result maps node name -> device, or the error.
  Status Place(const std::vector<Device*>& devices, bool soft = true) {
    auto g = GraphFromGraphDef(gdef_);
    if (!g.ok()) return g.status();
    graph_ = *std::move(g);
    for (const auto& [name, dev] : preassigned_) graph_->FindNode(name)->set_assigned_device_name(dev);
    notes_.clear();
    PlacerOptions opts;
    opts.allow_soft_placement = soft;
    return PlaceGraph(graph_.get(), devices, opts, &notes_);
  }

  std::string DeviceOf(const std::string& node) const {
    return graph_->FindNode(node)->assigned_device_name();
  }

  void ExpectError(const std::vector<Device*>& devices, bool soft, absl::StatusCode code,
                   std::initializer_list<const char*> parts) {
    Status s = Place(devices, soft);
    ASSERT_EQ(s.code(), code) << s;
    for (const char* p : parts) {
      EXPECT_NE(std::string(s.message()).find(p), std::string::npos) << "'" << p << "' in " << s;
    }
  }

  std::vector<std::unique_ptr<Device>> owned_;
  std::vector<Device*> with_gpu_;
  std::vector<Device*> cpus_only_;
  GraphDef gdef_;
  std::map<std::string, std::string> preassigned_;
  std::unique_ptr<Graph> graph_;
  std::vector<std::string> notes_;
};

TEST_F(PlacerTest, PrefersGpuWhereAKernelExistsElseCpu) {
  Add("s", "TxPlTestSrc");
  Add("a", "TxPlTestAny", {"s"});
  Add("c", "TxPlTestCpuOnly", {"a"});
  Add("g", "TxPlTestGpuOnly", {"c"});
  ASSERT_TRUE(Place(with_gpu_).ok());
  EXPECT_EQ(DeviceOf("s"), kGpu0);
  EXPECT_EQ(DeviceOf("a"), kGpu0);
  EXPECT_EQ(DeviceOf("c"), kCpu0);  // the first CPU, not CPU:1
  EXPECT_EQ(DeviceOf("g"), kGpu0);
  EXPECT_TRUE(notes_.empty());
  // Without a GPU everything with a CPU kernel lands on CPU:0.
  gdef_.mutable_node()->RemoveLast();
  ASSERT_TRUE(Place(cpus_only_).ok());
  for (const char* n : {"s", "a", "c"}) EXPECT_EQ(DeviceOf(n), kCpu0) << n;
}

TEST_F(PlacerTest, HonoursFullAndPartialRequests) {
  Add("s", "TxPlTestSrc", {}, "/device:CPU:1");
  Add("a", "TxPlTestAny", {"s"}, "/cpu:0");
  Add("b", "TxPlTestAny", {"a"}, "CPU:1");
  Add("c", "TxPlTestAny", {"b"}, kGpu0);
  Add("d", "TxPlTestAny", {"c"}, "/job:localhost/device:CPU:*");
  Add("e", "TxPlTestAny", {"d"}, "/job:localhost");
  ASSERT_TRUE(Place(with_gpu_, /*soft=*/false).ok());
  EXPECT_EQ(DeviceOf("s"), kCpu1);
  EXPECT_EQ(DeviceOf("a"), kCpu0);
  EXPECT_EQ(DeviceOf("b"), kCpu1);
  EXPECT_EQ(DeviceOf("c"), kGpu0);
  EXPECT_EQ(DeviceOf("d"), kCpu0);  // any CPU: the first
  EXPECT_EQ(DeviceOf("e"), kGpu0);  // any device of the job: GPU preferred
}

TEST_F(PlacerTest, Int32ShapeArithmeticStaysOnCpu) {
  Add("i", "TxPlTestIntSrc");
  Add("j", "TxPlTestIntSrc");
  Add("m", "TxPlTestIntMath", {"i", "j"});
  Add("k", "TxPlTestIntSrc", {}, "/device:GPU:0");  // an explicit request wins
  ASSERT_TRUE(Place(with_gpu_).ok());
  EXPECT_EQ(DeviceOf("i"), kCpu0);
  EXPECT_EQ(DeviceOf("m"), kCpu0);
  EXPECT_EQ(DeviceOf("k"), kGpu0);
}

TEST_F(PlacerTest, ResourceVariableColocatedWithItsReaders) {
  // The variable has kernels on both types but one reader is CPU-only: all go to the CPU.
  Add("v", "TxPlTestVar");
  Add("r", "TxPlTestReadCpu", {"v"});
  Add("x", "TxPlTestAny", {"r"});
  ASSERT_TRUE(Place(with_gpu_).ok());
  EXPECT_EQ(DeviceOf("v"), kCpu0);
  EXPECT_EQ(DeviceOf("r"), kCpu0);
  EXPECT_EQ(DeviceOf("x"), kGpu0);  // reads a value, not the resource: placed on its own

  // A request on a reader moves the whole group.
  gdef_.Clear();
  Add("v", "TxPlTestVar");
  Add("r", "TxPlTestReadCpu", {"v"}, "/cpu:1");
  ASSERT_TRUE(Place(with_gpu_, false).ok());
  EXPECT_EQ(DeviceOf("v"), kCpu1);
  EXPECT_EQ(DeviceOf("r"), kCpu1);
}

TEST_F(PlacerTest, RefVariableColocatedWithItsUpdates) {
  Add("v", "TxPlTestRefVar", {}, "/device:CPU:1");
  Add("s", "TxPlTestSrc");
  Add("as", "TxPlTestAssign", {"v", "s"});
  Add("as2", "TxPlTestAssign", {"as", "s"});  // through the ref output of the first Assign
  Add("read", "TxPlTestAny", {"v"});          // a non-ref input: not colocated
  ASSERT_TRUE(Place(with_gpu_, false).ok());
  EXPECT_EQ(DeviceOf("v"), kCpu1);
  EXPECT_EQ(DeviceOf("as"), kCpu1);
  EXPECT_EQ(DeviceOf("as2"), kCpu1);
  EXPECT_EQ(DeviceOf("s"), kCpu1);     // a generator: where its consumers (the Assigns) are
  EXPECT_EQ(DeviceOf("read"), kGpu0);  // a non-ref input: on its own
}

TEST_F(PlacerTest, ClassAttrColocatesAndMergesRequests) {
  Add("s", "TxPlTestSrc", {}, "/job:localhost");
  Add("a", "TxPlTestAny", {"s"}, "/device:CPU:*");
  AddNodeAttr("_class", std::vector<std::string>{"loc:@s"}, Add("b", "TxPlTestAny", {"s"}, "/cpu:1"));
  // c and d share a class naming a node that is not in the graph.
  AddNodeAttr("_class", std::vector<std::string>{"loc:@gone"}, Add("c", "TxPlTestAny", {"s"}));
  AddNodeAttr("_class", std::vector<std::string>{"loc:@gone"},
              Add("d", "TxPlTestCpuOnly", {"s"}));
  ASSERT_TRUE(Place(with_gpu_, false).ok());
  // s (/job:localhost) + b (/cpu:1) merge to /job:localhost/device:CPU:1.
  EXPECT_EQ(DeviceOf("s"), kCpu1);
  EXPECT_EQ(DeviceOf("b"), kCpu1);
  EXPECT_EQ(DeviceOf("a"), kCpu0);  // not in the class
  EXPECT_EQ(DeviceOf("c"), kCpu0);  // with the CPU-only d
  EXPECT_EQ(DeviceOf("d"), kCpu0);
}

TEST_F(PlacerTest, ConflictingColocatedRequests) {
  // A `_class` group whose members ask for different CPUs.
  Add("s", "TxPlTestSrc", {}, "/cpu:0");
  AddNodeAttr("_class", std::vector<std::string>{"loc:@s"}, Add("a", "TxPlTestAny", {"s"}, "/cpu:1"));
  ExpectError(with_gpu_, false, absl::StatusCode::kInvalidArgument,
              {"Cannot colocate nodes", "{{node s}}", "{{node a}}", "/cpu:0", "/cpu:1",
               "incompatible ids"});
  // Soft placement drops the conflicting id: both on one CPU.
  ASSERT_TRUE(Place(with_gpu_, true).ok());
  EXPECT_EQ(DeviceOf("s"), DeviceOf("a"));
  // A job conflict is an error even with soft placement.
  gdef_.Clear();
  Add("s", "TxPlTestSrc", {}, "/job:a");
  AddNodeAttr("_class", std::vector<std::string>{"loc:@s"}, Add("a", "TxPlTestAny", {"s"}, "/job:b"));
  ExpectError(with_gpu_, true, absl::StatusCode::kInvalidArgument,
              {"{{node s}}", "{{node a}}", "incompatible jobs"});
}

TEST_F(PlacerTest, AVariablesRequestWinsOverItsReadersAndUpdates) {
  // TF: a node taking a resource or ref input from a node with a request keeps that request
  // when its own disagrees, soft placement or not; a compatible (partial) request still merges.
  for (bool soft : {true, false}) {
    gdef_.Clear();
    Add("v", "TxPlTestVar", {}, "/cpu:1");
    Add("r", "TxPlTestReadCpu", {"v"}, "/cpu:0");
    Add("x", "TxPlTestAny", {"r"}, "/cpu:0");  // reads a value: its request holds
    Add("rv", "TxPlTestRefVar", {}, "/device:CPU:1");
    Add("s", "TxPlTestSrc");
    Add("as", "TxPlTestAssign", {"rv", "s"}, kGpu0);
    Add("w", "TxPlTestVar", {}, "/job:localhost");
    Add("rw", "TxPlTestReadCpu", {"w"}, "/device:CPU:1");  // compatible: the group takes it
    std::vector<std::string> ignored;
    auto g = GraphFromGraphDef(gdef_);
    ASSERT_TRUE(g.ok()) << g.status();
    graph_ = *std::move(g);
    PlacerOptions opts;
    opts.allow_soft_placement = soft;
    notes_.clear();
    Status st = PlaceGraph(graph_.get(), with_gpu_, opts, &notes_, &ignored);
    ASSERT_TRUE(st.ok()) << st;
    EXPECT_EQ(DeviceOf("v"), kCpu1);
    EXPECT_EQ(DeviceOf("r"), kCpu1);
    EXPECT_EQ(DeviceOf("x"), kCpu0);
    EXPECT_EQ(DeviceOf("rv"), kCpu1);
    EXPECT_EQ(DeviceOf("as"), kCpu1);
    EXPECT_EQ(DeviceOf("w"), kCpu1);
    EXPECT_EQ(DeviceOf("rw"), kCpu1);
    EXPECT_TRUE(notes_.empty());
    ASSERT_EQ(ignored.size(), 2u);
    EXPECT_EQ(ignored[0],
              "{{node r}} (op TxPlTestReadCpu): ignoring its device request '/cpu:0' because its "
              "input from {{node v}} (op TxPlTestVar) is a resource or reference variable, which "
              "asks for '/cpu:1'");
    EXPECT_NE(ignored[1].find("{{node as}} (op TxPlTestAssign): ignoring its device request '" +
                              std::string(kGpu0) + "'"),
              std::string::npos)
        << ignored[1];
  }
}

TEST_F(PlacerTest, NoCommonDeviceTypeInAGroup) {
  Add("v", "TxPlTestVar");
  Add("rc", "TxPlTestReadCpu", {"v"});
  Add("rg", "TxPlTestReadGpu", {"v"});
  ExpectError(with_gpu_, true, absl::StatusCode::kInvalidArgument,
              {"no device type has kernels for all of them", "{{node rc}} (op TxPlTestReadCpu): [CPU]",
               "{{node rg}} (op TxPlTestReadGpu): [GPU]"});
}

TEST_F(PlacerTest, SoftPlacementFallsBackAndSaysWhy) {
  Add("s", "TxPlTestSrc");
  Add("c", "TxPlTestCpuOnly", {"s"}, "/device:GPU:0");  // no GPU kernel
  Add("g", "TxPlTestAny", {"c"}, "/device:GPU:3");      // no such device
  Add("w", "TxPlTestAny", {"g"}, "/job:localhost/device:CPU:7");
  ASSERT_TRUE(Place(with_gpu_).ok());
  EXPECT_EQ(DeviceOf("c"), kCpu0);
  EXPECT_EQ(DeviceOf("g"), kGpu0);
  EXPECT_EQ(DeviceOf("w"), kGpu0);  // keeps the job, drops type and id: GPU preferred
  ASSERT_EQ(notes_.size(), 3u);
  EXPECT_NE(notes_[0].find("{{node c}} (op TxPlTestCpuOnly) asked for '/device:GPU:0' but no "
                           "supported kernel for GPU devices is available; placed on " +
                           std::string(kCpu0)),
            std::string::npos)
      << notes_[0];
  EXPECT_NE(notes_[1].find("'/device:GPU:3' but no devices matching that specification are "
                           "registered in this process"),
            std::string::npos)
      << notes_[1];
  // A GPU request on a machine without GPUs runs on the CPU.
  ASSERT_TRUE(Place(cpus_only_).ok());
  EXPECT_EQ(DeviceOf("g"), kCpu0);
}

TEST_F(PlacerTest, HardPlacementErrorsNameNodeRequestAndKernelDevices) {
  Add("s", "TxPlTestSrc");
  Add("c", "TxPlTestCpuOnly", {"s"}, "/device:GPU:0");
  ExpectError(with_gpu_, false, absl::StatusCode::kInvalidArgument,
              {"Cannot assign a device for operation 'c'", "'/device:GPU:0'",
               "no supported kernel for GPU devices is available",
               std::string("Devices with a kernel for it: ")
                   .append(kCpu0).append(", ").append(kCpu1).c_str()});
  gdef_.Clear();
  Add("g", "TxPlTestSrc", {}, "/gpu:1");
  ExpectError(with_gpu_, false, absl::StatusCode::kInvalidArgument,
              {"Cannot assign a device for operation 'g'", "'/device:GPU:1'",
               "no devices matching that specification are registered in this process",
               kGpu0});
}

TEST_F(PlacerTest, PreassignedNodesPinTheirGroup) {
  Add("v", "TxPlTestVar");
  Add("r", "TxPlTestReadCpu", {"v"});
  preassigned_["v"] = kCpu1;  // placed by an earlier step
  ASSERT_TRUE(Place(with_gpu_).ok());
  EXPECT_EQ(DeviceOf("v"), kCpu1);
  EXPECT_EQ(DeviceOf("r"), kCpu1);
  // A new request against the pinned group: soft placement keeps the pin and notes it, naming
  // the pinned node...
  gdef_.mutable_node(1)->set_device("/cpu:0");
  ASSERT_TRUE(Place(with_gpu_).ok());
  EXPECT_EQ(DeviceOf("r"), kCpu1);
  ASSERT_EQ(notes_.size(), 1u);
  EXPECT_EQ(notes_[0], "{{node r}} (op TxPlTestReadCpu) asked for '/cpu:0' but its colocation "
                       "group is already on " + std::string(kCpu1) +
                       ", where {{node v}} (op TxPlTestVar) is placed; placed on " + kCpu1 +
                       " (soft placement)");
  // ...hard placement refuses, naming both.
  ExpectError(with_gpu_, false, absl::StatusCode::kInvalidArgument,
              {"Cannot assign a device for operation 'r'", "already on", "{{node v}}"});
  // A request no device could satisfy says so rather than blaming the pin.
  gdef_.mutable_node(1)->set_device("/gpu:3");
  ASSERT_TRUE(Place(with_gpu_).ok());
  ASSERT_EQ(notes_.size(), 1u);
  EXPECT_NE(notes_[0].find("no devices matching that specification"), std::string::npos)
      << notes_[0];
  // A pin on a type the group has no kernel for.
  gdef_.mutable_node(1)->clear_device();
  preassigned_["v"] = kGpu0;
  ExpectError(with_gpu_, true, absl::StatusCode::kInvalidArgument,
              {"already placed", "kernel for GPU"});
  // Two members pinned apart (a node joining two variables placed by different steps).
  gdef_.Clear();
  Add("v", "TxPlTestVar");
  Add("w", "TxPlTestVar");
  Add("rv", "TxPlTestReadCpu", {"v"});
  AddNodeAttr("_class", std::vector<std::string>{"loc:@rv"},
              Add("rw", "TxPlTestReadCpu", {"w"}));
  preassigned_ = {{"v", kCpu0}, {"w", kCpu1}};
  ExpectError(with_gpu_, true, absl::StatusCode::kInvalidArgument,
              {"Cannot colocate", "{{node v}} (op TxPlTestVar), already placed on", kCpu0,
               "{{node w}} (op TxPlTestVar), already placed on", kCpu1});
}

TEST_F(PlacerTest, StatefulNodesPlacedWithTheWholeGraph) {
  // v asks for nothing and a is its only reader in a step; the whole graph also has u, which
  // asks for CPU:1: placing the whole graph puts v there, as a step with u alone would not.
  Add("v", "TxPlTestVar");
  Add("a", "TxPlTestReadCpu", {"v"});
  Add("u", "TxPlTestReadCpu", {"v"}, "/cpu:1");
  Add("w", "TxPlTestVar", {}, "/cpu:0");
  Add("k", "TxPlTestVar");  // pinned already: stays
  Add("s", "TxPlTestSrc", {}, "/cpu:1");  // not stateful: not recorded
  auto g = GraphFromGraphDef(gdef_);
  ASSERT_TRUE(g.ok()) << g.status();
  absl::flat_hash_map<std::string, std::string> placements = {{"k", kCpu1}};
  ASSERT_TRUE(PlaceStatefulNodes(**g, cpus_only_, PlacerOptions(), &placements).ok());
  EXPECT_EQ(placements, (absl::flat_hash_map<std::string, std::string>{
                            {"v", kCpu1}, {"w", kCpu0}, {"k", kCpu1}}));
  EXPECT_EQ((*g)->FindNode("v")->assigned_device_name(), "");  // the graph is not changed
  // A graph that cannot be placed leaves the placements as they were.
  Add("nk", "TxPlTestNoKernel", {"s"});
  g = GraphFromGraphDef(gdef_);
  ASSERT_TRUE(g.ok()) << g.status();
  placements = {{"k", kCpu1}};
  EXPECT_EQ(PlaceStatefulNodes(**g, cpus_only_, PlacerOptions(), &placements).code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(placements.size(), 1u);
}

TEST_F(PlacerTest, MalformedRequestAndMissingKernel) {
  Add("s", "TxPlTestSrc", {}, "/gpu:zero");
  ExpectError(with_gpu_, true, absl::StatusCode::kInvalidArgument,
              {"Malformed device specification '/gpu:zero'", "{{node s}}"});
  gdef_.Clear();
  Add("s", "TxPlTestSrc");
  Add("nk", "TxPlTestNoKernel", {"s"});
  ExpectError(with_gpu_, true, absl::StatusCode::kNotFound,
              {"{{node nk}}", "No registered 'TxPlTestNoKernel' OpKernel"});
  gdef_.Clear();
  Add("s", "TxPlTestSrc");
  Add("g", "TxPlTestGpuOnly", {"s"});
  ExpectError(cpus_only_, true, absl::StatusCode::kNotFound, {"{{node g}}", "'CPU' devices"});
}

TEST_F(PlacerTest, GeneratorsFollowTheirConsumers) {
  Add("s1", "TxPlTestSrc");  // only consumer CPU-only: CPU:0, not the GPU
  Add("c", "TxPlTestCpuOnly", {"s1"});
  Add("s2", "TxPlTestSrc");  // only consumer asked for CPU:1
  Add("d", "TxPlTestAny", {"s2"}, "/cpu:1");
  Add("s3", "TxPlTestSrc");  // consumers on two devices: the default (GPU)
  Add("e", "TxPlTestCpuOnly", {"s3"});
  Add("f", "TxPlTestGpuOnly", {"s3"});
  Add("i", "TxPlTestIntSrc");  // int32, consumer on CPU:1: a CPU either way, so CPU:1
  Add("m", "TxPlTestIntMath", {"i", "i"}, "/cpu:1");
  ASSERT_TRUE(Place(with_gpu_).ok());
  EXPECT_EQ(DeviceOf("s1"), kCpu0);
  EXPECT_EQ(DeviceOf("s2"), kCpu1);
  EXPECT_EQ(DeviceOf("s3"), kGpu0);
  EXPECT_EQ(DeviceOf("i"), kCpu1);
}

TEST_F(PlacerTest, MetadataOpsAndFetchesFollowTheirInput) {
  Add("s", "TxPlTestSrc", {}, "/cpu:1");
  AddNodeAttr("T", DT_FLOAT, Add("shape", "Shape", {"s"}));
  AddNodeAttr("T", DT_FLOAT, Add("size", "Size", {"s"}));
  AddNodeAttr("T", DT_FLOAT, Add("far", "Shape", {"s"}, "/cpu:0"));  // a request wins
  NodeDef* ret = Add("ret", "_Retval", {"s"});  // a fetch
  AddNodeAttr("T", DT_FLOAT, ret);
  AddNodeAttr("index", 0, ret);
  ASSERT_TRUE(Place(cpus_only_).ok());
  EXPECT_EQ(DeviceOf("shape"), kCpu1);
  EXPECT_EQ(DeviceOf("size"), kCpu1);
  EXPECT_EQ(DeviceOf("far"), kCpu0);
  EXPECT_EQ(DeviceOf("ret"), kCpu1);
}

TEST_F(PlacerTest, PlacementLines) {
  Add("s", "TxPlTestSrc", {}, "/cpu:1");
  Add("c", "TxPlTestCpuOnly", {"s"});
  ASSERT_TRUE(Place(with_gpu_).ok());
  EXPECT_EQ(DevicePlacementLines(*graph_),
            (std::vector<std::string>{std::string("s: (TxPlTestSrc): ") + kCpu1,
                                      std::string("c: (TxPlTestCpuOnly): ") + kCpu0}));
}

}  // namespace
}  // namespace tensorflux
