// DecodeCSV's CPU kernel (ops/parsing_ops.cc; TF's op): splits each record on field_delim (RFC
// 4180 quoting when use_quote_delim: a field in double quotes may hold the delimiter, "" is a
// quote), keeps the select_cols columns (all when empty), and parses column i as OUT_TYPE[i]. An
// empty field or na_value takes record_defaults[i]; an empty default makes the column required.
//
// INVALID_ARGUMENT naming the record (flat index into `records`) and column: a field count other
// than the output count (or than max(select_cols) + 1 fields), a required field missing, a number
// that does not parse (or is out of int32 range), a bad quote.
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/numbers.h"
#include "tensorflux/framework/op_kernel.h"

namespace tensorflux {
namespace {

// Splits `rec` into `fields`; INVALID_ARGUMENT text (without the record) on a bad quote.
Status SplitRecord(std::string_view rec, char delim, bool quotes, std::vector<std::string>* fields) {
  fields->clear();
  size_t i = 0;
  while (true) {
    std::string field;
    if (quotes && i < rec.size() && rec[i] == '"') {
      ++i;
      while (true) {
        if (i >= rec.size()) return errors::InvalidArgument("quoted field ", fields->size(),
                                                            " is not closed");
        if (rec[i] == '"') {
          if (i + 1 < rec.size() && rec[i + 1] == '"') {
            field.push_back('"');
            i += 2;
            continue;
          }
          ++i;
          break;
        }
        field.push_back(rec[i++]);
      }
      if (i < rec.size() && rec[i] != delim)
        return errors::InvalidArgument("quote inside quoted field ", fields->size(),
                                       " must be escaped by another quote");
    } else {
      const size_t end = std::min(rec.find(delim, i), rec.size());
      field.assign(rec.substr(i, end - i));
      if (quotes && field.find('"') != std::string::npos)
        return errors::InvalidArgument("unquoted field ", fields->size(),
                                       " cannot hold a quote");
      i = end;
    }
    fields->push_back(std::move(field));
    if (i >= rec.size()) return OkStatus();
    ++i;  // the delimiter; a trailing one leaves an empty last field
  }
}

template <typename T>
bool ParseNumber(const std::string& s, T* out) {
  if constexpr (std::is_same_v<T, float>) {
    return absl::SimpleAtof(s, out);
  } else if constexpr (std::is_same_v<T, double>) {
    return absl::SimpleAtod(s, out);
  } else {
    return absl::SimpleAtoi(s, out);
  }
}

// Stores `field` (or the default) into element `r` of `out`, typed by T.
template <typename T>
Status StoreField(const std::string& field, bool missing, const Tensor& def, int64_t r, int col,
                  Tensor* out) {
  T& dst = out->flat<T>()[r];
  if (missing) {
    if (def.NumElements() == 0)
      return errors::InvalidArgument("field ", col, " is required but missing in record ", r);
    dst = def.flat<T>()[0];
    return OkStatus();
  }
  if constexpr (std::is_same_v<T, std::string>) {
    dst = field;
  } else if (!ParseNumber(field, &dst)) {
    return errors::InvalidArgument("field ", col, " in record ", r, " is not a valid ",
                                   DataTypeString(DataTypeToEnum<T>::value), ": '", field, "'");
  }
  return OkStatus();
}

// The column types DecodeCSV allows (OUT_TYPE's list; the op registry enforces it).
template <typename Fn>
Status VisitCsvType(DataType dt, Fn&& fn) {
  switch (dt) {
    case DT_FLOAT: return fn(TypeTag<float>{});
    case DT_DOUBLE: return fn(TypeTag<double>{});
    case DT_INT32: return fn(TypeTag<int32_t>{});
    case DT_INT64: return fn(TypeTag<int64_t>{});
    case DT_STRING: return fn(TypeTag<std::string>{});
    default: return errors::InvalidArgument("DecodeCSV cannot output ", DataTypeString(dt));
  }
}

class DecodeCSVOp : public OpKernel {
 public:
  explicit DecodeCSVOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    std::string delim;
    OP_REQUIRES_OK(ctx, ctx->GetAttr("OUT_TYPE", &types_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("field_delim", &delim));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("use_quote_delim", &quotes_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("na_value", &na_value_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("select_cols", &select_cols_));
    OP_REQUIRES(ctx, delim.size() == 1,
                errors::InvalidArgument("field_delim must be one character, got '", delim, "'"));
    delim_ = delim[0];
    OP_REQUIRES(ctx, select_cols_.empty() || select_cols_.size() == types_.size(),
                errors::InvalidArgument("select_cols has ", select_cols_.size(),
                                        " columns for ", types_.size(), " outputs"));
    for (size_t i = 0; i < select_cols_.size(); ++i)
      OP_REQUIRES(ctx, select_cols_[i] >= 0 && (i == 0 || select_cols_[i] > select_cols_[i - 1]),
                  errors::InvalidArgument("select_cols must be non-negative and strictly "
                                          "increasing"));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& records = ctx->input(0);
    const int n = static_cast<int>(types_.size());
    std::vector<Tensor*> outs(n);
    for (int i = 0; i < n; ++i) {
      const Tensor& def = ctx->input(1 + i);
      OP_REQUIRES(ctx, def.NumElements() <= 1,
                  errors::InvalidArgument("record_defaults[", i, "] must have at most one "
                                          "element, got shape ", def.shape().DebugString()));
      OP_REQUIRES_OK(ctx, ctx->allocate_output(i, records.shape(), &outs[i]));
    }
    const int64_t needed = select_cols_.empty() ? n : select_cols_.back() + 1;
    std::vector<std::string> fields;
    for (int64_t r = 0; r < records.NumElements(); ++r) {
      Status s = SplitRecord(records.flat<std::string>()[r], delim_, quotes_, &fields);
      OP_REQUIRES(ctx, s.ok(), errors::InvalidArgument("record ", r, ": ", s.message()));
      const bool bad_count = select_cols_.empty() ? static_cast<int64_t>(fields.size()) != n
                                                  : static_cast<int64_t>(fields.size()) < needed;
      OP_REQUIRES(ctx, !bad_count,
                  errors::InvalidArgument("expected ", needed, " fields but record ", r, " has ",
                                          fields.size()));
      for (int i = 0; i < n; ++i) {
        const std::string& f = fields[select_cols_.empty() ? i : select_cols_[i]];
        const bool missing = f.empty() || (!na_value_.empty() && f == na_value_);
        OP_REQUIRES_OK(ctx, VisitCsvType(types_[i], [&](auto tag) {
                         using T = typename decltype(tag)::type;
                         return StoreField<T>(f, missing, ctx->input(1 + i), r, i, outs[i]);
                       }));
      }
    }
  }

 private:
  std::vector<DataType> types_;
  char delim_ = ',';
  bool quotes_ = true;
  std::string na_value_;
  std::vector<int64_t> select_cols_;
};
REGISTER_KERNEL_BUILDER(Name("DecodeCSV").Device(DEVICE_CPU), DecodeCSVOp);

}  // namespace
}  // namespace tensorflux
