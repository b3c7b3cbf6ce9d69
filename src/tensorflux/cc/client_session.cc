#include "tensorflux/cc/client_session.h"

#include <string>
#include <utility>

#include "tensorflux/graph/graph.h"

namespace tensorflux {

ClientSession::ClientSession(const Scope& scope, const SessionOptions& options) : scope_(scope) {
  auto s = NewSession(options);
  if (s.ok()) {
    session_ = std::move(*s);
  } else {
    init_status_ = s.status();
  }
}

ClientSession::~ClientSession() {
  if (session_) session_->Close().IgnoreError();
}

Status ClientSession::MaybeExtendGraph() const {
  absl::MutexLock lock(&mu_);
  if (scope_.graph()->num_nodes() == nodes_sent_ && created_) return OkStatus();
  GraphDef full;
  TX_RETURN_IF_ERROR(scope_.ToGraphDef(&full));
  // The scope only ever adds nodes and ToGraphDef lists them in id order, so the new ones are
  // the tail.
  GraphDef delta;
  *delta.mutable_versions() = full.versions();
  for (int i = nodes_sent_; i < full.node_size(); ++i) *delta.add_node() = full.node(i);
  if (!created_) {
    *delta.mutable_library() = full.library();
    TX_RETURN_IF_ERROR(session_->Create(delta));
    created_ = true;
  } else {
    TX_RETURN_IF_ERROR(session_->Extend(delta));
  }
  nodes_sent_ = full.node_size();
  return OkStatus();
}

Status ClientSession::Run(const std::vector<Output>& fetch_outputs,
                          std::vector<Tensor>* outputs) const {
  return Run(FeedType{}, fetch_outputs, {}, outputs);
}

Status ClientSession::Run(const FeedType& inputs, const std::vector<Output>& fetch_outputs,
                          std::vector<Tensor>* outputs) const {
  return Run(inputs, fetch_outputs, {}, outputs);
}

Status ClientSession::Run(const FeedType& inputs, const std::vector<Output>& fetch_outputs,
                          const std::vector<Operation>& run_outputs,
                          std::vector<Tensor>* outputs) const {
  return Run(RunOptions(), inputs, fetch_outputs, run_outputs, outputs, nullptr);
}

Status ClientSession::Run(const RunOptions& run_options, const FeedType& inputs,
                          const std::vector<Output>& fetch_outputs,
                          const std::vector<Operation>& run_outputs,
                          std::vector<Tensor>* outputs, RunMetadata* run_metadata) const {
  TX_RETURN_IF_ERROR(init_status_);
  TX_RETURN_IF_ERROR(scope_.status());
  std::vector<std::pair<std::string, Tensor>> feeds;
  feeds.reserve(inputs.size());
  for (const auto& [out, init] : inputs) {
    if (out.node() == nullptr) return errors::InvalidArgument("ClientSession::Run: a feed key is an empty Output");
    if (!init.status.ok())
      return errors::InvalidArgument("feed for '", out.name(), "': ", init.status.message());
    feeds.emplace_back(out.name(), init.tensor);
  }
  std::vector<std::string> fetches;
  fetches.reserve(fetch_outputs.size());
  for (size_t i = 0; i < fetch_outputs.size(); ++i) {
    if (fetch_outputs[i].node() == nullptr)
      return errors::InvalidArgument("ClientSession::Run: fetch ", i, " is an empty Output");
    fetches.push_back(fetch_outputs[i].name());
  }
  std::vector<std::string> targets;
  for (size_t i = 0; i < run_outputs.size(); ++i) {
    if (run_outputs[i].node() == nullptr)
      return errors::InvalidArgument("ClientSession::Run: target ", i, " is an empty Operation");
    targets.push_back(run_outputs[i].name());
  }
  TX_RETURN_IF_ERROR(MaybeExtendGraph());
  return session_->Run(run_options, feeds, fetches, targets, outputs, run_metadata);
}

}  // namespace tensorflux
