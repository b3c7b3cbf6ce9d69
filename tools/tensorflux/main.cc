// tensorflux: run and inspect TensorFlow-format graphs from the command line.
#include <cstdio>
#include <string>
#include <vector>

#include "cli.h"

namespace {

const char kUsage[] =
    "usage: tensorflux <command> [options]\n"
    "\n"
    "commands:\n"
    "  run      run a graph: feed tensors, fetch tensors, print or save them\n"
    "  inspect  list a graph's ops, placeholders and unconsumed nodes; or a TFRecord file's\n"
    "           record count and first Example\n"
    "  convert  idx2tfrecord IMAGES LABELS OUT.tfrecord: IDX files to tf.train.Example records\n"
    "  gradients  add the gradient nodes of ys w.r.t. xs to a graph (tf.gradients)\n"
    "  predict  classify images (IDX, .npy, PNG) with a frozen model: class and probability\n"
    "  help     show this text, or `tensorflux help COMMAND` for a command's options\n"
    "\n"
    "GRAPH is a binary GraphDef (.pb), a text GraphDef (.pbtxt), or a SavedModel\n"
    "(saved_model.pb or its directory). On any error tensorflux prints `CODE: message`\n"
    "to stderr and exits with status 1.\n";

}  // namespace

int main(int argc, char** argv) {
  using namespace tensorflux;
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty())
    return cli::ReportError(errors::InvalidArgument("no command given (try `tensorflux --help`)"));
  const std::string cmd = args[0];
  args.erase(args.begin());
  if (cmd == "-h" || cmd == "--help" || cmd == "help") {
    if (!args.empty() && args[0] == "run") {
      std::fputs(cli::kRunUsage, stdout);
    } else if (!args.empty() && args[0] == "inspect") {
      std::fputs(cli::kInspectUsage, stdout);
    } else if (!args.empty() && args[0] == "convert") {
      std::fputs(cli::kConvertUsage, stdout);
    } else if (!args.empty() && args[0] == "gradients") {
      std::fputs(cli::kGradientsUsage, stdout);
    } else if (!args.empty() && args[0] == "predict") {
      std::fputs(cli::kPredictUsage, stdout);
    } else {
      std::fputs(kUsage, stdout);
    }
    return 0;
  }
  if (cmd == "run") return cli::RunMain(args);
  if (cmd == "inspect") return cli::InspectMain(args);
  if (cmd == "gradients") return cli::GradientsMain(args);
  if (cmd == "convert") return cli::ConvertMain(args);
  if (cmd == "predict") return cli::PredictMain(args);
  return cli::ReportError(errors::InvalidArgument(
      "unknown command '", cmd, "' (commands: run, inspect, convert, gradients, predict, help)"));
}
