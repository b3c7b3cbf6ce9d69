// DecodePng (libpng) and DecodeJpeg (libjpeg-turbo) CPU kernels (ops/image_ops.cc), with TF's
// conversions (TF's png_io.cc and jpeg_mem.cc). Output [height, width, channels]: uint8, or
// DecodePng's uint16. channels 0 keeps the file's (PNG: 1 gray, 2 gray+alpha, 3 RGB or palette,
// 4 RGBA or palette with tRNS; JPEG: 1 or 3); 1, 3 (and PNG's 4) convert; 2 is refused, as TF
// refuses it. A non-scalar input, unsupported channels / dtype, or data that does not decode ->
// INVALID_ARGUMENT naming the op and the decoder's message. DecodeJpeg: ratio (1, 2, 4 or 8)
// scales the output down in the IDCT, dct_method "" and "INTEGER_FAST" use the fast integer
// IDCT (JDCT_IFAST), "INTEGER_ACCURATE" the accurate one (JDCT_ISLOW), fancy_upscaling sets
// libjpeg's do_fancy_upsampling, and data that ends early is an error (a source manager that
// fails where libjpeg's own would insert a fake end of image). Not supported: DecodeJpeg's
// try_recover_truncated (UNIMPLEMENTED).
#include <png.h>
#include <stdio.h>  // jpeglib.h needs FILE
#include <jpeglib.h>
#include <jerror.h>

#include <csetjmp>
#include <cstdio>
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

// libpng's read callbacks: data from memory, errors into a message and a longjmp, warnings
// ignored.
struct PngSource {
  const unsigned char* data;
  size_t left;
  char message[256];
};

void PngRead(png_structp png, png_bytep out, size_t n) {
  PngSource* src = static_cast<PngSource*>(png_get_io_ptr(png));
  if (n > src->left) png_error(png, "PNG data ends early");
  std::memcpy(out, src->data, n);
  src->data += n;
  src->left -= n;
}

void PngError(png_structp png, png_const_charp message) {
  PngSource* src = static_cast<PngSource*>(png_get_error_ptr(png));
  std::snprintf(src->message, sizeof(src->message), "%s", message);
  png_longjmp(png, 1);
}

void PngWarning(png_structp, png_const_charp) {}

