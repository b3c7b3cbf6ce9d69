// Rendezvous: where a _Send and the matching _Recv of one step meet (TF's framework/rendezvous.h).
// Kernels see only this interface; the in-process table is runtime/rendezvous.h, a remote one
// (RecvTensor RPC between workers) comes with the distributed runtime.
//
// A tensor is named by a key (TF's Rendezvous::CreateKey), five fields joined by ';':
//
//   "<send_device>;<send_device_incarnation as 16 hex digits>;<recv_device>;<tensor_name>;
//    <frame_id>:<iter_id>"
//
// e.g. "/job:localhost/replica:0/task:0/device:CPU:0;000000000000002a;
//       /job:localhost/replica:0/task:0/device:CPU:1;edge_7_a;0:0"
// The frame/iteration pair tells loop iterations apart in TF; TensorFlux has no loops yet, so it
// is always 0:0.
//
// Semantics (TF's): Send(key, tensor, is_dead) never blocks; RecvAsync(key, done) calls `done`
// exactly once, when the tensor arrives or the rendezvous is aborted or the receiver's
// cancellation manager is cancelled. Each key is sent once and received once per rendezvous
// (a second Send or RecvAsync of one key is ABORTED "Duplicated send/recv", as in TF 1.x).
// StartAbort(status) fails every pending RecvAsync and every later Send/RecvAsync with `status`.
// is_dead carries the deadness of a tensor (TF's control flow): it is passed from Send to the
// receiver unchanged.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "tensorflux/core/status.h"
#include "tensorflux/core/tensor.h"
#include "tensorflux/framework/cancellation.h"
#include "tensorflux/framework/device_base.h"

namespace tensorflux {

// Loop frame and iteration of a tensor (TF's FrameAndIter); 0:0 outside loops.
struct FrameAndIter {
  int64_t frame_id = 0;
  int64_t iter_id = 0;
};

class Rendezvous {
 public:
  // What one side of a transfer tells the rendezvous about itself.
  struct Args {
    // The device the tensor is on (Send) or wanted on (Recv); nullptr for the client / host.
    DeviceBase* device = nullptr;
    // The tensor is (Send) or must be (Recv) in host memory although `device` has its own memory
    // (_HostSend / _HostRecv: a GPU kernel's HostMemory args; TF's alloc_attrs.on_host()).
    bool on_host = false;
    // Recv only: cancelling it fails a pending RecvAsync with CANCELLED.
    CancellationManager* cancellation_manager = nullptr;
  };

  // A key split into its fields (TF's Rendezvous::ParsedKey). The fields are copies.
  struct ParsedKey {
    std::string full_key;
    std::string src_device;
    uint64_t src_incarnation = 0;
    std::string dst_device;
    std::string edge_name;
    FrameAndIter frame_iter;
  };

  // (status, send args, recv args, tensor, is_dead). On error the tensor is empty.
  using DoneCallback = std::function<void(const Status&, const Args&, const Args&, const Tensor&,
                                          bool)>;

  virtual ~Rendezvous() = default;

  // TF's key format (see the top of this file).
  static std::string CreateKey(std::string_view src_device, uint64_t src_incarnation,
                               std::string_view dst_device, std::string_view name,
                               const FrameAndIter& frame_iter);
  // INVALID_ARGUMENT "Invalid rendezvous key: ..." unless the key has five fields, device names
  // that start with '/', an incarnation of 1 to 16 hex digits, a non-empty tensor name and a
  // "frame:iter" pair of integers.
  static StatusOr<ParsedKey> ParseKey(std::string_view key);

  // Makes `tensor` available under `key`. The abort status after StartAbort; ABORTED when the
  // key was already sent.
  virtual Status Send(const ParsedKey& key, const Args& args, const Tensor& tensor,
                      bool is_dead) = 0;
  // Calls `done` once the tensor sent under `key` is here (possibly before returning, on this
  // thread, when it was sent already; otherwise on the sender's or canceller's thread).
  virtual void RecvAsync(const ParsedKey& key, const Args& args, DoneCallback done) = 0;
  // Fails pending and later calls with `status` (which must not be OK; the first one sticks).
  virtual void StartAbort(const Status& status) = 0;

  // Blocking receive. timeout_ms > 0 bounds the wait: DEADLINE_EXCEEDED naming the key after it.
  Status Recv(const ParsedKey& key, const Args& args, Tensor* tensor, bool* is_dead,
              int64_t timeout_ms = 0);
};

}  // namespace tensorflux
