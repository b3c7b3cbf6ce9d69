// Fashion-MNIST CNN trained in process with the C++ client API (issue 8's multi-language proof):
// the model of examples/fashion_mnist/model.py (Conv2D 32 3x3 SAME + ReLU -> MaxPool 2 -> Conv2D
// 64 3x3 SAME + ReLU -> MaxPool 2 -> Flatten -> Dense 128 + ReLU -> Dropout 0.3 -> Dense 10;
// Glorot-uniform kernels, zero biases, L2 on the kernels) trained with Adam, a linear warm-up then
// cosine decay of the learning rate, and gradient clipping by global norm. Built as
// build/bin/example_fashion_mnist.
//
// Data: the IDX files of Debian's dataset-fashion-mnist (or --data-dir) through the dataset ops:
// IdxDataset(images) zip IdxDataset(labels) -> shuffle (whole set, reshuffled each epoch) ->
// batch -> prefetch; pixels become float [N, 28, 28, 1] in [0, 1] in the graph.
//
// Output: `step=N loss=... learning_rate=...` every --log-every steps (loss: the mean over those
// steps), one line per epoch `epoch=N loss=... train_accuracy=... test_accuracy=...
// images_per_sec=...`, and last `test_accuracy=0.xxxx`. Exit status 2 for bad flags and missing or
// unreadable data files, 1 for other errors.
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "tensorflux/cc/client_session.h"
#include "tensorflux/cc/ops/ops.h"
#include "tensorflux/cc/training/clip_ops.h"
#include "tensorflux/cc/training/layers.h"
#include "tensorflux/cc/training/optimizers.h"
#include "tensorflux/cc/training/schedules.h"

namespace {

using namespace tensorflux;

constexpr int64_t kNumTrain = 60000;
constexpr int64_t kNumTest = 10000;
constexpr int64_t kEvalBatch = 1000;

// Training settings (the flags' defaults and the fixed hyper-parameters).
struct Config {
  int64_t epochs = 5;
  int64_t batch_size = 64;
  std::string data_dir = "/usr/share/datasets/fashion-mnist";
  int64_t max_steps = 0;  // 0: no limit
  int64_t log_every = 100;
  int64_t seed = 1;
  // Adam's peak rate, reached after a linear warm-up of warmup_steps (at most a fifth of the
  // run), then a cosine decay to 0 at the last step (epochs * steps per epoch, or --max-steps).
  double learning_rate = 2e-3;
  int64_t warmup_steps = 300;
  double l2_scale = 5e-5;
  double clip_norm = 5.0;
  double dropout = 0.3;
};

void Usage() {
  std::fprintf(stderr,
               "usage: example_fashion_mnist [--epochs N] [--batch-size N] [--data-dir DIR] "
               "[--max-steps N] [--log-every N] [--seed N]\n");
}

// Parses --name VALUE / --name=VALUE flags; false (after a message) on a bad flag.
bool ParseFlags(int argc, char** argv, Config* c) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i], value;
    const size_t eq = arg.find('=');
    if (eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg.resize(eq);
    } else if (i + 1 < argc) {
      value = argv[++i];
    } else {
      std::fprintf(stderr, "error: flag %s needs a value\n", arg.c_str());
      return false;
    }
    if (arg == "--data-dir") {
      c->data_dir = value;
      continue;
    }
    int64_t* target = arg == "--epochs"       ? &c->epochs
                      : arg == "--batch-size" ? &c->batch_size
                      : arg == "--max-steps"  ? &c->max_steps
                      : arg == "--log-every"  ? &c->log_every
                      : arg == "--seed"       ? &c->seed
                                              : nullptr;
    if (target == nullptr) {
      std::fprintf(stderr, "error: unknown flag %s\n", arg.c_str());
      return false;
    }
    char* end = nullptr;
    const long long v = std::strtoll(value.c_str(), &end, 10);
    const bool positive_only = target == &c->epochs || target == &c->batch_size;
    if (value.empty() || *end != '\0' || v < 0 || (positive_only && v == 0)) {
      std::fprintf(stderr, "error: %s must be a %s integer, got '%s'\n", arg.c_str(),
                   positive_only ? "positive" : "non-negative", value.c_str());
      return false;
    }
    *target = v;
  }
  return true;
}