// Decodes into `pixels` (8 or 16 bits per sample, native byte order) with TF's conversions
// (png_io.cc): channels 0 keeps the file's (palette: 3, or 4 with a tRNS chunk); an even channel
// count adds alpha (from tRNS, else opaque), an odd one strips it; 16-bit samples keep their
// high byte for 8-bit output, 8-bit samples are scaled by 257 for 16-bit output; palettes expand
// to RGB, gray to RGB when 3 or 4 channels are wanted, RGB to gray (0.299 R + 0.587 G +
// 0.114 B) when 1 or 2. Nothing with a destructor lives in this frame (setjmp / longjmp).
Status DecodePngPixels(const std::string& data, int channels, bool sixteen,
                       std::vector<unsigned char>* pixels, int64_t* height, int64_t* width,
                       int* out_channels) {
  PngSource src{reinterpret_cast<const unsigned char*>(data.data()), data.size(), ""};
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &src, PngError, PngWarning);
  if (png == nullptr) return errors::Internal("DecodePng: cannot create a libpng reader");
  png_infop info = png_create_info_struct(png);
  if (info == nullptr) {
    png_destroy_read_struct(&png, nullptr, nullptr);
    return errors::Internal("DecodePng: cannot create a libpng reader");
  }
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_read_struct(&png, &info, nullptr);
    return errors::InvalidArgument("DecodePng: invalid PNG data: ", src.message);
  }
  png_set_read_fn(png, &src, PngRead);
  png_read_info(png, info);
  png_uint_32 w = 0, h = 0;
  int depth = 0, color = 0;
  png_get_IHDR(png, info, &w, &h, &depth, &color, nullptr, nullptr, nullptr);
  const bool has_trns = png_get_valid(png, info, PNG_INFO_tRNS) != 0;
  if (channels == 0) {
    channels = color == PNG_COLOR_TYPE_PALETTE ? (has_trns ? 4 : 3)
                                               : static_cast<int>(png_get_channels(png, info));
  }
  const bool has_alpha = (color & PNG_COLOR_MASK_ALPHA) != 0;
  if (channels % 2 == 0) {
    if (!has_alpha && has_trns) {
      png_set_tRNS_to_alpha(png);
    } else if (!has_alpha) {
      png_set_add_alpha(png, (1u << depth) - 1, PNG_FILLER_AFTER);
    }
  } else if (has_alpha || has_trns) {
    png_set_strip_alpha(png);
  }
  if (depth > 8 && !sixteen) png_set_strip_16(png);
  png_set_packing(png);
  const int passes = png_set_interlace_handling(png);
  if (sixteen) png_set_swap(png);  // PNG samples are big-endian; the host is little-endian
  if (color == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
  const bool is_gray = (color & PNG_COLOR_MASK_COLOR) == 0;
  if (is_gray && depth < 8) png_set_expand_gray_1_2_4_to_8(png);
  if (channels < 3 && !is_gray) png_set_rgb_to_gray(png, 1, 0.299, 0.587);
  if (channels >= 3 && is_gray) png_set_gray_to_rgb(png);
  png_read_update_info(png, info);
  const bool synthesize16 = sixteen && depth <= 8;  // decoded as 8 bits, widened below
  const size_t sample = synthesize16 || !sixteen ? 1 : 2;
  const size_t row = static_cast<size_t>(w) * channels * sample;
  if (png_get_rowbytes(png, info) != row) {
    png_error(png, "unexpected row size after the conversions");
  }
  pixels->resize(row * h * (synthesize16 ? 2 : 1));
  for (int p = 0; p < passes; ++p) {
    for (png_uint_32 y = 0; y < h; ++y) png_read_row(png, pixels->data() + y * row, nullptr);
  }
  png_read_end(png, info);
  png_destroy_read_struct(&png, &info, nullptr);
  if (synthesize16) {
    uint16_t* out = reinterpret_cast<uint16_t*>(pixels->data());
    for (size_t i = row * h; i-- > 0;) out[i] = static_cast<uint16_t>((*pixels)[i] * 257);
  }
  *height = h;
  *width = w;
  *out_channels = channels;
  return OkStatus();
}

