// GRAPH argument: GraphDef (.pb / .pbtxt) or SavedModel.
#include "cli.h"
#include "tensorflux/graph/graph_def_io.h"
#include "tensorflux/graph/saved_model.h"

namespace tensorflux {
namespace cli {

StatusOr<LoadedGraph> LoadGraph(const std::string& path) {
  LoadedGraph g;
  g.path = path;
  if (IsSavedModelPath(path)) {
    TX_ASSIGN_OR_RETURN(g.meta_graph, LoadSavedModelMetaGraph(path));
    g.is_saved_model = true;
    g.graph_def = g.meta_graph.graph_def();
    return g;
  }
  TX_ASSIGN_OR_RETURN(g.graph_def, ReadGraphDefFile(path));
  return g;
}

}  // namespace cli
}  // namespace tensorflux
