// The arguments and return values of one run of a graph: _Arg nodes read argument `index`,
// _Retval nodes write return value `index` (TF's _Arg/_Retval feed/fetch rewrite).
#pragma once

#include <cstdint>
#include <vector>

#include "tensorflux/core/status.h"
#include "tensorflux/core/tensor.h"

namespace tensorflux {

class CallFrameInterface {
 public:
  virtual ~CallFrameInterface() = default;
  virtual int num_args() const = 0;
  virtual int num_retvals() const = 0;
  // INVALID_ARGUMENT when index is out of range.
  virtual Status GetArg(int index, const Tensor** value) const = 0;
  // INVALID_ARGUMENT when index is out of range or the value was already set.
  virtual Status SetRetval(int index, const Tensor& value) = 0;
};

// A call frame over owned vectors. _Retval kernels on different inter-op threads may call
// SetRetval concurrently for distinct indices; each index has its own slot and flag byte (a
// bit-packed std::vector<bool> would make those writes race), so that is safe. Setting one
// index twice is INVALID_ARGUMENT.
class SimpleCallFrame : public CallFrameInterface {
 public:
  SimpleCallFrame(std::vector<Tensor> args, int num_retvals);
  int num_args() const override { return static_cast<int>(args_.size()); }
  int num_retvals() const override { return static_cast<int>(retvals_.size()); }
  Status GetArg(int index, const Tensor** value) const override;
  Status SetRetval(int index, const Tensor& value) override;
  // FAILED_PRECONDITION naming the first unset return value.
  Status ConsumeRetvals(std::vector<Tensor>* out);

 private:
  std::vector<Tensor> args_;
  std::vector<Tensor> retvals_;
  std::vector<uint8_t> set_;  // one byte per return value: distinct memory locations
};

}  // namespace tensorflux