Status DecodePng(const std::string& data, int channels, DataType dtype, Tensor* out) {
  std::vector<unsigned char> pixels;
  int64_t h = 0, w = 0;
  int c = 0;
  TX_RETURN_IF_ERROR(DecodePngPixels(data, channels, dtype == DT_UINT16, &pixels, &h, &w, &c));
  Tensor t(dtype, TensorShape({h, w, c}));
  std::memcpy(t.raw_data(), pixels.data(), pixels.size());
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

// TF's decoding options (jpeg_mem.h's UncompressFlags).
struct JpegOptions {
  int channels = 0;
  int ratio = 1;
  J_DCT_METHOD dct_method = JDCT_IFAST;
  bool fancy_upscaling = true;
};

// A memory source that fails at the end of the data (libjpeg's jpeg_mem_src inserts a fake end
// of image there and only warns, which would turn a truncated file into a gray-padded image).
void MemInitSource(j_decompress_ptr) {}
boolean MemFillInputBuffer(j_decompress_ptr cinfo) {
  ERREXIT(cinfo, JERR_INPUT_EOF);
  return FALSE;
}
void MemSkipInputData(j_decompress_ptr cinfo, long num_bytes) {  // NOLINT(runtime/int)
  if (num_bytes <= 0) return;
  jpeg_source_mgr* src = cinfo->src;
  if (static_cast<size_t>(num_bytes) > src->bytes_in_buffer) {
    src->bytes_in_buffer = 0;
    MemFillInputBuffer(cinfo);
    return;
  }
  src->next_input_byte += num_bytes;
  src->bytes_in_buffer -= static_cast<size_t>(num_bytes);
}
void MemTermSource(j_decompress_ptr) {}

// Decodes into `pixels` (no C++ objects are created between setjmp and a possible longjmp but
// the vector, which lives in this frame).
Status DecodeJpeg(const std::string& data, const JpegOptions& opt, std::vector<uint8_t>* pixels,
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
  jpeg_source_mgr src;
  src.next_input_byte = reinterpret_cast<const JOCTET*>(data.data());
  src.bytes_in_buffer = data.size();
  src.init_source = MemInitSource;
  src.fill_input_buffer = MemFillInputBuffer;
  src.skip_input_data = MemSkipInputData;
  src.resync_to_restart = jpeg_resync_to_restart;
  src.term_source = MemTermSource;
  cinfo.src = &src;
  jpeg_read_header(&cinfo, TRUE);
  cinfo.scale_num = 1;
  cinfo.scale_denom = static_cast<unsigned int>(opt.ratio);
  cinfo.dct_method = opt.dct_method;
  cinfo.do_fancy_upsampling = opt.fancy_upscaling ? TRUE : FALSE;
  if (opt.channels == 1) cinfo.out_color_space = JCS_GRAYSCALE;
  if (opt.channels == 3) cinfo.out_color_space = JCS_RGB;
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
    OP_REQUIRES(ctx, channels_ >= 0 && channels_ <= max_channels && channels_ != 2,
                errors::InvalidArgument(def().op(), ": channels must be 0, 1, ",
                                        jpeg_ ? "or 3" : "3 or 4", ", got ", channels_));
    if (jpeg_) {
      int64_t ratio = 1;
      bool recover = false;
      std::string dct_method;
      OP_REQUIRES_OK(ctx, ctx->GetAttr("ratio", &ratio));
      OP_REQUIRES_OK(ctx, ctx->GetAttr("try_recover_truncated", &recover));
      OP_REQUIRES_OK(ctx, ctx->GetAttr("fancy_upscaling", &jpeg_opt_.fancy_upscaling));
      OP_REQUIRES_OK(ctx, ctx->GetAttr("dct_method", &dct_method));
      OP_REQUIRES(ctx, ratio == 1 || ratio == 2 || ratio == 4 || ratio == 8,
                  errors::InvalidArgument("DecodeJpeg: ratio must be 1, 2, 4 or 8, got ",
                                          ratio));
      OP_REQUIRES(ctx, dct_method.empty() || dct_method == "INTEGER_FAST" ||
                           dct_method == "INTEGER_ACCURATE",
                  errors::InvalidArgument("DecodeJpeg: dct_method must be '', 'INTEGER_FAST' "
                                          "or 'INTEGER_ACCURATE', got '", dct_method, "'"));
      OP_REQUIRES(ctx, !recover,
                  errors::Unimplemented("DecodeJpeg: try_recover_truncated is not supported"));
      jpeg_opt_.channels = static_cast<int>(channels_);
      jpeg_opt_.ratio = static_cast<int>(ratio);
      jpeg_opt_.dct_method = dct_method == "INTEGER_ACCURATE" ? JDCT_ISLOW : JDCT_IFAST;
    } else {
      OP_REQUIRES_OK(ctx, ctx->GetAttr("dtype", &dtype_));
      OP_REQUIRES(ctx, dtype_ == DT_UINT8 || dtype_ == DT_UINT16,
                  errors::InvalidArgument("DecodePng: dtype must be uint8 or uint16"));
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
      OP_REQUIRES_OK(ctx, DecodeJpeg(data, jpeg_opt_, &pixels, &h, &w, &c));
      out = Tensor(DT_UINT8, TensorShape({h, w, c}));
      std::memcpy(out.raw_data(), pixels.data(), pixels.size());
    } else {
      OP_REQUIRES_OK(ctx, DecodePng(data, static_cast<int>(channels_), dtype_, &out));
    }
    ctx->set_output(0, std::move(out));
  }

 private:
  bool jpeg_ = false;
  int64_t channels_ = 0;
  DataType dtype_ = DT_UINT8;  // DecodePng
  JpegOptions jpeg_opt_;
};
REGISTER_KERNEL_BUILDER(Name("DecodePng").Device(DEVICE_CPU), DecodeImageOp);
REGISTER_KERNEL_BUILDER(Name("DecodeJpeg").Device(DEVICE_CPU), DecodeImageOp);

}  // namespace
}  // namespace tensorflux
