#include "tensorflux/io/csv.h"

#include <algorithm>

#include "absl/strings/numbers.h"

namespace tensorflux {
namespace io {
namespace {

// Splits `rec` into `fields`; the error text (without `where`) on a bad quote.
Status SplitRecord(std::string_view rec, char delim, bool quotes, std::vector<std::string>* fields) {
  fields->clear();
  size_t i = 0;
  while (true) {
    std::string field;
    if (quotes && i < rec.size() && rec[i] == '"') {
      ++i;
      while (true) {
        if (i >= rec.size())
          return errors::InvalidArgument("quoted field ", fields->size(), " is not closed");
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

// Stores `field` (or the default) into element `index` of `out`, typed by T.
template <typename T>
Status StoreField(const std::string& field, bool missing, const Tensor& def, int64_t index,
                  int col, Tensor* out, std::string_view where) {
  T& dst = out->flat<T>()[index];
  if (missing) {
    if (def.NumElements() == 0)
      return errors::InvalidArgument(where, ": field ", col, " is required but missing");
    dst = def.flat<T>()[0];
    return OkStatus();
  }
  if constexpr (std::is_same_v<T, std::string>) {
    dst = field;
  } else if (!ParseNumber(field, &dst)) {
    return errors::InvalidArgument(where, ": field ", col, " is not a valid ",
                                   DataTypeString(DataTypeToEnum<T>::value), ": '", field, "'");
  }
  return OkStatus();
}

template <typename Fn>
Status VisitCsvType(DataType dt, Fn&& fn) {
  switch (dt) {
    case DT_FLOAT: return fn(TypeTag<float>{});
    case DT_DOUBLE: return fn(TypeTag<double>{});
    case DT_INT32: return fn(TypeTag<int32_t>{});
    case DT_INT64: return fn(TypeTag<int64_t>{});
    case DT_STRING: return fn(TypeTag<std::string>{});
    default: return errors::InvalidArgument("CSV columns cannot be ", DataTypeString(dt));
  }
}

}  // namespace

Status ValidateCsvOptions(const CsvOptions& o) {
  for (DataType dt : o.types)
    TX_RETURN_IF_ERROR(VisitCsvType(dt, [](auto) { return OkStatus(); }));
  if (!o.select_cols.empty() && o.select_cols.size() != o.types.size())
    return errors::InvalidArgument("select_cols has ", o.select_cols.size(), " columns for ",
                                   o.types.size(), " outputs");
  for (size_t i = 0; i < o.select_cols.size(); ++i)
    if (o.select_cols[i] < 0 || (i > 0 && o.select_cols[i] <= o.select_cols[i - 1]))
      return errors::InvalidArgument("select_cols must be non-negative and strictly increasing");
  return OkStatus();
}

Status ParseCsvRecord(const CsvOptions& o, std::string_view record,
                      absl::Span<const Tensor> defaults, absl::Span<Tensor* const> outs,
                      int64_t index, std::string_view where) {
  std::vector<std::string> fields;
  Status s = SplitRecord(record, o.delim, o.quotes, &fields);
  if (!s.ok()) return errors::InvalidArgument(where, ": ", s.message());
  const int n = static_cast<int>(o.types.size());
  const int64_t needed = o.select_cols.empty() ? n : o.select_cols.back() + 1;
  const int64_t have = static_cast<int64_t>(fields.size());
  if (o.select_cols.empty() ? have != n : have < needed)
    return errors::InvalidArgument(where, ": expected ", needed, " fields but found ", have);
  for (int i = 0; i < n; ++i) {
    const std::string& f = fields[o.select_cols.empty() ? i : o.select_cols[i]];
    const bool missing = f.empty() || (!o.na_value.empty() && f == o.na_value);
    TX_RETURN_IF_ERROR(VisitCsvType(o.types[i], [&](auto tag) {
      using T = typename decltype(tag)::type;
      return StoreField<T>(f, missing, defaults[i], index, i, outs[i], where);
    }));
  }
  return OkStatus();
}

}  // namespace io
}  // namespace tensorflux
