// Loading a TensorFlow 1.x SavedModel into a session with its variables restored (TF's
// LoadSavedModel / tf.compat.v1.saved_model.loader.load). Parsing and choosing the MetaGraphDef
// are in graph/saved_model.h; this adds the step that needs a Session (so it lives above
// runtime/, not in graph/).
//
// Variables are restored the way TF's loader does it: the MetaGraphDef's SaverDef names a
// restore op and a filename tensor; running the op with `<export_dir>/variables/variables` fed
// to that tensor runs the graph's own RestoreV2 + Assign nodes on the tensor bundle there
// (train/tensor_bundle.h). Not done: the legacy_init_op / main_op collections and assets (the
// MetaGraphDef's collection_def and asset_file_def are not parsed).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tensorflux/core/status.h"
#include "tensorflux/runtime/session.h"
#include "tensorflux/saved_model.pb.h"

namespace tensorflux {

// "<export_dir>/variables/variables": the prefix of a SavedModel's checkpoint.
std::string SavedModelVariablesPrefix(const std::string& export_dir);

// The SavedModel directory of `path` (a directory, or the directory holding saved_model.pb).
std::string SavedModelExportDir(const std::string& path);

// Runs `meta_graph`'s saver_def restore op in `session` (whose graph is meta_graph's) with the
// filename tensor fed the variables prefix of `export_dir`. OK without doing anything when the
// SavedModel has no variables (no variables/variables.index) or no saver_def restore op, as TF.
// The restore op's errors come back (NOT_FOUND, DATA_LOSS, INVALID_ARGUMENT naming the node).
Status RestoreSavedModelVariables(Session* session, const MetaGraphDef& meta_graph,
                                  const std::string& export_dir);

struct SavedModelBundle {
  std::unique_ptr<Session> session;
  MetaGraphDef meta_graph_def;
};

// Reads the SavedModel at `export_dir`, picks the MetaGraphDef whose tag set equals `tags`
// (NOT_FOUND listing the available tag sets otherwise), creates a session with its graph and
// restores its variables.
StatusOr<SavedModelBundle> LoadSavedModel(const SessionOptions& options,
                                          const std::vector<std::string>& tags,
                                          const std::string& export_dir);

}  // namespace tensorflux
