// `tensorflux gradients`: adds the symbolic gradient nodes of sum(ys) w.r.t. xs to a graph
// (AddSymbolicGradients) and writes it as a text GraphDef.
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "cli.h"
#include "google/protobuf/text_format.h"
#include "tensorflux/gradients/gradients.h"
#include "tensorflux/graph/graph.h"
#include "tensorflux/graph/graph_def_io.h"

namespace tensorflux {
namespace cli {

const char kGradientsUsage[] =
    "usage: tensorflux gradients GRAPH --ys NAME[,NAME...] --xs NAME[,NAME...] -o OUT.pbtxt\n"
    "                            [--name SCOPE]\n"
    "\n"
    "Adds the nodes computing d(sum of ys)/d(x) for every x (what tf.gradients does) and\n"
    "writes the graph as a text GraphDef. Tensor names are \"node\" (output 0) or \"node:i\".\n"
    "Prints one line per x: `x_name -> gradient_tensor_name`, or `x_name -> None` when the\n"
    "ys do not depend on x.\n"
    "\n"
    "  --ys NAMES    tensors to differentiate (their sum), comma separated\n"
    "  --xs NAMES    tensors to differentiate with respect to, comma separated\n"
    "  -o, --output  where to write the text GraphDef\n"
    "  --name SCOPE  name scope of the added nodes (default \"gradients\", made unique)\n";

namespace {

StatusOr<std::vector<GradOutput>> ResolveTensors(const Graph& g, const std::string& list,
                                                 const char* flag) {
  std::vector<GradOutput> out;
  for (absl::string_view piece : absl::StrSplit(list, ',')) {
    std::string name(piece);
    if (name.empty())
      return errors::InvalidArgument("empty tensor name in ", flag, " '", list, "'");
    TX_ASSIGN_OR_RETURN(TensorId id, ParseTensorName(name));
    if (id.IsControl())
      return errors::InvalidArgument(flag, " '", name, "' must name a tensor, not '^node'");
    Node* n = g.FindNode(id.node);
    if (n == nullptr)
      return errors::NotFound(flag, " tensor '", name, "': no node '", id.node, "' in the graph");
    if (id.index >= n->num_outputs())
      return errors::InvalidArgument(flag, " tensor '", name, "': node '", id.node, "' has ",
                                     n->num_outputs(), " outputs");
    out.push_back({n, id.index});
  }
  return out;
}

Status Gradients(const std::string& graph_path, const std::string& ys_arg,
                 const std::string& xs_arg, const std::string& out_path,
                 const std::string& scope) {
  TX_ASSIGN_OR_RETURN(LoadedGraph loaded, LoadGraph(graph_path));
  TX_ASSIGN_OR_RETURN(std::unique_ptr<Graph> g, GraphFromGraphDef(loaded.graph_def));
  TX_ASSIGN_OR_RETURN(std::vector<GradOutput> ys, ResolveTensors(*g, ys_arg, "--ys"));
  TX_ASSIGN_OR_RETURN(std::vector<GradOutput> xs, ResolveTensors(*g, xs_arg, "--xs"));
  SymbolicGradientOptions opts;
  opts.name = scope;
  std::vector<GradOutput> grads;
  TX_RETURN_IF_ERROR(AddSymbolicGradients(g.get(), ys, xs, {}, opts, &grads));

  GraphDef out;
  g->ToGraphDef(&out);
  std::string text;
  if (!google::protobuf::TextFormat::PrintToString(out, &text))
    return errors::Internal("cannot print the GraphDef as text");
  std::ofstream f(out_path, std::ios::binary | std::ios::trunc);
  if (!f) return errors::NotFound("cannot open '", out_path, "' for writing");
  f << text;
  f.close();
  if (!f) return errors::DataLoss("writing '", out_path, "' failed");

  std::vector<std::string> x_names = absl::StrSplit(xs_arg, ',');
  for (size_t i = 0; i < xs.size(); ++i) {
    std::printf("%s -> %s\n", x_names[i].c_str(),
                grads[i].valid() ? grads[i].name().c_str() : "None");
  }
  return OkStatus();
}

}  // namespace

int GradientsMain(const std::vector<std::string>& args) {
  std::vector<std::string> positional;
  std::string ys, xs, out, scope = "gradients";
  bool have_ys = false, have_xs = false, have_out = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "-h" || a == "--help") {
      std::fputs(kGradientsUsage, stdout);
      return 0;
    }
    auto value = [&](std::string* dst, bool* have) -> Status {
      if (i + 1 >= args.size()) return errors::InvalidArgument("option ", a, " needs a value");
      *dst = args[++i];
      if (have != nullptr) *have = true;
      return OkStatus();
    };
    Status s;
    if (a == "--ys") {
      s = value(&ys, &have_ys);
    } else if (a == "--xs") {
      s = value(&xs, &have_xs);
    } else if (a == "-o" || a == "--output") {
      s = value(&out, &have_out);
    } else if (a == "--name") {
      s = value(&scope, nullptr);
    } else if (a.size() > 1 && a[0] == '-') {
      s = errors::InvalidArgument("unknown option '", a, "' for gradients");
    } else {
      positional.push_back(a);
    }
    if (!s.ok()) return ReportError(s);
  }
  if (positional.size() != 1)
    return ReportError(errors::InvalidArgument("gradients takes exactly one GRAPH (got ",
                                               positional.size(), ")"));
  if (!have_ys || ys.empty()) return ReportError(errors::InvalidArgument("--ys is required"));
  if (!have_xs || xs.empty()) return ReportError(errors::InvalidArgument("--xs is required"));
  if (!have_out || out.empty())
    return ReportError(errors::InvalidArgument("-o OUT.pbtxt is required"));
  Status s = Gradients(positional[0], ys, xs, out, scope);
  if (!s.ok()) return ReportError(s);
  return 0;
}

}  // namespace cli
}  // namespace tensorflux
