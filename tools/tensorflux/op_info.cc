// tensorflux inspect --op NAME: one op's definition (signature and where it is defined), its
// kernels (device and dtype constraints, and where they are registered), its gradient and its
// conformance cases. The source lines come from the table gen_op_sites.py writes at build time.
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "cli.h"
#include "op_sites.h"
#include "tensorflux/framework/op.h"
#include "tensorflux/framework/op_kernel.h"
#include "tensorflux/gradients/gradients.h"

namespace tensorflux {
namespace cli {
namespace {

std::string ArgString(const OpDef::ArgDef& a) {
  std::string type = !a.type_attr().empty()        ? a.type_attr()
                     : !a.type_list_attr().empty() ? a.type_list_attr()
                                                   : DataTypeString(a.type());
  if (!a.number_attr().empty()) type = a.number_attr() + " * " + type;
  return a.name() + ": " + (a.is_ref() ? "Ref(" + type + ")" : type);
}

std::vector<std::string> Sites(const std::string& op, const char* kind) {
  std::vector<std::string> out;
  for (const OpSite* s = kOpSites; s->kind != nullptr; ++s) {
    if (op == s->op && std::string(kind) == s->kind) {
      out.push_back(std::string(s->file) + ":" + std::to_string(s->line));
    }
  }
  return out;
}

}  // namespace

int InspectOpMain(const std::string& op) {
  StatusOr<const OpDef*> def = OpRegistry::Global()->LookUpOpDef(op);
  if (!def.ok()) return ReportError(def.status());
  const OpDef& d = **def;
  std::printf("op %s\n", op.c_str());
  std::vector<std::string> defined = Sites(op, "op");
  std::printf("  defined at: %s\n",
              defined.empty() ? "(registered from a table; no registration line names it)"
                              : absl::StrJoin(defined, ", ").c_str());
  std::vector<std::string> ins, outs, attrs;
  for (const auto& a : d.input_arg()) ins.push_back(ArgString(a));
  for (const auto& a : d.output_arg()) outs.push_back(ArgString(a));
  for (const auto& a : d.attr()) attrs.push_back(a.name() + ": " + a.type());
  std::printf("  inputs: %s\n  outputs: %s\n  attrs: %s\n", absl::StrJoin(ins, ", ").c_str(),
              absl::StrJoin(outs, ", ").c_str(), absl::StrJoin(attrs, ", ").c_str());
  std::vector<std::string> kernels = KernelRegistry::Global()->ListKernels(op);
  std::printf("  kernels (%zu):\n", kernels.size());
  for (const std::string& k : kernels) std::printf("    %s\n", k.substr(op.size() + 2).c_str());
  std::vector<std::string> ksites = Sites(op, "kernel");
  if (!ksites.empty()) std::printf("    registered at: %s\n", absl::StrJoin(ksites, ", ").c_str());
  GradFunc fn;
  const bool known = GradientRegistry::Global()->Lookup(op, &fn).ok();
  std::vector<std::string> gsites = Sites(op, "gradient");
  std::printf("  gradient: %s%s%s\n",
              !known ? "none registered (tx.gradients fails through this op)"
              : fn   ? "registered"
                     : "registered as carrying no gradient",
              gsites.empty() ? "" : " at ", absl::StrJoin(gsites, ", ").c_str());
  std::vector<std::string> ids;
  std::set<std::string> files;
  for (const OpCase* c = kOpCases; c->op != nullptr; ++c) {
    if (op != c->op) continue;
    ids.push_back(c->case_id);
    files.insert(c->file);
  }
  std::printf("  conformance cases (%zu)%s%s\n", ids.size(), files.empty() ? "" : " in ",
              absl::StrJoin(files, ", ").c_str());
  for (const std::string& id : ids) std::printf("    %s\n", id.c_str());
  return 0;
}

}  // namespace cli
}  // namespace tensorflux
