#include "tensorflux/kernels/cpu/dnnl_util.h"

#ifdef TX_HAVE_DNNL
namespace tensorflux {
namespace dnnl_util {

dnnl::engine& CpuEngine() {
  static dnnl::engine* engine = new dnnl::engine(dnnl::engine::kind::cpu, 0);
  return *engine;
}

dnnl::stream& ThreadStream() {
  thread_local dnnl::stream stream(CpuEngine());
  return stream;
}

}  // namespace dnnl_util
}  // namespace tensorflux
#endif  // TX_HAVE_DNNL
