// Datasets mapped by registered C++ functions (framework/cc_function.h, cc/dataset_ops.h), built
// with the C++ client API and pulled through IteratorGetNext by ClientSession.
#include "tensorflux/cc/dataset_ops.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>

#include "tensorflux/cc/client_session.h"
#include "tensorflux/cc/ops/ops.h"
#include "tensorflux/framework/cc_function.h"
#include "poll_util.h"

namespace tensorflux {
namespace {

const std::vector<PartialTensorShape> kScalar{PartialTensorShape({})};

// Registers fn(int64 x...) -> int64 scalar under `name` (replacing an earlier registration).
void RegisterInt64(const std::string& name, int num_args,
                   std::function<Status(const std::vector<int64_t>&, int64_t*)> body) {
  UnregisterCppFunction(name).IgnoreError();
  CppFunction f;
  f.arg_types.assign(num_args, DT_INT64);
  f.ret_types = {DT_INT64};
  f.ret_shapes = kScalar;
  f.fn = [body](const std::vector<Tensor>& in, std::vector<Tensor>* out) {
    std::vector<int64_t> x;
    for (const Tensor& t : in) x.push_back(t.scalar<int64_t>());
    int64_t y = 0;
    TX_RETURN_IF_ERROR(body(x, &y));
    out->push_back(Tensor::Scalar<int64_t>(y));
    return OkStatus();
  };
  ASSERT_TRUE(RegisterCppFunction(name, std::move(f)).ok());
}

Output Range(const Scope& s, int64_t n) {
  return ops::RangeDataset(s, int64_t{0}, n, int64_t{1}, {DT_INT64}, kScalar);
}

// Every element of `dataset` (int64 scalars), or the first error's status in *error with the
// elements before it; with `go_on`, an error is recorded as -1 and the iteration continues.
std::vector<int64_t> Drain(const Scope& root, Output dataset, Status* error, bool go_on = false) {
  auto it = ops::IteratorV2(root, "", "", {DT_INT64}, kScalar);
  auto init = ops::MakeIterator(root, dataset, it);
  auto next = ops::IteratorGetNext(root.WithOpName("get_next"), it, {DT_INT64}, kScalar);
  std::vector<int64_t> got;
  *error = root.status();
  if (!error->ok()) return got;
  ClientSession session(root);
  std::vector<Tensor> out;
  *error = session.Run({}, {}, {init}, &out);
  for (int i = 0; error->ok() && i < 1000; ++i) {
    Status s = session.Run({next[0]}, &out);
    if (absl::IsOutOfRange(s)) break;
    if (!s.ok()) {
      if (!go_on) {
        *error = s;
        break;
      }
      got.push_back(-1);
      continue;
    }
    got.push_back(out[0].scalar<int64_t>());
  }
  return got;
}

TEST(CppFunctionDatasetTest, MapsSequentiallyAndInParallel) {
  RegisterInt64("tx_test_square", 1, [](const std::vector<int64_t>& x, int64_t* y) {
    *y = x[0] * x[0];
    return OkStatus();
  });
  std::vector<int64_t> want;
  for (int64_t v = 0; v < 20; ++v) want.push_back(v * v);
  for (int64_t npc : {0, 1, 3, -1}) {
    Scope root = Scope::NewRootScope();
    Status s;
    auto got = Drain(root, ops::MapDatasetWithCppFunction(root, Range(root, 20), "tx_test_square",
                                                          npc),
                     &s);
    ASSERT_TRUE(s.ok()) << s;
    EXPECT_EQ(got, want) << "num_parallel_calls " << npc;
  }
  // deterministic = false: the same values in some order.
  Scope root = Scope::NewRootScope();
  Status s;
  auto got = Drain(root, ops::MapDatasetWithCppFunction(root, Range(root, 20), "tx_test_square",
                                                        2, /*deterministic=*/false),
                   &s);
  ASSERT_TRUE(s.ok()) << s;
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, want);
}

TEST(CppFunctionDatasetTest, CapturedArgumentsFollowTheElement) {
  RegisterInt64("tx_test_affine", 3, [](const std::vector<int64_t>& x, int64_t* y) {
    *y = x[0] * x[1] + x[2];  // element * 10 + 7
    return OkStatus();
  });
  Scope root = Scope::NewRootScope();
  Status s;
  auto mapped = ops::MapDatasetWithCppFunction(
      root, Range(root, 4), "tx_test_affine", 2, true,
      {ops::Const(root, int64_t{10}), ops::Const(root, int64_t{7})});
  EXPECT_EQ(Drain(root, mapped, &s), (std::vector<int64_t>{7, 17, 27, 37}));
  EXPECT_TRUE(s.ok()) << s;
}

TEST(CppFunctionDatasetTest, CallsRunConcurrently) {
  // Each call counts itself in and waits (up to 60 s) until both calls have come in: were the
  // calls run one after the other, the first could never return. The count only goes up (a
  // count that the first call to see its partner took down again, 2 ms later, made a partner
  // that had not looked yet wait out its deadline on a loaded machine).
  static std::atomic<int> arrived{0};
  arrived = 0;
  RegisterInt64("tx_test_meet", 1, [](const std::vector<int64_t>& x, int64_t* y) {
    ++arrived;
    *y = x[0];
    return test::PollUntil([] { return arrived.load() >= 2; })
               ? OkStatus()
               : errors::DeadlineExceeded("no second call in flight");
  });
  Scope root = Scope::NewRootScope();
  Status s;
  auto got =
      Drain(root, ops::MapDatasetWithCppFunction(root, Range(root, 2), "tx_test_meet", 2), &s);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(got, (std::vector<int64_t>{0, 1}));
}

TEST(CppFunctionDatasetTest, ErrorsBecomeTheNodesErrorAndLaterElementsFollow) {
  RegisterInt64("tx_test_fail3", 1, [](const std::vector<int64_t>& x, int64_t* y) {
    if (x[0] == 3) return errors::InvalidArgument("element 3 is bad");
    *y = x[0];
    return OkStatus();
  });
  for (int64_t npc : {0, 2}) {
    Scope root = Scope::NewRootScope();
    Status s;
    auto mapped = ops::MapDatasetWithCppFunction(root, Range(root, 6), "tx_test_fail3", npc);
    EXPECT_EQ(Drain(root, mapped, &s, /*go_on=*/true),
              (std::vector<int64_t>{0, 1, 2, -1, 4, 5}));
    Scope root2 = Scope::NewRootScope();
    auto mapped2 = ops::MapDatasetWithCppFunction(root2, Range(root2, 6), "tx_test_fail3", npc);
    EXPECT_EQ(Drain(root2, mapped2, &s), (std::vector<int64_t>{0, 1, 2}));
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(s.message().find("get_next"), std::string::npos) << s;
    EXPECT_NE(s.message().find("C++ function tx_test_fail3: element 3 is bad"),
              std::string::npos)
        << s;
  }
}

TEST(CppFunctionDatasetTest, BadResultsAndExceptionsAreErrors) {
  UnregisterCppFunction("tx_test_bad").IgnoreError();
  CppFunction f;
  f.arg_types = {DT_INT64};
  f.ret_types = {DT_INT64};
  f.ret_shapes = kScalar;
  f.fn = [](const std::vector<Tensor>& in, std::vector<Tensor>* out) {
    const int64_t v = in[0].scalar<int64_t>();
    if (v == 0) out->push_back(Tensor::Scalar<float>(1.f));           // wrong dtype
    if (v == 1) out->push_back(Tensor(DT_INT64, TensorShape({2})));  // wrong shape
    if (v == 2) throw std::runtime_error("boom");                   // exception
    return OkStatus();                                               // v == 3: no result
  };
  ASSERT_TRUE(RegisterCppFunction("tx_test_bad", std::move(f)).ok());
  Scope root = Scope::NewRootScope();
  auto mapped = ops::MapDatasetWithCppFunction(root, Range(root, 4), "tx_test_bad");
  auto it = ops::IteratorV2(root, "", "", {DT_INT64}, kScalar);
  auto init = ops::MakeIterator(root, mapped, it);
  auto next = ops::IteratorGetNext(root, it, {DT_INT64}, kScalar);
  ClientSession session(root);
  std::vector<Tensor> out;
  ASSERT_TRUE(session.Run({}, {}, {init}, &out).ok());
  const std::vector<std::pair<absl::StatusCode, std::string>> want = {
      {absl::StatusCode::kInvalidArgument, "result 0 must be int64, got float"},
      {absl::StatusCode::kInvalidArgument, "result 0 has shape [2], registered as []"},
      {absl::StatusCode::kUnknown, "threw: boom"},
      {absl::StatusCode::kInvalidArgument, "returned 0 tensors, expected 1"}};
  for (const auto& [code, text] : want) {
    Status s = session.Run({next[0]}, &out);
    EXPECT_EQ(s.code(), code) << s;
    EXPECT_NE(s.message().find("C++ function tx_test_bad"), std::string::npos) << s;
    EXPECT_NE(s.message().find(text), std::string::npos) << s;
  }
  EXPECT_TRUE(absl::IsOutOfRange(session.Run({next[0]}, &out)));
}

TEST(CppFunctionDatasetTest, RegistrationAndLookupErrors) {
  CppFunction ok;
  ok.arg_types = {DT_INT64};
  ok.ret_types = {DT_INT64};
  ok.fn = [](const std::vector<Tensor>& in, std::vector<Tensor>* out) {
    out->push_back(in[0]);
    return OkStatus();
  };
  UnregisterCppFunction("tx_test_identity").IgnoreError();
  ASSERT_TRUE(RegisterCppFunction("tx_test_identity", ok).ok());
  EXPECT_EQ(RegisterCppFunction("tx_test_identity", ok).code(),
            absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(RegisterCppFunction("", ok).code(), absl::StatusCode::kInvalidArgument);
  CppFunction no_fn = ok;
  no_fn.fn = nullptr;
  EXPECT_EQ(RegisterCppFunction("tx_test_x", no_fn).code(), absl::StatusCode::kInvalidArgument);
  CppFunction no_rets = ok;
  no_rets.ret_types.clear();
  EXPECT_EQ(RegisterCppFunction("tx_test_x", no_rets).code(),
            absl::StatusCode::kInvalidArgument);
  CppFunction bad_shapes = ok;
  bad_shapes.ret_shapes = {PartialTensorShape({}), PartialTensorShape({})};
  EXPECT_EQ(RegisterCppFunction("tx_test_x", bad_shapes).code(),
            absl::StatusCode::kInvalidArgument);
  // Unknown ret shapes are allowed; the function's own (wrong) arity is checked per call.
  ASSERT_NE(LookUpCppFunction("tx_test_identity"), nullptr);
  EXPECT_EQ(LookUpCppFunction("tx_test_identity")->ret_shapes.size(), 1u);
  EXPECT_EQ(UnregisterCppFunction("tx_test_nothing").code(), absl::StatusCode::kNotFound);

  // Building on an unregistered name records NOT_FOUND in the scope.
  Scope root = Scope::NewRootScope();
  EXPECT_EQ(ops::MapDatasetWithCppFunction(root, Range(root, 3), "tx_test_nothing").node(),
            nullptr);
  EXPECT_EQ(root.status().code(), absl::StatusCode::kNotFound);
  Scope root2 = Scope::NewRootScope();
  ops::MapDatasetWithCppFunction(root2, Range(root2, 3), "tx_test_identity", -2);
  EXPECT_EQ(root2.status().code(), absl::StatusCode::kInvalidArgument);
  // A graph naming a function that is neither in its library nor registered fails at
  // iterator initialization with NOT_FOUND; a function with the wrong arg count fails per call.
  Scope root3 = Scope::NewRootScope();
  NameAttrList missing;
  missing.set_name("tx_test_nothing");
  auto bad = ops::MapDataset(root3, Range(root3, 3), std::vector<Input>{}, missing, {DT_INT64},
                             kScalar);
  Status s;
  Drain(root3, bad, &s);
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound) << s;
  Scope root4 = Scope::NewRootScope();
  auto wrong_arity = ops::MapDatasetWithCppFunction(root4, Range(root4, 3), "tx_test_identity",
                                                    0, true, {ops::Const(root4, int64_t{1})});
  Drain(root4, wrong_arity, &s);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("takes 1 arguments, got 2"), std::string::npos) << s;
}

}  // namespace
}  // namespace tensorflux
