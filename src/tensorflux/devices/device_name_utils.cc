#include "tensorflux/devices/device_name_utils.h"

#include <climits>
#include <vector>

namespace tensorflux {
namespace {

bool IsAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// A job or device-type name: a letter, then letters, digits or '_'.
bool IsName(std::string_view s) {
  if (s.empty() || !IsAlpha(s[0])) return false;
  for (char c : s) {
    if (!IsAlpha(c) && !IsDigit(c) && c != '_') return false;
  }
  return true;
}

bool ParseNumber(std::string_view s, int* out) {
  if (s.empty() || s.size() > 10) return false;
  long long v = 0;
  for (char c : s) {
    if (!IsDigit(c)) return false;
    v = v * 10 + (c - '0');
  }
  if (v > INT_MAX) return false;
  *out = static_cast<int>(v);
  return true;
}

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  for (size_t start = 0;;) {
    const size_t end = s.find(sep, start);
    out.push_back(s.substr(start, end == std::string_view::npos ? std::string_view::npos
                                                                : end - start));
    if (end == std::string_view::npos) return out;
    start = end + 1;
  }
}

std::string NormalizeType(std::string_view t) {
  if (t == "cpu") return "CPU";
  if (t == "gpu") return "GPU";
  return std::string(t);
}

// Parses one "key:value[:value]" component (the text between two '/'). Returns an empty string
// on success, else why it failed.
std::string ParseComponent(std::string_view comp, DeviceNameUtils::ParsedName* p) {
  const std::vector<std::string_view> parts = Split(comp, ':');
  const std::string_view key = parts[0];
  auto twice = [&] { return "'" + std::string(key) + "' is given twice"; };
  auto number = [&](std::string_view v, bool* has, int* out) -> std::string {
    if (v == "*") return "";
    if (!ParseNumber(v, out)) return "'" + std::string(v) + "' is not a number";
    *has = true;
    return "";
  };
  auto device = [&](std::string_view type, const std::string_view* id) -> std::string {
    if (p->has_type || p->has_id) return "the device is given twice";
    if (type != "*") {
      if (!IsName(type)) return "'" + std::string(type) + "' is not a device type";
      p->has_type = true;
      p->type = NormalizeType(type);
    }
    return id == nullptr ? "" : number(*id, &p->has_id, &p->id);
  };
  if (key == "job" && parts.size() == 2) {
    if (p->has_job) return twice();
    if (parts[1] == "*") return "";
    if (!IsName(parts[1])) return "'" + std::string(parts[1]) + "' is not a job name";
    p->has_job = true;
    p->job = std::string(parts[1]);
    return "";
  }
  if ((key == "replica" || key == "task") && parts.size() == 2) {
    const bool is_replica = key == "replica";
    if (is_replica ? p->has_replica : p->has_task) return twice();
    return is_replica ? number(parts[1], &p->has_replica, &p->replica)
                      : number(parts[1], &p->has_task, &p->task);
  }
  if (key == "device" && (parts.size() == 2 || parts.size() == 3)) {
    return device(parts[1], parts.size() == 3 ? &parts[2] : nullptr);
  }
  if ((key == "cpu" || key == "gpu" || key == "CPU" || key == "GPU") && parts.size() == 2) {
    return device(key, &parts[1]);
  }
  return "unknown component '" + std::string(comp) + "'";
}

}  // namespace

bool operator==(const DeviceNameUtils::ParsedName& a, const DeviceNameUtils::ParsedName& b) {
  return a.has_job == b.has_job && (!a.has_job || a.job == b.job) &&
         a.has_replica == b.has_replica && (!a.has_replica || a.replica == b.replica) &&
         a.has_task == b.has_task && (!a.has_task || a.task == b.task) &&
         a.has_type == b.has_type && (!a.has_type || a.type == b.type) &&
         a.has_id == b.has_id && (!a.has_id || a.id == b.id);
}

