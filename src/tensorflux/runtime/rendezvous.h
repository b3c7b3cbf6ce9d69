// LocalRendezvous: the in-process Rendezvous (framework/rendezvous.h) that one step's partitions
// share (TF's LocalRendezvous + IntraProcessRendezvous). A table from key to either a sent tensor
// waiting for its receiver or a receiver waiting for its tensor, under one mutex; callbacks run
// outside it.
//
// Transfer: between devices whose memory is host memory (CPU devices, or the client: a null
// Args::device) the receiver gets the sender's Tensor itself: the buffer is shared, nothing is
// copied, whatever the size. Other device pairs are UNIMPLEMENTED until a device with its own
// memory (CUDA) adds its copies here.
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

// The in-process transfer rule above: `out` shares `in`'s buffer between host-memory devices;
// UNIMPLEMENTED naming both devices otherwise.
Status TransferInProcess(const Rendezvous::Args& send_args, const Rendezvous::Args& recv_args,
                         const Tensor& in, Tensor* out);

}  // namespace tensorflux
