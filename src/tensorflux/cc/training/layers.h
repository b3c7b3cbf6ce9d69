// Layers for the C++ training API: the C++ forms of TF 1.x's tf.layers functions (dense, conv2d,
// max_pooling2d, average_pooling2d, flatten, dropout, batch_normalization) and the l1/l2
// regularizers. Each layer makes its variables with GetVariable under a sub-scope named like TF's
// ("dense", "dense_1", "conv2d", "batch_normalization", ...; variables "kernel", "bias", "gamma",
// "beta", "moving_mean", "moving_variance"), so two calls make two layers.
//
// Layouts: activations NHWC (batch, height, width, channels); conv kernels HWIO
// (kh, kw, in, out); dense kernels (in, out). dtype follows the input (float or double).
// Errors (a rank the layer cannot take, an unknown channel count) are recorded in the scope's
// status and the layer returns an empty Output.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "tensorflux/cc/ops.h"
#include "tensorflux/cc/scope.h"
#include "tensorflux/cc/training/initializers.h"
#include "tensorflux/cc/training/variables.h"

namespace tensorflux::training {

// scale * sum(|w|) and scale * sum(w^2) / 2 (TF 1.x's tf.contrib.layers.l1_regularizer /
// l2_regularizer: the latter through L2Loss, which halves).
Regularizer L1Regularizer(double scale);
Regularizer L2Regularizer(double scale);

// Elementwise activation applied to a layer's output; empty: linear.
using Activation = std::function<Output(const Scope&, const Output&)>;
Activation Relu();

struct DenseOptions {
  Activation activation;
  bool use_bias = true;
  Initializer kernel_initializer;  // empty: GlorotUniform()
  Initializer bias_initializer;    // empty: Zeros()
  Regularizer kernel_regularizer;
  Regularizer bias_regularizer;
  bool trainable = true;
  std::string name = "dense";
};
// inputs [batch, in] -> activation(inputs . kernel + bias), [batch, units].
Output Dense(const Scope& scope, const Output& inputs, int64_t units, const DenseOptions& o = {});

struct Conv2DOptions {
  int64_t strides[2] = {1, 1};
  std::string padding = "VALID";  // "VALID" or "SAME"
  int64_t dilation_rate[2] = {1, 1};
  Activation activation;
  bool use_bias = true;
  Initializer kernel_initializer;  // empty: GlorotUniform()
  Initializer bias_initializer;    // empty: Zeros()
  Regularizer kernel_regularizer;
  Regularizer bias_regularizer;
  bool trainable = true;
  std::string name = "conv2d";
};
// inputs [N, H, W, C] -> [N, Ho, Wo, filters] (Conv2D + BiasAdd + activation).
Output Conv2D(const Scope& scope, const Output& inputs, int64_t filters, int64_t kernel_h,
              int64_t kernel_w, const Conv2DOptions& o = {});

// MaxPool / AvgPool over [N, H, W, C] with a pool_h x pool_w window.
Output MaxPooling2D(const Scope& scope, const Output& inputs, int64_t pool_h, int64_t pool_w,
                    int64_t stride_h, int64_t stride_w, const std::string& padding = "VALID");
Output AveragePooling2D(const Scope& scope, const Output& inputs, int64_t pool_h, int64_t pool_w,
                        int64_t stride_h, int64_t stride_w, const std::string& padding = "VALID");

// [N, d1, d2, ...] -> [N, d1 * d2 * ...] (the trailing dims must be known).
Output Flatten(const Scope& scope, const Output& inputs);

// Inverted dropout (TF's tf.nn.dropout): when `training` (a bool scalar tensor) is true, each
// element is zeroed with probability `rate` and the rest scaled by 1 / (1 - rate); when false the
// input passes through. `seed` as in initializers.h.
Output Dropout(const Scope& scope, const Output& inputs, double rate, const Output& training,
               int64_t seed = 0);

struct BatchNormOptions {
  double momentum = 0.99;
  double epsilon = 1e-3;
  bool center = true;  // beta
  bool scale = true;   // gamma
  bool trainable = true;
  std::string name = "batch_normalization";
};
// Batch normalization over the last axis of [N, C] or [N, H, W, C] inputs (Ioffe & Szegedy 2015)
// through FusedBatchNormV3. When `training` is true: normalizes with the batch's statistics and
// moving_mean/moving_variance move toward them by (1 - momentum) per step -- the assignments
// are added to the scope's "update_ops" collection and run only when the train op depends on
// them (TF 1.x's UPDATE_OPS rule); the moving variance tracks the Bessel-corrected batch variance
// for 4-D inputs (TF's fused path) and the biased one for 2-D inputs (TF's non-fused path), as the
// Python layer does. When false: normalizes with the moving statistics. `training`
// is a C++ bool here (two graph branches would need control flow).
Output BatchNormalization(const Scope& scope, const Output& inputs, bool training,
                          const BatchNormOptions& o = {});

// Sum of the scope's "regularization_losses" collection (a float scalar 0 when empty).
Output RegularizationLoss(const Scope& scope);

}  // namespace tensorflux::training
