#include "tensorflux/runtime/rendezvous.h"

#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "tensorflux/devices/device.h"

namespace tensorflux {

// A key's entry: a sent tensor (has_value) or a waiting receiver.
struct LocalRendezvous::State {
  struct Entry {
    bool has_value = false;
    Args send_args;
    Tensor value;
    bool is_dead = false;
    Args recv_args;
    DoneCallback done;
    CancellationManager::Token token = -1;
  };
  std::mutex mu;
  Status status;  // the abort status
  absl::flat_hash_map<std::string, Entry> table;
};

namespace {

using State = LocalRendezvous::State;
using Entry = State::Entry;

// Whether the tensor of one side of a transfer is in host memory.
bool InHostMemory(const Rendezvous::Args& a) {
  if (a.device == nullptr || a.on_host) return true;
  const auto* d = dynamic_cast<const Device*>(a.device);
  return d == nullptr || d->tensors_in_host_memory();
}

std::string SideName(const Rendezvous::Args& a) {
  return a.device != nullptr ? a.device->name() : std::string("the client");
}

// Removes the receiver's cancellation callback. When the manager is already cancelled its
// callbacks ran or are running; they find the entry gone and do nothing, so there is nothing to
// remove and no reason to wait for them.
void Deregister(const Entry& e) {
  CancellationManager* cm = e.recv_args.cancellation_manager;
  if (cm != nullptr && e.token >= 0 && !cm->IsCancelled()) cm->DeregisterCallback(e.token);
}

void Deliver(const Rendezvous::Args& send_args, const Tensor& value, bool is_dead,
             const Entry& receiver) {
  Tensor out;
  Status s = TransferInProcess(send_args, receiver.recv_args, value, &out);
  receiver.done(s, send_args, receiver.recv_args, s.ok() ? out : Tensor(), is_dead);
}

void Fail(const Status& s, const Rendezvous::Args& recv_args, const Rendezvous::DoneCallback& done) {
  done(s, Rendezvous::Args(), recv_args, Tensor(), false);
}

}  // namespace

Status TransferInProcess(const Rendezvous::Args& send_args, const Rendezvous::Args& recv_args,
                         const Tensor& in, Tensor* out) {
  const bool src_host = InHostMemory(send_args), dst_host = InHostMemory(recv_args);
  if ((src_host && dst_host) || (!src_host && !dst_host && send_args.device == recv_args.device)) {
    *out = in;  // zero-copy: the buffer is shared
    return OkStatus();
  }
  // Non-null: a side not in host memory is a Device.
  auto* src = src_host ? nullptr : static_cast<Device*>(send_args.device);
  auto* dst = dst_host ? nullptr : static_cast<Device*>(recv_args.device);
  Status s;
  if (dst == nullptr) {
    s = src->CopyDeviceTensorToCPU(in, out);
  } else if (src == nullptr) {
    s = dst->CopyCPUTensorToDevice(in, out);
  } else {
    Tensor staged;
    s = src->CopyDeviceTensorToCPU(in, &staged);
    if (s.ok()) s = dst->CopyCPUTensorToDevice(staged, out);
  }
  if (s.ok()) return s;
  return Status(s.code(), absl::StrCat("Copying a ", DataTypeString(in.dtype()), " ",
                                       in.shape().DebugString(), " tensor from ",
                                       SideName(send_args), " to ", SideName(recv_args), ": ",
                                       s.message()));
}

LocalRendezvous::LocalRendezvous() : state_(std::make_shared<State>()) {}

LocalRendezvous::~LocalRendezvous() {
  StartAbort(errors::Aborted("The step's rendezvous was deleted before the tensor arrived"));
}

Status LocalRendezvous::abort_status() const {
  std::lock_guard<std::mutex> l(state_->mu);
  return state_->status;
}

Status LocalRendezvous::Send(const ParsedKey& key, const Args& args, const Tensor& tensor,
                             bool is_dead) {
  Entry receiver;
  {
    std::lock_guard<std::mutex> l(state_->mu);
    if (!state_->status.ok()) return state_->status;
    auto [it, inserted] = state_->table.try_emplace(key.full_key);
    Entry& e = it->second;
    if (inserted) {
      e.has_value = true;
      e.send_args = args;
      e.value = tensor;
      e.is_dead = is_dead;
      return OkStatus();
    }
    if (e.has_value) return errors::Aborted("Duplicated send: ", key.full_key);
    receiver = std::move(e);
    state_->table.erase(it);
  }
  Deregister(receiver);
  Deliver(args, tensor, is_dead, receiver);
  return OkStatus();
}

void LocalRendezvous::RecvAsync(const ParsedKey& key, const Args& args, DoneCallback done) {
  Entry sent;
  {
    std::unique_lock<std::mutex> l(state_->mu);
    if (!state_->status.ok()) {
      Status s = state_->status;
      l.unlock();
      Fail(s, args, done);
      return;
    }
    auto it = state_->table.find(key.full_key);
    if (it != state_->table.end()) {
      if (!it->second.has_value) {
        l.unlock();
        Fail(errors::Aborted("Duplicated recv: ", key.full_key), args, done);
        return;
      }
      sent = std::move(it->second);
      state_->table.erase(it);
    } else {
      Entry e;
      e.recv_args = args;
      e.done = std::move(done);
      CancellationManager* cm = args.cancellation_manager;
      if (cm != nullptr) {
        e.token = cm->NewToken();
        // Registered under the table lock (StartCancel runs callbacks without its own lock).
        std::weak_ptr<State> weak = state_;
        const bool registered = cm->RegisterCallback(
            e.token, [weak, full_key = key.full_key, token = e.token] {
              std::shared_ptr<State> st = weak.lock();
              if (st == nullptr) return;
              Entry waiting;
              {
                std::lock_guard<std::mutex> l(st->mu);
                auto w = st->table.find(full_key);
                if (w == st->table.end() || w->second.has_value || w->second.token != token) {
                  return;  // already delivered or aborted
                }
                waiting = std::move(w->second);
                st->table.erase(w);
              }
              Fail(errors::Cancelled("RecvAsync of ", full_key, " was cancelled"),
                   waiting.recv_args, waiting.done);
            });
        if (!registered) {
          l.unlock();
          Fail(errors::Cancelled("RecvAsync of ", key.full_key, " was cancelled"), args,
               e.done);
          return;
        }
      }
      state_->table.emplace(key.full_key, std::move(e));
      return;
    }
  }
  Entry receiver;
  receiver.recv_args = args;
  receiver.done = std::move(done);
  Deliver(sent.send_args, sent.value, sent.is_dead, receiver);
}

void LocalRendezvous::StartAbort(const Status& status) {
  Status s = status.ok() ? errors::Internal("Rendezvous aborted with an OK status") : status;
  std::vector<Entry> waiting;
  {
    std::lock_guard<std::mutex> l(state_->mu);
    if (state_->status.ok()) state_->status = s;
    s = state_->status;
    for (auto& [key, e] : state_->table) {
      if (!e.has_value) waiting.push_back(std::move(e));
    }
    state_->table.clear();
  }
  for (const Entry& e : waiting) {
    Deregister(e);
    Fail(s, e.recv_args, e.done);
  }
}

}  // namespace tensorflux
