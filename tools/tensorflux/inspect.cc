// tensorflux inspect GRAPH: ops by count, placeholders, unconsumed nodes, signatures. Works on the
// GraphDef as written, so graphs with ops this build lacks can still be inspected. --optimize,
// --place, --partition and --dot import the graph (optimize.cc).
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "cli.h"
#include "tensorflux/core/tensor_shape.h"
#include "tensorflux/core/types.h"
#include "tensorflux/framework/node_def_util.h"

namespace tensorflux {
namespace cli {

const char kInspectUsage[] =
    "usage: tensorflux inspect GRAPH [--optimize] [--place [--devices SPEC] [--partition]]\n"
    "                          [--dot FILE] [--feed NAME]... [--fetch NAME]... [--target NODE]...\n"
    "       tensorflux inspect FILE.tfrecord\n"
    "       tensorflux inspect --op NAME\n"
    "\n"
    "Prints the node count by op type, each Placeholder with its dtype and shape, the nodes\n"
    "no other node consumes (the likely outputs) and, for a SavedModel, its signatures.\n"
    "For a TFRecord file (plain or gzip): the record count and the first record's\n"
    "tf.train.Example features.\n"
    "With --op NAME: the registered op NAME, where it is defined, its kernels (device, dtypes,\n"
    "where registered), its gradient and its conformance cases.\n"
    "\n"
    "  --optimize    run the master's graph passes (constant folding, CSE, arithmetic\n"
    "                simplification, dead-node removal, fusion) as a session would, and print\n"
    "                the node count before and after each pass, then the ops left\n"
    "  --place       run the passes, then the Placer over the devices of --devices as a\n"
    "                session would (soft placement; its notes go to stderr), and print the\n"
    "                node count per device (not with --dot -)\n"
    "  --devices SPEC  the devices to place on, as ConfigProto.device_count: TYPE=COUNT[,...]\n"
    "                (default CPU=1; e.g. CPU=4). Implies --place\n"
    "  --partition   also split the placed graph into one graph per device joined by\n"
    "                _Send/_Recv pairs, and print each partition's node and _Send/_Recv counts\n"
    "                (not with --dot -). Implies --place\n"
    "  --dot FILE    write the graph as Graphviz DOT (after the passes with --optimize or\n"
    "                --place), one cluster per device: the requested devices, the assigned\n"
    "                ones with --place, the partitions (with their _Send/_Recv and a dotted\n"
    "                arrow per transfer) with --partition (\"-\" writes to stdout)\n"
    "  --feed NAME, --fetch NAME, --target NODE\n"
    "                the run signature to optimize for (repeatable): as `tensorflux run`, fed\n"
    "                tensors become arguments, fetches results, and the graph is pruned to\n"
    "                what they need. Without any, every unconsumed node is kept as a target.\n";

namespace {

std::string ShapeString(const NodeDef& n, int producer) {
  const AttrValue* a = FindAttr(n, "shape");
  if (a == nullptr || a->value_case() != AttrValue::kShape) return "<unknown>";
  const TensorShapeProto& p = a->shape();
  // Before producer 22 an empty shape attr meant "unknown", not "scalar".
  if (producer < 22 && !p.unknown_rank() && p.dim_size() == 0) return "<unknown>";
  auto s = PartialTensorShape::FromProto(p);
  return s.ok() ? s->DebugString() : "<invalid>";
}

std::string DtypeString(const NodeDef& n, const char* attr) {
  const AttrValue* a = FindAttr(n, attr);
  if (a == nullptr || a->value_case() != AttrValue::kType) return "<unknown>";
  return DataTypeString(a->type());
}

std::string NodeOf(const std::string& input) {
  std::string s = input[0] == '^' ? input.substr(1) : input;
  size_t colon = s.rfind(':');
  return colon == std::string::npos ? s : s.substr(0, colon);
}

}  // namespace

int InspectMain(const std::vector<std::string>& args) {
  std::vector<std::string> positional;
  OptimizeArgs opt;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "-h" || a == "--help") {
      std::fputs(kInspectUsage, stdout);
      return 0;
    }
    if (a == "--op") {
      if (i + 1 >= args.size() || args.size() != 2)
        return ReportError(errors::InvalidArgument("inspect --op takes one op NAME and no "
                                                   "other argument"));
      return InspectOpMain(args[i + 1]);
    }
    if (a == "--optimize") {
      opt.optimize = true;
      continue;
    }
    if (a == "--place" || a == "--partition") {
      opt.place = true;
      opt.partition = opt.partition || a == "--partition";
      continue;
    }
    std::vector<std::string>* list = a == "--feed"     ? &opt.feeds
                                     : a == "--fetch"  ? &opt.fetches
                                     : a == "--target" ? &opt.targets
                                                       : nullptr;
    if (list != nullptr || a == "--dot" || a == "--devices") {
      if (i + 1 >= args.size())
        return ReportError(errors::InvalidArgument("option ", a, " needs a value"));
      if (list != nullptr) {
        list->push_back(args[++i]);
      } else if (a == "--dot") {
        opt.dot_file = args[++i];
      } else {
        opt.devices = args[++i];
        opt.place = true;
      }
      continue;
    }
    if (a.size() > 1 && a[0] == '-')
      return ReportError(errors::InvalidArgument("unknown option '", a, "' for inspect"));
    positional.push_back(a);
  }
  if (positional.size() != 1)
    return ReportError(errors::InvalidArgument("inspect takes exactly one GRAPH (got ",
                                               positional.size(), ")"));
  if (LooksLikeTfRecord(positional[0])) return InspectRecords(positional[0]);
  auto loaded = LoadGraph(positional[0]);
  if (!loaded.ok()) return ReportError(loaded.status());
  if (opt.Requested()) return OptimizeAndReport(*loaded, opt);
  const GraphDef& g = loaded->graph_def;
  const int producer = g.versions().producer();

