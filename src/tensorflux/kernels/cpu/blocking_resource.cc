// kernels/cpu/blocking_resource.h.
#include "tensorflux/kernels/cpu/blocking_resource.h"

#include <utility>

namespace tensorflux {

void BlockingResource::Run(OpKernelContext* ctx, DoneCallback done, int list, AttemptFn attempt,
                           CancelFn on_cancel) {
  std::vector<Attempt> finished;
  bool finished_now = false;
  {
    std::lock_guard<std::mutex> l(mu_);
    std::deque<Attempt>& q = lists_[static_cast<size_t>(list)];
    Progress p = Progress::kBlocked;
    if (q.empty()) p = attempt(ctx);
    if (p == Progress::kFinished) {
      finished_now = true;
      FlushLocked(&finished);  // what this attempt changed may unblock others
    } else {
      CancellationManager* cm = ctx->cancellation_manager();
      const int64_t id = next_id_++;
      q.push_back(Attempt{id, ctx, std::move(done), std::move(attempt), std::move(on_cancel),
                          ctx->runner()});
      if (p == Progress::kProgressed) FlushLocked(&finished);
      if (cm != nullptr) {
        // The callback does nothing when the attempt has already finished or the resource is
        // gone. (Never deregistered: a finishing attempt may be on a thread running this very
        // manager's callbacks, and deregistering there would wait for itself.)
        std::weak_ptr<BlockingResource> self = weak_from_this();
        const bool registered = cm->RegisterCallback(cm->NewToken(), [self, id] {
          if (auto r = self.lock()) r->Cancel(id);
        });
        // Already cancelled: fail it now unless a flush above finished it.
        if (!registered) CancelLocked(id, &finished);
      }
    }
  }
  Complete(&finished);
  if (finished_now) done();
}

BlockingResource::~BlockingResource() {
  // The resource was dropped (Session::Close, DestroyResourceOp) while steps still wait on it.
  std::vector<Attempt> finished;
  for (std::deque<Attempt>& q : lists_) {
    for (Attempt& a : q) {
      a.ctx->SetStatus(errors::Cancelled(a.ctx->op_kernel().name(), " (op ",
                                         a.ctx->op_kernel().type_string(),
                                         ") was waiting on a resource that was destroyed"));
      finished.push_back(std::move(a));
    }
  }
  Complete(&finished);
}

void BlockingResource::FlushLocked(std::vector<Attempt>* finished) {
  bool progress = true;
  while (progress) {
    progress = false;
    for (std::deque<Attempt>& q : lists_) {
      while (!q.empty()) {
        const Progress p = q.front().run(q.front().ctx);
        if (p == Progress::kBlocked) break;
        progress = true;
        if (p == Progress::kProgressed) break;  // the front still waits; let others run
        finished->push_back(std::move(q.front()));
        q.pop_front();
      }
    }
  }
}

void BlockingResource::FailListLocked(int list, const Status& status,
                                      std::vector<Attempt>* finished) {
  std::deque<Attempt>& q = lists_[static_cast<size_t>(list)];
  for (Attempt& a : q) {
    if (a.on_cancel) a.on_cancel();
    a.ctx->SetStatus(status);
    finished->push_back(std::move(a));
  }
  q.clear();
}

void BlockingResource::Complete(std::vector<Attempt>* finished) {
  for (Attempt& a : *finished) {
    if (a.runner != nullptr) {
      (*a.runner)(std::move(a.done));
    } else {
      a.done();
    }
  }
  finished->clear();
}

bool BlockingResource::CancelLocked(int64_t id, std::vector<Attempt>* finished) {
  for (std::deque<Attempt>& q : lists_) {
    for (auto it = q.begin(); it != q.end(); ++it) {
      if (it->id != id) continue;
      if (it->on_cancel) it->on_cancel();
      it->ctx->SetStatus(errors::Cancelled("The step was cancelled while ",
                                           it->ctx->op_kernel().name(), " (op ",
                                           it->ctx->op_kernel().type_string(), ") was waiting"));
      finished->push_back(std::move(*it));
      q.erase(it);
      return true;
    }
  }
  return false;
}

void BlockingResource::Cancel(int64_t id) {
  std::vector<Attempt> finished;
  {
    std::lock_guard<std::mutex> l(mu_);
    // Undone work (elements put back) may unblock others.
    if (CancelLocked(id, &finished)) FlushLocked(&finished);
  }
  Complete(&finished);
}

}  // namespace tensorflux
