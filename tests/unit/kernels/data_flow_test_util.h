// Helpers for the queue and accumulator tests (queue_ops_test.cc, accumulator_ops_test.cc):
// placeholders, a session over a GraphDef, and a Run that may be expected to block.
#pragma once

#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "tensorflux/runtime/local_session.h"
#include "variable_test_util.h"

namespace tensorflux {
namespace flow_test {

using var_test::AddOp;

inline NodeDef* AddPlaceholder(GraphDef* g, const std::string& name, DataType dtype) {
  NodeDef* n = AddOp(g, name, "Placeholder");
  AddNodeAttr("dtype", dtype, n);
  return n;
}

inline std::unique_ptr<LocalSession> NewSession(const GraphDef& g) {
  auto s = std::make_unique<LocalSession>(SessionOptions());
  Status st = s->Create(g);
  EXPECT_TRUE(st.ok()) << st;
  return s;
}

using Feeds = std::vector<std::pair<std::string, Tensor>>;

// Runs a step with RunOptions.timeout_in_ms = timeout_ms (0: none).
inline Status RunWithTimeout(Session* s, const Feeds& feeds,
                             const std::vector<std::string>& fetches,
                             const std::vector<std::string>& targets, std::vector<Tensor>* out,
                             int64_t timeout_ms) {
  RunOptions opts;
  opts.set_timeout_in_ms(timeout_ms);
  return s->Run(opts, feeds, fetches, targets, out, nullptr);
}

// A step started on another thread, for ops that block until this thread acts.
struct Pending {
  std::vector<Tensor> out;
  std::future<Status> status;

  Pending(Session* s, Feeds feeds, std::vector<std::string> fetches,
          std::vector<std::string> targets) {
    status = std::async(std::launch::async, [this, s, feeds = std::move(feeds),
                                             fetches = std::move(fetches),
                                             targets = std::move(targets)] {
      return s->Run(feeds, fetches, targets, &out);
    });
  }
  // True when the step is still running after `ms` milliseconds.
  bool StillBlockedAfter(int ms) {
    return status.wait_for(std::chrono::milliseconds(ms)) == std::future_status::timeout;
  }
  Status Wait() { return status.get(); }
};

inline Tensor Scalar(float v) { return Tensor::Scalar<float>(v); }

inline std::vector<float> Floats(const Tensor& t) {
  return std::vector<float>(t.data<float>(), t.data<float>() + t.NumElements());
}

}  // namespace flow_test
}  // namespace tensorflux
