// Device names as TensorFlow spells them (TF's DeviceNameUtils, tensorflow/core/util).
//
// A full name is "/job:localhost/replica:0/task:0/device:CPU:0". A specification (what a node's
// NodeDef.device or tx.device(...) asks for) may give any subset of the five fields, in any
// order, each at most once:
//   /job:NAME        NAME = a letter, then letters, digits or '_'
//   /replica:N       /task:N            N = a decimal number below 2^31
//   /device:TYPE:N   /device:TYPE       /device:TYPE:*     TYPE as NAME ("CPU", "GPU")
//   /cpu:N /gpu:N    (legacy, also /CPU:N /GPU:N; the type becomes "CPU" / "GPU")
//   TYPE:N           (a local name with no leading '/', e.g. "CPU:0", "gpu:1")
// "*" for a field means "any" (the field is absent). "" and "/" are the empty specification,
// which every device matches. "cpu" and "gpu" are upper-cased in every form, so "/device:cpu:0"
// asks for "CPU". Anything else (unknown field, a field given twice, a bad number, a trailing
// '/') is INVALID_ARGUMENT naming the whole specification.
#pragma once

#include <string>
#include <string_view>

#include "tensorflux/core/status.h"

namespace tensorflux {

class DeviceNameUtils {
 public:
  struct ParsedName {
    bool has_job = false;
    std::string job;
    bool has_replica = false;
    int replica = 0;
    bool has_task = false;
    int task = 0;
    bool has_type = false;
    std::string type;
    bool has_id = false;
    int id = 0;

    // All five fields present.
    bool IsFullySpecified() const {
      return has_job && has_replica && has_task && has_type && has_id;
    }
    bool IsEmpty() const { return !has_job && !has_replica && !has_task && !has_type && !has_id; }
    friend bool operator==(const ParsedName& a, const ParsedName& b);
  };

  // Parses a full name or any specification above; INVALID_ARGUMENT for a malformed one.
  static StatusOr<ParsedName> Parse(std::string_view spec);

  // The canonical spelling of the fields that are present, in the order job, replica, task,
  // device: "/job:w/device:GPU:1", "/device:CPU:*" (a type without an id), "" (empty).
  static std::string ToString(const ParsedName& name);
  // Parse + ToString: "/cpu:0" -> "/device:CPU:0", "CPU:1" -> "/device:CPU:1".
  static StatusOr<std::string> Canonicalize(std::string_view spec);

  // "/job:<job>/replica:<replica>/task:<task>/device:<type>:<id>".
  static std::string FullName(std::string_view job, int replica, int task, std::string_view type,
                              int id);

  // True when every field present in `pattern` is present in `name` with the same value: the
  // device `name` satisfies the request `pattern` (an empty pattern matches everything).
  static bool IsSpecification(const ParsedName& pattern, const ParsedName& name);

  // Merges `other` into `target` (colocation: both requests must hold). A field present in one
  // of them is taken; present in both with different values is INVALID_ARGUMENT ("Cannot merge
  // devices with incompatible types: '/device:GPU:0' and '/device:CPU:0'"). With
  // allow_soft_placement a type or id conflict is not an error: the type and id are dropped
  // (and the rest kept), as TF does. Job, replica and task conflicts are always errors.
  static Status MergeDevNames(ParsedName* target, const ParsedName& other,
                              bool allow_soft_placement);

  // Same job, replica and task, all present in both (one process).
  static bool IsSameAddressSpace(const ParsedName& a, const ParsedName& b);
};

}  // namespace tensorflux
