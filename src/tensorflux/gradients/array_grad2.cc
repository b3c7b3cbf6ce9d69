// Gradients of the array ops of array_layout_ops.cc and array_index_ops.cc (the formulas of
// TensorFlow's array_grad.py, built from graph ops so that they work for shapes known only at
// run time), and the ops through which no gradient flows (ShapeN, Range, OneHot,
// BroadcastGradientArgs, StopGradient, InvertPermutation, ConcatOffset).
//
// Differences from TF: GatherV2's gradient is a dense UnsortedSegmentSum (TF returns
// IndexedSlices); PadV2's constant_values gets its gradient (the sum of the padding's incoming
// gradient) where TF returns none.

#include <string>
#include <vector>

#include "tensorflux/core/tensor.h"
#include "tensorflux/gradients/gradients.h"

namespace tensorflux {
namespace {

using GradList = std::vector<GradOutput>;

// ---------------------------------------------------------------- small graph-building helpers

// An int32 (or int64) constant: a vector, or a scalar when `scalar` is set (one value).
StatusOr<GradOutput> IntConst(GradContext* c, const std::vector<int64_t>& v,
                              DataType dt = DT_INT32, bool scalar = false) {
  const TensorShape shape = scalar ? TensorShape() : TensorShape({int64_t(v.size())});
  Tensor t(dt, shape);
  for (size_t i = 0; i < v.size(); ++i) {
    if (dt == DT_INT64) {
      t.data<int64_t>()[i] = v[i];
    } else {
      t.data<int32_t>()[i] = static_cast<int32_t>(v[i]);
    }
  }
  return c->Const(t);
}
StatusOr<GradOutput> Scalar32(GradContext* c, int64_t v) { return IntConst(c, {v}, DT_INT32, true); }

StatusOr<GradOutput> ShapeOf(GradContext* c, GradOutput x, DataType dt = DT_INT32) {
  return c->Op("Shape", {x}, {{"out_type", MakeAttr(dt)}});
}

// Concatenation of 1-D tensors (one tensor passes through).
StatusOr<GradOutput> Concat0(GradContext* c, std::vector<GradOutput> parts) {
  if (parts.size() == 1) return parts[0];
  TX_ASSIGN_OR_RETURN(GradOutput axis, Scalar32(c, 0));
  parts.push_back(axis);
  return c->Op("ConcatV2", parts);
}

// Range(start, limit, 1) of int32 scalars.
StatusOr<GradOutput> Range32(GradContext* c, GradOutput start, GradOutput limit) {
  TX_ASSIGN_OR_RETURN(GradOutput one, Scalar32(c, 1));
  return c->Op("Range", {start, limit, one});
}

// A 1-element vector from a scalar.
StatusOr<GradOutput> AsVector(GradContext* c, GradOutput scalar) {
  TX_ASSIGN_OR_RETURN(GradOutput shape, IntConst(c, {1}));
  return c->Op("Reshape", {scalar, shape});
}

StatusOr<GradOutput> CastTo(GradContext* c, GradOutput x, DataType dt) {
  if (BaseType(x.dtype()) == dt) return x;
  return c->Op("Cast", {x}, {{"DstT", MakeAttr(dt)}});
}

// The value of input i when it comes straight from a Const node.
bool ConstantInput(GradContext* c, int i, Tensor* out) {
  GradOutput in = c->input(i);
  if (!in.valid() || !in.node->IsConstant()) return false;
  return GetNodeAttr(in.node->def(), "value", out).ok();
}

// ---------------------------------------------------------------- layout ops

// y = Transpose(x, perm): dx = Transpose(dy, InvertPermutation(perm)).
Status TransposeGrad(GradContext* c, GradList* dx) {
  TX_ASSIGN_OR_RETURN(GradOutput inv, c->Op("InvertPermutation", {c->input(1)}));
  TX_ASSIGN_OR_RETURN((*dx)[0], c->Op("Transpose", {c->grad(0), inv}));
  return OkStatus();
}
REGISTER_GRADIENT("Transpose", TransposeGrad);

// Concat of N values along `axis`: dx_i = Slice(dy, ConcatOffset(axis, shapes)[i], shape_i).
Status ConcatGradImpl(GradContext* c, GradList* dx, int first, int axis_input) {
  const int n = c->num_inputs() - 1;
  std::vector<GradOutput> values;
  for (int i = 0; i < n; ++i) values.push_back(c->input(first + i));
  TX_ASSIGN_OR_RETURN(std::vector<GradOutput> shapes, c->OpN("ShapeN", values));
  TX_ASSIGN_OR_RETURN(GradOutput axis, CastTo(c, c->input(axis_input), DT_INT32));
  std::vector<GradOutput> offset_inputs = {axis};
  offset_inputs.insert(offset_inputs.end(), shapes.begin(), shapes.end());
  TX_ASSIGN_OR_RETURN(std::vector<GradOutput> offsets, c->OpN("ConcatOffset", offset_inputs));
  for (int i = 0; i < n; ++i) {
    TX_ASSIGN_OR_RETURN((*dx)[first + i], c->Op("Slice", {c->grad(0), offsets[i], shapes[i]}));
  }
  return OkStatus();
}
REGISTER_GRADIENT("ConcatV2", [](GradContext* c, GradList* dx) {
  return ConcatGradImpl(c, dx, 0, c->num_inputs() - 1);
});
REGISTER_GRADIENT("Concat", [](GradContext* c, GradList* dx) {
  return ConcatGradImpl(c, dx, 1, 0);
});

// Split/SplitV: the input's gradient is the output gradients concatenated along the axis.
Status SplitGradImpl(GradContext* c, GradList* dx, int value_input, int axis_input) {
  std::vector<GradOutput> parts;
  for (int i = 0; i < c->num_outputs(); ++i) parts.push_back(c->grad(i));
  if (parts.size() == 1) {
    TX_ASSIGN_OR_RETURN((*dx)[value_input], c->Op("Identity", {parts[0]}));
    return OkStatus();
  }
  parts.push_back(c->input(axis_input));
  TX_ASSIGN_OR_RETURN((*dx)[value_input], c->Op("ConcatV2", parts));
  return OkStatus();
}
REGISTER_GRADIENT("Split", [](GradContext* c, GradList* dx) { return SplitGradImpl(c, dx, 1, 0); });
REGISTER_GRADIENT("SplitV",
                  [](GradContext* c, GradList* dx) { return SplitGradImpl(c, dx, 0, 2); });

Status PackGrad(GradContext* c, GradList* dx) {
  int64_t axis = 0;
  TX_RETURN_IF_ERROR(c->GetAttr("axis", &axis));
  const int n = c->num_inputs();
  TX_ASSIGN_OR_RETURN(std::vector<GradOutput> parts,
                      c->OpN("Unpack", {c->grad(0)},
                             {{"num", MakeAttr(int64_t{n})}, {"axis", MakeAttr(axis)}}));
  for (int i = 0; i < n; ++i) (*dx)[i] = parts[i];
  return OkStatus();
}
REGISTER_GRADIENT("Pack", PackGrad);

Status UnpackGrad(GradContext* c, GradList* dx) {
  int64_t axis = 0;
  TX_RETURN_IF_ERROR(c->GetAttr("axis", &axis));
  std::vector<GradOutput> parts;
  for (int i = 0; i < c->num_outputs(); ++i) parts.push_back(c->grad(i));
  if (parts.empty()) return OkStatus();  // num = 0: the input is empty along axis
  TX_ASSIGN_OR_RETURN((*dx)[0], c->Op("Pack", parts, {{"axis", MakeAttr(axis)}}));
  return OkStatus();
}
REGISTER_GRADIENT("Unpack", UnpackGrad);

// ExpandDims, Squeeze: reshape the gradient back to the input's shape.
Status ReshapeBackGrad(GradContext* c, GradList* dx) {
  TX_ASSIGN_OR_RETURN(GradOutput shape, ShapeOf(c, c->input(0)));
  TX_ASSIGN_OR_RETURN((*dx)[0], c->Op("Reshape", {c->grad(0), shape}));
  return OkStatus();
}
REGISTER_GRADIENT("ExpandDims", ReshapeBackGrad);
REGISTER_GRADIENT("Squeeze", ReshapeBackGrad);

// y = Tile(x, m): view dy as [m0, d0, m1, d1, ...] and sum over the m axes.
Status TileGrad(GradContext* c, GradList* dx) {
  GradOutput multiples = c->input(1);
  const DataType it = BaseType(multiples.dtype());
  TX_ASSIGN_OR_RETURN(GradOutput shape, ShapeOf(c, c->input(0), it));
  TX_ASSIGN_OR_RETURN(GradOutput pairs,
                      c->Op("Pack", {multiples, shape}, {{"axis", MakeAttr(int64_t{1})}}));
  TX_ASSIGN_OR_RETURN(GradOutput flat_shape, IntConst(c, {-1}));
  TX_ASSIGN_OR_RETURN(GradOutput split_shape, c->Op("Reshape", {pairs, flat_shape}));
  TX_ASSIGN_OR_RETURN(GradOutput zero, Scalar32(c, 0));
  TX_ASSIGN_OR_RETURN(GradOutput two, Scalar32(c, 2));
  TX_ASSIGN_OR_RETURN(GradOutput n, c->Op("Size", {split_shape}));
  TX_ASSIGN_OR_RETURN(GradOutput axes, c->Op("Range", {zero, n, two}));
  TX_ASSIGN_OR_RETURN(GradOutput g, c->Op("Reshape", {c->grad(0), split_shape}));
  TX_ASSIGN_OR_RETURN((*dx)[0], c->Op("Sum", {g, axes}, {{"keep_dims", MakeAttr(false)}}));
  return OkStatus();
}
REGISTER_GRADIENT("Tile", TileGrad);

// y = Pad(x, p): dx = Slice(dy, p[:, 0], Shape(x)). PadV2's constant gets
// Sum(dy) - Sum(dx).
Status PadGrad(GradContext* c, GradList* dx) {
  GradOutput paddings = c->input(1);
  const DataType it = BaseType(paddings.dtype());
  TX_ASSIGN_OR_RETURN(GradOutput shape, ShapeOf(c, c->input(0), it));
  TX_ASSIGN_OR_RETURN(GradOutput b0, IntConst(c, {0, 0}, it));
  TX_ASSIGN_OR_RETURN(GradOutput s0, IntConst(c, {-1, 1}, it));
  TX_ASSIGN_OR_RETURN(GradOutput before, c->Op("Slice", {paddings, b0, s0}));
  TX_ASSIGN_OR_RETURN(GradOutput flat_shape, IntConst(c, {-1}));
  TX_ASSIGN_OR_RETURN(GradOutput begin, c->Op("Reshape", {before, flat_shape}));
  TX_ASSIGN_OR_RETURN((*dx)[0], c->Op("Slice", {c->grad(0), begin, shape}));
  if (c->num_inputs() > 2) {
    auto total = [&](GradOutput t) -> StatusOr<GradOutput> {
      TX_ASSIGN_OR_RETURN(GradOutput flat, c->Op("Reshape", {t, flat_shape}));
      TX_ASSIGN_OR_RETURN(GradOutput axis, Scalar32(c, 0));
      return c->Op("Sum", {flat, axis}, {{"keep_dims", MakeAttr(false)}});
    };
    TX_ASSIGN_OR_RETURN(GradOutput all, total(c->grad(0)));
    TX_ASSIGN_OR_RETURN(GradOutput inner, total((*dx)[0]));
    TX_ASSIGN_OR_RETURN((*dx)[2], c->Op("Sub", {all, inner}));
  }
  return OkStatus();
}
REGISTER_GRADIENT("Pad", PadGrad);
REGISTER_GRADIENT("PadV2", PadGrad);

// y = BroadcastTo(x, shape): sum dy over the broadcast axes, reshape to x's shape.
Status BroadcastToGrad(GradContext* c, GradList* dx) {
  const DataType it = BaseType(c->input(1).dtype());
  TX_ASSIGN_OR_RETURN(GradOutput x_shape, ShapeOf(c, c->input(0), it));
  TX_ASSIGN_OR_RETURN(std::vector<GradOutput> r,
                      c->OpN("BroadcastGradientArgs", {x_shape, c->input(1)}));
  TX_ASSIGN_OR_RETURN(GradOutput sum,
                      c->Op("Sum", {c->grad(0), r[0]}, {{"keep_dims", MakeAttr(true)}}));
  TX_ASSIGN_OR_RETURN((*dx)[0], c->Op("Reshape", {sum, x_shape}));
  return OkStatus();
}
REGISTER_GRADIENT("BroadcastTo", BroadcastToGrad);

// ---------------------------------------------------------------- slicing

// y = Slice(x, begin, size): dx = Pad(dy, [begin, Shape(x) - Shape(dy) - begin]).
Status SliceGrad(GradContext* c, GradList* dx) {
  GradOutput begin = c->input(1);
  const DataType it = BaseType(begin.dtype());
  TX_ASSIGN_OR_RETURN(GradOutput x_shape, ShapeOf(c, c->input(0), it));
  TX_ASSIGN_OR_RETURN(GradOutput y_shape, ShapeOf(c, c->grad(0), it));
  TX_ASSIGN_OR_RETURN(GradOutput rest, c->Op("Sub", {x_shape, y_shape}));
  TX_ASSIGN_OR_RETURN(GradOutput after, c->Op("Sub", {rest, begin}));
  TX_ASSIGN_OR_RETURN(GradOutput paddings,
                      c->Op("Pack", {begin, after}, {{"axis", MakeAttr(int64_t{1})}}));
  TX_ASSIGN_OR_RETURN((*dx)[0], c->Op("Pad", {c->grad(0), paddings}));
  return OkStatus();
}
REGISTER_GRADIENT("Slice", SliceGrad);

GradAttrs MaskAttrs(GradContext* c) {
  GradAttrs attrs;
  for (const char* name :
       {"begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask"}) {
    int64_t v = 0;
    if (c->GetAttr(name, &v).ok()) attrs.emplace_back(name, MakeAttr(v));
  }
  return attrs;
}

// y = StridedSlice(x, b, e, s): dx = StridedSliceGrad(Shape(x), b, e, s, dy).
Status StridedSliceGrad(GradContext* c, GradList* dx) {
  const DataType it = BaseType(c->input(1).dtype());
  TX_ASSIGN_OR_RETURN(GradOutput shape, ShapeOf(c, c->input(0), it));
  TX_ASSIGN_OR_RETURN((*dx)[0], c->Op("StridedSliceGrad",
                                      {shape, c->input(1), c->input(2), c->input(3), c->grad(0)},
                                      MaskAttrs(c)));
  return OkStatus();
}
REGISTER_GRADIENT("StridedSlice", StridedSliceGrad);

// StridedSliceGrad is linear in dy: d dy = StridedSlice(d output, b, e, s).
Status StridedSliceGradGrad(GradContext* c, GradList* dx) {
  TX_ASSIGN_OR_RETURN((*dx)[4], c->Op("StridedSlice",
                                      {c->grad(0), c->input(1), c->input(2), c->input(3)},
                                      MaskAttrs(c)));
  return OkStatus();
}
REGISTER_GRADIENT("StridedSliceGrad", StridedSliceGradGrad);

// ---------------------------------------------------------------- gather / scatter

// y = GatherV2(params, indices, axis) with batch_dims b. With a the normalized axis and
// ni = rank(indices) - b, dy has shape P[:a] + I[b:] + P[a+1:]:
//  1. move dy's I[b:] block next to the batch dims: P[:b] + I[b:] + P[b:a] + P[a+1:];
//  2. sum rows into segments: UnsortedSegmentSum with the indices (offset by batch number *
//     P[a] when b > 0, all flattened) -> P[:b] + [P[a]] + P[b:a] + P[a+1:];
//  3. move the P[a] dim back to position a.
Status GatherGradImpl(GradContext* c, GradList* dx, bool v2) {
  GradOutput params = c->input(0), indices = c->input(1), g = c->grad(0);
  int64_t b = 0;
  if (v2) TX_RETURN_IF_ERROR(c->GetAttr("batch_dims", &b));
  TX_ASSIGN_OR_RETURN(GradOutput p_shape, ShapeOf(c, params));
  TX_ASSIGN_OR_RETURN(GradOutput rp, c->Op("Rank", {params}));
  TX_ASSIGN_OR_RETURN(GradOutput ri, c->Op("Rank", {indices}));
  if (b < 0) {
    // As TF: a negative batch_dims counts from the indices' (static) rank.
    const PartialTensorShape is = c->StaticShape(indices);
    if (is.unknown_rank()) {
      return errors::Unimplemented("GatherV2 gradient with negative batch_dims and indices of "
                                   "unknown rank");
    }
    b += is.dims();
    if (b < 0) return errors::InvalidArgument("GatherV2 gradient: batch_dims out of range");
  }
  // The axis, normalized, as an int32 scalar (static when it is a non-negative constant; a
  // negative constant adds rank(params); otherwise FloorMod(axis, rank(params))).
  GradOutput axis;
  int64_t static_axis = -1;
  Tensor axis_value;
  bool negative_constant = false;
  if (!v2) {
    static_axis = 0;
  } else if (ConstantInput(c, 2, &axis_value) && axis_value.NumElements() == 1) {
    const int64_t a = axis_value.dtype() == DT_INT64 ? axis_value.flat<int64_t>()[0]
                                                     : axis_value.flat<int32_t>()[0];
    if (a >= 0) {
      static_axis = a;
    } else {
      negative_constant = true;
      TX_ASSIGN_OR_RETURN(GradOutput ac, Scalar32(c, a));
      TX_ASSIGN_OR_RETURN(axis, c->Op("AddV2", {ac, rp}));
    }
  }
  if (static_axis >= 0) {
    TX_ASSIGN_OR_RETURN(axis, Scalar32(c, static_axis));
  } else if (!negative_constant) {
    TX_ASSIGN_OR_RETURN(GradOutput a32, CastTo(c, c->input(2), DT_INT32));
    TX_ASSIGN_OR_RETURN(axis, c->Op("FloorMod", {a32, rp}));
  }
  TX_ASSIGN_OR_RETURN(GradOutput zero, Scalar32(c, 0));
  TX_ASSIGN_OR_RETURN(GradOutput axis_dim, c->Op("GatherV2", {p_shape, axis, zero}));
  const bool moves = !(static_axis == b);  // axis == batch_dims: nothing to move

  TX_ASSIGN_OR_RETURN(GradOutput bc, Scalar32(c, b));
  GradOutput g2 = g;
  if (moves) {
    // perm1 = [0, b) + [a, a + ni) + [b, a) + [a + ni, rank(dy))
    TX_ASSIGN_OR_RETURN(GradOutput ni, c->Op("Sub", {ri, bc}));
    TX_ASSIGN_OR_RETURN(GradOutput a_ni, c->Op("AddV2", {axis, ni}));
    TX_ASSIGN_OR_RETURN(GradOutput rg, c->Op("Rank", {g}));
    TX_ASSIGN_OR_RETURN(GradOutput r0, Range32(c, zero, bc));
    TX_ASSIGN_OR_RETURN(GradOutput r1, Range32(c, axis, a_ni));
    TX_ASSIGN_OR_RETURN(GradOutput r2, Range32(c, bc, axis));
    TX_ASSIGN_OR_RETURN(GradOutput r3, Range32(c, a_ni, rg));
    TX_ASSIGN_OR_RETURN(GradOutput perm1, Concat0(c, {r0, r1, r2, r3}));
    TX_ASSIGN_OR_RETURN(g2, c->Op("Transpose", {g, perm1}));
  }
  GradOutput u;
  if (b == 0) {
    TX_ASSIGN_OR_RETURN(u, c->Op("UnsortedSegmentSum", {g2, indices, axis_dim}));
  } else {
    // Offsets: batch number * P[a], shaped I[:b] + [1] * ni to broadcast against the indices.
    TX_ASSIGN_OR_RETURN(GradOutput b_vec, IntConst(c, {b}));
    TX_ASSIGN_OR_RETURN(GradOutput zero_vec, IntConst(c, {0}));
    TX_ASSIGN_OR_RETURN(GradOutput batch_shape, c->Op("Slice", {p_shape, zero_vec, b_vec}));
    TX_ASSIGN_OR_RETURN(GradOutput batch, c->Op("Prod", {batch_shape, zero},
                                                {{"keep_dims", MakeAttr(false)}}));
    TX_ASSIGN_OR_RETURN(GradOutput numbers, Range32(c, zero, batch));
    TX_ASSIGN_OR_RETURN(GradOutput scaled, c->Op("Mul", {numbers, axis_dim}));
    TX_ASSIGN_OR_RETURN(GradOutput ni, c->Op("Sub", {ri, bc}));
    TX_ASSIGN_OR_RETURN(GradOutput ni_vec, AsVector(c, ni));
    TX_ASSIGN_OR_RETURN(GradOutput one, Scalar32(c, 1));
    TX_ASSIGN_OR_RETURN(GradOutput ones, c->Op("Fill", {ni_vec, one}));
    TX_ASSIGN_OR_RETURN(GradOutput off_shape, Concat0(c, {batch_shape, ones}));
    TX_ASSIGN_OR_RETURN(GradOutput offsets, c->Op("Reshape", {scaled, off_shape}));
    TX_ASSIGN_OR_RETURN(GradOutput offsets_t, CastTo(c, offsets, BaseType(indices.dtype())));
    TX_ASSIGN_OR_RETURN(GradOutput ids, c->Op("AddV2", {indices, offsets_t}));
    TX_ASSIGN_OR_RETURN(GradOutput minus_one, IntConst(c, {-1}));
    TX_ASSIGN_OR_RETURN(GradOutput flat_ids, c->Op("Reshape", {ids, minus_one}));
    // g2: P[:b] + I[b:] + rest -> [-1] + rest.
    TX_ASSIGN_OR_RETURN(GradOutput g2_shape, ShapeOf(c, g2));
    TX_ASSIGN_OR_RETURN(GradOutput ri_vec, AsVector(c, ri));
    TX_ASSIGN_OR_RETURN(GradOutput rest, c->Op("Slice", {g2_shape, ri_vec, minus_one}));
    TX_ASSIGN_OR_RETURN(GradOutput flat_shape, Concat0(c, {minus_one, rest}));
    TX_ASSIGN_OR_RETURN(GradOutput g2_flat, c->Op("Reshape", {g2, flat_shape}));
    TX_ASSIGN_OR_RETURN(GradOutput segments, c->Op("Mul", {batch, axis_dim}));
    TX_ASSIGN_OR_RETURN(GradOutput summed,
                        c->Op("UnsortedSegmentSum", {g2_flat, flat_ids, segments}));
    TX_ASSIGN_OR_RETURN(GradOutput axis_vec, AsVector(c, axis_dim));
    TX_ASSIGN_OR_RETURN(GradOutput u_shape, Concat0(c, {batch_shape, axis_vec, rest}));
    TX_ASSIGN_OR_RETURN(u, c->Op("Reshape", {summed, u_shape}));
  }
  if (moves) {
    // perm3 = [0, b) + [b + 1, a + 1) + [b] + [a + 1, rank(params))
    TX_ASSIGN_OR_RETURN(GradOutput one, Scalar32(c, 1));
    TX_ASSIGN_OR_RETURN(GradOutput b1, c->Op("AddV2", {bc, one}));
    TX_ASSIGN_OR_RETURN(GradOutput a1, c->Op("AddV2", {axis, one}));
    TX_ASSIGN_OR_RETURN(GradOutput r0, Range32(c, zero, bc));
    TX_ASSIGN_OR_RETURN(GradOutput r1, Range32(c, b1, a1));
    TX_ASSIGN_OR_RETURN(GradOutput r2, AsVector(c, bc));
    TX_ASSIGN_OR_RETURN(GradOutput r3, Range32(c, a1, rp));
    TX_ASSIGN_OR_RETURN(GradOutput perm3, Concat0(c, {r0, r1, r2, r3}));
    TX_ASSIGN_OR_RETURN(u, c->Op("Transpose", {u, perm3}));
  }
  (*dx)[0] = u;
  return OkStatus();
}
REGISTER_GRADIENT("GatherV2",
                  [](GradContext* c, GradList* dx) { return GatherGradImpl(c, dx, true); });
REGISTER_GRADIENT("Gather",
                  [](GradContext* c, GradList* dx) { return GatherGradImpl(c, dx, false); });

// y = GatherNd(params, indices): dparams = ScatterNd(indices, dy, Shape(params)).
Status GatherNdGrad(GradContext* c, GradList* dx) {
  TX_ASSIGN_OR_RETURN(GradOutput shape,
                      ShapeOf(c, c->input(0), BaseType(c->input(1).dtype())));
  TX_ASSIGN_OR_RETURN((*dx)[0], c->Op("ScatterNd", {c->input(1), c->grad(0), shape}));
  return OkStatus();
}
REGISTER_GRADIENT("GatherNd", GatherNdGrad);

// y = ScatterNd(indices, updates, shape): dupdates = GatherNd(dy, indices).
Status ScatterNdGrad(GradContext* c, GradList* dx) {
  TX_ASSIGN_OR_RETURN((*dx)[1], c->Op("GatherNd", {c->grad(0), c->input(0)}));
  return OkStatus();
}
REGISTER_GRADIENT("ScatterNd", ScatterNdGrad);

// y = UnsortedSegmentSum(data, ids, n): ddata = dy[ids], zero where ids < 0 (dropped rows).
Status UnsortedSegmentSumGrad(GradContext* c, GradList* dx) {
  GradOutput ids = c->input(1), g = c->grad(0);
  const DataType it = BaseType(ids.dtype());
  TX_ASSIGN_OR_RETURN(GradOutput zero_id, c->Const(0.0, it));
  TX_ASSIGN_OR_RETURN(GradOutput clipped, c->Op("Maximum", {ids, zero_id}));
  TX_ASSIGN_OR_RETURN(GradOutput zero, Scalar32(c, 0));
  TX_ASSIGN_OR_RETURN(GradOutput gathered, c->Op("GatherV2", {g, clipped, zero}));
  // mask = (ids >= 0) as min(max(ids + 1, 0), 1), cast to dy's type and shaped
  // ids.shape + [1] * (rank(dy) - 1), multiplied in.
  TX_ASSIGN_OR_RETURN(GradOutput one_id, c->Const(1.0, it));
  TX_ASSIGN_OR_RETURN(GradOutput shifted, c->Op("AddV2", {ids, one_id}));
  TX_ASSIGN_OR_RETURN(GradOutput low, c->Op("Maximum", {shifted, zero_id}));
  TX_ASSIGN_OR_RETURN(GradOutput keep, c->Op("Minimum", {low, one_id}));
  TX_ASSIGN_OR_RETURN(GradOutput mask, CastTo(c, keep, BaseType(g.dtype())));
  TX_ASSIGN_OR_RETURN(GradOutput ids_shape, ShapeOf(c, ids));
  TX_ASSIGN_OR_RETURN(GradOutput rg, c->Op("Rank", {g}));
  TX_ASSIGN_OR_RETURN(GradOutput one, Scalar32(c, 1));
  TX_ASSIGN_OR_RETURN(GradOutput rg1, c->Op("Sub", {rg, one}));
  TX_ASSIGN_OR_RETURN(GradOutput rg1_vec, AsVector(c, rg1));
  TX_ASSIGN_OR_RETURN(GradOutput ones, c->Op("Fill", {rg1_vec, one}));
  TX_ASSIGN_OR_RETURN(GradOutput mask_shape, Concat0(c, {ids_shape, ones}));
  TX_ASSIGN_OR_RETURN(GradOutput mask_b, c->Op("Reshape", {mask, mask_shape}));
  TX_ASSIGN_OR_RETURN((*dx)[0], c->Op("Mul", {gathered, mask_b}));
  return OkStatus();
}
REGISTER_GRADIENT("UnsortedSegmentSum", UnsortedSegmentSumGrad);

// merged = DynamicStitch(indices, data): ddata_i = merged_grad[indices_i] (as in TF, an element
// overwritten by a later index still receives the gradient).
Status DynamicStitchGrad(GradContext* c, GradList* dx) {
  const int n = c->num_inputs() / 2;
  TX_ASSIGN_OR_RETURN(GradOutput zero, Scalar32(c, 0));
  for (int i = 0; i < n; ++i) {
    TX_ASSIGN_OR_RETURN((*dx)[n + i], c->Op("GatherV2", {c->grad(0), c->input(i), zero}));
  }
  return OkStatus();
}
REGISTER_GRADIENT("DynamicStitch", DynamicStitchGrad);

REGISTER_NO_GRADIENT("ShapeN");
REGISTER_NO_GRADIENT("Range");
REGISTER_NO_GRADIENT("OneHot");
REGISTER_NO_GRADIENT("BroadcastGradientArgs");
REGISTER_NO_GRADIENT("StopGradient");
REGISTER_NO_GRADIENT("InvertPermutation");
REGISTER_NO_GRADIENT("ConcatOffset");

}  // namespace
}  // namespace tensorflux
