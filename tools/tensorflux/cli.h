// The `tensorflux` command-line tool: shared pieces of its subcommands.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "tensorflux/core/status.h"
#include "tensorflux/core/tensor.h"
#include "tensorflux/graph.pb.h"
#include "tensorflux/saved_model.pb.h"

namespace tensorflux {
namespace cli {

// A graph file as given on the command line.
struct LoadedGraph {
  std::string path;
  GraphDef graph_def;
  bool is_saved_model = false;
  MetaGraphDef meta_graph;  // the chosen MetaGraphDef when is_saved_model
};

// GRAPH: a binary (.pb) or text (.pbtxt) GraphDef, or a SavedModel (saved_model.pb(txt) or its
// directory; the MetaGraphDef tagged "serve", else the first). NOT_FOUND for a missing file,
// DATA_LOSS / INVALID_ARGUMENT for one that does not parse.
StatusOr<LoadedGraph> LoadGraph(const std::string& path);

// Parses an inline literal ("5", "-1.5e3", "true", "[[1,2],[3,4]]", "[]") into a tensor of
// `dtype` (numeric dtypes and bool). INVALID_ARGUMENT for malformed or ragged text, more than 8
// dims, a value out of the dtype's range, a fractional value for an integer dtype, or an
// unsupported dtype; messages name `what` (e.g. the feed).
StatusOr<Tensor> ParseLiteral(std::string_view text, DataType dtype, std::string_view what);

// Values nested with brackets, space separated, floats in shortest round-trip form:
// "[[1 2.5][3 4]]"; a scalar prints as its value.
std::string FormatValues(const Tensor& t);
// "float[1,3,3]"
std::string FormatTypeAndShape(const Tensor& t);

// Prints "CODE: message" to stderr and returns 1.
int ReportError(const Status& s);

// inspect --optimize / --place / --partition / --dot (optimize.cc).
struct OptimizeArgs {
  bool optimize = false;
  bool place = false;      // the passes, then the Placer over `devices`
  bool partition = false;  // and the partitioner (implies place)
  std::string devices = "CPU=1";  // TYPE=COUNT[,TYPE=COUNT...], as ConfigProto.device_count
  std::string dot_file;  // "" none, "-" stdout
  std::vector<std::string> feeds, fetches, targets;
  bool Requested() const { return optimize || place || !dot_file.empty(); }
};
int OptimizeAndReport(const LoadedGraph& loaded, const OptimizeArgs& args);

// Subcommands; argv excludes the program and subcommand names.
int RunMain(const std::vector<std::string>& args);
int InspectMain(const std::vector<std::string>& args);
// inspect --op NAME (op_info.cc): the op's definition, kernels, gradient and conformance cases.
int InspectOpMain(const std::string& op);
extern const char kRunUsage[];
extern const char kInspectUsage[];
int GradientsMain(const std::vector<std::string>& args);  // gradients_cmd.cc
extern const char kGradientsUsage[];
// records_cmd.cc: `convert idx2tfrecord`, and `inspect` of TFRecord files (detected by a valid
// length CRC in the first record header, plain or gzip).
int ConvertMain(const std::vector<std::string>& args);
// predict.cc: classify images with a frozen graph.
int PredictMain(const std::vector<std::string>& args);
extern const char kPredictUsage[];
extern const char kConvertUsage[];
bool LooksLikeTfRecord(const std::string& path);
int InspectRecords(const std::string& path);

}  // namespace cli
}  // namespace tensorflux
