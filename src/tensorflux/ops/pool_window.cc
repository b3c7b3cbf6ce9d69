#include "tensorflux/ops/pool_window.h"

#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace tensorflux {

namespace {
// Sizes above this are rejected so products of window geometry never overflow int64.
constexpr int64_t kMaxDim = std::numeric_limits<int32_t>::max();
}  // namespace

Status ValidatePoolAttrs(std::string_view op, const PoolAttrs& a) {
  if (a.ksize.size() != 4) {
    return errors::InvalidArgument(op, ": sliding window ksize field must specify 4 dimensions, got [",
                                   absl::StrJoin(a.ksize, ","), "]");
  }
  if (a.strides.size() != 4) {
    return errors::InvalidArgument(op, ": sliding window strides field must specify 4 dimensions, got [",
                                   absl::StrJoin(a.strides, ","), "]");
  }
  if (a.ksize[0] != 1 || a.strides[0] != 1) {
    return errors::Unimplemented(op, ": pooling is not supported on the batch dimension (ksize [",
                                   absl::StrJoin(a.ksize, ","), "], strides [",
                                   absl::StrJoin(a.strides, ","), "])");
  }
  if (a.ksize[3] != 1 || a.strides[3] != 1) {
    return errors::Unimplemented(op, ": pooling is not supported on the depth dimension (ksize [",
                                   absl::StrJoin(a.ksize, ","), "], strides [",
                                   absl::StrJoin(a.strides, ","), "])");
  }
  for (int i = 1; i < 3; ++i) {
    if (a.ksize[i] <= 0 || a.strides[i] <= 0) {
      return errors::InvalidArgument(op, ": ksize and strides must be positive, got ksize [",
                                     absl::StrJoin(a.ksize, ","), "], strides [",
                                     absl::StrJoin(a.strides, ","), "]");
    }
  }
  if (a.data_format != "NHWC") {
    return errors::InvalidArgument(op, ": the CPU kernels support only data_format NHWC, got ",
                                   a.data_format);
  }
  if (a.padding == "EXPLICIT") {
    const auto& p = a.explicit_paddings;
    if (p.size() != 8) {
      return errors::InvalidArgument(op, ": explicit_paddings must have 8 values, got ", p.size());
    }
    if (p[0] != 0 || p[1] != 0 || p[6] != 0 || p[7] != 0) {
      return errors::InvalidArgument(op, ": explicit padding of the batch and depth dimensions "
                                     "must be 0, got [", absl::StrJoin(p, ","), "]");
    }
    for (int i = 2; i < 6; ++i) {
      const int64_t k = a.ksize[i < 4 ? 1 : 2];
      if (p[i] < 0 || p[i] >= k) {
        return errors::InvalidArgument(op, ": explicit paddings must be in [0, window size), got [",
                                       absl::StrJoin(p, ","), "] for ksize [",
                                       absl::StrJoin(a.ksize, ","), "]");
      }
    }
  } else if (a.padding != "SAME" && a.padding != "VALID") {
    return errors::InvalidArgument(op, ": padding must be SAME, VALID or EXPLICIT, got ", a.padding);
  } else if (!a.explicit_paddings.empty()) {
    return errors::InvalidArgument(op, ": explicit_paddings must be empty unless padding is "
                                   "EXPLICIT");
  }
  return OkStatus();
}

namespace {

// One spatial dimension: output size and padding; -1 sizes for an unknown input.
Status WindowDim(std::string_view op, const PoolAttrs& a, int64_t in, int64_t k, int64_t s,
                 int64_t explicit_before, int64_t explicit_after, const char* name, int64_t* out,
                 int64_t* before, int64_t* after) {
  *before = *after = 0;
  if (in < 0) {
    *out = -1;
    return OkStatus();
  }
  if (in > kMaxDim) {
    return errors::InvalidArgument(op, ": input ", name, " ", in, " is too large");
  }
  if (a.padding == "SAME") {
    *out = (in + s - 1) / s;
    const int64_t total = std::max<int64_t>((*out - 1) * s + k - in, 0);
    *before = total / 2;
    *after = total - *before;
    if (in == 0) *out = 0, *before = *after = 0;
    return OkStatus();
  }
  if (a.padding == "EXPLICIT") {
    *before = explicit_before;
    *after = explicit_after;
  }
  const int64_t padded = in + *before + *after;
  if (padded < k) {
    return errors::InvalidArgument(op, ": the pooling window (", k, ") is larger than the ",
                                   a.padding == "EXPLICIT" ? "padded " : "", "input ", name, " (",
                                   padded, ")");
  }
  *out = (padded - k) / s + 1;
  return OkStatus();
}

}  // namespace

Status ComputePoolWindow(std::string_view op, const PoolAttrs& a, const std::vector<int64_t>& dims,
                         PoolWindow* w) {
  TX_RETURN_IF_ERROR(ValidatePoolAttrs(op, a));
  if (dims.size() != 4) {
    return errors::InvalidArgument(op, ": input must be 4-dimensional (NHWC), got rank ",
                                   dims.size());
  }
  w->batch = dims[0];
  w->in_rows = dims[1];
  w->in_cols = dims[2];
  w->depth = dims[3];
  w->k_rows = a.ksize[1];
  w->k_cols = a.ksize[2];
  w->s_rows = a.strides[1];
  w->s_cols = a.strides[2];
  const bool ex = a.padding == "EXPLICIT";
  TX_RETURN_IF_ERROR(WindowDim(op, a, w->in_rows, w->k_rows, w->s_rows,
                               ex ? a.explicit_paddings[2] : 0, ex ? a.explicit_paddings[3] : 0,
                               "rows", &w->out_rows, &w->pad_top, &w->pad_bottom));
  TX_RETURN_IF_ERROR(WindowDim(op, a, w->in_cols, w->k_cols, w->s_cols,
                               ex ? a.explicit_paddings[4] : 0, ex ? a.explicit_paddings[5] : 0,
                               "cols", &w->out_cols, &w->pad_left, &w->pad_right));
  return OkStatus();
}

}  // namespace tensorflux
