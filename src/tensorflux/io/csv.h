// CSV records to typed values, shared by DecodeCSV (kernels/cpu/decode_csv_op.cc) and CsvDataset
// (data/file_datasets.cc), with TF's DecodeCSV rules: fields split on `delim`; with `quotes`
// (use_quote_delim) a field in double quotes may hold the delimiter and "" stands for a quote;
// the `select_cols` columns are kept (all when empty); an empty field or `na_value` takes the
// column's default, and an empty default makes the column required.
//
// Errors are INVALID_ARGUMENT and start with `where` (e.g. "record 3" or "file 'a.csv' line 7"):
// a field count other than the column count (or fewer than max(select_cols) + 1 fields), a
// required field missing, a number that does not parse or is out of range, a bad quote.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/types/span.h"
#include "tensorflux/core/status.h"
#include "tensorflux/core/tensor.h"

namespace tensorflux {
namespace io {

struct CsvOptions {
  std::vector<DataType> types;  // float, double, int32, int64 or string, one per column
  char delim = ',';
  bool quotes = true;
  std::string na_value;
  std::vector<int64_t> select_cols;  // strictly increasing; empty = every column
};

// INVALID_ARGUMENT for an unsupported type or select_cols not matching / not increasing.
Status ValidateCsvOptions(const CsvOptions& options);

// Parses `record` into element `index` of each `outs[i]` (of type types[i]); `defaults[i]` has
// 0 (required) or 1 element.
Status ParseCsvRecord(const CsvOptions& options, std::string_view record,
                      absl::Span<const Tensor> defaults, absl::Span<Tensor* const> outs,
                      int64_t index, std::string_view where);

}  // namespace io
}  // namespace tensorflux
