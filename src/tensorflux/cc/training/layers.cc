#include "tensorflux/cc/training/layers.h"

#include <vector>

#include "tensorflux/cc/const_op.h"
#include "tensorflux/cc/ops/ops.h"

namespace tensorflux::training {
namespace {

// The size of `x`'s last dimension, or -1 (recording an error) when unknown.
int64_t LastDim(const Scope& scope, const Output& x, const char* layer) {
  const PartialTensorShape s = scope.GetInferredShape(x);
  if (s.unknown_rank() || s.dims() < 1 || s.dim_size(s.dims() - 1) < 0) {
    scope.UpdateStatus(errors::InvalidArgument(
        layer, ": the last dimension of the input ", x.name(), " must be known, got shape ",
        s.DebugString()));
    return -1;
  }
  return s.dim_size(s.dims() - 1);
}

Status CheckRank(const Scope& scope, const Output& x, int rank, const char* layer) {
  const PartialTensorShape s = scope.GetInferredShape(x);
  if (!s.unknown_rank() && s.dims() != rank) {
    return errors::InvalidArgument(layer, ": input ", x.name(), " must have rank ", rank,
                                   ", got shape ", s.DebugString());
  }
  return OkStatus();
}

// The last dimension of an input that must have rank `rank`; -1 after recording the error.
int64_t CheckedChannels(const Scope& scope, const Output& x, int rank, const char* layer) {
  if (!scope.ok()) return -1;
  Status st = CheckRank(scope, x, rank, layer);
  if (!st.ok()) {
    scope.UpdateStatus(st);
    return -1;
  }
  return LastDim(scope, x, layer);
}

// kernel/bias variables + the op; returns the biased, activated output.
Output BiasAndActivate(const Scope& s, Output y, int64_t units, bool use_bias,
                       const Initializer& bias_init, const Regularizer& bias_reg, bool trainable,
                       const Activation& activation, DataType dtype) {
  if (use_bias) {
    GetVariableOptions bo;
    bo.dtype = dtype;
    bo.initializer = bias_init ? bias_init : Zeros();
    bo.regularizer = bias_reg;
    bo.trainable = trainable;
    auto bias = GetVariable(s, "bias", TensorShape({units}), bo);
    if (!bias.ok()) return Output();
    y = ops::BiasAdd(s, y, bias->Read(s));
  }
  return activation ? activation(s, y) : y;
}

StatusOr<Variable> Kernel(const Scope& s, const TensorShape& shape, const Initializer& init,
                          const Regularizer& reg, bool trainable, DataType dtype) {
  GetVariableOptions ko;
  ko.dtype = dtype;
  ko.initializer = init ? init : GlorotUniform();
  ko.regularizer = reg;
  ko.trainable = trainable;
  return GetVariable(s, "kernel", shape, ko);
}

Output Pool(const Scope& scope, const Output& inputs, bool max, int64_t ph, int64_t pw, int64_t sh,
            int64_t sw, const std::string& padding) {
  Status st = CheckRank(scope, inputs, 4, max ? "MaxPooling2D" : "AveragePooling2D");
  if (!st.ok()) {
    scope.UpdateStatus(st);
    return Output();
  }
  const std::vector<int64_t> ksize = {1, ph, pw, 1}, strides = {1, sh, sw, 1};
  const Scope s = scope.NewSubScope(max ? "max_pooling2d" : "average_pooling2d");
  if (max) return ops::MaxPool(s, inputs, ksize, strides, padding);
  return ops::AvgPool(s, inputs, ksize, strides, padding);
}

}  // namespace

Regularizer L1Regularizer(double scale) {
  return [scale](const Scope& s, const Output& w) -> Output {
    const Scope r = s.NewSubScope("l1_regularizer");
    return ops::Mul(r, ops::Const(r, scale, w.type()), ops::Sum(r, ops::Abs(r, w), ops::Range(r, 0, ops::Rank(r, w), 1)));
  };
}

Regularizer L2Regularizer(double scale) {
  return [scale](const Scope& s, const Output& w) -> Output {
    const Scope r = s.NewSubScope("l2_regularizer");
    return ops::Mul(r, ops::Const(r, scale, w.type()), ops::L2Loss(r, w));
  };
}

Activation Relu() {
  return [](const Scope& s, const Output& x) -> Output { return ops::Relu(s, x); };
}

Output Dense(const Scope& scope, const Output& inputs, int64_t units, const DenseOptions& o) {
  const int64_t in = CheckedChannels(scope, inputs, 2, "Dense");
  if (in < 0) return Output();
  const Scope s = scope.NewSubScope(o.name);
  auto kernel = Kernel(s, TensorShape({in, units}), o.kernel_initializer, o.kernel_regularizer,
                       o.trainable, inputs.type());
  if (!kernel.ok()) return Output();
  Output y = ops::MatMul(s, inputs, kernel->Read(s));
  return BiasAndActivate(s, y, units, o.use_bias, o.bias_initializer, o.bias_regularizer,
                         o.trainable, o.activation, inputs.type());
}

Output Conv2D(const Scope& scope, const Output& inputs, int64_t filters, int64_t kernel_h,
              int64_t kernel_w, const Conv2DOptions& o) {
  const int64_t in = CheckedChannels(scope, inputs, 4, "Conv2D");
  if (in < 0) return Output();
  const Scope s = scope.NewSubScope(o.name);
  auto kernel = Kernel(s, TensorShape({kernel_h, kernel_w, in, filters}), o.kernel_initializer,
                       o.kernel_regularizer, o.trainable, inputs.type());
  if (!kernel.ok()) return Output();
  Output y = ops::Conv2D(
      s, inputs, kernel->Read(s), {1, o.strides[0], o.strides[1], 1}, o.padding,
      ops::Conv2D::Dilations({1, o.dilation_rate[0], o.dilation_rate[1], 1}));
  return BiasAndActivate(s, y, filters, o.use_bias, o.bias_initializer, o.bias_regularizer,
                         o.trainable, o.activation, inputs.type());
}

Output MaxPooling2D(const Scope& scope, const Output& inputs, int64_t pool_h, int64_t pool_w,
                    int64_t stride_h, int64_t stride_w, const std::string& padding) {
  return Pool(scope, inputs, true, pool_h, pool_w, stride_h, stride_w, padding);
}

Output AveragePooling2D(const Scope& scope, const Output& inputs, int64_t pool_h, int64_t pool_w,
                        int64_t stride_h, int64_t stride_w, const std::string& padding) {
  return Pool(scope, inputs, false, pool_h, pool_w, stride_h, stride_w, padding);
}

Output Flatten(const Scope& scope, const Output& inputs) {
  const PartialTensorShape shape = scope.GetInferredShape(inputs);
  int64_t rest = 1;
  for (int d = 1; !shape.unknown_rank() && d < shape.dims(); ++d) {
    if (shape.dim_size(d) < 0) {
      rest = -1;
      break;
    }
    rest *= shape.dim_size(d);
  }
  if (shape.unknown_rank() || shape.dims() < 1 || rest < 0) {
    scope.UpdateStatus(errors::InvalidArgument("Flatten: input ", inputs.name(),
                                               " needs known dimensions after the first, got ",
                                               shape.DebugString()));
    return Output();
  }
  const Scope s = scope.NewSubScope("flatten");
  return ops::Reshape(s, inputs, ops::Const(s, {int64_t{-1}, rest}));
}

Output Dropout(const Scope& scope, const Output& inputs, double rate, const Output& training,
               int64_t seed) {
  if (rate < 0 || rate >= 1) {
    scope.UpdateStatus(
        errors::InvalidArgument("Dropout: rate must be in [0, 1), got ", rate));
    return Output();
  }
  const Scope s = scope.NewSubScope("dropout");
  const DataType dt = inputs.type();
  // The mask has the input's runtime shape.
  Output uniform = ops::RandomUniform(s, ops::Shape(s, inputs), dt,
                                      OpSeedAttrs<ops::RandomUniform>(seed));
  Output keep = ops::Cast(s, ops::GreaterEqual(s, uniform, ops::Const(s, rate, dt)), dt);
  Output dropped = ops::Mul(s, ops::Mul(s, inputs, keep), ops::Const(s, 1.0 / (1.0 - rate), dt));
  return ops::SelectV2(s, training, dropped, inputs);
}

Output BatchNormalization(const Scope& scope, const Output& inputs, bool training,
                          const BatchNormOptions& o) {
  if (!scope.ok()) return Output();
  const PartialTensorShape shape = scope.GetInferredShape(inputs);
  if (!shape.unknown_rank() && shape.dims() != 2 && shape.dims() != 4) {
    scope.UpdateStatus(errors::InvalidArgument("BatchNormalization: input ", inputs.name(),
                                               " must have rank 2 or 4, got ",
                                               shape.DebugString()));
    return Output();
  }
  const int64_t c = LastDim(scope, inputs, "BatchNormalization");
  if (c < 0) return Output();
  const Scope s = scope.NewSubScope(o.name);
  const DataType dt = inputs.type();
  auto var = [&](const char* name, const Initializer& init, bool trainable) {
    GetVariableOptions vo;
    vo.dtype = dt;
    vo.initializer = init;
    vo.trainable = trainable;
    return GetVariable(s, name, TensorShape({c}), vo);
  };
  // gamma / beta exist only when scale / center ask for them (as TF's layer).
  StatusOr<Variable> gamma = Variable(), beta = Variable();
  if (o.scale) gamma = var("gamma", Ones(), o.trainable);
  if (o.center) beta = var("beta", Zeros(), o.trainable);
  auto moving_mean = var("moving_mean", Zeros(), false);
  auto moving_var = var("moving_variance", Ones(), false);
  if (!gamma.ok() || !beta.ok() || !moving_mean.ok() || !moving_var.ok()) return Output();
  Output scale = o.scale ? gamma->Read(s) : ops::Fill(s, ops::Const(s, {c}), ops::Const(s, 1.0, dt));
  Output offset =
      o.center ? beta->Read(s) : ops::Fill(s, ops::Const(s, {c}), ops::Const(s, 0.0, dt));
  const bool flat = shape.unknown_rank() || shape.dims() == 2;
  Output x4 = flat ? Output(ops::Reshape(s, inputs, ops::Const(s, {int64_t{-1}, int64_t{1},
                                                                   int64_t{1}, c})))
                   : inputs;
  // In training the op takes empty mean/variance inputs (TF's rule) and computes the batch's.
  const Output empty = ops::Const(s, Input::Initializer(Tensor(dt, TensorShape({0}))));
  ops::FusedBatchNormV3 bn(s, x4, scale, offset, training ? empty : moving_mean->Read(s),
                           training ? empty : moving_var->Read(s),
                           ops::FusedBatchNormV3::Epsilon(static_cast<float>(o.epsilon))
                               .IsTraining(training));
  Output y = flat ? Output(ops::Reshape(s, bn.y, ops::Shape(s, inputs))) : bn.y;
  if (training) {
    // moving -= (moving - batch) * (1 - momentum)
    const Output decay = ops::Const(s, 1.0 - o.momentum, dt);
    auto update = [&](const Variable& v, const Output& batch, const char* name) {
      Output delta = ops::Mul(s, ops::Sub(s, v.Read(s), batch), decay);
      s.AddToCollection(kUpdateOps, v.AssignSub(s.WithOpName(name), delta));
    };
    update(*moving_mean, bn.batch_mean, "update_moving_mean");
    // The fused op's batch_variance is Bessel-corrected (TF's fused path, used for 4-D inputs);
    // for 2-D inputs TF's layer takes the non-fused path, whose moving variance tracks the biased
    // batch variance: scale by (n - 1) / n.
    Output batch_variance = bn.batch_variance;
    if (flat) {
      Output n = ops::Cast(s, ops::Slice(s, ops::Shape(s, inputs), {0}, {1}), dt);
      batch_variance = ops::Mul(s, batch_variance,
                                ops::RealDiv(s, ops::Sub(s, n, ops::Const(s, 1.0, dt)), n));
    }
    update(*moving_var, batch_variance, "update_moving_variance");
  }
  return y;
}

Output RegularizationLoss(const Scope& scope) {
  std::vector<Output> losses;
  for (const Operation& op : scope.GetCollection(kRegularizationLosses)) {
    losses.push_back(Output(op, 0));
  }
  const Scope s = scope.WithOpName("regularization_loss");
  if (losses.empty()) return ops::Const(s, 0.0f);
  if (losses.size() == 1) return ops::Identity(s, losses[0]);
  return ops::AddN(s, losses);
}

}  // namespace tensorflux::training
