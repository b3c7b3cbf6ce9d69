#include "tensorflux/framework/cc_function.h"

#include <exception>
#include <mutex>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"

namespace tensorflux {
namespace {

struct Registry {
  std::mutex mu;
  absl::flat_hash_map<std::string, std::shared_ptr<const CppFunction>> fns;
};

Registry& GetRegistry() {
  static Registry* r = new Registry;
  return *r;
}

}  // namespace

Status RegisterCppFunction(const std::string& name, CppFunction f) {
  if (name.empty()) return errors::InvalidArgument("A C++ function needs a name");
  if (!f.fn) return errors::InvalidArgument("C++ function ", name, " has no fn");
  if (f.ret_types.empty()) {
    return errors::InvalidArgument("C++ function ", name, " returns nothing (ret_types is empty)");
  }
  if (!f.ret_shapes.empty() && f.ret_shapes.size() != f.ret_types.size()) {
    return errors::InvalidArgument("C++ function ", name, " has ", f.ret_types.size(),
                                   " ret types but ", f.ret_shapes.size(), " ret shapes");
  }
  if (f.ret_shapes.empty()) f.ret_shapes.assign(f.ret_types.size(), PartialTensorShape());
  Registry& r = GetRegistry();
  std::lock_guard<std::mutex> l(r.mu);
  if (!r.fns.emplace(name, std::make_shared<const CppFunction>(std::move(f))).second) {
    return errors::AlreadyExists("A C++ function named ", name, " is already registered");
  }
  return OkStatus();
}

std::shared_ptr<const CppFunction> LookUpCppFunction(const std::string& name) {
  Registry& r = GetRegistry();
  std::lock_guard<std::mutex> l(r.mu);
  auto it = r.fns.find(name);
  return it == r.fns.end() ? nullptr : it->second;
}

Status UnregisterCppFunction(const std::string& name) {
  Registry& r = GetRegistry();
  std::lock_guard<std::mutex> l(r.mu);
  if (r.fns.erase(name) == 0) {
    return errors::NotFound("No C++ function named ", name, " is registered");
  }
  return OkStatus();
}

Status CallCppFunction(const std::string& name, const CppFunction& f, std::vector<Tensor> args,
                       std::vector<Tensor>* rets) {
  if (args.size() != f.arg_types.size()) {
    return errors::InvalidArgument("C++ function ", name, " takes ", f.arg_types.size(),
                                   " arguments, got ", args.size());
  }
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i].dtype() != f.arg_types[i]) {
      return errors::InvalidArgument("C++ function ", name, " argument ", i, " must be ",
                                     DataTypeString(f.arg_types[i]), ", got ",
                                     DataTypeString(args[i].dtype()));
    }
  }
  rets->clear();
  Status s;
  try {
    s = f.fn(args, rets);
  } catch (const std::exception& e) {
    return errors::Unknown("C++ function ", name, " threw: ", e.what());
  } catch (...) {
    return errors::Unknown("C++ function ", name, " threw a non-std::exception");
  }
  if (!s.ok()) return Status(s.code(), absl::StrCat("C++ function ", name, ": ", s.message()));
  if (rets->size() != f.ret_types.size()) {
    return errors::InvalidArgument("C++ function ", name, " returned ", rets->size(),
                                   " tensors, expected ", f.ret_types.size());
  }
  for (size_t i = 0; i < rets->size(); ++i) {
    const Tensor& t = (*rets)[i];
    if (!t.IsInitialized() || t.dtype() != f.ret_types[i]) {
      return errors::InvalidArgument(
          "C++ function ", name, " result ", i, " must be ", DataTypeString(f.ret_types[i]),
          ", got ", t.IsInitialized() ? DataTypeString(t.dtype()) : "an empty tensor");
    }
    if (!f.ret_shapes[i].IsCompatibleWith(PartialTensorShape(t.shape()))) {
      return errors::InvalidArgument("C++ function ", name, " result ", i, " has shape ",
                                     t.shape().DebugString(), ", registered as ",
                                     f.ret_shapes[i].DebugString());
    }
  }
  return OkStatus();
}

}  // namespace tensorflux
