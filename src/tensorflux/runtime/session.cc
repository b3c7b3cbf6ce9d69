#include "tensorflux/runtime/session.h"

#include <map>
#include <mutex>

#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "tensorflux/runtime/local_session.h"

namespace tensorflux {
namespace {

struct FactoryRegistry {
  std::mutex mu;
  std::map<std::string, SessionFactory> by_prefix;
};

FactoryRegistry& Registry() {
  static FactoryRegistry* r = new FactoryRegistry;  // never destroyed: used by static init
  return *r;
}

}  // namespace

void RegisterSessionFactory(const std::string& prefix, SessionFactory factory) {
  FactoryRegistry& r = Registry();
  std::lock_guard<std::mutex> l(r.mu);
  r.by_prefix[prefix] = std::move(factory);
}

StatusOr<std::unique_ptr<Session>> NewSession(const SessionOptions& options) {
  if (options.target.empty()) return NewLocalSession(options);
  SessionFactory factory;
  std::vector<std::string> known = {"\"\""};
  {
    FactoryRegistry& r = Registry();
    std::lock_guard<std::mutex> l(r.mu);
    for (const auto& [prefix, f] : r.by_prefix) {
      known.push_back(absl::StrCat("\"", prefix, "...\""));
      if (absl::StartsWith(options.target, prefix)) factory = f;
    }
  }
  if (!factory) {
    return errors::InvalidArgument("No session implementation for target '", options.target,
                                   "': the targets served here are ", absl::StrJoin(known, ", "));
  }
  return factory(options);
}

}  // namespace tensorflux
