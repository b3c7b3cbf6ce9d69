// The source table behind `tensorflux inspect --op NAME`, generated at build time by
// gen_op_sites.py from the registration macros in src/tensorflux/{ops,kernels,gradients} and
// the conformance case table (tests/conformance/cases). Each array ends with a null entry.
#pragma once

namespace tensorflux::cli {

struct OpSite {
  const char* kind;  // "op" (definition), "kernel" or "gradient" (registration)
  const char* op;    // a string on the registration line: keep only registered op names
  const char* file;  // relative to the source tree
  int line;
};
struct OpCase {
  const char* op;
  const char* case_id;  // "Op/variant/dtype"
  const char* file;
};

extern const OpSite kOpSites[];
extern const OpCase kOpCases[];

}  // namespace tensorflux::cli
