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
    "scaled pixels must scale them in its graph. Each image must have the shape of one item\n"
    "of the placeholder (28x28 or 28x28x1 for [?,28,28,1]; any layout of as many values for a\n"
    "flat [?,784]); a PNG is decoded to the item's channels (a colour PNG to grey for a\n"
    "one-channel model, as TF's decode_png(channels=1) does).\n"
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

// One PNG file decoded by the DecodePng kernel into [height, width, channels] uint8; channels 0
// keeps the file's, 1 converts colour to grey (libpng's conversion, as TF's decode_png does).
StatusOr<Tensor> DecodePngFile(const std::string& path, int channels) {
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
  (*dec->mutable_attr())["channels"].set_i(channels);
  TX_ASSIGN_OR_RETURN(auto session, NewSession(SessionOptions()));
  TX_RETURN_IF_ERROR(session->Create(g));
  std::vector<Tensor> out;
  Status s = session->Run({{"png", Tensor::Scalar<std::string>(bytes)}}, {"decode:0"}, {}, &out);
  if (!s.ok()) return errors::InvalidArgument(path, ": ", s.message());
  return out[0];
}

// The PNG channels to decode for a model whose input item is `item`: its last dim for
// [H, W, C] (C 1-4), grey for [H, W], the file's own otherwise (a flat item).
int PngChannels(const TensorShape& item) {
  if (item.dims() == 2) return 1;
  if (item.dims() == 3 && item.dim_size(2) >= 1 && item.dim_size(2) <= 4)
    return static_cast<int>(item.dim_size(2));
  return 0;
}

// Dims [from, rank) of `shape` without a trailing 1, so that a greyscale image matches with or
// without its channel dim ([28, 28] and [28, 28, 1]).
std::vector<int64_t> ImageDims(absl::Span<const int64_t> shape, size_t from) {
  std::vector<int64_t> d(shape.begin() + std::min(from, shape.size()), shape.end());
  if (d.size() >= 2 && d.back() == 1) d.pop_back();
  return d;
}

// The images of one file as [count, values per image] (any dtype), with their labels.
struct ImageBatch {
  Tensor values;
  std::vector<std::string> ids;
};

// A file holds one image or a stack [N] + image. For an item of rank >= 2 its dims must be the
// item's (a trailing channel dim of 1 optional on either side); for a flat item ([784]) any
// layout with a multiple of its values is taken (e.g. IDX [N, 28, 28]).
StatusOr<ImageBatch> ReadImages(const std::string& path, const TensorShape& item) {
  const int64_t per_image = item.num_elements();
  Tensor t;
  bool png = false;
  if (absl::EndsWithIgnoreCase(path, ".png")) {
    TX_ASSIGN_OR_RETURN(t, DecodePngFile(path, PngChannels(item)));
    png = true;
  } else if (absl::EndsWithIgnoreCase(path, ".npy")) {
    TX_ASSIGN_OR_RETURN(t, ReadNpyFile(path));
  } else {
    TX_ASSIGN_OR_RETURN(auto reader, io::IdxReader::Open(path));
    TX_RETURN_IF_ERROR(reader->ReadAll(&t));
  }
  bool single;
  if (item.dims() >= 2) {
    const std::vector<int64_t> want = ImageDims(item.dim_sizes(), 0);
    single = ImageDims(t.shape().dim_sizes(), 0) == want;
    const bool stack = !png && t.dims() >= 1 && ImageDims(t.shape().dim_sizes(), 1) == want;
    if (!single && !stack)
      return errors::InvalidArgument(
          path, ": ", png ? "a PNG image of " : "shape ", t.shape().DebugString(),
          png ? " (height, width, channels)" : "", " is not ",
          png ? "" : "one image or a stack of images of ", item.DebugString(), " (",
          per_image, " values: the model input's item)");
  } else {
    single = png || t.NumElements() == per_image;
    if (per_image <= 0 || t.NumElements() % per_image != 0 || (png && !single))
      return errors::InvalidArgument(path, ": ", t.shape().DebugString(),
                                     " values do not split into images of ", per_image,
                                     " values (the model input's item)");
  }
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
    TX_ASSIGN_OR_RETURN(ImageBatch batch, ReadImages(path, item));
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
