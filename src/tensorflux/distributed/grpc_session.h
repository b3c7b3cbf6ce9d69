// GrpcSession: the Session of a client of a remote master (TF's GrpcSession), for targets
// "grpc://host:port" (NewSession hands them here: the factory is registered when
// libtensorflux_distributed loads). Each call is one MasterService RPC (master.proto):
// Create -> CreateSession (the graph and the session's ConfigProto), Extend -> ExtendSession
// with the graph version the session holds, Run -> RunStep, Close -> CloseSession,
// ListDevices -> ListDevices (the local then the remote devices).
//
// Security comes from the environment (server_security.h: TENSORFLUX_TLS_CA, TENSORFLUX_TLS_CERT,
// TENSORFLUX_TLS_KEY, TENSORFLUX_TLS_TARGET_NAME, TENSORFLUX_TOKEN_FILE).
// Deadlines: RunStep gets the step's timeout (RunOptions.timeout_in_ms, else
// ConfigProto.operation_timeout_in_ms, else 60 s, which the master enforces) plus 10 s for the
// transport; the other calls 60 s (operation_timeout_in_ms when set). Errors are the master's,
// code and message; a master that cannot be reached is UNAVAILABLE naming the target.
// Thread-safe.
#pragma once

#include <memory>
#include <string>

#include "tensorflux/runtime/session.h"

namespace tensorflux {

// INVALID_ARGUMENT for a target that is not "grpc://host:port" or bad security files.
StatusOr<std::unique_ptr<Session>> NewGrpcSession(const SessionOptions& options);

}  // namespace tensorflux
