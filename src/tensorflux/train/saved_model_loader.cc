#include "tensorflux/train/saved_model_loader.h"

#include <filesystem>
#include <utility>

#include "tensorflux/graph/saved_model.h"
#include "tensorflux/train/tensor_bundle.h"

namespace tensorflux {

namespace fs = std::filesystem;

std::string SavedModelVariablesPrefix(const std::string& export_dir) {
  return (fs::path(export_dir) / "variables" / "variables").string();
}

std::string SavedModelExportDir(const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) return path;
  const std::string dir = fs::path(path).parent_path().string();
  return dir.empty() ? "." : dir;
}

Status RestoreSavedModelVariables(Session* session, const MetaGraphDef& meta_graph,
                                  const std::string& export_dir) {
  const SaverDef& saver = meta_graph.saver_def();
  const std::string prefix = SavedModelVariablesPrefix(export_dir);
  std::error_code ec;
  if (saver.restore_op_name().empty() || !fs::exists(BundleIndexFilename(prefix), ec))
    return OkStatus();  // TF: "The specified SavedModel has no variables; no checkpoints were restored."
  if (saver.filename_tensor_name().empty())
    return errors::InvalidArgument("SavedModel '", export_dir, "': saver_def names restore op '",
                                   saver.restore_op_name(), "' but no filename tensor");
  std::vector<Tensor> unused;
  return session->Run({{saver.filename_tensor_name(), Tensor::Scalar<std::string>(prefix)}}, {},
                      {saver.restore_op_name()}, &unused);
}

StatusOr<SavedModelBundle> LoadSavedModel(const SessionOptions& options,
                                          const std::vector<std::string>& tags,
                                          const std::string& export_dir) {
  TX_ASSIGN_OR_RETURN(SavedModel model, ReadSavedModel(export_dir));
  SavedModelBundle bundle;
  TX_ASSIGN_OR_RETURN(bundle.meta_graph_def, SelectMetaGraphByTags(model, tags));
  TX_ASSIGN_OR_RETURN(bundle.session, NewSession(options));
  TX_RETURN_IF_ERROR(bundle.session->Create(bundle.meta_graph_def.graph_def()));
  TX_RETURN_IF_ERROR(RestoreSavedModelVariables(bundle.session.get(), bundle.meta_graph_def,
                                                SavedModelExportDir(export_dir)));
  return bundle;
}

}  // namespace tensorflux
