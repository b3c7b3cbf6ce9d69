#include "tensorflux/runtime/function_runtime.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "tensorflux/framework/call_frame.h"
#include "tensorflux/framework/node_def_util.h"
#include "tensorflux/framework/op.h"
#include "tensorflux/graph/graph_def_io.h"

namespace tensorflux {
namespace {

// "node:out_arg:i" -> "node:k" with k the flat output index; an input arg name -> its _Arg.
StatusOr<std::string> ResolveBodyInput(
    const std::string& input, const absl::flat_hash_map<std::string, std::string>& args,
    const absl::flat_hash_map<std::string, NameRangeMap>& outputs) {
  if (!input.empty() && input[0] == '^') {
    const std::string node = input.substr(1);
    auto a = args.find(node);
    return a != args.end() ? "^" + a->second : input;
  }
  std::vector<std::string> parts = absl::StrSplit(input, ':');
  if (parts.size() == 1) {
    auto a = args.find(parts[0]);
    if (a == args.end()) {
      return errors::InvalidArgument("Input '", input, "' is not an input arg of the function");
    }
    return a->second;
  }
  if (parts.size() != 3) {
    return errors::InvalidArgument("Input '", input,
                                   "' is not of the form node:output_arg:index");
  }
  auto o = outputs.find(parts[0]);
  if (o == outputs.end()) {
    return errors::InvalidArgument("Input '", input, "' names an unknown node '", parts[0], "'");
  }
  auto range = o->second.find(parts[1]);
  int index = 0;
  if (range == o->second.end() || !absl::SimpleAtoi(parts[2], &index) || index < 0 ||
      range->second.first + index >= range->second.second) {
    return errors::InvalidArgument("Input '", input, "' names no output of node '", parts[0],
                                   "'");
  }
  return absl::StrCat(parts[0], ":", range->second.first + index);
}

}  // namespace

FunctionRuntime::FunctionRuntime(DeviceBase* device) : device_(device) {}
FunctionRuntime::~FunctionRuntime() = default;

void FunctionRuntime::AddLibrary(const FunctionDefLibrary& library) {
  std::lock_guard<std::mutex> l(mu_);
  for (const FunctionDef& f : library.function()) functions_.emplace(f.signature().name(), f);
}

StatusOr<GraphDef> FunctionRuntime::FunctionBodyToGraphDef(const FunctionDef& fdef) {
  const OpDef& sig = fdef.signature();
  if (sig.attr_size() > 0) {
    return errors::Unimplemented("Function ", sig.name(), " has attrs (polymorphic functions "
                                 "are not supported)");
  }
  GraphDef gdef;
  absl::flat_hash_map<std::string, std::string> args;  // arg name -> _Arg node name
  for (int i = 0; i < sig.input_arg_size(); ++i) {
    const OpDef::ArgDef& a = sig.input_arg(i);
    if (a.type() == DT_INVALID) {
      return errors::InvalidArgument("Function ", sig.name(), " input arg ", a.name(),
                                     " needs a fixed type");
    }
    NodeDef* n = gdef.add_node();
    n->set_name(absl::StrCat("_arg_", a.name(), "_", i));
    n->set_op("_Arg");
    AddNodeAttr("T", a.type(), n);
    AddNodeAttr("index", static_cast<int64_t>(i), n);
    args[a.name()] = n->name();
  }
  absl::flat_hash_map<std::string, NameRangeMap> outputs;  // node -> output arg ranges
  for (const NodeDef& body : fdef.node_def()) {
    TX_ASSIGN_OR_RETURN(const OpDef* op_def, OpRegistry::Global()->LookUpOpDef(body.op()));
    NodeDef with_defaults = body;
    AddDefaultsToNodeDef(*op_def, &with_defaults);
    TX_RETURN_IF_ERROR(NameRangesForNode(with_defaults, *op_def, nullptr, &outputs[body.name()]));
  }
  for (const NodeDef& body : fdef.node_def()) {
    NodeDef* n = gdef.add_node();
    *n = body;
    n->clear_input();
    for (const std::string& in : body.input()) {
      TX_ASSIGN_OR_RETURN(std::string resolved, ResolveBodyInput(in, args, outputs));
      n->add_input(resolved);
    }
  }
  for (int i = 0; i < sig.output_arg_size(); ++i) {
    const OpDef::ArgDef& a = sig.output_arg(i);
    auto r = fdef.ret().find(a.name());
    if (r == fdef.ret().end()) {
      return errors::InvalidArgument("Function ", sig.name(), " has no ret for output arg ",
                                     a.name());
    }
    TX_ASSIGN_OR_RETURN(std::string src, ResolveBodyInput(r->second, args, outputs));
    NodeDef* n = gdef.add_node();
    n->set_name(absl::StrCat("_retval_", a.name(), "_", i));
    n->set_op("_Retval");
    n->add_input(src);
    AddNodeAttr("T", a.type(), n);
    AddNodeAttr("index", static_cast<int64_t>(i), n);
  }
  return gdef;
}

Status FunctionRuntime::GetFunctionDef(const std::string& name, FunctionDef* fdef) const {
  std::lock_guard<std::mutex> l(mu_);
  auto f = functions_.find(name);
  if (f == functions_.end()) {
    return errors::NotFound("Function ", name, " is not in the graph's library");
  }
  *fdef = f->second;
  return OkStatus();
}

StatusOr<FunctionLibraryRuntime::Handle> FunctionRuntime::Instantiate(const std::string& name) {
  FunctionDef fdef;
  {
    std::lock_guard<std::mutex> l(mu_);
    auto h = handles_.find(name);
    if (h != handles_.end()) return h->second;
    auto f = functions_.find(name);
    if (f == functions_.end()) return InstantiateCppFunctionLocked(name);
    fdef = f->second;
  }
  auto inst = std::make_unique<Instance>();
  inst->name = name;
  for (const auto& a : fdef.signature().input_arg()) inst->arg_types.push_back(a.type());
  for (const auto& a : fdef.signature().output_arg()) inst->ret_types.push_back(a.type());
  auto prefix = [&](const Status& s) {
    return Status(s.code(), absl::StrCat("Function ", name, ": ", s.message()));
  };
  StatusOr<GraphDef> gdef = FunctionBodyToGraphDef(fdef);
  if (!gdef.ok()) return prefix(gdef.status());
  StatusOr<std::unique_ptr<Graph>> g = GraphFromGraphDef(*gdef);
  if (!g.ok()) return prefix(g.status());
  for (Node* n : (*g)->nodes()) n->set_assigned_device_name(device_->name());
  ExecutorParams params;
  params.device = device_;
  StatusOr<std::unique_ptr<Executor>> ex = Executor::Create(params, std::move(*g));
  if (!ex.ok()) return prefix(ex.status());
  inst->executor = std::move(*ex);
  std::lock_guard<std::mutex> l(mu_);
  auto h = handles_.find(name);  // another thread may have won
  if (h != handles_.end()) return h->second;
  const Handle handle = static_cast<Handle>(instances_.size());
  instances_.push_back(std::move(inst));
  handles_[name] = handle;
  return handle;
}

StatusOr<FunctionLibraryRuntime::Handle> FunctionRuntime::InstantiateCppFunctionLocked(
    const std::string& name) {
  std::shared_ptr<const CppFunction> cpp = LookUpCppFunction(name);
  if (cpp == nullptr) {
    return errors::NotFound("Function ", name,
                            " is not in the graph's library nor a registered C++ function");
  }
  auto inst = std::make_unique<Instance>();
  inst->name = name;
  inst->arg_types = cpp->arg_types;
  inst->ret_types = cpp->ret_types;
  inst->cpp = std::move(cpp);
  const Handle handle = static_cast<Handle>(instances_.size());
  instances_.push_back(std::move(inst));
  handles_[name] = handle;
  return handle;
}

const DataTypeVector& FunctionRuntime::ArgTypes(Handle h) const {
  std::lock_guard<std::mutex> l(mu_);
  return instances_[h]->arg_types;
}

const DataTypeVector& FunctionRuntime::RetTypes(Handle h) const {
  std::lock_guard<std::mutex> l(mu_);
  return instances_[h]->ret_types;
}

Status FunctionRuntime::Run(Handle h, std::vector<Tensor> args, std::vector<Tensor>* rets) {
  Instance* inst;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (h < 0 || h >= static_cast<Handle>(instances_.size())) {
      return errors::InvalidArgument("Unknown function handle ", h);
    }
    inst = instances_[h].get();
  }
  if (inst->cpp != nullptr) return CallCppFunction(inst->name, *inst->cpp, std::move(args), rets);
  if (args.size() != inst->arg_types.size()) {
    return errors::InvalidArgument("Function ", inst->name, " takes ", inst->arg_types.size(),
                                   " arguments, got ", args.size());
  }
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i].dtype() != inst->arg_types[i]) {
      return errors::InvalidArgument("Function ", inst->name, " argument ", i, " must be ",
                                     DataTypeString(inst->arg_types[i]), ", got ",
                                     DataTypeString(args[i].dtype()));
    }
  }
  SimpleCallFrame frame(std::move(args), static_cast<int>(inst->ret_types.size()));
  Executor::Args ea;
  ea.call_frame = &frame;
  ea.inter_op_pool = nullptr;  // the caller's thread: callers parallelize across calls
  TX_RETURN_IF_ERROR(inst->executor->Run(ea));
  return frame.ConsumeRetvals(rets);
}

}  // namespace tensorflux
