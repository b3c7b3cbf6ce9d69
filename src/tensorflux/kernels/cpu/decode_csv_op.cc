// DecodeCSV's CPU kernel (ops/parsing_ops.cc; TF's op) over io/csv.h, which documents the
// splitting, quoting, defaults and errors; errors name the record by its flat index into
// `records` ("record 3: field 1 is not a valid float: 'x'").
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tensorflux/framework/op_kernel.h"
#include "tensorflux/io/csv.h"

namespace tensorflux {
namespace {

class DecodeCSVOp : public OpKernel {
 public:
  explicit DecodeCSVOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    std::string delim;
    OP_REQUIRES_OK(ctx, ctx->GetAttr("OUT_TYPE", &options_.types));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("field_delim", &delim));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("use_quote_delim", &options_.quotes));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("na_value", &options_.na_value));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("select_cols", &options_.select_cols));
    OP_REQUIRES(ctx, delim.size() == 1,
                errors::InvalidArgument("field_delim must be one character, got '", delim, "'"));
    options_.delim = delim[0];
    OP_REQUIRES_OK(ctx, io::ValidateCsvOptions(options_));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& records = ctx->input(0);
    const int n = static_cast<int>(options_.types.size());
    std::vector<Tensor*> outs(n);
    std::vector<Tensor> defaults;
    for (int i = 0; i < n; ++i) {
      const Tensor& def = ctx->input(1 + i);
      OP_REQUIRES(ctx, def.NumElements() <= 1,
                  errors::InvalidArgument("record_defaults[", i, "] must have at most one "
                                          "element, got shape ", def.shape().DebugString()));
      defaults.push_back(def);
      OP_REQUIRES_OK(ctx, ctx->allocate_output(i, records.shape(), &outs[i]));
    }
    for (int64_t r = 0; r < records.NumElements(); ++r)
      OP_REQUIRES_OK(ctx, io::ParseCsvRecord(options_, records.flat<std::string>()[r], defaults,
                                             outs, r, absl::StrCat("record ", r)));
  }

 private:
  io::CsvOptions options_;
};
REGISTER_KERNEL_BUILDER(Name("DecodeCSV").Device(DEVICE_CPU), DecodeCSVOp);

}  // namespace
}  // namespace tensorflux
