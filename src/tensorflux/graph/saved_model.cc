#include "tensorflux/graph/saved_model.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <vector>

#include "absl/strings/str_join.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "google/protobuf/text_format.h"

namespace tensorflux {
namespace {

namespace fs = std::filesystem;

bool ReadFileToString(const std::string& path, std::string* out) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return false;
  std::ostringstream ss;
  ss << f.rdbuf();
  *out = ss.str();
  return !f.bad();
}

}  // namespace

bool IsSavedModelPath(const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) return true;
  std::string base = fs::path(path).filename().string();
  return base == "saved_model.pb" || base == "saved_model.pbtxt";
}

StatusOr<SavedModel> ReadSavedModel(const std::string& path) {
  std::error_code ec;
  std::string file = path;
  if (fs::is_directory(path, ec)) {
    fs::path dir(path);
    if (fs::exists(dir / "saved_model.pb", ec)) {
      file = (dir / "saved_model.pb").string();
    } else if (fs::exists(dir / "saved_model.pbtxt", ec)) {
      file = (dir / "saved_model.pbtxt").string();
    } else {
      return errors::NotFound("no saved_model.pb or saved_model.pbtxt in directory '", path, "'");
    }
  }
  std::string bytes;
  if (!fs::exists(file, ec) || !ReadFileToString(file, &bytes))
    return errors::NotFound("SavedModel file '", file, "' not found");
  SavedModel model;
  if (fs::path(file).extension() == ".pbtxt") {
    if (!google::protobuf::TextFormat::ParseFromString(bytes, &model))
      return errors::DataLoss("cannot parse '", file, "' as a text SavedModel");
    return model;
  }
  google::protobuf::io::ArrayInputStream in(bytes.data(), static_cast<int>(bytes.size()));
  google::protobuf::io::CodedInputStream coded(&in);
  coded.SetRecursionLimit(200);
  if (bytes.size() > static_cast<size_t>(INT32_MAX) || !model.ParseFromCodedStream(&coded) ||
      !coded.ConsumedEntireMessage())
    return errors::DataLoss("cannot parse '", file, "' as a binary SavedModel");
  return model;
}

StatusOr<MetaGraphDef> SelectMetaGraph(const SavedModel& model, std::string_view tag) {
  if (model.meta_graphs_size() == 0)
    return errors::InvalidArgument("SavedModel has no meta graphs");
  for (const MetaGraphDef& mg : model.meta_graphs()) {
    for (const std::string& t : mg.meta_info_def().tags())
      if (t == tag) return mg;
  }
  return model.meta_graphs(0);
}

StatusOr<MetaGraphDef> SelectMetaGraphByTags(const SavedModel& model,
                                             const std::vector<std::string>& tags) {
  const std::set<std::string> want(tags.begin(), tags.end());
  std::vector<std::string> available;
  for (const MetaGraphDef& mg : model.meta_graphs()) {
    const auto& t = mg.meta_info_def().tags();
    if (std::set<std::string>(t.begin(), t.end()) == want) return mg;
    available.push_back("{" + absl::StrJoin(t, ", ") + "}");
  }
  return errors::NotFound("MetaGraphDef associated with tags {", absl::StrJoin(tags, ", "),
                          "} could not be found in SavedModel; available tag sets: ",
                          available.empty() ? "none" : absl::StrJoin(available, " "));
}

StatusOr<MetaGraphDef> LoadSavedModelMetaGraph(const std::string& path, std::string_view tag) {
  TX_ASSIGN_OR_RETURN(SavedModel model, ReadSavedModel(path));
  return SelectMetaGraph(model, tag);
}

StatusOr<const SignatureDef*> FindSignature(const MetaGraphDef& meta_graph,
                                            std::string_view name) {
  auto it = meta_graph.signature_def().find(std::string(name));
  if (it != meta_graph.signature_def().end()) return &it->second;
  std::vector<std::string> names;
  for (const auto& [k, v] : meta_graph.signature_def()) names.push_back(k);
  std::sort(names.begin(), names.end());
  return errors::InvalidArgument("SavedModel has no signature '", name, "' (signatures: ",
                                 names.empty() ? "none" : absl::StrJoin(names, ", "), ")");
}

StatusOr<std::string> SignatureTensorName(const SignatureDef& sig, std::string_view key,
                                          bool is_input) {
  const auto& map = is_input ? sig.inputs() : sig.outputs();
  auto it = map.find(std::string(key));
  if (it == map.end()) {
    std::vector<std::string> keys;
    for (const auto& [k, v] : map) keys.push_back(k);
    std::sort(keys.begin(), keys.end());
    return errors::NotFound("signature has no ", is_input ? "input" : "output", " '", key,
                            "' (", is_input ? "inputs" : "outputs", ": ",
                            keys.empty() ? "none" : absl::StrJoin(keys, ", "), ")");
  }
  if (it->second.encoding_case() != TensorInfo::kName || it->second.name().empty())
    return errors::InvalidArgument("signature ", is_input ? "input" : "output", " '", key,
                                   "' has no tensor name");
  return it->second.name();
}

StatusOr<std::vector<std::string>> SignatureTensorNames(const SignatureDef& sig,
                                                        std::string_view signature_name,
                                                        const std::vector<std::string>& keys,
                                                        bool is_input) {
  const auto& map = is_input ? sig.inputs() : sig.outputs();
  std::vector<std::string> unknown;
  for (const std::string& k : keys) {
    if (map.find(k) == map.end() &&
        std::find(unknown.begin(), unknown.end(), "'" + k + "'") == unknown.end())
      unknown.push_back("'" + k + "'");
  }
  if (!unknown.empty()) {
    std::vector<std::string> aliases;
    for (const auto& [k, v] : map) aliases.push_back(k);
    std::sort(aliases.begin(), aliases.end());
    const char* kind = is_input ? "input" : "output";
    return errors::InvalidArgument(
        "signature '", signature_name, "' has no ", kind, " named ", absl::StrJoin(unknown, ", "),
        " (its ", kind, "s: ", aliases.empty() ? "none" : absl::StrJoin(aliases, ", "),
        "); a signature call takes only these aliases, not graph tensor names");
  }
  std::vector<std::string> names;
  for (const std::string& k : keys) {
    TX_ASSIGN_OR_RETURN(std::string n, SignatureTensorName(sig, k, is_input));
    names.push_back(std::move(n));
  }
  return names;
}

}  // namespace tensorflux
