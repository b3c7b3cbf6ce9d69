// CPU kernels of ScalarSummary, HistogramSummary and MergeSummary (ops/summary_ops.cc; TF's
// core/kernels/summary_op.cc semantics).
#include <cmath>
#include <string>

#include "absl/container/flat_hash_set.h"
#include "tensorflux/framework/op_kernel.h"
#include "tensorflux/summary.pb.h"
#include "tensorflux/summary/histogram.h"

namespace tensorflux {
namespace {

// Element i of a real-number tensor as a double.
template <typename T>
double ElementAsDouble(const Tensor& t, int64_t i) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    return static_cast<double>(static_cast<float>(t.data<T>()[i]));
  } else {
    return static_cast<double>(t.data<T>()[i]);
  }
}

// Calls fn(i, value) for each element of the real-number tensor `t`.
template <typename Fn>
Status ForEachAsDouble(const Tensor& t, const std::string& node, Fn&& fn) {
  if (t.dtype() == DT_BOOL)
    return errors::InvalidArgument(node, ": summary values must be real numbers, got bool");
  return VisitPodType(t.dtype(), node, [&](auto tag) {
    using T = typename decltype(tag)::type;
    for (int64_t i = 0; i < t.NumElements(); ++i) fn(i, ElementAsDouble<T>(t, i));
    return OkStatus();
  });
}

void SetSerializedOutput(OpKernelContext* ctx, const Summary& s) {
  Tensor* out = nullptr;
  OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({}), &out));
  out->data<std::string>()[0] = s.SerializeAsString();
}

class ScalarSummaryOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* ctx) override {
    const Tensor& tags = ctx->input(0);
    const Tensor& values = ctx->input(1);
    OP_REQUIRES(ctx, tags.shape() == values.shape(),
                errors::InvalidArgument("ScalarSummary '", name(), "': tags and values must have "
                                        "one shape, got tags ", tags.shape().DebugString(),
                                        " and values ", values.shape().DebugString()));
    // A tag may repeat (TF keeps every value; only MergeSummary refuses duplicates).
    Summary s;
    const auto* tag = tags.data<std::string>();
    OP_REQUIRES_OK(ctx, ForEachAsDouble(values, "ScalarSummary '" + name() + "'",
                                        [&](int64_t i, double v) {
                                          Summary::Value* sv = s.add_value();
                                          sv->set_tag(tag[i]);
                                          sv->set_simple_value(static_cast<float>(v));
                                        }));
    SetSerializedOutput(ctx, s);
  }
};

class HistogramSummaryOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* ctx) override {
    const Tensor& tag = ctx->input(0);
    const Tensor& values = ctx->input(1);
    OP_REQUIRES(ctx, tag.dims() == 0,
                errors::InvalidArgument("HistogramSummary '", name(), "': tag must be a scalar, "
                                        "got shape ", tag.shape().DebugString()));
    const std::string& tag_str = tag.data<std::string>()[0];
    summary::Histogram histo;
    bool bad = false;
    OP_REQUIRES_OK(ctx, ForEachAsDouble(values, "HistogramSummary '" + name() + "'",
                                        [&](int64_t, double v) {
                                          if (!std::isfinite(v)) bad = true;
                                          else histo.Add(v);
                                        }));
    OP_REQUIRES(ctx, !bad,
                errors::InvalidArgument("HistogramSummary '", name(), "': NaN or Inf in summary "
                                        "histogram for: ", tag_str));
    Summary s;
    Summary::Value* v = s.add_value();
    v->set_tag(tag_str);
    histo.EncodeToProto(v->mutable_histo(), /*preserve_zero_buckets=*/false);
    SetSerializedOutput(ctx, s);
  }
};

class MergeSummaryOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* ctx) override {
    Summary merged;
    absl::flat_hash_set<std::string> tags;
    for (int i = 0; i < ctx->num_inputs(); ++i) {
      const Tensor& in = ctx->input(i);
      const auto* strs = in.data<std::string>();
      for (int64_t j = 0; j < in.NumElements(); ++j) {
        Summary part;
        OP_REQUIRES(ctx, part.ParseFromString(strs[j]),
                    errors::InvalidArgument("MergeSummary '", name(), "': input ", i,
                                            " element ", j, " is not a serialized Summary"));
        for (Summary::Value& v : *part.mutable_value()) {
          // TF keys duplicates on the tag (node_name for old summaries without one).
          const std::string& key = v.tag().empty() ? v.node_name() : v.tag();
          OP_REQUIRES(ctx, key.empty() || tags.insert(key).second,
                      errors::InvalidArgument("MergeSummary '", name(), "': duplicate tag '",
                                              key, "' (input ", i, ")"));
          *merged.add_value() = std::move(v);
        }
      }
    }
    SetSerializedOutput(ctx, merged);
  }
};

REGISTER_KERNEL_BUILDER(Name("ScalarSummary").Device(DEVICE_CPU), ScalarSummaryOp);
REGISTER_KERNEL_BUILDER(Name("HistogramSummary").Device(DEVICE_CPU), HistogramSummaryOp);
REGISTER_KERNEL_BUILDER(Name("MergeSummary").Device(DEVICE_CPU), MergeSummaryOp);

}  // namespace
}  // namespace tensorflux
