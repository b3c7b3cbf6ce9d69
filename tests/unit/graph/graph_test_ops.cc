// Test-only ops for the graph and subgraph tests (tests/unit/graph, tests/unit/runtime). They have
// no kernels: these tests only build, rewrite and export graphs.
#include "tensorflux/framework/op.h"

namespace tensorflux {

// Two inputs of one type attr.
REGISTER_OP("TxGraphTestBinary")
    .Input("a: T")
    .Input("b: T")
    .Output("out: T")
    .Attr("T: {float, int32}");

// N inputs of type T.
REGISTER_OP("TxGraphTestN")
    .Input("in: N * T")
    .Output("out: T")
    .Attr("N: int >= 1")
    .Attr("T: type");

// A stateful float source with a defaulted attr.
REGISTER_OP("TxGraphTestSource")
    .Output("out: float")
    .Attr("value: int = 7")
    .SetIsStateful();

REGISTER_OP("TxGraphTestIntSource").Output("out: int32");

// One float input, two float outputs.
REGISTER_OP("TxGraphTestSplit").Input("in: float").Output("a: float").Output("b: float");

// A reference output (like VariableV2) and a reference input (like Assign).
REGISTER_OP("TxGraphTestRef").Output("ref: Ref(float)").SetIsStateful();
REGISTER_OP("TxGraphTestRefIn")
    .Input("ref: Ref(float)")
    .Input("value: float")
    .Output("out: Ref(float)")
    .SetIsStateful();

// No inputs and no outputs (a target, like NoOp).
REGISTER_OP("TxGraphTestNoOp");

// A float sink without outputs.
REGISTER_OP("TxGraphTestSink").Input("in: float").SetIsStateful();

}  // namespace tensorflux