struct DataFiles {
  std::string train_images, train_labels, test_images, test_labels;
};

// The four IDX files under `dir`; NOT_FOUND naming every missing one.
StatusOr<DataFiles> FindData(const std::string& dir) {
  DataFiles f{dir + "/train-images-idx3-ubyte.gz", dir + "/train-labels-idx1-ubyte.gz",
              dir + "/t10k-images-idx3-ubyte.gz", dir + "/t10k-labels-idx1-ubyte.gz"};
  std::string missing;
  for (const std::string* p : {&f.train_images, &f.train_labels, &f.test_images, &f.test_labels}) {
    struct stat st;
    if (stat(p->c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
      missing += (missing.empty() ? "" : ", ") + *p;
    }
  }
  if (!missing.empty()) {
    return errors::NotFound("Fashion-MNIST not found: missing ", missing,
                            " (install Debian's dataset-fashion-mnist package, which "
                            "scripts/setup does, or pass --data-dir)");
  }
  return f;
}

// One split's batches: uint8 images [B, 28, 28] and labels [B], and the op that (re)starts them.
struct Batches {
  Output images, labels;
  Operation init;
};

Batches InputPipeline(const Scope& scope, const std::string& images_path,
                      const std::string& labels_path, int64_t batch_size, int64_t shuffle_buffer,
                      int64_t seed) {
  const std::vector<DataType> types = {DT_UINT8, DT_UINT8};
  const std::vector<PartialTensorShape> items = {PartialTensorShape({28, 28}),
                                                 PartialTensorShape({})};
  const std::vector<PartialTensorShape> batches = {PartialTensorShape({-1, 28, 28}),
                                                   PartialTensorShape({-1})};
  Output images = ops::IdxDataset(scope, images_path, {DT_UINT8}, {items[0]});
  Output labels = ops::IdxDataset(scope, labels_path, {DT_UINT8}, {items[1]});
  Output ds = ops::ZipDataset(scope, {images, labels}, types, items);
  if (shuffle_buffer > 0) {
    ds = ops::ShuffleDataset(scope, ds, shuffle_buffer, seed, seed, types, items,
                             ops::ShuffleDataset::ReshuffleEachIteration(true));
  }
  ds = ops::BatchDatasetV2(scope, ds, batch_size, false, types, batches);
  ds = ops::PrefetchDataset(scope, ds, int64_t{2}, types, batches);
  auto it = ops::IteratorV2(scope, "", "", types, batches);
  auto next = ops::IteratorGetNext(scope, it, types, batches);
  return {next[0], next[1], ops::MakeIterator(scope, ds, it)};
}

// model.cnn_logits: float [N, 28, 28, 1] -> logits [N, 10]; `training` (bool scalar) enables
// dropout.
Output CnnLogits(const Scope& scope, const Output& images, const Output& training,
                 const Config& c) {
  const training::Regularizer l2 = training::L2Regularizer(c.l2_scale);
  training::Conv2DOptions conv;
  conv.padding = "SAME";
  conv.activation = training::Relu();
  conv.kernel_regularizer = l2;
  training::DenseOptions dense;
  dense.kernel_regularizer = l2;
  int64_t seed = c.seed;
  auto with = [&seed](auto options, const char* name) {
    options.kernel_initializer = training::GlorotUniform(seed++);
    options.name = name;
    return options;
  };
  Output x = training::Conv2D(scope, images, 32, 3, 3, with(conv, "conv1"));
  x = training::MaxPooling2D(scope, x, 2, 2, 2, 2);
  x = training::Conv2D(scope, x, 64, 3, 3, with(conv, "conv2"));
  x = training::MaxPooling2D(scope, x, 2, 2, 2, 2);
  x = training::Flatten(scope, x);
  dense.activation = training::Relu();
  x = training::Dense(scope, x, 128, with(dense, "dense1"));
  x = training::Dropout(scope, x, c.dropout, training, c.seed + 100);
  dense.activation = nullptr;
  return training::Dense(scope, x, 10, with(dense, "logits"));
}

// The training graph: the model over the training batches, the loss (mean cross-entropy + L2),
// the number of correct predictions and the train op.
struct Graph {
  Batches train, test;
  Output training;  // bool scalar, default false
  Output loss, correct, count, learning_rate;
  Operation train_op, init_vars;
};

Status BuildGraph(const Scope& root, const DataFiles& files, const Config& c, Graph* g) {
  g->train = InputPipeline(root.NewSubScope("train_data"), files.train_images, files.train_labels,
                           c.batch_size, kNumTrain + 1, c.seed);
  g->test = InputPipeline(root.NewSubScope("test_data"), files.test_images, files.test_labels,
                          kEvalBatch, 0, 0);
  g->training = ops::PlaceholderWithDefault(root.WithOpName("training"), false,
                                            PartialTensorShape({}));
  const Scope in = root.NewSubScope("input");
  Output images = ops::Reshape(
      in, ops::Mul(in, ops::Cast(in, g->train.images, DT_FLOAT), 1.0f / 255), {-1, 28, 28, 1});
  Output labels = ops::Cast(in, g->train.labels, DT_INT32);
  Output logits = CnnLogits(root, images, g->training, c);

  const Scope m = root.NewSubScope("metrics");
  Output xent = ops::SparseSoftmaxCrossEntropyWithLogits(m, logits, labels).loss;
  g->loss = ops::AddV2(m.WithOpName("loss"), ops::Mean(m, xent, {0}),
                       training::RegularizationLoss(root));
  Output predicted = ops::ArgMax(m, logits, 1, ops::ArgMax::OutputType(DT_INT32));
  g->correct = ops::Sum(m, ops::Cast(m, ops::Equal(m, predicted, labels), DT_INT64), {0});
  g->count = ops::Size(m, labels, ops::Size::OutType(DT_INT64));
  TX_RETURN_IF_ERROR(root.status());

  // Adam on a linear warm-up then a cosine decay to 0 at the last step.
  training::Variable step = training::GetOrCreateGlobalStep(root);
  const int64_t steps_per_epoch = (kNumTrain + c.batch_size - 1) / c.batch_size;
  int64_t total = c.epochs * steps_per_epoch;
  if (c.max_steps > 0 && c.max_steps < total) total = c.max_steps;
  const int64_t warmup = std::min(c.warmup_steps, total / 5);
  g->learning_rate = training::LinearWarmup(
      root, training::CosineDecaySchedule(c.learning_rate, std::max<int64_t>(total - warmup, 1)),
      warmup, step.Read(root));
  training::AdamOptimizer adam(g->learning_rate);
  training::MinimizeOptions options;
  options.global_step = &step;
  options.grad_transform = training::ClipGradientsByGlobalNorm(c.clip_norm);
  TX_RETURN_IF_ERROR(adam.Minimize(root, g->loss, options, &g->train_op));
  g->init_vars = training::GlobalVariablesInitializer(root);
  return root.status();
}

// Test-set accuracy: the test batches are fetched, then fed in place of the training batches.
StatusOr<double> Evaluate(const ClientSession& session, const Graph& g) {
  TX_RETURN_IF_ERROR(session.Run({}, {}, {g.test.init}, nullptr));
  int64_t correct = 0, seen = 0;
  std::vector<Tensor> batch, out;
  for (;;) {
    Status s = session.Run({g.test.images, g.test.labels}, &batch);
    if (absl::IsOutOfRange(s)) break;
    TX_RETURN_IF_ERROR(s);
    TX_RETURN_IF_ERROR(session.Run({{g.train.images, batch[0]}, {g.train.labels, batch[1]}},
                                   {g.correct, g.count}, &out));
    correct += out[0].scalar<int64_t>();
    seen += out[1].scalar<int64_t>();
  }
  if (seen == 0) return errors::OutOfRange("the test set is empty");
  return static_cast<double>(correct) / seen;
}

// Runs the first batch of each split once, so that unreadable data files fail before training.
Status ProbeData(const ClientSession& session, const Graph& g) {
  std::vector<Tensor> out;
  for (const Batches* b : {&g.train, &g.test}) {
    TX_RETURN_IF_ERROR(session.Run({}, {}, {b->init}, nullptr));
    TX_RETURN_IF_ERROR(session.Run({b->images, b->labels}, &out));
  }
  return OkStatus();
}

int Fail(const char* what, const Status& s, int code) {
  std::fprintf(stderr, "error: %s: %s\n", what, StatusToString(s).c_str());
  return code;
}

int Train(const Config& c) {
  StatusOr<DataFiles> files = FindData(c.data_dir);
  if (!files.ok()) return Fail("no data", files.status(), 2);
  Scope root = Scope::NewRootScope();
  Graph g;
  Status s = BuildGraph(root, *files, c, &g);
  if (!s.ok()) return Fail("building the graph", s, 1);
  ClientSession session(root);
  s = ProbeData(session, g);
  if (!s.ok()) return Fail(("cannot read the Fashion-MNIST files in " + c.data_dir).c_str(), s, 2);
  s = session.Run({}, {}, {g.init_vars}, nullptr);
  if (!s.ok()) return Fail("initializing the variables", s, 1);

  int64_t step = 0;
  double test_accuracy = 0;
  std::vector<Tensor> out;
  for (int64_t epoch = 1; epoch <= c.epochs; ++epoch) {
    s = session.Run({}, {}, {g.train.init}, nullptr);
    if (!s.ok()) return Fail("starting the training data", s, 2);
    double loss_sum = 0, window_loss = 0;
    int64_t correct = 0, seen = 0, window = 0;
    bool stop = false;
    const auto start = std::chrono::steady_clock::now();
    while (!stop) {
      s = session.Run({{g.training, true}}, {g.loss, g.correct, g.count, g.learning_rate},
                      {g.train_op}, &out);
      if (absl::IsOutOfRange(s)) break;  // the end of the epoch
      if (!s.ok()) return Fail("training step", s, 1);
      const double loss = out[0].scalar<float>();
      const int64_t n = out[2].scalar<int64_t>();
      loss_sum += loss * n;
      correct += out[1].scalar<int64_t>();
      seen += n;
      window_loss += loss;
      ++window;
      ++step;
      if (c.log_every > 0 && step % c.log_every == 0) {
        std::printf("step=%lld loss=%.4f learning_rate=%.6f\n", static_cast<long long>(step),
                    window_loss / window, out[3].scalar<float>());
        std::fflush(stdout);
        window_loss = 0;
        window = 0;
      }
      stop = c.max_steps > 0 && step >= c.max_steps;
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    StatusOr<double> acc = Evaluate(session, g);
    if (!acc.ok()) return Fail("evaluating on the test set", acc.status(), 1);
    test_accuracy = *acc;
    std::printf("epoch=%lld loss=%.4f train_accuracy=%.4f test_accuracy=%.4f "
                "images_per_sec=%.1f\n",
                static_cast<long long>(epoch), seen ? loss_sum / seen : 0.0,
                seen ? static_cast<double>(correct) / seen : 0.0, test_accuracy, seen / seconds);
    std::fflush(stdout);
    if (stop) break;
  }
  std::printf("test_accuracy=%.4f\n", test_accuracy);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Config config;
  if (!ParseFlags(argc, argv, &config)) {
    Usage();
    return 2;
  }
  return Train(config);
}
