// Loading a TensorFlow SavedModel's graph and signatures. Restoring its variables needs a session:
// train/saved_model_loader.h.
//
// A SavedModel is a `saved_model.pb` (binary tensorflux.SavedModel, TF's field numbers) or
// `saved_model.pbtxt` (text) file, usually inside a directory with `variables/` and `assets/`.
// It holds one or more MetaGraphDefs, each with tags (e.g. "serve"), a GraphDef and a map of
// SignatureDefs naming the graph tensors behind each input and output key.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "tensorflux/core/status.h"
#include "tensorflux/saved_model.pb.h"

namespace tensorflux {

inline constexpr char kSavedModelServeTag[] = "serve";
inline constexpr char kDefaultServingSignature[] = "serving_default";

// True when `path` is a directory, or a file whose base name is saved_model.pb or
// saved_model.pbtxt.
bool IsSavedModelPath(const std::string& path);

// Parses `path`: a saved_model.pb / saved_model.pbtxt file, or a directory holding one (the
// binary one is preferred). NOT_FOUND when neither exists, DATA_LOSS when the file does not parse
// as a SavedModel.
StatusOr<SavedModel> ReadSavedModel(const std::string& path);

// The MetaGraphDef tagged `tag` (default "serve"), else the first one. INVALID_ARGUMENT when the
// SavedModel holds no meta graphs.
StatusOr<MetaGraphDef> SelectMetaGraph(const SavedModel& model,
                                       std::string_view tag = kSavedModelServeTag);

// The MetaGraphDef whose tag set equals `tags` (order and repeats ignored), as TF's loader picks
// it. NOT_FOUND listing the tag sets that exist.
StatusOr<MetaGraphDef> SelectMetaGraphByTags(const SavedModel& model,
                                             const std::vector<std::string>& tags);

// ReadSavedModel + SelectMetaGraph.
StatusOr<MetaGraphDef> LoadSavedModelMetaGraph(const std::string& path,
                                               std::string_view tag = kSavedModelServeTag);

// The signature `name`. INVALID_ARGUMENT naming the signatures that exist when it is absent.
StatusOr<const SignatureDef*> FindSignature(const MetaGraphDef& meta_graph, std::string_view name);

// The graph tensor ("node:i") behind a signature's input (`is_input`) or output key. NOT_FOUND
// naming the signature's keys when `key` is not one of them; INVALID_ARGUMENT when the TensorInfo
// has no tensor name (e.g. a sparse/composite encoding).
StatusOr<std::string> SignatureTensorName(const SignatureDef& sig, std::string_view key,
                                          bool is_input);

// A signature call's names: the graph tensor behind each of `keys`, which must all be input
// (`is_input`) or output aliases of `sig` (named `signature_name`). INVALID_ARGUMENT naming every
// key that is not an alias and listing the signature's aliases, e.g. "signature
// 'serving_default' has no input named 'x:0', 'bogus' (its inputs: x)". A key is never taken as
// a graph tensor name, even when the graph has a tensor of that name (TF's saved_model_cli and
// signature functions refuse such names too).
StatusOr<std::vector<std::string>> SignatureTensorNames(const SignatureDef& sig,
                                                        std::string_view signature_name,
                                                        const std::vector<std::string>& keys,
                                                        bool is_input);

}  // namespace tensorflux
