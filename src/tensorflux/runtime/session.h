// Session: the client's handle to a graph being run. Create/Extend give it a GraphDef; Run feeds
// tensors by name ("node:i"), fetches tensors by name, runs target nodes, and returns the fetched
// values in order. LocalSession (NewSession with an empty target) runs in this process.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tensorflux/config.pb.h"
#include "tensorflux/device_attributes.pb.h"
#include "tensorflux/core/status.h"
#include "tensorflux/core/tensor.h"
#include "tensorflux/graph.pb.h"

namespace tensorflux {

struct SessionOptions {
  // "" = in process (LocalSession). "grpc://host:port" = the master of a tensorflux-server
  // (distributed/grpc_session.h; registered when libtensorflux_distributed is loaded).
  std::string target;
  ConfigProto config;
};

class Session {
 public:
  virtual ~Session() = default;

  // The first graph. FAILED_PRECONDITION if a graph was already created; the import's error
  // (NOT_FOUND unknown op, INVALID_ARGUMENT bad node, cycle...) otherwise.
  virtual Status Create(const GraphDef& graph) = 0;
  // Adds nodes to the session's graph (names must be new).
  virtual Status Extend(const GraphDef& graph) = 0;

  // Runs the minimal subgraph that produces `output_tensor_names` and runs `target_node_names`,
  // with `inputs` fed (any tensor can be fed; the fed value replaces that output's data edges).
  // Errors: NOT_FOUND for a feed, fetch or target not in the graph; INVALID_ARGUMENT for a
  // feed of the wrong dtype or a shape incompatible with a Placeholder's declared shape, an
  // unfed Placeholder the run needs, or a kernel's error naming the node. Thread-safe.
  virtual Status Run(const RunOptions& run_options,
                     const std::vector<std::pair<std::string, Tensor>>& inputs,
                     const std::vector<std::string>& output_tensor_names,
                     const std::vector<std::string>& target_node_names,
                     std::vector<Tensor>* outputs, RunMetadata* run_metadata) = 0;

  Status Run(const std::vector<std::pair<std::string, Tensor>>& inputs,
             const std::vector<std::string>& output_tensor_names,
             const std::vector<std::string>& target_node_names, std::vector<Tensor>* outputs) {
    return Run(RunOptions(), inputs, output_tensor_names, target_node_names, outputs, nullptr);
  }

  // Releases the graph, executors and resources; later calls fail with CANCELLED.
  virtual Status Close() = 0;

  // The devices this session can place nodes on (TF's Session::ListDevices).
  virtual Status ListDevices(std::vector<DeviceAttributes>* response) = 0;
};

// A LocalSession for target "", else the session of the factory registered for the target's
// prefix. INVALID_ARGUMENT for a target no factory serves.
StatusOr<std::unique_ptr<Session>> NewSession(const SessionOptions& options);

// Makes NewSession hand targets that start with `prefix` (e.g. "grpc://") to `factory`. Called
// from static initializers of the library that implements the target; a later registration of
// the same prefix replaces the earlier one.
using SessionFactory = std::function<StatusOr<std::unique_ptr<Session>>(const SessionOptions&)>;
void RegisterSessionFactory(const std::string& prefix, SessionFactory factory);

}  // namespace tensorflux
