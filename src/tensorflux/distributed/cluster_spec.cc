#include "tensorflux/distributed/cluster_spec.h"

#include <cstdlib>
#include <limits>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "nlohmann/json.hpp"
#include "tensorflux/devices/device_name_utils.h"

namespace tensorflux {
namespace {

absl::string_view AV(std::string_view s) { return absl::string_view(s.data(), s.size()); }

bool IsJobName(std::string_view s) {
  if (s.empty() || !absl::ascii_isalpha(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

bool IsHostChar(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_';
}

}  // namespace

Status ValidateAddress(std::string_view address, bool allow_port_zero) {
  auto bad = [&](const char* why) {
    return errors::InvalidArgument("Bad task address '", address, "': ", why,
                                   " (expected \"host:port\")");
  };
  std::string_view host, port;
  if (!address.empty() && address[0] == '[') {  // [IPv6]:port
    const size_t close = address.find(']');
    if (close == std::string_view::npos || close + 1 >= address.size() ||
        address[close + 1] != ':') {
      return bad("an IPv6 host must be in brackets followed by ':port'");
    }
    host = address.substr(1, close - 1);
    port = address.substr(close + 2);
    if (host.empty()) return bad("empty host");
    for (char c : host) {
      if (!absl::ascii_isxdigit(static_cast<unsigned char>(c)) && c != ':' && c != '.') {
        return bad("bad character in the IPv6 host");
      }
    }
  } else {
    const size_t colon = address.rfind(':');
    if (colon == std::string_view::npos) return bad("no port");
    host = address.substr(0, colon);
    port = address.substr(colon + 1);
    if (host.empty()) return bad("empty host");
    for (char c : host) {
      if (!IsHostChar(c)) return bad("bad character in the host");
    }
  }
  int p = -1;
  if (port.empty() || port.size() > 5 || !absl::SimpleAtoi(AV(port), &p) || p > 65535 ||
      p < (allow_port_zero ? 0 : 1) || !absl::ascii_isdigit(static_cast<unsigned char>(port[0]))) {
    return bad(allow_port_zero ? "the port must be 0 to 65535" : "the port must be 1 to 65535");
  }
  return OkStatus();
}

Status ClusterSpec::AddTask(const std::string& job, int64_t index, const std::string& address,
                            std::string_view context) {
  if (!IsJobName(job)) {
    return errors::InvalidArgument("Bad job name '", job, "' in ", context,
                                   ": a letter, then letters, digits or '_'");
  }
  if (index < 0 || index > std::numeric_limits<int32_t>::max()) {
    return errors::InvalidArgument("Bad task index ", index, " of job '", job, "' in ", context);
  }
  Status s = ValidateAddress(address);
  if (!s.ok()) {
    return errors::InvalidArgument(s.message(), " for /job:", job, "/task:", index, " in ",
                                   context);
  }
  auto& tasks = jobs_[job];
  if (!tasks.emplace(static_cast<int>(index), address).second) {
    return errors::InvalidArgument("Task ", index, " of job '", job, "' is given twice in ",
                                   context);
  }
  return OkStatus();
}

StatusOr<ClusterSpec> ClusterSpec::FromFlag(std::string_view flag) {
  const std::string context = absl::StrCat("--cluster '", AV(flag), "'");
  if (flag.empty()) {
    return errors::InvalidArgument("Empty cluster specification: expected ",
                                   "\"job=host:port,host:port;job2=host:port\"");
  }
  ClusterSpec spec;
  for (absl::string_view part : absl::StrSplit(AV(flag), ';')) {
    const size_t eq = part.find('=');
    if (eq == absl::string_view::npos) {
      return errors::InvalidArgument("Bad job '", part, "' in ", context,
                                     ": expected \"job=host:port[,host:port...]\"");
    }
    const std::string job(part.substr(0, eq));
    if (spec.jobs_.count(job) != 0) {
      return errors::InvalidArgument("Job '", job, "' is given twice in ", context);
    }
    absl::string_view addresses = part.substr(eq + 1);
    if (addresses.empty()) {
      return errors::InvalidArgument("Job '", job, "' has no tasks in ", context);
    }
    int index = 0;
    for (absl::string_view a : absl::StrSplit(addresses, ',')) {
      TX_RETURN_IF_ERROR(spec.AddTask(job, index++, std::string(a), context));
    }
  }
  return spec;
}

StatusOr<ClusterSpec> ClusterSpec::FromClusterDef(const ClusterDef& def) {
  ClusterSpec spec;
  for (const JobDef& job : def.job()) {
    if (spec.jobs_.count(job.name()) != 0) {
      return errors::InvalidArgument("Job '", job.name(), "' is given twice in the ClusterDef");
    }
    if (job.tasks().empty()) {
      return errors::InvalidArgument("Job '", job.name(), "' has no tasks in the ClusterDef");
    }
    for (const auto& [index, address] : job.tasks()) {
      TX_RETURN_IF_ERROR(spec.AddTask(job.name(), index, address, "the ClusterDef"));
    }
  }
  return spec;
}

namespace {

// Adds the tasks of a parsed "cluster" JSON object through `add(job, index, address)`.
template <typename AddFn>
Status ClusterFromJson(const nlohmann::json& cluster, std::string_view context, AddFn add) {
  if (!cluster.is_object()) {
    return errors::InvalidArgument(context, ": \"cluster\" must be an object of jobs");
  }
  for (const auto& [job, tasks] : cluster.items()) {
    auto addr_of = [&](const nlohmann::json& a, const std::string& where) -> StatusOr<std::string> {
      if (!a.is_string()) {
        return errors::InvalidArgument(context, ": ", where, " must be a \"host:port\" string");
      }
      return a.get<std::string>();
    };
    if (tasks.is_array()) {
      if (tasks.empty()) return errors::InvalidArgument(context, ": job '", job, "' has no tasks");
      for (size_t i = 0; i < tasks.size(); ++i) {
        TX_ASSIGN_OR_RETURN(std::string a,
                            addr_of(tasks[i], absl::StrCat("task ", i, " of job '", job, "'")));
        TX_RETURN_IF_ERROR(add(job, static_cast<int64_t>(i), a));
      }
    } else if (tasks.is_object()) {
      if (tasks.empty()) return errors::InvalidArgument(context, ": job '", job, "' has no tasks");
      for (const auto& [key, a] : tasks.items()) {
        int64_t index = -1;
        if (key.empty() || !absl::ascii_isdigit(static_cast<unsigned char>(key[0])) ||
            !absl::SimpleAtoi(key, &index)) {
          return errors::InvalidArgument(context, ": task index '", key, "' of job '", job,
                                         "' is not a non-negative integer");
        }
        TX_ASSIGN_OR_RETURN(std::string addr,
                            addr_of(a, absl::StrCat("task ", key, " of job '", job, "'")));
        TX_RETURN_IF_ERROR(add(job, index, addr));
      }
    } else {
      return errors::InvalidArgument(context, ": job '", job,
                                     "' must be a list of \"host:port\" or an object of "
                                     "index -> \"host:port\"");
    }
  }
  return OkStatus();
}

StatusOr<nlohmann::json> ParseJson(std::string_view text, std::string_view context) {
  nlohmann::json j = nlohmann::json::parse(text.begin(), text.end(), nullptr,
                                           /*allow_exceptions=*/false);
  if (j.is_discarded()) return errors::InvalidArgument(context, " is not valid JSON");
  return j;
}

}  // namespace

StatusOr<ClusterSpec> ClusterSpec::FromJson(std::string_view json) {
  constexpr std::string_view kContext = "the cluster JSON";
  TX_ASSIGN_OR_RETURN(nlohmann::json j, ParseJson(json, kContext));
  ClusterSpec spec;
  TX_RETURN_IF_ERROR(ClusterFromJson(
      j, kContext,
      [&](const std::string& job, int64_t i, const std::string& a) {
        return spec.AddTask(job, i, a, kContext);
      }));
  if (spec.empty()) return errors::InvalidArgument(kContext, " has no jobs");
  return spec;
}

ClusterDef ClusterSpec::ToClusterDef() const {
  ClusterDef def;
  for (const auto& [name, tasks] : jobs_) {
    JobDef* job = def.add_job();
    job->set_name(name);
    for (const auto& [index, address] : tasks) (*job->mutable_tasks())[index] = address;
  }
  return def;
}

StatusOr<std::string> ClusterSpec::ToFlag() const {
  std::vector<std::string> parts;
  for (const auto& [name, tasks] : jobs_) {
    std::vector<std::string> addresses;
    int expect = 0;
    for (const auto& [index, address] : tasks) {
      if (index != expect++) {
        return errors::InvalidArgument("Job '", name, "' has sparse task indices, which the ",
                                       "--cluster flag cannot express");
      }
      addresses.push_back(address);
    }
    parts.push_back(absl::StrCat(name, "=", absl::StrJoin(addresses, ",")));
  }
  return absl::StrJoin(parts, ";");
}

std::vector<std::string> ClusterSpec::jobs() const {
  std::vector<std::string> out;
  for (const auto& [name, tasks] : jobs_) out.push_back(name);
  return out;
}

std::vector<int> ClusterSpec::task_indices(std::string_view job) const {
  std::vector<int> out;
  auto it = jobs_.find(job);
  if (it == jobs_.end()) return out;
  for (const auto& [index, address] : it->second) out.push_back(index);
  return out;
}

int ClusterSpec::num_tasks(std::string_view job) const {
  auto it = jobs_.find(job);
  return it == jobs_.end() ? 0 : static_cast<int>(it->second.size());
}

bool ClusterSpec::HasTask(std::string_view job, int task) const {
  auto it = jobs_.find(job);
  return it != jobs_.end() && it->second.count(task) != 0;
}

StatusOr<std::string> ClusterSpec::TaskAddress(std::string_view job, int task) const {
  auto it = jobs_.find(job);
  if (it == jobs_.end()) {
    return errors::NotFound("The cluster has no job '", job, "' (jobs: ",
                            absl::StrJoin(jobs(), ", "), ")");
  }
  auto t = it->second.find(task);
  if (t == it->second.end()) {
    return errors::NotFound("The cluster has no task ", task, " in job '", job, "' (",
                            it->second.size(), " tasks)");
  }
  return t->second;
}

std::vector<std::string> ClusterSpec::TaskNames() const {
  std::vector<std::string> out;
  for (const auto& [name, tasks] : jobs_) {
    for (const auto& [index, address] : tasks) {
      out.push_back(absl::StrCat("/job:", name, "/replica:0/task:", index));
    }
  }
  return out;
}

StatusOr<std::string> ClusterSpec::TaskNameOf(std::string_view task_or_device) {
  TX_ASSIGN_OR_RETURN(DeviceNameUtils::ParsedName p, DeviceNameUtils::Parse(task_or_device));
  if (!p.has_job || !p.has_task) {
    return errors::InvalidArgument("'", task_or_device,
                                   "' does not name a task: it needs /job:NAME and /task:N");
  }
  return absl::StrCat("/job:", p.job, "/replica:", p.has_replica ? p.replica : 0,
                      "/task:", p.task);
}

StatusOr<std::string> ClusterSpec::AddressOf(std::string_view task_or_device) const {
  TX_ASSIGN_OR_RETURN(DeviceNameUtils::ParsedName p, DeviceNameUtils::Parse(task_or_device));
  if (!p.has_job || !p.has_task) {
    return errors::InvalidArgument("'", task_or_device,
                                   "' does not name a task: it needs /job:NAME and /task:N");
  }
  return TaskAddress(p.job, p.task);
}

StatusOr<TfConfig> ParseTfConfig(std::string_view json) {
  constexpr std::string_view kContext = "TF_CONFIG";
  TX_ASSIGN_OR_RETURN(nlohmann::json j, ParseJson(json, kContext));
  if (!j.is_object()) return errors::InvalidArgument("TF_CONFIG must be a JSON object");
  auto c = j.find("cluster");
  if (c == j.end()) return errors::InvalidArgument("TF_CONFIG has no \"cluster\"");
  TfConfig out;
  TX_RETURN_IF_ERROR(ClusterFromJson(
      *c, kContext,
      [&](const std::string& job, int64_t i, const std::string& a) {
        return out.cluster.AddTask(job, i, a, kContext);
      }));
  if (out.cluster.empty()) return errors::InvalidArgument("TF_CONFIG's \"cluster\" has no jobs");
  auto t = j.find("task");
  if (t == j.end()) return out;
  if (!t->is_object()) return errors::InvalidArgument("TF_CONFIG's \"task\" must be an object");
  auto type = t->find("type");
  if (type == t->end() || !type->is_string() || type->get<std::string>().empty()) {
    return errors::InvalidArgument("TF_CONFIG's \"task\" needs a \"type\" (the job name)");
  }
  out.task_type = type->get<std::string>();
  auto index = t->find("index");
  if (index != t->end()) {
    if (!index->is_number_integer() || index->get<int64_t>() < 0 ||
        index->get<int64_t>() > std::numeric_limits<int32_t>::max()) {
      return errors::InvalidArgument("TF_CONFIG's task \"index\" must be a non-negative integer");
    }
    out.task_index = index->get<int>();
  }
  if (!out.cluster.HasTask(*out.task_type, out.task_index)) {
    // TF's evaluator is not part of the training cluster: operators (TFJob, Estimator's
    // RunConfig) leave it out of "cluster".
    if (*out.task_type == kEvaluatorJob && out.cluster.num_tasks(kEvaluatorJob) == 0) {
      out.in_cluster = false;
      return out;
    }
    return errors::InvalidArgument("TF_CONFIG's task /job:", *out.task_type, "/task:",
                                   out.task_index, " is not in its cluster");
  }
  return out;
}

StatusOr<std::optional<TfConfig>> TfConfigFromEnvironment() {
  const char* v = std::getenv("TF_CONFIG");
  if (v == nullptr || v[0] == '\0') return std::optional<TfConfig>();
  TX_ASSIGN_OR_RETURN(TfConfig c, ParseTfConfig(v));
  return std::optional<TfConfig>(std::move(c));
}

}  // namespace tensorflux
