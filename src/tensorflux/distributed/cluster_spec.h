// ClusterSpec: the tasks of a cluster, job -> task index -> "host:port" (TF's
// tf.train.ClusterSpec / ClusterDef, proto/tensorflux/cluster.proto), and the two ways a server
// is told about it:
//
//   the --cluster flag:   "ps=10.0.0.1:2222;worker=10.0.0.2:2222,10.0.0.3:2222"
//                         jobs separated by ';', tasks of a job by ',' (indices 0, 1, ...);
//   TF_CONFIG (JSON), as Kubernetes operators set it:
//       {"cluster": {"ps": ["10.0.0.1:2222"], "worker": ["10.0.0.2:2222", "10.0.0.3:2222"]},
//        "task": {"type": "worker", "index": 1}}
//     a job may also map indices to addresses: "worker": {"0": "h:2222", "3": "h:2223"}.
//     "task" is optional (a client's TF_CONFIG has none); "environment", "rpc_layer" and other
//     keys are ignored. Task types are job names ("chief", "worker", "ps", ...), except that
//     an "evaluator" task may be absent from "cluster", as TF's operators set it (the
//     evaluator is not part of the training cluster).
//
// Rules (INVALID_ARGUMENT naming the offending part otherwise): a job name is a letter, then
// letters, digits or '_'; each job is given once and has at least one task; an address is
// "host:port" with a non-empty host (a name, an IPv4 address, or an IPv6 one in brackets:
// "[::1]:2222") and a port from 1 to 65535 (0 is allowed only where a server picks its port:
// tests); task indices are 0 .. 2^31-1.
//
// Task names are TF's: "/job:worker/replica:0/task:1"; the devices of that task are named
// "/job:worker/replica:0/task:1/device:CPU:0" and so on.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tensorflux/cluster.pb.h"
#include "tensorflux/core/status.h"

namespace tensorflux {

struct TfConfig;

class ClusterSpec {
 public:
  ClusterSpec() = default;

  // From the --cluster flag form above. An empty string is INVALID_ARGUMENT.
  static StatusOr<ClusterSpec> FromFlag(std::string_view flag);
  // From a ClusterDef (checked by the same rules).
  static StatusOr<ClusterSpec> FromClusterDef(const ClusterDef& def);
  // From the JSON object of TF_CONFIG's "cluster" (a document holding only that object).
  static StatusOr<ClusterSpec> FromJson(std::string_view json);

  ClusterDef ToClusterDef() const;
  // "ps=h:p;worker=h:p,h:p" when every job's indices are 0..n-1; jobs in name order.
  // StatusOr because sparse indices have no flag form (INVALID_ARGUMENT).
  StatusOr<std::string> ToFlag() const;

  // Job names, sorted.
  std::vector<std::string> jobs() const;
  // Task indices of `job`, ascending; empty for an unknown job.
  std::vector<int> task_indices(std::string_view job) const;
  int num_tasks(std::string_view job) const;
  bool HasTask(std::string_view job, int task) const;
  // NOT_FOUND naming the job and task when the cluster has no such task.
  StatusOr<std::string> TaskAddress(std::string_view job, int task) const;
  // Every task's name ("/job:ps/replica:0/task:0", ...), jobs in name order, tasks ascending.
  std::vector<std::string> TaskNames() const;

  // The task part of a task or device name ("/job:w/replica:0/task:1/device:CPU:0" ->
  // "/job:w/replica:0/task:1"): the name must give job and task (replica defaults to 0).
  // INVALID_ARGUMENT for a malformed name or one without job or task.
  static StatusOr<std::string> TaskNameOf(std::string_view task_or_device);
  // The address serving a task or device name; TaskNameOf's errors, NOT_FOUND when the cluster
  // has no such task.
  StatusOr<std::string> AddressOf(std::string_view task_or_device) const;

  bool empty() const { return jobs_.empty(); }
  friend bool operator==(const ClusterSpec& a, const ClusterSpec& b) { return a.jobs_ == b.jobs_; }

 private:
  friend StatusOr<TfConfig> ParseTfConfig(std::string_view json);
  Status AddTask(const std::string& job, int64_t index, const std::string& address,
                 std::string_view context);
  std::map<std::string, std::map<int, std::string>, std::less<>> jobs_;
};

// TF's task type of an evaluator, the one task TF_CONFIG may leave out of its cluster.
inline constexpr char kEvaluatorJob[] = "evaluator";

// TF_CONFIG's content: the cluster and, for a server, its own task.
struct TfConfig {
  ClusterSpec cluster;
  // Absent when TF_CONFIG has no "task" (a client).
  std::optional<std::string> task_type;
  int task_index = 0;
  // False for an evaluator task that "cluster" does not list (kEvaluatorJob).
  bool in_cluster = true;
};

// Parses a TF_CONFIG document. INVALID_ARGUMENT (mentioning TF_CONFIG) for JSON that does not
// parse, a missing or malformed "cluster", a "task" without a string "type" or with an "index"
// that is not a non-negative integer, or a task that is not in the cluster (but for an
// evaluator when the cluster has no "evaluator" job: in_cluster is then false).
StatusOr<TfConfig> ParseTfConfig(std::string_view json);
// TF_CONFIG from the environment: nullopt when it is unset or empty, else ParseTfConfig.
StatusOr<std::optional<TfConfig>> TfConfigFromEnvironment();

// Checks "host:port" (see the rules above); `allow_port_zero` for a server asking the OS to
// pick a port.
Status ValidateAddress(std::string_view address, bool allow_port_zero = false);

}  // namespace tensorflux
