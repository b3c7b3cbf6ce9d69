// ClientSession: runs the graph a Scope builds (TF's cc/client/client_session.h).
//
//   Scope root = Scope::NewRootScope();
//   auto x = ops::Placeholder(root, DT_FLOAT);
//   auto y = ops::Mul(root, x, 2.f);
//   ClientSession session(root);
//   std::vector<Tensor> out;
//   Status s = session.Run({{x, {1.f, 2.f}}}, {y}, &out);   // out[0] = [2 4]
//
// The session is created lazily from the scope's graph on the first Run and extended with the
// nodes added since, so ops may be added between runs. Run is thread-safe.
#pragma once

#include <memory>
#include <unordered_map>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "tensorflux/cc/ops.h"
#include "tensorflux/cc/scope.h"
#include "tensorflux/config.pb.h"
#include "tensorflux/core/status.h"
#include "tensorflux/core/tensor.h"
#include "tensorflux/runtime/session.h"

namespace tensorflux {

class ClientSession {
 public:
  // Values to feed, keyed by the tensor they replace (any tensor can be fed, not only
  // Placeholders).
  using FeedType = std::unordered_map<Output, Input::Initializer, OutputHash>;

  // A session for `scope`'s graph with `options` (default: in process). Errors in creating it
  // (bad target) are returned by every Run.
  explicit ClientSession(const Scope& scope, const SessionOptions& options = SessionOptions());
  ~ClientSession();
  ClientSession(const ClientSession&) = delete;
  ClientSession& operator=(const ClientSession&) = delete;

  // Evaluates `fetch_outputs` (in order into *outputs) with `inputs` fed, also running the
  // `run_outputs` operations. Errors: the scope's recorded status (graph construction failed);
  // INVALID_ARGUMENT for a bad feed initializer or an empty Output/Operation; otherwise the
  // Session's errors (unfed Placeholder, wrong feed dtype or shape, kernel errors, ...).
  Status Run(const std::vector<Output>& fetch_outputs, std::vector<Tensor>* outputs) const;
  Status Run(const FeedType& inputs, const std::vector<Output>& fetch_outputs,
             std::vector<Tensor>* outputs) const;
  Status Run(const FeedType& inputs, const std::vector<Output>& fetch_outputs,
             const std::vector<Operation>& run_outputs, std::vector<Tensor>* outputs) const;
  Status Run(const RunOptions& run_options, const FeedType& inputs,
             const std::vector<Output>& fetch_outputs, const std::vector<Operation>& run_outputs,
             std::vector<Tensor>* outputs, RunMetadata* run_metadata) const;

  // The underlying Session (nullptr if it could not be created).
  Session* session() const { return session_.get(); }

 private:
  // Sends the nodes added to the graph since the last call to the session.
  Status MaybeExtendGraph() const;

  Scope scope_;
  Status init_status_;
  std::unique_ptr<Session> session_;
  mutable absl::Mutex mu_;
  mutable int nodes_sent_ = 0;  // GraphDef nodes (in id order) the session already has
  mutable bool created_ = false;
};

}  // namespace tensorflux
