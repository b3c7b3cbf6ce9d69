// DecodePng (libpng's simplified API) and DecodeJpeg (libjpeg-turbo) CPU kernels
// (ops/image_ops.cc). Output [height, width, channels] uint8; channels 0 keeps the file's
// (PNG: 1 gray, 2 gray+alpha, 3 RGB, 4 RGBA; JPEG: 1 or 3), otherwise the decoder converts.
// A non-scalar input, unsupported channels / dtype, or data that does not decode ->
// INVALID_ARGUMENT naming the op and the decoder's message. Not supported: DecodePng's uint16
// output (UNIMPLEMENTED), DecodeJpeg's ratio != 1 and try_recover_truncated.
#include <png.h>
#include <stdio.h>  // jpeglib.h needs FILE
#include <jpeglib.h>

#include <csetjmp>
#include <cstring>
#include <string>
#include <vector>

#include "tensorflux/framework/op_kernel.h"

namespace tensorflux {
namespace {

Status CheckContents(OpKernelContext* ctx, const char* op) {
  const Tensor& c = ctx->input(0);
  if (c.dims() != 0)
    return errors::InvalidArgument(op, ": contents must be a scalar, got shape ",
                                   c.shape().DebugString());
  return OkStatus();
}

Status DecodePng(const std::string& data, int channels, Tensor* out) {
  png_image image;
  std::memset(&image, 0, sizeof(image));
  image.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_memory(&image, data.data(), data.size()))
    return errors::InvalidArgument("DecodePng: not a PNG image: ", image.message);
  if (channels == 0) channels = static_cast<int>(PNG_IMAGE_SAMPLE_CHANNELS(image.format));
  static constexpr png_uint_32 kFormats[] = {0, PNG_FORMAT_GRAY, PNG_FORMAT_GA, PNG_FORMAT_RGB,
                                             PNG_FORMAT_RGBA};
  image.format = kFormats[channels];
  Tensor t(DT_UINT8, TensorShape({image.height, image.width, channels}));
  if (!png_image_finish_read(&image, nullptr, t.raw_data(), 0, nullptr)) {
    png_image_free(&image);
    return errors::InvalidArgument("DecodePng: corrupt PNG data: ", image.message);
  }
  *out = std::move(t);
  return OkStatus();
}

struct JpegError {
  jpeg_error_mgr mgr;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

void JpegErrorExit(j_common_ptr cinfo) {
  JpegError* err = reinterpret_cast<JpegError*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, err->message);
  std::longjmp(err->jump, 1);
}

// Decodes into `pixels` (no C++ objects are created between setjmp and a possible longjmp but
// the vector, which lives in this frame).
Status DecodeJpeg(const std::string& data, int channels, std::vector<uint8_t>* pixels,
                  int64_t* height, int64_t* width, int* out_channels) {
  jpeg_decompress_struct cinfo;
  JpegError err;
  cinfo.err = jpeg_std_error(&err.mgr);
  err.mgr.error_exit = JpegErrorExit;
  err.mgr.output_message = [](j_common_ptr) {};  // warnings are not printed
  if (setjmp(err.jump)) {
    jpeg_destroy_decompress(&cinfo);
    return errors::InvalidArgument("DecodeJpeg: cannot decode: ", err.message);
  }
  jpeg_create_decompress(&cinfo);
  jpeg_mem_src(&cinfo, reinterpret_cast<const unsigned char*>(data.data()), data.size());
  jpeg_read_header(&cinfo, TRUE);
  if (channels == 1) cinfo.out_color_space = JCS_GRAYSCALE;
  if (channels == 3) cinfo.out_color_space = JCS_RGB;
  jpeg_start_decompress(&cinfo);
  const int c = cinfo.output_components;
  const size_t row = static_cast<size_t>(cinfo.output_width) * c;
  pixels->resize(row * cinfo.output_height);
  while (cinfo.output_scanline < cinfo.output_height) {
    JSAMPROW r = pixels->data() + row * cinfo.output_scanline;
    jpeg_read_scanlines(&cinfo, &r, 1);
  }
  *height = cinfo.output_height;
  *width = cinfo.output_width;
  *out_channels = c;
  jpeg_finish_decompress(&cinfo);
  jpeg_destroy_decompress(&cinfo);
  return OkStatus();
}

class DecodeImageOp : public OpKernel {
 public:
  explicit DecodeImageOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    jpeg_ = def().op() == "DecodeJpeg";
    OP_REQUIRES_OK(ctx, ctx->GetAttr("channels", &channels_));
    const int64_t max_channels = jpeg_ ? 3 : 4;
    OP_REQUIRES(ctx, channels_ >= 0 && channels_ <= max_channels && !(jpeg_ && channels_ == 2),
                errors::InvalidArgument(def().op(), ": channels must be 0, 1, ",
                                        jpeg_ ? "or 3" : "2, 3 or 4", ", got ", channels_));
    if (jpeg_) {
      int64_t ratio = 1;
      bool recover = false;
      OP_REQUIRES_OK(ctx, ctx->GetAttr("ratio", &ratio));
      OP_REQUIRES_OK(ctx, ctx->GetAttr("try_recover_truncated", &recover));
      OP_REQUIRES(ctx, ratio == 1 && !recover,
                  errors::Unimplemented("DecodeJpeg: ratio != 1 and try_recover_truncated are "
                                        "not supported"));
    } else {
      DataType dt = DT_UINT8;
      OP_REQUIRES_OK(ctx, ctx->GetAttr("dtype", &dt));
      OP_REQUIRES(ctx, dt == DT_UINT8,
                  errors::Unimplemented("DecodePng: only dtype uint8 is supported"));
    }
  }

  void Compute(OpKernelContext* ctx) override {
    OP_REQUIRES_OK(ctx, CheckContents(ctx, jpeg_ ? "DecodeJpeg" : "DecodePng"));
    const std::string& data = ctx->input(0).scalar<std::string>();
    Tensor out;
    if (jpeg_) {
      std::vector<uint8_t> pixels;
      int64_t h = 0, w = 0;
      int c = 0;
      OP_REQUIRES_OK(ctx, DecodeJpeg(data, static_cast<int>(channels_), &pixels, &h, &w, &c));
      out = Tensor(DT_UINT8, TensorShape({h, w, c}));
      std::memcpy(out.raw_data(), pixels.data(), pixels.size());
    } else {
      OP_REQUIRES_OK(ctx, DecodePng(data, static_cast<int>(channels_), &out));
    }
    ctx->set_output(0, std::move(out));
  }

 private:
  bool jpeg_ = false;
  int64_t channels_ = 0;
};
REGISTER_KERNEL_BUILDER(Name("DecodePng").Device(DEVICE_CPU), DecodeImageOp);
REGISTER_KERNEL_BUILDER(Name("DecodeJpeg").Device(DEVICE_CPU), DecodeImageOp);

}  // namespace
}  // namespace tensorflux
