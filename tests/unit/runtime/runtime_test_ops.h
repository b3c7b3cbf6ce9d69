// Test-only ops and kernels for the executor and session tests (prefix "TxRtTest"), and a
// small GraphDef builder.
//
//   TxRtTestConst(value: float) -> float scalar                      cheap
//   TxRtTestAdd(a: float, b: float) -> a + b (b scalar or same size)  cheap, forwards a or b
//   TxRtTestFail(x: float) -> float                                   fails INVALID_ARGUMENT
//   TxRtTestSleep(x: float, ms: int = 1) -> x                         expensive, sleeps ms
//   TxRtTestCount(x: float) -> x                                      records that it ran
//   TxRtTestBig(n: int) -> float[n] of ones                           cheap
//   TxRtTestSum(x: float) -> sum(x) scalar                            cheap
//   TxRtTestProbe(x: float) -> x        records cpu_allocator() bytes_in_use when it runs
//   TxRtTestRefCheck(x: float) -> x     records whether its input buffer had one holder
//   TxRtTestNoOutput() -> float         never sets its output
//   TxRtTestAsyncAddOne(x: float, on_thread: bool = false) -> x + 1   AsyncOpKernel; completes
//                                       inline, or on a new thread after 1 ms
//   TxRtTestBarrier(x: float, n: int) -> x   expensive; waits until n barrier kernels are
//                                       running at once (DEADLINE_EXCEEDED after 60 s)
//   TxRtTestThreadId(x: float) -> x     expensive; records the thread it ran on (ThreadsSeen)
//   TxRtTestNoKernel() -> float         op without a kernel
//   TxRtTestWaitForCancel(x: float) -> x   expensive; returns only once its step is cancelled
//                                       (INTERNAL after 60 s): a step that is running for
//                                       certain when a test cancels it or its timeout fires
#pragma once

#include <atomic>
#include <cstdint>
#include <initializer_list>
#include <set>
#include <string>
#include <thread>

#include "tensorflux/framework/node_def_util.h"
#include "tensorflux/graph.pb.h"

namespace tensorflux {
namespace rt_test {

// How many times the TxRtTestCount node `name` ran since the last ResetCounts().
int CountOf(const std::string& name);
void ResetCounts();
// Last bytes_in_use seen by a TxRtTestProbe node.
extern std::atomic<int64_t> g_probe_bytes;
// Number of TxRtTestRefCheck runs whose input had a single holder / several holders.
extern std::atomic<int> g_ref_one;
extern std::atomic<int> g_ref_many;
// The threads TxRtTestThreadId kernels ran on since the last ResetThreadsSeen().
std::set<std::thread::id> ThreadsSeen();
void ResetThreadsSeen();
// Number of TxRtTestBarrier kernels that have arrived (reset to 0 before a run).
extern std::atomic<int> g_barrier_arrived;
// Number of TxRtTestWaitForCancel kernels that have started waiting (reset by the test).
extern std::atomic<int> g_cancel_waiters;

// Appends a node to `g`; attrs are set by the caller on the returned NodeDef.
inline NodeDef* AddNode(GraphDef* g, const std::string& name, const std::string& op,
                        std::initializer_list<std::string> inputs = {}) {
  NodeDef* n = g->add_node();
  n->set_name(name);
  n->set_op(op);
  for (const auto& in : inputs) n->add_input(in);
  return n;
}
inline NodeDef* AddConst(GraphDef* g, const std::string& name, float v) {
  NodeDef* n = AddNode(g, name, "TxRtTestConst");
  AddNodeAttr("value", v, n);
  return n;
}
inline NodeDef* AddRetval(GraphDef* g, const std::string& name, const std::string& input,
                          int index) {
  NodeDef* n = AddNode(g, name, "_Retval", {input});
  AddNodeAttr("T", DT_FLOAT, n);
  AddNodeAttr("index", static_cast<int64_t>(index), n);
  return n;
}

}  // namespace rt_test
}  // namespace tensorflux
