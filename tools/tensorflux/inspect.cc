// tensorflux inspect GRAPH: ops by count, placeholders, unconsumed nodes, signatures. Works on the
// GraphDef as written, so graphs with ops this build lacks can still be inspected.
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
    "usage: tensorflux inspect GRAPH | FILE.tfrecord\n"
    "\n"
    "Prints the node count by op type, each Placeholder with its dtype and shape, the nodes\n"
    "no other node consumes (the likely outputs) and, for a SavedModel, its signatures.\n"
    "For a TFRecord file (plain or gzip): the record count and the first record's\n"
    "tf.train.Example features.\n";

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
  for (const std::string& a : args) {
    if (a == "-h" || a == "--help") {
      std::fputs(kInspectUsage, stdout);
      return 0;
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
