// A small internal helper for CPU kernels that call oneDNN primitives (pooling, batch norm,
// convolution): the process's CPU engine, an NHWC memory descriptor, and a wrapper that turns
// oneDNN's C++ exceptions into a Status so none crosses a kernel boundary.
//
// Threading: Debian's libdnnl uses the OpenMP runtime (libgomp): a primitive executed from a
// thread runs on that thread's OpenMP team (omp_get_max_threads() threads, all cores unless
// OMP_NUM_THREADS says otherwise), so kernels add no threads of their own around a primitive.
//
// Only for kernels built with TX_HAVE_DNNL (CMake defines it when oneDNN is found); each such
// kernel keeps a plain C++ path for the build without it. oneDNN keeps its own cache of
// created primitives (keyed by the primitive descriptor), so kernels create their primitive per
// Compute call: a repeated shape costs a cache lookup, not a JIT compile. (The convolution
// kernels also keep their primitives per kernel instance, which skips creating the descriptors.) oneDNN parallelizes
// primitives over its own OpenMP team on the calling thread.
#pragma once

#ifdef TX_HAVE_DNNL
#include <cstdint>
#include <exception>
#include <new>
#include <string_view>
#include <utility>

#include <oneapi/dnnl/dnnl.hpp>

#include "absl/strings/str_cat.h"
#include "tensorflux/core/openmp_team.h"
#include "tensorflux/core/status.h"
#include "tensorflux/core/tensor.h"

namespace tensorflux {
class OpKernelContext;
}  // namespace tensorflux

namespace tensorflux {
namespace dnnl_util {

// The CPU engine (index 0), created once.
dnnl::engine& CpuEngine();

// A 4-D memory descriptor for an [N, H, W, C] tensor stored NHWC (oneDNN's logical dims are
// always N, C, H, W; the format tag says how they are laid out).
inline dnnl::memory::desc Nhwc(int64_t n, int64_t h, int64_t w, int64_t c,
                               dnnl::memory::data_type dt = dnnl::memory::data_type::f32) {
  return dnnl::memory::desc({n, c, h, w}, dt, dnnl::memory::format_tag::nhwc);
}

// Primitive attributes with a user-managed scratchpad. oneDNN's default library-managed
// scratchpad belongs to the primitive, and oneDNN's primitive cache hands the same primitive to
// every caller with the same descriptor: two threads executing it at once (concurrent steps, or
// two nodes of one shape) would share that scratchpad. Kernels pass their own per call instead
// (Scratchpad below, DNNL_ARG_SCRATCHPAD).
inline dnnl::primitive_attr UserScratchpadAttr() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

// A memory object over a tensor's buffer (not owned; oneDNN only reads or writes through it).
inline dnnl::memory Wrap(const dnnl::memory::desc& md, const void* data) {
  return dnnl::memory(md, CpuEngine(), const_cast<void*>(data));
}

// Allocates (allocate_temp, kept alive by *buf) the scratchpad `md` of a primitive created with
// UserScratchpadAttr() and sets *mem over it. RESOURCE_EXHAUSTED when out of memory.
Status Scratchpad(OpKernelContext* ctx, const dnnl::memory::desc& md, Tensor* buf,
                  dnnl::memory* mem);

// An in-order stream on CpuEngine() owned by the calling thread, for kernels that execute on
// every call and do not want to create a stream each time (streams are not shared between
// threads; primitives and the engine are).
dnnl::stream& ThreadStream();

// Held while a primitive executes: one oneDNN primitive at a time in the process. Each calling
// thread has its own OpenMP team of all cores, so two nodes executing primitives at once (a
// convolution's backward-data and backward-filter are independent) ran 2 x cores threads whose
// barriers (libgomp's and oneDNN's JIT'd spin barriers) waited on descheduled teammates: on 2
// cores a CNN training step's Conv2DBackpropFilter took 4x its primitive time. Serialized, each
// primitive has every core; the other nodes still run on the session's pools meanwhile.
// While held, the calling thread's OpenMP team has the kernel's intra-op thread count
// (ConfigProto.intra_op_parallelism_threads; all cores by default; 1 where the device has no
// intra-op pool, as with intra_op_parallelism_threads 1), whatever the thread's own
// OpenMP setting (core/openmp_team.h, ScopedOpenMpThreads).
class TeamGate {
 public:
  explicit TeamGate(OpKernelContext* ctx);
  ~TeamGate();
  TeamGate(const TeamGate&) = delete;
  TeamGate& operator=(const TeamGate&) = delete;

 private:
  ScopedOpenMpThreads threads_;
};

// Runs fn(stream) on the calling thread's stream (ThreadStream()), under ctx's TeamGate, and
// waits for it. A dnnl::error
// thrown while creating descriptors or primitives inside fn becomes INTERNAL
// "<what>: oneDNN error: ... (status N)"; std::bad_alloc becomes RESOURCE_EXHAUSTED.
template <typename Fn>
Status Run(OpKernelContext* ctx, std::string_view what, Fn&& fn) {
  try {
    dnnl::stream& stream = ThreadStream();
    TeamGate gate(ctx);
    std::forward<Fn>(fn)(stream);
    stream.wait();
  } catch (const dnnl::error& e) {
    return errors::Internal(what, ": oneDNN error: ", e.what(), " (status ",
                            static_cast<int>(e.status), ")");
  } catch (const std::bad_alloc&) {
    return errors::ResourceExhausted(what, ": out of memory in oneDNN");
  }
  return OkStatus();
}

// Runs fn() (returning Status) and turns a oneDNN or other C++ exception escaping it into
// INTERNAL "<what>: oneDNN error <status>: <message>" (RESOURCE_EXHAUSTED for bad_alloc).
template <typename Fn>
Status Guard(std::string_view what, Fn&& fn) {
  try {
    return std::forward<Fn>(fn)();
  } catch (const dnnl::error& e) {
    return errors::Internal(what, ": oneDNN error ", static_cast<int>(e.status), ": ", e.what());
  } catch (const std::bad_alloc&) {
    return errors::ResourceExhausted(what, ": out of memory in oneDNN");
  } catch (const std::exception& e) {
    return errors::Internal(what, ": ", e.what());
  }
}

}  // namespace dnnl_util
}  // namespace tensorflux
#endif  // TX_HAVE_DNNL
