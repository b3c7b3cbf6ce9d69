// The hook between the PyFunc kernel (py_func_op.cc) and the Python extension, which installs
// the callback when the tensorflux package is imported. The engine itself does not link Python.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "tensorflux/core/status.h"
#include "tensorflux/core/tensor.h"
#include "tensorflux/core/types.h"

namespace tensorflux {

// Calls the Python callable registered as `token` on `inputs`; on OK, *outputs holds exactly
// tout.size() tensors of the dtypes `tout`. A Python exception is returned as a Status (its code
// chosen by the Python side: UNKNOWN for an arbitrary exception, the OpError's code for a
// tensorflux error, OUT_OF_RANGE for StopIteration).
using PyFuncCallback = std::function<Status(const std::string& token,
                                            const std::vector<Tensor>& inputs,
                                            const DataTypeVector& tout,
                                            std::vector<Tensor>* outputs)>;

// Installs (replaces) the process-wide callback; an empty one uninstalls it.
void SetPyFuncCallback(PyFuncCallback callback);

}  // namespace tensorflux
