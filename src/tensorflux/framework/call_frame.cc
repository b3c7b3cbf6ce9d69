#include "tensorflux/framework/call_frame.h"

namespace tensorflux {

SimpleCallFrame::SimpleCallFrame(std::vector<Tensor> args, int num_retvals)
    : args_(std::move(args)),
      retvals_(num_retvals > 0 ? num_retvals : 0),
      set_(num_retvals > 0 ? num_retvals : 0, 0) {}

Status SimpleCallFrame::GetArg(int index, const Tensor** value) const {
  if (index < 0 || index >= num_args()) {
    return errors::InvalidArgument("Argument index ", index, " is out of range: the call has ",
                                   num_args(), " arguments");
  }
  *value = &args_[index];
  return OkStatus();
}

Status SimpleCallFrame::SetRetval(int index, const Tensor& value) {
  if (index < 0 || index >= num_retvals()) {
    return errors::InvalidArgument("Return value index ", index,
                                   " is out of range: the call has ", num_retvals(),
                                   " return values");
  }
  if (set_[index]) {
    return errors::InvalidArgument("Return value ", index, " was already set");
  }
  retvals_[index] = value;
  set_[index] = 1;
  return OkStatus();
}

Status SimpleCallFrame::ConsumeRetvals(std::vector<Tensor>* out) {
  for (int i = 0; i < num_retvals(); ++i) {
    if (!set_[i]) {
      return errors::FailedPrecondition("Return value ", i, " of ", num_retvals(),
                                        " was not set");
    }
  }
  *out = std::move(retvals_);
  retvals_.assign(set_.size(), Tensor());
  set_.assign(set_.size(), 0);
  return OkStatus();
}

}  // namespace tensorflux