  std::printf("graph: %s (%s, %d nodes, producer %d)\n", loaded->path.c_str(),
              loaded->is_saved_model ? "SavedModel" : "GraphDef", g.node_size(), producer);
  std::map<std::string, int> by_op;
  std::set<std::string> consumed;
  for (const NodeDef& n : g.node()) {
    ++by_op[n.op()];
    for (const std::string& in : n.input())
      if (!in.empty()) consumed.insert(NodeOf(in));
  }
  std::printf("ops:\n");
  for (const auto& [op, count] : by_op) std::printf("  %-28s %d\n", op.c_str(), count);
  std::printf("placeholders:\n");
  int n_ph = 0;
  for (const NodeDef& n : g.node()) {
    if (n.op() != "Placeholder" && n.op() != "PlaceholderWithDefault") continue;
    ++n_ph;
    std::printf("  %s: %s %s%s\n", n.name().c_str(), DtypeString(n, "dtype").c_str(),
                ShapeString(n, producer).c_str(),
                n.op() == "PlaceholderWithDefault" ? " (with default)" : "");
  }
  if (n_ph == 0) std::printf("  (none)\n");
  std::printf("unconsumed nodes:\n");
  for (const NodeDef& n : g.node())
    if (!consumed.count(n.name())) std::printf("  %s (%s)\n", n.name().c_str(), n.op().c_str());
  if (loaded->is_saved_model) {
    const auto& tags = loaded->meta_graph.meta_info_def().tags();
    std::printf("meta graph tags: %s\n",
                tags.empty() ? "(none)" : absl::StrJoin(tags, ", ").c_str());
    std::printf("signatures:\n");
    std::map<std::string, const SignatureDef*> sigs;
    for (const auto& [k, v] : loaded->meta_graph.signature_def()) sigs[k] = &v;
    if (sigs.empty()) std::printf("  (none)\n");
    for (const auto& [name, sig] : sigs) {
      std::printf("  %s%s\n", name.c_str(),
                  sig->method_name().empty() ? "" : (" (" + sig->method_name() + ")").c_str());
      for (int pass = 0; pass < 2; ++pass) {
        std::map<std::string, const TensorInfo*> m;
        for (const auto& [k, v] : pass == 0 ? sig->inputs() : sig->outputs()) m[k] = &v;
        for (const auto& [k, info] : m) {
          std::string shape = "<unknown>";
          if (info->has_tensor_shape()) {
            auto s = PartialTensorShape::FromProto(info->tensor_shape());
            if (s.ok()) shape = s->DebugString();
          }
          std::printf("    %-6s %s -> %s %s %s\n", pass == 0 ? "input" : "output", k.c_str(),
                      info->name().c_str(), DataTypeString(info->dtype()).c_str(), shape.c_str());
        }
      }
    }
  }
  return 0;
}

}  // namespace cli
}  // namespace tensorflux
