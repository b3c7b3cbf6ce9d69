// Image ops of the input pipeline (TF's signatures): DecodePng, DecodeJpeg, ResizeBilinear.
// CPU kernels: kernels/cpu/decode_image_ops.cc, kernels/cpu/resize_bilinear_op.cc.
#include "tensorflux/framework/op.h"
#include "tensorflux/framework/shape_inference.h"

namespace tensorflux {
namespace {

// contents: scalar string -> image [?, ?, channels or ?].
Status DecodeImageShape(InferenceContext* c) {
  TX_RETURN_IF_ERROR(c->WithRank(0, 0));
  int64_t channels = 0;
  TX_RETURN_IF_ERROR(c->GetAttr("channels", &channels));
  // Only a negative count is a graph error, as in TF; the kernel refuses the others it cannot
  // make (decode_image_ops.cc).
  if (channels < 0)
    return c->Error(c->node_def().op(), " '", c->node_def().name(),
                    "': channels must be non-negative, got ", channels);
  c->set_output(0, PartialTensorShape({-1, -1, channels == 0 ? -1 : channels}));
  return OkStatus();
}

// images [b, h, w, c], size [2] (values when constant) -> [b, new_h, new_w, c].
Status ResizeShape(InferenceContext* c) {
  TX_RETURN_IF_ERROR(c->WithRank(0, 4));
  TX_RETURN_IF_ERROR(c->WithRank(1, 1));
  const PartialTensorShape& in = c->input(0);
  int64_t h = -1, w = -1;
  if (const Tensor* size = c->input_tensor(1); size != nullptr && size->NumElements() == 2) {
    h = size->flat<int32_t>()[0];
    w = size->flat<int32_t>()[1];
  }
  if (in.unknown_rank()) {
    c->set_output(0, PartialTensorShape({-1, h, w, -1}));
  } else {
    c->set_output(0, PartialTensorShape({in.dim_size(0), h, w, in.dim_size(3)}));
  }
  return OkStatus();
}

}  // namespace

REGISTER_OP("DecodePng")
    .Input("contents: string")
    .Output("image: dtype")
    .Attr("channels: int = 0")
    .Attr("dtype: {uint8, uint16} = DT_UINT8")
    .SetShapeFn(DecodeImageShape)
    .Doc("Decodes a PNG image into [height, width, channels] (channels 0: the file's).");

REGISTER_OP("DecodeJpeg")
    .Input("contents: string")
    .Output("image: uint8")
    .Attr("channels: int = 0")
    .Attr("ratio: int = 1")
    .Attr("fancy_upscaling: bool = true")
    .Attr("try_recover_truncated: bool = false")
    .Attr("acceptable_fraction: float = 1.0")
    .Attr("dct_method: string = ''")
    .SetShapeFn(DecodeImageShape)
    .Doc("Decodes a JPEG image into uint8 [height, width, channels] (channels 0: the file's).");

REGISTER_OP("ResizeBilinear")
    .Input("images: T")
    .Input("size: int32")
    .Output("resized_images: float")
    .Attr("T: {int8, uint8, int16, uint16, int32, int64, bfloat16, half, float, double}")
    .Attr("align_corners: bool = false")
    .Attr("half_pixel_centers: bool = false")
    .SetShapeFn(ResizeShape)
    .Doc("Resizes [batch, height, width, channels] images to size = [new_height, new_width] by "
         "bilinear interpolation (TF's sampling: align_corners, half_pixel_centers).");

}  // namespace tensorflux
