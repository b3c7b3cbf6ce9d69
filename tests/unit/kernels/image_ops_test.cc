// DecodePng / DecodeJpeg on images encoded here with libpng / libjpeg, and ResizeBilinear against
// hand-worked values for each sampling mode; bad inputs are INVALID_ARGUMENT.
#include <png.h>
#include <stdio.h>
#include <jpeglib.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "kernel_test_util.h"

namespace tensorflux {
namespace {

std::string EncodePng(const std::vector<uint8_t>& pixels, int h, int w, png_uint_32 format) {
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  image.width = w;
  image.height = h;
  image.format = format;
  png_alloc_size_t size = 0;
  EXPECT_TRUE(png_image_write_get_memory_size(image, size, 0, pixels.data(), 0, nullptr));
  std::string out(size, '\0');
  EXPECT_TRUE(png_image_write_to_memory(&image, out.data(), &size, 0, pixels.data(), 0, nullptr));
  out.resize(size);
  return out;
}

std::string EncodeJpeg(const std::vector<uint8_t>& pixels, int h, int w, int c) {
  jpeg_compress_struct cinfo;
  jpeg_error_mgr err;
  cinfo.err = jpeg_std_error(&err);
  jpeg_create_compress(&cinfo);
  unsigned char* buf = nullptr;
  unsigned long size = 0;
  jpeg_mem_dest(&cinfo, &buf, &size);
  cinfo.image_width = w;
  cinfo.image_height = h;
  cinfo.input_components = c;
  cinfo.in_color_space = c == 1 ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_set_defaults(&cinfo);
  jpeg_set_quality(&cinfo, 100, TRUE);
  // No chroma subsampling (4:4:4), so colours survive within the tolerance below.
  cinfo.comp_info[0].h_samp_factor = cinfo.comp_info[0].v_samp_factor = 1;
  jpeg_start_compress(&cinfo, TRUE);
  while (cinfo.next_scanline < cinfo.image_height) {
    JSAMPROW row = const_cast<uint8_t*>(pixels.data()) + cinfo.next_scanline * w * c;
    jpeg_write_scanlines(&cinfo, &row, 1);
  }
  jpeg_finish_compress(&cinfo);
  jpeg_destroy_compress(&cinfo);
  std::string out(reinterpret_cast<char*>(buf), size);
  std::free(buf);
  return out;
}

StatusOr<Tensor> Decode(const char* op, const std::string& data, int64_t channels) {
  return test::KernelRunner(op)
      .Input(Tensor::Scalar<std::string>(data))
      .Attr("channels", channels)
      .RunOne();
}

TEST(DecodePngTest, ChannelsAndPixels) {
  // 2x3 RGB, pixel (y, x) = (10y + x, 100 + x, 200 - y).
  std::vector<uint8_t> rgb;
  for (int y = 0; y < 2; ++y)
    for (int x = 0; x < 3; ++x) rgb.insert(rgb.end(), {uint8_t(10 * y + x), uint8_t(100 + x), uint8_t(200 - y)});
  const std::string png = EncodePng(rgb, 2, 3, PNG_FORMAT_RGB);
  auto img = Decode("DecodePng", png, 0);
  ASSERT_TRUE(img.ok()) << img.status();
  ASSERT_EQ(img->shape(), TensorShape({2, 3, 3}));
  EXPECT_EQ(std::vector<uint8_t>(img->flat<uint8_t>().begin(), img->flat<uint8_t>().end()), rgb);
  auto rgba = Decode("DecodePng", png, 4);
  ASSERT_TRUE(rgba.ok());
  EXPECT_EQ(rgba->shape(), TensorShape({2, 3, 4}));
  EXPECT_EQ(rgba->flat<uint8_t>()[3], 255);  // opaque alpha added
  EXPECT_EQ(rgba->flat<uint8_t>()[4 * 5 + 2], 199);
  // A gray PNG keeps one channel.
  auto gray = Decode("DecodePng", EncodePng({0, 50, 100, 255}, 2, 2, PNG_FORMAT_GRAY), 0);
  ASSERT_TRUE(gray.ok());
  EXPECT_EQ(gray->shape(), TensorShape({2, 2, 1}));
  EXPECT_EQ(gray->flat<uint8_t>()[2], 100);
}

TEST(DecodeJpegTest, SmoothImageWithinTolerance) {
  // 16x16 RGB gradient; quality 100 keeps every sample within a few levels (6 with the default
  // fast integer IDCT, TF's default).
  std::vector<uint8_t> rgb;
  for (int y = 0; y < 16; ++y)
    for (int x = 0; x < 16; ++x) rgb.insert(rgb.end(), {uint8_t(8 * x), uint8_t(8 * y), 128});
  const std::string jpg = EncodeJpeg(rgb, 16, 16, 3);
  auto img = Decode("DecodeJpeg", jpg, 0);
  ASSERT_TRUE(img.ok()) << img.status();
  ASSERT_EQ(img->shape(), TensorShape({16, 16, 3}));
  for (size_t i = 0; i < rgb.size(); ++i)
    EXPECT_NEAR(img->flat<uint8_t>()[i], rgb[i], 6) << i;
  auto gray = Decode("DecodeJpeg", jpg, 1);
  ASSERT_TRUE(gray.ok());
  EXPECT_EQ(gray->shape(), TensorShape({16, 16, 1}));
  // Luma of (8x, 8y, 128): 0.299 R + 0.587 G + 0.114 B at (y=4, x=2).
  EXPECT_NEAR(gray->flat<uint8_t>()[4 * 16 + 2], 0.299 * 16 + 0.587 * 32 + 0.114 * 128, 4);
}

TEST(DecodeImageTest, BadInputs) {
  EXPECT_EQ(Decode("DecodePng", "not a png", 0).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Decode("DecodeJpeg", "not a jpeg", 0).status().code(), absl::StatusCode::kInvalidArgument);
  const std::string jpg = EncodeJpeg(std::vector<uint8_t>(64 * 3, 9), 8, 8, 3);
  EXPECT_EQ(Decode("DecodeJpeg", jpg.substr(0, jpg.size() / 3), 0).status().code(),
            absl::StatusCode::kInvalidArgument);
  const std::string png = EncodePng(std::vector<uint8_t>(64, 9), 8, 8, PNG_FORMAT_GRAY);
  EXPECT_EQ(Decode("DecodePng", png.substr(0, png.size() - 20), 0).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Decode("DecodePng", png, 5).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Decode("DecodeJpeg", jpg, 4).status().code(), absl::StatusCode::kInvalidArgument);
  auto vec = test::KernelRunner("DecodePng")
                 .Input(test::AsTensor<std::string>({png, png}, {2}))
                 .RunOne();
  EXPECT_EQ(vec.status().code(), absl::StatusCode::kInvalidArgument);
}

StatusOr<Tensor> Resize(const Tensor& images, int32_t h, int32_t w, bool align, bool half) {
  return test::KernelRunner("ResizeBilinear")
      .Input(images)
      .Input(test::AsTensor<int32_t>({h, w}, {2}))
      .Attr("align_corners", align)
      .Attr("half_pixel_centers", half)
      .RunOne();
}

std::vector<float> Row(const Tensor& t, int y) {
  const int64_t w = t.dim_size(2);
  return std::vector<float>(t.flat<float>().begin() + y * w, t.flat<float>().begin() + (y + 1) * w);
}

TEST(ResizeBilinearTest, HandWorkedSampling) {
  // 1x2x2x1 [[0, 1], [2, 3]] (uint8 in, float out).
  const Tensor img = test::AsTensor<uint8_t>({0, 1, 2, 3}, {1, 2, 2, 1});
  // Legacy: scale 1/2, sources 0, .5, 1, 1.5 (upper clamped to 1).
  auto legacy = Resize(img, 2, 4, false, false);
  ASSERT_TRUE(legacy.ok()) << legacy.status();
  EXPECT_EQ(Row(*legacy, 0), (std::vector<float>{0, 0.5, 1, 1}));
  EXPECT_EQ(Row(*legacy, 1), (std::vector<float>{2, 2.5, 3, 3}));
  // Half-pixel: sources -.25, .25, .75, 1.25 -> 0, .25, .75, 1.
  auto half = Resize(img, 2, 4, false, true);
  ASSERT_TRUE(half.ok());
  EXPECT_EQ(Row(*half, 0), (std::vector<float>{0, 0.25, 0.75, 1}));
  // Align corners 2 -> 3: sources 0, .5, 1; the centre is the mean 1.5.
  auto align = Resize(img, 3, 3, true, false);
  ASSERT_TRUE(align.ok());
  EXPECT_EQ(Row(*align, 1), (std::vector<float>{1, 1.5, 2}));
}

TEST(ResizeBilinearTest, BadInputs) {
  const Tensor img = test::AsTensor<float>({0, 1, 2, 3}, {2, 2});
  EXPECT_EQ(Resize(img, 2, 2, false, false).status().code(), absl::StatusCode::kInvalidArgument);
  const Tensor ok = test::AsTensor<float>({0, 1, 2, 3}, {1, 2, 2, 1});
  EXPECT_EQ(Resize(ok, 0, 2, false, false).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Resize(ok, 2, 2, true, true).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tensorflux
