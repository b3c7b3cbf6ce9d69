#include "tensorflux/core/status.h"

#include "absl/strings/match.h"

namespace tensorflux {
namespace errors {

Status AttachNodeContext(const Status& s, std::string_view node_name, std::string_view op) {
  if (s.ok()) return s;
  const std::string prefix =
      absl::StrCat("{{node ", absl::string_view(node_name.data(), node_name.size()), "}}");
  if (absl::StrContains(s.message(), prefix)) return s;  // already names this node
  Status out(s.code(), absl::StrCat(prefix, " (op ", absl::string_view(op.data(), op.size()),
                                    "): ", s.message()));
  // Keep any payloads the original carried.
  s.ForEachPayload([&out](absl::string_view url, const absl::Cord& payload) {
    out.SetPayload(url, payload);
  });
  return out;
}

std::string CodeName(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kOk: return "OK";
    case absl::StatusCode::kCancelled: return "CANCELLED";
    case absl::StatusCode::kUnknown: return "UNKNOWN";
    case absl::StatusCode::kInvalidArgument: return "INVALID_ARGUMENT";
    case absl::StatusCode::kDeadlineExceeded: return "DEADLINE_EXCEEDED";
    case absl::StatusCode::kNotFound: return "NOT_FOUND";
    case absl::StatusCode::kAlreadyExists: return "ALREADY_EXISTS";
    case absl::StatusCode::kPermissionDenied: return "PERMISSION_DENIED";
    case absl::StatusCode::kResourceExhausted: return "RESOURCE_EXHAUSTED";
    case absl::StatusCode::kFailedPrecondition: return "FAILED_PRECONDITION";
    case absl::StatusCode::kAborted: return "ABORTED";
    case absl::StatusCode::kOutOfRange: return "OUT_OF_RANGE";
    case absl::StatusCode::kUnimplemented: return "UNIMPLEMENTED";
    case absl::StatusCode::kInternal: return "INTERNAL";
    case absl::StatusCode::kUnavailable: return "UNAVAILABLE";
    case absl::StatusCode::kDataLoss: return "DATA_LOSS";
    case absl::StatusCode::kUnauthenticated: return "UNAUTHENTICATED";
    default: return absl::StrCat("CODE_", static_cast<int>(code));
  }
}

}  // namespace errors

std::string StatusToString(const Status& s) {
  if (s.ok()) return "OK";
  return absl::StrCat(errors::CodeName(s.code()), ": ", s.message());
}

}  // namespace tensorflux
