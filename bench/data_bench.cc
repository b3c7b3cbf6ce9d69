// tf.data benchmarks (issue 5), all in one process:
//   BM_FashionMnistPipeline: IdxDataset(train-images) -> ShuffleDataset(60000) -> MapDataset
//     (normalize: Cast uint8 -> float32, RealDiv 255, a library FunctionDef) -> BatchDatasetV2
//     (128) -> PrefetchDataset(AUTOTUNE), pulled by Session::Run of IteratorGetNext. One
//     iteration = one epoch (MakeIterator, then IteratorGetNext to the end). Each benchmark
//     creates its session and times its first epoch alone (first_epoch_images_per_s: the IDX
//     file is gunzipped then, by ISA-L, and kept by the IdxDataset kernel), then the median of
//     the later epochs (images_per_s; goal >= 1e6), and the process CPU time per later epoch
//     (all threads; less noisy than wall time on a loaded machine). With the default options the
//     map runs once per batch (map vectorization, data/map_vectorization.h). Args: 0 = IDX ->
//     batch -> prefetch, 1 = + shuffle, 2 = the full pipeline, 3 = the full pipeline with map
//     vectorization off (OptimizeDatasetV2 disabling it: one function call per image).
//   BM_TFRecordRead/<record bytes>: io::RecordReader over a generated ~200 MiB TFRecord file (both
//     CRCs checked on every record) against read(2) of the same file into a 256 KiB buffer, the
//     `cat FILE > /dev/null` yardstick, interleaved pass by pass. Goal: ratio >= 0.5.
//   BM_ParallelMapCpuHeavy/<num_parallel_calls>: RangeDataset(8192) -> ParallelMapDatasetV2 (f: 256
//     chained Tanh over 1024 floats, below the kernels' intra-op sharding threshold so one call
//     uses one core) -> BatchDatasetV2(64), through Session::Run. Speed-up 2 vs 1 calls; goal 1.8.
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "bench_util.h"
#include "tensorflux/function.pb.h"
#include "tensorflux/io/record_io.h"

