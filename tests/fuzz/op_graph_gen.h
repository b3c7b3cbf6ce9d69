// One-op graph generator for the kernel fuzzer (tests/fuzz/op_fuzz.cc) and its regression test
// (tests/unit/fuzz/fuzz_regression_test.cc).
//
// From a byte string, GenerateOneOpGraph picks a registered op, fills its attrs (allowed values,
// minimums and defaults from the OpDef, plus hostile choices: negative or huge ints, NaN, empty
// lists, wrong layout strings) and feeds every input from a Const of a random dtype, shape (rank
// 0-4, dims 0-5) and values. RunOneOpGraph runs it in a LocalSession, fetching every output.
// A kernel must answer every such graph with OK or an error Status, never a crash, hang or
// out-of-bounds access (run the fuzzer under ASan+UBSan: `make fuzz`).
#ifndef TENSORFLUX_TESTS_FUZZ_OP_GRAPH_GEN_H_
#define TENSORFLUX_TESTS_FUZZ_OP_GRAPH_GEN_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "tensorflux/core/status.h"
#include "tensorflux/graph.pb.h"

namespace tensorflux {
namespace fuzz {

// Reads choices from a byte string; past its end every read returns 0 (so any input is valid).
class ByteSource {
 public:
  ByteSource(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  uint8_t U8() { return pos_ < size_ ? data_[pos_++] : 0; }
  uint32_t U32();
  // Uniform-ish in [0, n); 0 when n == 0.
  uint32_t Below(uint32_t n) { return n == 0 ? 0 : U32() % n; }
  bool Bool() { return (U8() & 1) != 0; }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

// Registered ops the generator may pick, sorted by name: all except graph plumbing that needs a
// runtime context (_Arg, _Retval, Send/Recv, Placeholder) and ops with function attrs.
std::vector<std::string> FuzzableOps();

struct FuzzGraph {
  GraphDef graph;
  std::string node;      // the op's node name ("op"); empty when generation gave up
  int num_outputs = -1;  // -1: unknown (the op node is run as a target)
};

struct GeneratorOptions {
  // Also use extreme integers (INT32/INT64 min and max, 2^40) for int attrs and integer element
  // values. Such graphs may legitimately ask for tensors of many GiB (a shape input of
  // [2147483647] is valid), so only the fuzzer, which runs with allocator_may_return_null and an
  // RSS limit, turns this on; without it integers stay small (-3..8), negative ones included.
  bool extreme_ints = false;
};

FuzzGraph GenerateOneOpGraph(ByteSource* src, const std::vector<std::string>& ops,
                             const GeneratorOptions& options = {});

// Runs the graph in a fresh LocalSession (fetching every output of the op node when known) and
// returns the session's status: OK or the op's error.
Status RunOneOpGraph(const FuzzGraph& g);

}  // namespace fuzz
}  // namespace tensorflux

#endif  // TENSORFLUX_TESTS_FUZZ_OP_GRAPH_GEN_H_
