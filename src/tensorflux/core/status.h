// Errors are values: every fallible function returns tensorflux::Status (absl::Status) or
// StatusOr<T> with a canonical code. Nothing reachable from user input aborts.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"

namespace tensorflux {

using Status = absl::Status;
template <typename T>
using StatusOr = absl::StatusOr<T>;

inline Status OkStatus() { return absl::OkStatus(); }

namespace errors {
namespace internal {
// Debian's Abseil has its own absl::string_view (not std::string_view), which StrCat does not
// accept from std::string_view; these let the error helpers take either.
template <typename T>
const T& PrepareForStrCat(const T& t) {
  return t;
}
inline absl::string_view PrepareForStrCat(std::string_view s) {
  return absl::string_view(s.data(), s.size());
}
}  // namespace internal

#define TX_DEFINE_ERROR(Name, absl_fn)                                          \
  template <typename... Args>                                                   \
  Status Name(const Args&... args) {                                            \
    return absl::absl_fn(absl::StrCat(internal::PrepareForStrCat(args)...));   \
  }
TX_DEFINE_ERROR(InvalidArgument, InvalidArgumentError)
TX_DEFINE_ERROR(NotFound, NotFoundError)
TX_DEFINE_ERROR(AlreadyExists, AlreadyExistsError)
TX_DEFINE_ERROR(FailedPrecondition, FailedPreconditionError)
TX_DEFINE_ERROR(OutOfRange, OutOfRangeError)
TX_DEFINE_ERROR(Unimplemented, UnimplementedError)
TX_DEFINE_ERROR(Internal, InternalError)
TX_DEFINE_ERROR(Unavailable, UnavailableError)
TX_DEFINE_ERROR(DataLoss, DataLossError)
TX_DEFINE_ERROR(ResourceExhausted, ResourceExhaustedError)
TX_DEFINE_ERROR(Cancelled, CancelledError)
TX_DEFINE_ERROR(DeadlineExceeded, DeadlineExceededError)
TX_DEFINE_ERROR(Aborted, AbortedError)
TX_DEFINE_ERROR(PermissionDenied, PermissionDeniedError)
TX_DEFINE_ERROR(Unauthenticated, UnauthenticatedError)
TX_DEFINE_ERROR(Unknown, UnknownError)
#undef TX_DEFINE_ERROR

// Returns `s` with its message prefixed by the node that raised it, in the form
//   "{{node NAME}} (op OP): <message>"
// Used by the executor and graph builders so every error names the node and op. OK passes through;
// a status that already names this node is returned unchanged.
Status AttachNodeContext(const Status& s, std::string_view node_name, std::string_view op);

// Canonical code name as TensorFlow spells it: "INVALID_ARGUMENT", "NOT_FOUND", ...
std::string CodeName(absl::StatusCode code);

}  // namespace errors

// Prints "CODE: message" (what the CLI writes to stderr).
std::string StatusToString(const Status& s);

}  // namespace tensorflux

#define TX_CONCAT_IMPL_(a, b) a##b
#define TX_CONCAT_(a, b) TX_CONCAT_IMPL_(a, b)

#define TX_RETURN_IF_ERROR(...)                       \
  do {                                                \
    ::tensorflux::Status _tx_status = (__VA_ARGS__);  \
    if (!_tx_status.ok()) return _tx_status;          \
  } while (0)

#define TX_ASSIGN_OR_RETURN_IMPL_(var, lhs, expr) \
  auto var = (expr);                              \
  if (!var.ok()) return var.status();             \
  lhs = std::move(*var)

// TX_ASSIGN_OR_RETURN(auto x, MakeX());
#define TX_ASSIGN_OR_RETURN(lhs, expr) \
  TX_ASSIGN_OR_RETURN_IMPL_(TX_CONCAT_(_tx_statusor_, __LINE__), lhs, expr)
