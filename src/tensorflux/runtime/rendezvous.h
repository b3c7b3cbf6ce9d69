// LocalRendezvous: the in-process Rendezvous (framework/rendezvous.h) that one step's partitions
// share (TF's LocalRendezvous + IntraProcessRendezvous). A table from key to either a sent tensor
// waiting for its receiver or a receiver waiting for its tensor, under one mutex; callbacks run
// outside it.
//
// Transfer (TF's IntraProcessRendezvous + CopyTensor::ViaDMA), done by the receiving side when
// the tensor and the receiver meet: a side is in host memory when it is the client (a null
// Args::device), a device whose tensors are in host memory (Device::tensors_in_host_memory: CPU
// devices, any DeviceBase that is not a Device), or marked Args::on_host (_HostSend /
// _HostRecv). Host to host, the receiver gets the sender's Tensor itself: the buffer is shared,
// nothing is copied, whatever the size. Device to host is the sending device's
// CopyDeviceTensorToCPU, host to device the receiving device's CopyCPUTensorToDevice; device to
// device shares the buffer on one device and goes through host memory between two (both copies
// order themselves with the devices' queued work; devices/device.h).
//
// Lifetime: pending receivers are called with ABORTED when the rendezvous is destroyed; callbacks
// registered with a cancellation manager stay safe to run after that.
#pragma once

#include <memory>

#include "tensorflux/framework/rendezvous.h"

namespace tensorflux {

class LocalRendezvous : public Rendezvous {
 public:
  LocalRendezvous();
  ~LocalRendezvous() override;
  LocalRendezvous(const LocalRendezvous&) = delete;
  LocalRendezvous& operator=(const LocalRendezvous&) = delete;

  Status Send(const ParsedKey& key, const Args& args, const Tensor& tensor,
              bool is_dead) override;
  void RecvAsync(const ParsedKey& key, const Args& args, DoneCallback done) override;
  void StartAbort(const Status& status) override;

  // The status the rendezvous was first aborted with; OK when it was not aborted.
  Status abort_status() const;

  struct State;

 private:
  std::shared_ptr<State> state_;
};

// The in-process transfer rule above: `out` shares `in`'s buffer or is a copy in the receiver's
// memory. The copies' errors (devices/device.h), prefixed with the dtype, shape and both sides.
Status TransferInProcess(const Rendezvous::Args& send_args, const Rendezvous::Args& recv_args,
                         const Tensor& in, Tensor* out);

}  // namespace tensorflux
