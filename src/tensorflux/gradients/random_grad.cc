// Gradients of the random family: none. The values do not depend differentiably on the inputs
// (a shape, an integer range, or a permutation drawn independently of the values), so
// AddSymbolicGradients stops at these ops. RandomShuffle is treated as non-differentiable too
// (a gradient would need the permutation, which the op does not output).
#include "tensorflux/gradients/gradients.h"

namespace tensorflux {

REGISTER_NO_GRADIENT("RandomStandardNormal");
REGISTER_NO_GRADIENT("TruncatedNormal");
REGISTER_NO_GRADIENT("RandomUniform");
REGISTER_NO_GRADIENT("RandomUniformInt");
REGISTER_NO_GRADIENT("RandomShuffle");

}  // namespace tensorflux