StatusOr<DeviceNameUtils::ParsedName> DeviceNameUtils::Parse(std::string_view spec) {
  ParsedName p;
  if (spec.empty() || spec == "/") return p;
  auto fail = [&](const std::string& why) {
    return errors::InvalidArgument(
        "Invalid device specification '", spec, "': ", why,
        " (expected e.g. /job:localhost/replica:0/task:0/device:CPU:0, /device:GPU:1, /cpu:0 "
        "or CPU:0)");
  };
  if (spec[0] != '/') {
    // A local name "TYPE:N".
    const size_t colon = spec.find(':');
    if (colon == std::string_view::npos || !IsName(spec.substr(0, colon)) ||
        !ParseNumber(spec.substr(colon + 1), &p.id)) {
      return fail("a name without a leading '/' must be TYPE:N");
    }
    p.has_type = p.has_id = true;
    p.type = NormalizeType(spec.substr(0, colon));
    return p;
  }
  for (std::string_view comp : Split(spec.substr(1), '/')) {
    if (comp.empty()) return fail("empty component");
    std::string why = ParseComponent(comp, &p);
    if (!why.empty()) return fail(why);
  }
  return p;
}

std::string DeviceNameUtils::ToString(const ParsedName& n) {
  std::string s;
  if (n.has_job) absl::StrAppend(&s, "/job:", n.job);
  if (n.has_replica) absl::StrAppend(&s, "/replica:", n.replica);
  if (n.has_task) absl::StrAppend(&s, "/task:", n.task);
  if (n.has_type) {
    absl::StrAppend(&s, "/device:", n.type, ":");
    if (n.has_id) {
      absl::StrAppend(&s, n.id);
    } else {
      s += '*';
    }
  } else if (n.has_id) {
    absl::StrAppend(&s, "/device:*:", n.id);
  }
  return s;
}

StatusOr<std::string> DeviceNameUtils::Canonicalize(std::string_view spec) {
  TX_ASSIGN_OR_RETURN(ParsedName p, Parse(spec));
  return ToString(p);
}

std::string DeviceNameUtils::FullName(std::string_view job, int replica, int task,
                                      std::string_view type, int id) {
  return absl::StrCat("/job:", absl::string_view(job.data(), job.size()), "/replica:", replica,
                      "/task:", task, "/device:", absl::string_view(type.data(), type.size()),
                      ":", id);
}

bool DeviceNameUtils::IsSpecification(const ParsedName& pattern, const ParsedName& name) {
  return (!pattern.has_job || (name.has_job && name.job == pattern.job)) &&
         (!pattern.has_replica || (name.has_replica && name.replica == pattern.replica)) &&
         (!pattern.has_task || (name.has_task && name.task == pattern.task)) &&
         (!pattern.has_type || (name.has_type && name.type == pattern.type)) &&
         (!pattern.has_id || (name.has_id && name.id == pattern.id));
}

Status DeviceNameUtils::MergeDevNames(ParsedName* target, const ParsedName& other,
                                      bool allow_soft_placement) {
  auto conflict = [&](const char* what) {
    return errors::InvalidArgument("Cannot merge devices with incompatible ", what, ": '",
                                   ToString(*target), "' and '", ToString(other), "'");
  };
  if (other.has_job && target->has_job && other.job != target->job) return conflict("jobs");
  if (other.has_replica && target->has_replica && other.replica != target->replica) {
    return conflict("replicas");
  }
  if (other.has_task && target->has_task && other.task != target->task) {
    return conflict("tasks");
  }
  const bool type_clash = other.has_type && target->has_type && other.type != target->type;
  const bool id_clash = other.has_id && target->has_id && other.id != target->id;
  if ((type_clash || id_clash) && !allow_soft_placement) {
    return conflict(type_clash ? "types" : "ids");
  }
  if (other.has_job) {
    target->has_job = true;
    target->job = other.job;
  }
  if (other.has_replica) {
    target->has_replica = true;
    target->replica = other.replica;
  }
  if (other.has_task) {
    target->has_task = true;
    target->task = other.task;
  }
  if (type_clash) {
    target->has_type = target->has_id = false;  // soft placement: any device of the address
    return OkStatus();
  }
  if (other.has_type) {
    target->has_type = true;
    target->type = other.type;
  }
  if (id_clash) {
    target->has_id = false;  // soft placement: any device of the type
  } else if (other.has_id) {
    target->has_id = true;
    target->id = other.id;
  }
  return OkStatus();
}

bool DeviceNameUtils::IsSameAddressSpace(const ParsedName& a, const ParsedName& b) {
  return a.has_job && b.has_job && a.job == b.job && a.has_replica && b.has_replica &&
         a.replica == b.replica && a.has_task && b.has_task && a.task == b.task;
}

}  // namespace tensorflux
