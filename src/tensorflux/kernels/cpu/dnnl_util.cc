#include "tensorflux/kernels/cpu/dnnl_util.h"

#include <algorithm>
#include <mutex>

#include "tensorflux/framework/op_kernel.h"

#ifdef TX_HAVE_DNNL
namespace tensorflux {
namespace dnnl_util {

dnnl::engine& CpuEngine() {
  static dnnl::engine* engine = new dnnl::engine(dnnl::engine::kind::cpu, 0);
  return *engine;
}

Status Scratchpad(OpKernelContext* ctx, const dnnl::memory::desc& md, Tensor* buf,
                  dnnl::memory* mem) {
  const int64_t bytes = static_cast<int64_t>(md.get_size());
  TX_RETURN_IF_ERROR(
      ctx->allocate_temp(DT_UINT8, TensorShape({std::max<int64_t>(bytes, 1)}), buf));
  *mem = dnnl::memory(md, CpuEngine(), buf->data<uint8_t>());
  return OkStatus();
}

namespace {
std::mutex& TeamMutex() {
  static std::mutex* mu = new std::mutex;
  return *mu;
}
}  // namespace

TeamGate::TeamGate(OpKernelContext* ctx) : threads_(ctx->intra_op_thread_pool()) {
  TeamMutex().lock();
}
TeamGate::~TeamGate() { TeamMutex().unlock(); }

dnnl::stream& ThreadStream() {
  thread_local dnnl::stream stream(CpuEngine());
  return stream;
}

}  // namespace dnnl_util
}  // namespace tensorflux
#endif  // TX_HAVE_DNNL
