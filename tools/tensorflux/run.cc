// tensorflux run GRAPH --feed NAME=VALUE ... --fetch NAME ... [--target NODE ...] [--save DIR]
//                      [--signature NAME] [--trace FILE.json]
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "cli.h"
#include "tensorflux/core/npy.h"
#include "tensorflux/graph/graph_def_io.h"
#include "tensorflux/graph/saved_model.h"
#include "tensorflux/runtime/session.h"
#include "tensorflux/summary/timeline.h"
#include "tensorflux/train/file_io.h"
#include "tensorflux/train/saved_model_loader.h"
#include "tensorflux/train/tensor_bundle.h"

namespace tensorflux {
namespace cli {

const char kRunUsage[] =
    "usage: tensorflux run GRAPH [--feed NAME=VALUE]... [--fetch NAME]... [--target NODE]...\n"
    "                      [--save DIR] [--signature NAME] [--trace FILE.json]\n"
    "\n"
    "Runs GRAPH once and prints each fetched tensor as `NAME dtype[shape] values`. A\n"
    "SavedModel's variables are first restored from its variables/ checkpoint (through its\n"
    "saver_def's restore op), as TensorFlow's loader does.\n"
    "\n"
    "  --feed NAME=VALUE  feed tensor NAME (\"node\" or \"node:i\"; any tensor, not only\n"
    "                     placeholders). VALUE is a .npy file (a path ending in .npy) or an\n"
    "                     inline literal such as 5, -1.5, true, [1,2,3] or [[1,2],[3,4]],\n"
    "                     converted to the fed tensor's dtype\n"
    "  --fetch NAME       tensor to fetch and print (repeatable, printed in order)\n"
    "  --target NODE      node to run without fetching (repeatable)\n"
    "  --save DIR         also write fetch0.npy, fetch1.npy, ... into DIR (created if needed)\n"
    "  --signature NAME   SavedModel only: feed NAMEs are the signature's input keys and\n"
    "                     fetch NAMEs its output keys (any other name is an error listing\n"
    "                     them; graph tensor names are not taken then)\n"
    "  --trace FILE.json  run with RunOptions.trace_level FULL_TRACE and write the step as a\n"
    "                     Chrome trace (open in Perfetto or chrome://tracing): a process per\n"
    "                     device, a track per thread, an event per node, dataflow arrows\n"
    "\n"
    "Example:\n"
    "  tensorflux run tests/data/tf-graphs/serving_matrix_half_plus_two \\\n"
    "      --feed x:0=[[[0,1,2],[3,4,5],[6,7,8]]] --fetch y:0\n"
    "\n"
    "Errors print `CODE: message` to stderr and exit with status 1.\n";

namespace {

struct RunArgs {
  std::string graph;
  std::vector<std::pair<std::string, std::string>> feeds;  // name, value text
  std::vector<std::string> fetches;
  std::vector<std::string> targets;
  std::string save_dir;
  std::string signature;
  std::string trace_path;
  bool help = false;
};

Status ParseRunArgs(const std::vector<std::string>& args, RunArgs* out) {
  for (size_t i = 0; i < args.size(); ++i) {
    std::string a = args[i];
    if (a == "-h" || a == "--help") {
      out->help = true;
      return OkStatus();
    }
    std::string value;
    bool has_inline = false;
    if (absl::StartsWith(a, "--")) {
      size_t eq = a.find('=');
      if (eq != std::string::npos) {
        value = a.substr(eq + 1);
        a = a.substr(0, eq);
        has_inline = true;
      }
    }
    auto take = [&](std::string* v) -> Status {
      if (has_inline) {
        *v = value;
        return OkStatus();
      }
      if (i + 1 >= args.size()) return errors::InvalidArgument("option ", a, " needs a value");
      *v = args[++i];
      return OkStatus();
    };
    if (a == "--feed") {
      std::string f;
      TX_RETURN_IF_ERROR(take(&f));
      size_t eq = f.find('=');
      if (eq == std::string::npos || eq == 0)
        return errors::InvalidArgument("--feed expects NAME=VALUE, got '", f, "'");
      out->feeds.emplace_back(f.substr(0, eq), f.substr(eq + 1));
    } else if (a == "--fetch") {
      std::string f;
      TX_RETURN_IF_ERROR(take(&f));
      out->fetches.push_back(f);
    } else if (a == "--target") {
      std::string t;
      TX_RETURN_IF_ERROR(take(&t));
      out->targets.push_back(t);
    } else if (a == "--save") {
      TX_RETURN_IF_ERROR(take(&out->save_dir));
    } else if (a == "--signature") {
      TX_RETURN_IF_ERROR(take(&out->signature));
    } else if (a == "--trace") {
      TX_RETURN_IF_ERROR(take(&out->trace_path));
      if (out->trace_path.empty()) return errors::InvalidArgument("--trace needs a file name");
    } else if (a.size() > 1 && a[0] == '-') {
      return errors::InvalidArgument("unknown option '", a, "' for run (see `tensorflux run --help`)");
    } else if (out->graph.empty()) {
      out->graph = a;
    } else {
      return errors::InvalidArgument("unexpected argument '", a, "' (GRAPH is already '",
                                     out->graph, "')");
    }
  }
  if (out->graph.empty()) return errors::InvalidArgument("run needs a GRAPH (see `tensorflux run --help`)");
  if (out->fetches.empty() && out->targets.empty())
    return errors::InvalidArgument("nothing to run: give at least one --fetch or --target");
  return OkStatus();
}

// The dtype of tensor `name` in `graph`, for converting an inline literal.
StatusOr<DataType> FedTensorType(const Graph& graph, const std::string& name) {
  TX_ASSIGN_OR_RETURN(TensorId id, ParseTensorName(name));
  if (id.IsControl()) return errors::InvalidArgument("cannot feed control input '", name, "'");
  const Node* n = graph.FindNode(id.node);
  if (n == nullptr) return errors::NotFound("feed '", name, "': no node '", id.node, "' in the graph");
  if (id.index >= n->num_outputs())
    return errors::NotFound("feed '", name, "': node '", id.node, "' (", n->type_string(),
                            ") has ", n->num_outputs(), " outputs");
  return BaseType(n->output_type(id.index));
}

Status Run(const RunArgs& args) {
  TX_ASSIGN_OR_RETURN(LoadedGraph loaded, LoadGraph(args.graph));

  // Signature keys -> graph tensor names.
  const SignatureDef* sig = nullptr;
  if (!args.signature.empty()) {
    if (!loaded.is_saved_model)
      return errors::InvalidArgument("--signature needs a SavedModel, and '", args.graph,
                                     "' is a GraphDef");
    TX_ASSIGN_OR_RETURN(sig, FindSignature(loaded.meta_graph, args.signature));
  }
  // With a signature every name must be one of its aliases: a name that is not is an error,
  // never fed to (or fetched from) a graph tensor of that name.
  std::vector<std::string> feed_names, fetches;
  for (const auto& [name, text] : args.feeds) feed_names.push_back(name);
  fetches = args.fetches;
  if (sig != nullptr) {
    TX_ASSIGN_OR_RETURN(feed_names,
                        SignatureTensorNames(*sig, args.signature, feed_names, /*is_input=*/true));
    TX_ASSIGN_OR_RETURN(fetches,
                        SignatureTensorNames(*sig, args.signature, fetches, /*is_input=*/false));
  }

  TX_ASSIGN_OR_RETURN(std::unique_ptr<Session> session, NewSession(SessionOptions()));
  TX_RETURN_IF_ERROR(session->Create(loaded.graph_def));
  if (loaded.is_saved_model) {
    const std::string export_dir = SavedModelExportDir(args.graph);
    const std::string index = BundleIndexFilename(SavedModelVariablesPrefix(export_dir));
    std::error_code ec;
    if (!loaded.meta_graph.saver_def().restore_op_name().empty() &&
        !std::filesystem::exists(index, ec)) {
      std::fprintf(stderr,
                   "warning: the SavedModel has no %s; no variables were restored (TF: \"The "
                   "specified SavedModel has no variables\")\n",
                   index.c_str());
    }
    TX_RETURN_IF_ERROR(RestoreSavedModelVariables(session.get(), loaded.meta_graph, export_dir));
  }

  std::unique_ptr<Graph> graph;  // built on demand, for literal dtypes
  std::vector<std::pair<std::string, Tensor>> feeds;
  for (size_t i = 0; i < args.feeds.size(); ++i) {
    const auto& [name, text] = args.feeds[i];
    const std::string& tensor_name = feed_names[i];
    Tensor value;
    if (absl::EndsWith(text, ".npy")) {
      TX_ASSIGN_OR_RETURN(value, ReadNpyFile(text));
    } else {
      if (graph == nullptr) {
        TX_ASSIGN_OR_RETURN(graph, GraphFromGraphDef(loaded.graph_def));
      }
      TX_ASSIGN_OR_RETURN(DataType dt, FedTensorType(*graph, tensor_name));
      TX_ASSIGN_OR_RETURN(value, ParseLiteral(text, dt, absl::StrCat("feed '", name, "'")));
    }
    feeds.emplace_back(tensor_name, std::move(value));
  }

  std::vector<Tensor> outputs;
  RunOptions run_options;
  RunMetadata metadata;
  if (!args.trace_path.empty()) run_options.set_trace_level(RunOptions::FULL_TRACE);
  TX_RETURN_IF_ERROR(
      session->Run(run_options, feeds, fetches, args.targets, &outputs, &metadata));
  if (outputs.size() != fetches.size())
    return errors::Internal("session returned ", outputs.size(), " tensors for ", fetches.size(),
                            " fetches");

  if (!args.save_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(args.save_dir, ec);
    if (ec) return errors::NotFound("cannot create --save directory '", args.save_dir, "': ", ec.message());
    for (size_t i = 0; i < outputs.size(); ++i) {
      std::string path = (std::filesystem::path(args.save_dir) / absl::StrCat("fetch", i, ".npy")).string();
      TX_RETURN_IF_ERROR(WriteNpyFile(path, outputs[i]));
    }
  }
  if (!args.trace_path.empty()) {
    AtomicFile f(args.trace_path);
    TX_RETURN_IF_ERROR(f.Open());
    TX_RETURN_IF_ERROR(f.Append(ChromeTraceFromStepStats(metadata.step_stats())));
    TX_RETURN_IF_ERROR(f.Commit());
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    std::printf("%s %s %s\n", args.fetches[i].c_str(), FormatTypeAndShape(outputs[i]).c_str(),
                FormatValues(outputs[i]).c_str());
  }
  session->Close().IgnoreError();
  return OkStatus();
}

}  // namespace

int RunMain(const std::vector<std::string>& argv) {
  RunArgs args;
  Status s = ParseRunArgs(argv, &args);
  if (!s.ok()) return ReportError(s);
  if (args.help) {
    std::fputs(kRunUsage, stdout);
    return 0;
  }
  s = Run(args);
  if (!s.ok()) return ReportError(s);
  return 0;
}

}  // namespace cli
}  // namespace tensorflux