namespace tensorflux::bench {
namespace {

constexpr char kFashionImages[] = "/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz";

void SetTypesAndShapes(NodeDef* n, const std::vector<DataType>& types,
                       const std::vector<PartialTensorShape>& shapes) {
  AddNodeAttr("output_types", types, n);
  AddNodeAttr("output_shapes", shapes, n);
}

void SetFunc(NodeDef* n, const std::string& fn) {
  (*n->mutable_attr())["f"].mutable_func()->set_name(fn);
  AddNodeAttr("Targuments", std::vector<DataType>{}, n);
}

NodeDef* AddFnNode(FunctionDef* f, const std::string& name, const std::string& op,
                   const std::vector<std::string>& inputs) {
  NodeDef* n = f->add_node_def();
  n->set_name(name);
  n->set_op(op);
  for (const std::string& in : inputs) n->add_input(in);
  return n;
}

void AddFnArg(google::protobuf::RepeatedPtrField<OpDef::ArgDef>* args, const std::string& name,
              DataType t) {
  OpDef::ArgDef* a = args->Add();
  a->set_name(name);
  a->set_type(t);
}

// The iterator nodes: IteratorV2 "it", MakeIterator "init" (target), IteratorGetNext "next".
void AddIterator(GraphDef* g, const std::string& dataset, DataType type,
                 const PartialTensorShape& shape) {
  SetTypesAndShapes(AddNode(g, "it", "IteratorV2"), {type}, {shape});
  AddNodeAttr("shared_name", "", g->mutable_node(g->node_size() - 1));
  AddNodeAttr("container", "", g->mutable_node(g->node_size() - 1));
  AddNode(g, "init", "MakeIterator", {dataset, "it"});
  SetTypesAndShapes(AddNode(g, "next", "IteratorGetNext", {"it"}), {type}, {shape});
}

void AddInt64(GraphDef* g, const std::string& name, int64_t v) {
  AddConst(g, name, Tensor::Scalar(v));
}

// One pass of the iterator: MakeIterator, then IteratorGetNext until OUT_OF_RANGE. Returns the
// number of elements (dim 0 of each output summed), or -1 after SkipWithError.
int64_t RunEpoch(benchmark::State& state, Session* session) {
  std::vector<Tensor> out;
  Status s = session->Run({}, {}, {"init"}, &out);
  int64_t n = 0;
  while (s.ok()) {
    out.clear();
    s = session->Run({}, {"next"}, {}, &out);
    if (s.ok()) n += out[0].dim_size(0);
  }
  if (s.code() != absl::StatusCode::kOutOfRange) {
    state.SkipWithError(s.ToString().c_str());
    return -1;
  }
  return n;
}

std::unique_ptr<Session> MakeSession(benchmark::State& state, const GraphDef& g) {
  auto session = NewSession(SessionOptions());
  Status s = session.ok() ? (*session)->Create(g) : session.status();
  if (!s.ok()) {
    state.SkipWithError(s.ToString().c_str());
    return nullptr;
  }
  return std::move(*session);
}

// ---------------------------------------------------------------- Fashion-MNIST pipeline

// stages: 0 = IDX -> batch -> prefetch, 1 = + shuffle, 2 = + map (the full pipeline), 3 = 2 with
// map vectorization disabled by an OptimizeDatasetV2 on top.
GraphDef FashionPipelineGraph(int stages) {
  GraphDef g;
  const PartialTensorShape image({28, 28});
  const PartialTensorShape batch({-1, 28, 28});
  FunctionDef* f = g.mutable_library()->add_function();
  f->mutable_signature()->set_name("normalize");
  AddFnArg(f->mutable_signature()->mutable_input_arg(), "x", DT_UINT8);
  AddFnArg(f->mutable_signature()->mutable_output_arg(), "y", DT_FLOAT);
  NodeDef* cast = AddFnNode(f, "cast", "Cast", {"x"});
  AddNodeAttr("SrcT", DT_UINT8, cast);
  AddNodeAttr("DstT", DT_FLOAT, cast);
  NodeDef* c = AddFnNode(f, "c255", "Const", {});
  AddNodeAttr("dtype", DT_FLOAT, c);
  AddNodeAttr("value", Tensor::Scalar(255.0f), c);
  AddNodeAttr("T", DT_FLOAT, AddFnNode(f, "div", "RealDiv", {"cast:y:0", "c255:output:0"}));
  (*f->mutable_ret())["y"] = "div:z:0";

  NodeDef* file = AddNode(&g, "file", "Const");
  AddNodeAttr("dtype", DT_STRING, file);
  AddNodeAttr("value", Tensor::Scalar(std::string(kFashionImages)), file);
  SetTypesAndShapes(AddNode(&g, "idx", "IdxDataset", {"file"}), {DT_UINT8}, {image});
  std::string last = "idx";
  AddInt64(&g, "buf", 60000);
  AddInt64(&g, "seed", 1);
  AddInt64(&g, "seed2", 2);
  if (stages >= 1) {
    SetTypesAndShapes(AddNode(&g, "shuffle", "ShuffleDataset", {last, "buf", "seed", "seed2"}),
                      {DT_UINT8}, {image});
    last = "shuffle";
  }
  DataType type = DT_UINT8;
  if (stages >= 2) {
    NodeDef* map = AddNode(&g, "map", "MapDataset", {last});
    SetFunc(map, "normalize");
    SetTypesAndShapes(map, {DT_FLOAT}, {image});
    last = "map";
    type = DT_FLOAT;
  }
  AddInt64(&g, "bs", 128);
  AddConst(&g, "drop", Tensor::Scalar(false));
  SetTypesAndShapes(AddNode(&g, "batch", "BatchDatasetV2", {last, "bs", "drop"}), {type},
                    {batch});
  AddInt64(&g, "autotune", -1);
  SetTypesAndShapes(AddNode(&g, "prefetch", "PrefetchDataset", {"batch", "autotune"}), {type},
                    {batch});
  last = "prefetch";
  if (stages == 3) {
    auto strings = [&](const std::string& name, std::vector<std::string> v) {
      Tensor t(DT_STRING, TensorShape({static_cast<int64_t>(v.size())}));
      for (size_t i = 0; i < v.size(); ++i) t.flat<std::string>()[i] = v[i];
      AddConst(&g, name, t);
    };
    strings("opt_enabled", {});
    strings("opt_disabled", {"map_vectorization"});
    strings("opt_default", {"map_vectorization"});
    SetTypesAndShapes(AddNode(&g, "options", "OptimizeDatasetV2",
                              {last, "opt_enabled", "opt_disabled", "opt_default"}),
                      {type}, {batch});
    last = "options";
  }
  AddIterator(&g, last, type, batch);
  return g;
}

// User + system CPU seconds of the whole process so far.
double ProcessCpuSeconds() {
  rusage u;
  getrusage(RUSAGE_SELF, &u);
  return 1e-6 * CpuMicros(u);
}

void BM_FashionMnistPipeline(benchmark::State& state) {
  auto session = MakeSession(state, FashionPipelineGraph(static_cast<int>(state.range(0))));
  if (session == nullptr) return;
  CallTimes first;
  int64_t images = 0;
  first.Time([&] { images = RunEpoch(state, session.get()); });  // gunzip + the first pass
  if (images < 0) return;
  state.counters["first_epoch_images_per_s"] =
      Ratio(static_cast<double>(images), first.MedianSeconds());
  CallTimes epochs;
  int64_t n = 0;
  const double cpu0 = ProcessCpuSeconds();
  for (auto _ : state) {
    epochs.Time([&] { images = RunEpoch(state, session.get()); });
    if (images < 0) return;
    ++n;
  }
  state.counters["images"] = static_cast<double>(images);
  state.counters["images_per_s"] = Ratio(static_cast<double>(images), epochs.MedianSeconds());
  state.counters["cpu_ms_per_epoch"] = Ratio(1e3 * (ProcessCpuSeconds() - cpu0), n);
}
BENCHMARK(BM_FashionMnistPipeline)->DenseRange(0, 3)->Unit(benchmark::kMillisecond)->UseRealTime();

// ---------------------------------------------------------------- TFRecord read + CRC

constexpr int64_t kRecordFileBytes = int64_t{200} << 20;

// A TFRecord file of ~200 MiB of `record_bytes` records (pseudo-random bytes); "" on error.
std::string WriteRecordFile(benchmark::State& state, int64_t record_bytes) {
  const std::string path =
      "/tmp/tx_data_bench_" + std::to_string(getpid()) + "_" + std::to_string(record_bytes);
  auto w = io::RecordWriter::Open(path);
  if (!w.ok()) {
    state.SkipWithError(w.status().ToString().c_str());
    return "";
  }
  std::string rec(record_bytes, '\0');
  uint32_t s = 12345;
  for (char& c : rec) {
    s = s * 1664525u + 1013904223u;
    c = static_cast<char>(s >> 24);
  }
  for (int64_t done = 0; done < kRecordFileBytes; done += record_bytes) {
    rec[0] = static_cast<char>(done);  // records differ
    Status st = (*w)->WriteRecord(rec);
    if (!st.ok()) {
      state.SkipWithError(st.ToString().c_str());
      return "";
    }
  }
  Status st = (*w)->Close();
  if (!st.ok()) state.SkipWithError(st.ToString().c_str());
  return st.ok() ? path : "";
}

// Every record of `path` through RecordReader (CRCs checked); bytes of record data, -1 on error.
int64_t ReadAllRecords(const std::string& path) {
  auto r = io::RecordReader::Open(path);
  if (!r.ok()) return -1;
  std::string rec;
  int64_t bytes = 0;
  Status s;
  while ((s = (*r)->ReadRecord(&rec)).ok()) bytes += static_cast<int64_t>(rec.size());
  return s.code() == absl::StatusCode::kOutOfRange ? bytes : -1;
}

// The whole file through read(2) into a 256 KiB buffer (what cat does); bytes read.
int64_t ReadAllRaw(const std::string& path, std::vector<char>* buf) {
  const int fd = open(path.c_str(), O_RDONLY);
  if (fd < 0) return -1;
  int64_t total = 0;
  ssize_t n;
  while ((n = read(fd, buf->data(), buf->size())) > 0) total += n;
  close(fd);
  return total;
}

void BM_TFRecordRead(benchmark::State& state) {
  const std::string path = WriteRecordFile(state, state.range(0));
  if (path.empty()) return;
  std::vector<char> buf(256 << 10);
  int64_t file_bytes = ReadAllRaw(path, &buf);  // also warms the page cache
  int64_t data_bytes = ReadAllRecords(path);
  if (file_bytes <= 0 || data_bytes <= 0) {
    state.SkipWithError("reading the generated TFRecord file failed");
    unlink(path.c_str());
    return;
  }
  CallTimes records, raw;
  for (auto _ : state) {
    records.Time([&] { data_bytes = ReadAllRecords(path); });
    raw.Time([&] { file_bytes = ReadAllRaw(path, &buf); });
  }
  unlink(path.c_str());
  // Both rates count the file's bytes (record data + 16 bytes of framing per record).
  state.counters["tfrecord_MBps"] = Ratio(file_bytes * 1e-6, records.MedianSeconds());
  state.counters["read2_MBps"] = Ratio(file_bytes * 1e-6, raw.MedianSeconds());
  state.counters["ratio"] = Ratio(raw.MedianSeconds(), records.MedianSeconds());
}
BENCHMARK(BM_TFRecordRead)->Arg(1024)->Arg(64 << 10)->Unit(benchmark::kMillisecond)->UseRealTime();

// ---------------------------------------------------------------- parallel map, CPU-heavy fn

constexpr int kTanhChain = 256;
constexpr int64_t kMapElements = 8192;
constexpr int64_t kMapWidth = 1024;

GraphDef ParallelMapGraph(int64_t num_parallel_calls) {
  GraphDef g;
  FunctionDef* f = g.mutable_library()->add_function();
  f->mutable_signature()->set_name("heavy");
  AddFnArg(f->mutable_signature()->mutable_input_arg(), "i", DT_INT64);
  AddFnArg(f->mutable_signature()->mutable_output_arg(), "y", DT_FLOAT);
  NodeDef* cast = AddFnNode(f, "cast", "Cast", {"i"});
  AddNodeAttr("SrcT", DT_INT64, cast);
  AddNodeAttr("DstT", DT_FLOAT, cast);
  NodeDef* ramp = AddFnNode(f, "ramp", "Const", {});
  AddNodeAttr("dtype", DT_FLOAT, ramp);
  AddNodeAttr("value", RandomFloats(TensorShape({kMapWidth}), 7), ramp);
  AddNodeAttr("T", DT_FLOAT, AddFnNode(f, "t0", "AddV2", {"cast:y:0", "ramp:output:0"}));
  std::string prev = "t0:z:0";
  for (int k = 1; k <= kTanhChain; ++k) {
    const std::string name = "t" + std::to_string(k);
    AddNodeAttr("T", DT_FLOAT, AddFnNode(f, name, "Tanh", {prev}));
    prev = name + ":y:0";
  }
  (*f->mutable_ret())["y"] = prev;

  const PartialTensorShape elem({kMapWidth});
  AddInt64(&g, "start", 0);
  AddInt64(&g, "stop", kMapElements);
  AddInt64(&g, "step", 1);
  SetTypesAndShapes(AddNode(&g, "range", "RangeDataset", {"start", "stop", "step"}), {DT_INT64},
                    {PartialTensorShape({})});
  AddInt64(&g, "npc", num_parallel_calls);
  NodeDef* map = AddNode(&g, "map", "ParallelMapDatasetV2", {"range", "npc"});
  SetFunc(map, "heavy");
  SetTypesAndShapes(map, {DT_FLOAT}, {elem});
  AddInt64(&g, "bs", 64);
  AddConst(&g, "drop", Tensor::Scalar(false));
  const PartialTensorShape batch({-1, kMapWidth});
  SetTypesAndShapes(AddNode(&g, "batch", "BatchDatasetV2", {"map", "bs", "drop"}), {DT_FLOAT},
                    {batch});
  AddIterator(&g, "batch", DT_FLOAT, batch);
  return g;
}

void BM_ParallelMapCpuHeavy(benchmark::State& state) {
  auto session = MakeSession(state, ParallelMapGraph(state.range(0)));
  if (session == nullptr || RunEpoch(state, session.get()) < 0) return;
  CallTimes epochs;
  int64_t n = 0;
  for (auto _ : state) {
    epochs.Time([&] { n = RunEpoch(state, session.get()); });
    if (n < 0) return;
  }
  state.counters["elements_per_s"] = Ratio(static_cast<double>(n), epochs.MedianSeconds());
}
BENCHMARK(BM_ParallelMapCpuHeavy)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

class DataSummary : public SummaryReporter {
 public:
  void PrintSummary() const override {
    const std::string full = "BM_FashionMnistPipeline/2";
    std::printf("\nFashion-MNIST pipeline (IDX -> shuffle(60000) -> map normalize -> batch 128 -> "
                "prefetch): %.0f images/s in later epochs (goal >= 1,000,000), first epoch (with "
                "the gunzip) %.0f images/s; %.1f ms CPU per later epoch\n",
                Get(full, "images_per_s"), Get(full, "first_epoch_images_per_s"),
                Get(full, "cpu_ms_per_epoch"));
    std::printf("  later epochs: map vectorization off %.0f images/s (%.1f ms CPU); without map "
                "%.0f; without map and shuffle %.0f\n",
                Get("BM_FashionMnistPipeline/3", "images_per_s"),
                Get("BM_FashionMnistPipeline/3", "cpu_ms_per_epoch"),
                Get("BM_FashionMnistPipeline/1", "images_per_s"),
                Get("BM_FashionMnistPipeline/0", "images_per_s"));
    for (const char* arg : {"1024", "65536"}) {
      const std::string k = std::string("BM_TFRecordRead/") + arg;
      std::printf("TFRecord %6s-byte records: %8.0f MB/s, read(2) %8.0f MB/s, ratio %.3f "
                  "(goal >= 0.5)\n",
                  arg, Get(k, "tfrecord_MBps"), Get(k, "read2_MBps"), Get(k, "ratio"));
    }
    const double one = Get("BM_ParallelMapCpuHeavy/1", "elements_per_s");
    const double two = Get("BM_ParallelMapCpuHeavy/2", "elements_per_s");
    std::printf("Parallel map: 1 call %.0f elem/s, 2 calls %.0f elem/s, speed-up %.2fx "
                "(goal >= 1.8)\n",
                one, two, Ratio(two, one));
  }
};

}  // namespace
}  // namespace tensorflux::bench

int main(int argc, char** argv) {
  tensorflux::bench::DataSummary reporter;
  return tensorflux::bench::RunBenchmarks(argc, argv, &reporter);
}
