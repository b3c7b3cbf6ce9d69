// tensorflux predict MODEL --images FILE... [--input NAME] [--output NAME] [--labels FILE]
//                    [--batch_size N]
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "cli.h"
#include "tensorflux/core/npy.h"
#include "tensorflux/framework/node_def_util.h"
#include "tensorflux/graph/graph_def_io.h"
#include "tensorflux/io/idx_reader.h"
#include "tensorflux/runtime/session.h"

namespace tensorflux {
namespace cli {

const char kPredictUsage[] =
    "usage: tensorflux predict MODEL --images FILE [--images FILE]... [--input NAME]\n"
    "                          [--output NAME] [--labels FILE] [--batch_size N]\n"
    "\n"
    "Classifies images with a frozen inference graph (variables folded into constants, e.g.\n"
    "the model.pb that examples/fashion_mnist/train.py exports) and prints one line per image:\n"
    "`IMAGE<TAB>CLASS<TAB>PROBABILITY`, IMAGE being FILE or FILE[i] for the i-th image of a\n"
    "file, CLASS the name of the highest-scoring class and PROBABILITY its output value.\n"
    "\n"
    "  --images FILE    IDX (plain or gzip, e.g. t10k-images-idx3-ubyte.gz), .npy (one image\n"
    "                   or a stack of them), or .png (greyscale or colour, one image); repeatable\n"
    "  --input NAME     the Placeholder to feed (default: the graph's only Placeholder)\n"
    "  --output NAME    the [batch, classes] tensor to read (default: the graph's only node\n"
    "                   whose output nothing consumes)\n"
    "  --labels FILE    class names, one per line (default: labels.txt next to MODEL if there,\n"
    "                   else class indices)\n"
    "  --batch_size N   images per Session::Run (default 256)\n"
    "\n"
    "Pixels are fed as they are (converted to the placeholder's dtype): a model trained on\n"
    "scaled pixels must scale them in its graph. Each image must hold as many values as one\n"
    "item of the placeholder's shape (e.g. 28x28 for [?,28,28,1]).\n"
    "\n"
    "Errors print `CODE: message` to stderr and exit with status 1.\n";

namespace {

struct PredictArgs {
  std::string model;
  std::vector<std::string> images;
  std::string input, output, labels;
  int64_t batch_size = 256;
  bool help = false;
};

Status ParsePredictArgs(const std::vector<std::string>& args, PredictArgs* out) {
  for (size_t i = 0; i < args.size(); ++i) {
    std::string flag = args[i], value;
    if (flag == "-h" || flag == "--help") {
      out->help = true;
      return OkStatus();
    }
    if (!absl::StartsWith(flag, "--")) {
      if (!out->model.empty())
        return errors::InvalidArgument("unexpected argument '", flag, "' (MODEL is already '",
                                       out->model, "')");
      out->model = flag;
      continue;
    }
    if (const size_t eq = flag.find('='); eq != std::string::npos) {
      value = flag.substr(eq + 1);
      flag.resize(eq);
    } else if (i + 1 < args.size()) {
      value = args[++i];
    } else {
      return errors::InvalidArgument("option ", flag, " needs a value");
    }
    if (flag == "--images") {
      out->images.push_back(value);
    } else if (flag == "--input") {
      out->input = value;
    } else if (flag == "--output") {
      out->output = value;
    } else if (flag == "--labels") {
      out->labels = value;
    } else if (flag == "--batch_size") {
      if (!absl::SimpleAtoi(value, &out->batch_size) || out->batch_size < 1)
        return errors::InvalidArgument("--batch_size must be a positive integer, got '", value,
                                       "'");
    } else {
      return errors::InvalidArgument("unknown option '", flag,
                                     "' for predict (see `tensorflux predict --help`)");
    }
  }
  if (out->model.empty()) return errors::InvalidArgument("predict needs a MODEL");
  if (out->images.empty()) return errors::InvalidArgument("predict needs at least one --images FILE");
  return OkStatus();
}

// The graph's only Placeholder.
StatusOr<std::string> DefaultInput(const GraphDef& g) {
  std::vector<std::string> found;
  for (const NodeDef& n : g.node())
    if (n.op() == "Placeholder") found.push_back(n.name());
  if (found.size() != 1)
    return errors::InvalidArgument("the model has ", found.size(),
                                   " Placeholders; name the input with --input");
  return found[0];
}

// The graph's only node whose outputs nothing consumes (Const, NoOp and Placeholder aside).
StatusOr<std::string> DefaultOutput(const GraphDef& g) {
  absl::flat_hash_set<std::string> consumed;
  for (const NodeDef& n : g.node())
    for (const std::string& in : n.input()) {
      auto id = ParseTensorName(in);
      if (id.ok()) consumed.insert(id->node);
    }
  std::vector<std::string> sinks;
  for (const NodeDef& n : g.node())
    if (!consumed.contains(n.name()) && n.op() != "Placeholder" && n.op() != "NoOp" &&
        n.op() != "Const")
      sinks.push_back(n.name());
  if (sinks.size() != 1)
    return errors::InvalidArgument("the model has ", sinks.size(),
                                   " unconsumed nodes; name the output with --output");
  return sinks[0];
}

// One PNG file decoded by the DecodePng kernel (one channel for greyscale models is the
// caller's choice: the file's channels are kept).
StatusOr<Tensor> DecodePngFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return errors::NotFound("cannot open image file ", path);
  std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (f.bad()) return errors::DataLoss("error reading ", path);
  GraphDef g;
  NodeDef* in = g.add_node();
  in->set_name("png");
  in->set_op("Placeholder");
  (*in->mutable_attr())["dtype"].set_type(DT_STRING);
  NodeDef* dec = g.add_node();
  dec->set_name("decode");
  dec->set_op("DecodePng");
  dec->add_input("png");
  TX_ASSIGN_OR_RETURN(auto session, NewSession(SessionOptions()));
  TX_RETURN_IF_ERROR(session->Create(g));
  std::vector<Tensor> out;
  Status s = session->Run({{"png", Tensor::Scalar<std::string>(bytes)}}, {"decode:0"}, {}, &out);
  if (!s.ok()) return errors::InvalidArgument(path, ": ", s.message());
  return out[0];
}

// The images of one file as [count, values per image] (any dtype), with their labels.
struct ImageBatch {
  Tensor values;
  std::vector<std::string> ids;
};

StatusOr<ImageBatch> ReadImages(const std::string& path, int64_t per_image) {
  Tensor t;
  bool single = false;
  if (absl::EndsWithIgnoreCase(path, ".png")) {
    TX_ASSIGN_OR_RETURN(t, DecodePngFile(path));
    single = true;
  } else if (absl::EndsWithIgnoreCase(path, ".npy")) {
    TX_ASSIGN_OR_RETURN(t, ReadNpyFile(path));
    single = t.NumElements() == per_image;
  } else {
    TX_ASSIGN_OR_RETURN(auto reader, io::IdxReader::Open(path));
    TX_RETURN_IF_ERROR(reader->ReadAll(&t));
  }
  if (per_image <= 0 || t.NumElements() % per_image != 0)
    return errors::InvalidArgument(path, ": ", t.shape().DebugString(), " values do not split ",
                                   "into images of ", per_image, " values (the model input's item)");
  const int64_t count = t.NumElements() / per_image;
  ImageBatch b;
  b.values = Tensor(t.dtype(), TensorShape({count, per_image}));
  if (!b.values.CopyFrom(t, TensorShape({count, per_image})))
    return errors::Internal(path, ": cannot view ", t.shape().DebugString(), " as images");
  for (int64_t i = 0; i < count; ++i)
    b.ids.push_back(single ? path : absl::StrCat(path, "[", i, "]"));
  return b;
}

// Rows [begin, end) of a [n, k] tensor, converted to `dtype` and shaped [end - begin] + item.
StatusOr<Tensor> Rows(const Tensor& all, int64_t begin, int64_t end, DataType dtype,
                      const TensorShape& item) {
  TensorShape shape({end - begin});
  for (int d = 0; d < item.dims(); ++d) shape.AddDim(item.dim_size(d));
  Tensor out(dtype, shape);
  const int64_t k = all.dim_size(1);
  Status s = VisitPodType(all.dtype(), "predict images", [&](auto src_tag) {
    using S = typename decltype(src_tag)::type;
    return VisitPodType(dtype, "the model input", [&](auto dst_tag) {
      using D = typename decltype(dst_tag)::type;
      const S* src = all.data<S>() + begin * k;
      D* dst = out.data<D>();
      for (int64_t i = 0; i < (end - begin) * k; ++i)
        dst[i] = static_cast<D>(static_cast<float>(src[i]));
      return OkStatus();
    });
  });
  if (!s.ok()) return s;
  return out;
}

Status Predict(const PredictArgs& args) {
  TX_ASSIGN_OR_RETURN(LoadedGraph loaded, LoadGraph(args.model));
  const GraphDef& g = loaded.graph_def;
  std::string input = args.input, output = args.output;
  if (input.empty()) {
    TX_ASSIGN_OR_RETURN(input, DefaultInput(g));
  }
  if (output.empty()) {
    TX_ASSIGN_OR_RETURN(output, DefaultOutput(g));
  }
  const NodeDef* in_node = nullptr;
  for (const NodeDef& n : g.node())
    if (auto id = ParseTensorName(input); id.ok() && n.name() == id->node) in_node = &n;
  if (in_node == nullptr || in_node->op() != "Placeholder")
    return errors::InvalidArgument("--input '", input, "' is not a Placeholder of the model");
  DataType dtype;
  PartialTensorShape shape;
  TX_RETURN_IF_ERROR(GetNodeAttr(*in_node, "dtype", &dtype));
  TX_RETURN_IF_ERROR(GetNodeAttr(*in_node, "shape", &shape));
  if (shape.unknown_rank() || shape.dims() < 2)
    return errors::InvalidArgument("input '", input, "' has shape ", shape.DebugString(),
                                   "; predict needs [batch, ...] with known item dims");
  TensorShape item;
  for (int d = 1; d < shape.dims(); ++d) {
    if (shape.dim_size(d) < 0)
      return errors::InvalidArgument("input '", input, "' has shape ", shape.DebugString(),
                                     "; the item dims must be known");
    item.AddDim(shape.dim_size(d));
  }
  std::vector<std::string> names;
  std::string labels = args.labels;
  if (labels.empty()) {
    auto beside = std::filesystem::path(args.model).parent_path() / "labels.txt";
    if (std::filesystem::exists(beside)) labels = beside.string();
  }
  if (!labels.empty()) {
    std::ifstream f(labels);
    if (!f) return errors::NotFound("cannot read --labels file ", labels);
    for (std::string line; std::getline(f, line);)
      if (!line.empty()) names.push_back(line);
  }

  TX_ASSIGN_OR_RETURN(auto session, NewSession(SessionOptions()));
  TX_RETURN_IF_ERROR(session->Create(g));
  const std::string fetch = absl::StrContains(output, ':') ? output : output + ":0";
  for (const std::string& path : args.images) {
    TX_ASSIGN_OR_RETURN(ImageBatch batch, ReadImages(path, item.num_elements()));
    const int64_t n = batch.values.dim_size(0);
    for (int64_t b = 0; b < n; b += args.batch_size) {
      const int64_t e = std::min(n, b + args.batch_size);
      TX_ASSIGN_OR_RETURN(Tensor feed, Rows(batch.values, b, e, dtype, item));
      std::vector<Tensor> out;
      TX_RETURN_IF_ERROR(session->Run({{input, feed}}, {fetch}, {}, &out));
      const Tensor& probs = out[0];
      if (probs.dims() != 2 || probs.dim_size(0) != e - b || probs.dtype() != DT_FLOAT)
        return errors::InvalidArgument("output '", output, "' is ", FormatTypeAndShape(probs),
                                       "; predict needs float[", e - b, ",classes]");
      const int64_t classes = probs.dim_size(1);
      for (int64_t i = 0; i < e - b; ++i) {
        const float* row = probs.data<float>() + i * classes;
        const int64_t best = std::max_element(row, row + classes) - row;
        const std::string name =
            best < static_cast<int64_t>(names.size()) ? names[best] : std::to_string(best);
        std::printf("%s\t%s\t%.4f\n", batch.ids[b + i].c_str(), name.c_str(), row[best]);
      }
    }
  }
  return OkStatus();
}

}  // namespace

int PredictMain(const std::vector<std::string>& args) {
  PredictArgs parsed;
  Status s = ParsePredictArgs(args, &parsed);
  if (!s.ok()) return ReportError(s);
  if (parsed.help) {
    std::fputs(kPredictUsage, stdout);
    return 0;
  }
  s = Predict(parsed);
  return s.ok() ? 0 : ReportError(s);
}

}  // namespace cli
}  // namespace tensorflux
