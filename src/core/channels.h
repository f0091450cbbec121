// Per-channel quantized weight rows (qmm's own row formats, not GGUF): one scale per output
// channel (row of W[n, k]) instead of one per 32-block, symmetric, the way frameworks (XNNPack,
// TFLite, PyTorch) produce int8 / int4 weights. Each row is self-contained, so the kernel list,
// its packers and tests handle them like GGUF rows:
//   QC8 row: f32 scale, f32 bias, then k int8 values;            row bytes 8 + k.
//   QC4 row: f32 scale, f32 bias, then ceil(k/2) bytes "qs4cxs1s0": element 2i in the low
//            nibble of byte i, element 2i+1 in the high nibble, signed int4 (two's complement);
//            row bytes 8 + ceil(k/2).
// Weight value = q · scale. The bias is the output channel's F32 bias, added by the kernel's
// epilogue (not part of the weights: dequantize_row ignores it). Rows need no alignment.
// The NaN policy (include/qmm/qmm.h): a row holding NaN or ±Inf gets scale = NaN and all q = 0,
// so its whole output column is NaN.
#pragma once
#include <cstddef>
#include <cstdint>

namespace qmm {

constexpr size_t kChannelHeader = 8;  // f32 scale + f32 bias

// The largest k of a QC8 / QC4 matmul: the kernels sum Σ (a - zp)·w over a row in int32,
// |a - zp| <= 255 and |w| <= 128, so 2^16·255·128 < 2^31 keeps the sum exact (the packer's int32
// row sums Σw would allow up to 2^24). check_shape (src/matmul) refuses larger k.
constexpr size_t kMaxChannelK = size_t{1} << 16;

size_t qc8_row_bytes(size_t k);
size_t qc4_row_bytes(size_t k);

// F32 row -> one QC8 / QC4 row with the given bias. QC8: scale = amax/127, q = round(x/scale);
// QC4: scale = amax/7, q = round(x/scale) clamped to [-8, 7].
void quantize_row_qc8(const float* x, float bias, uint8_t* row, size_t k);
void quantize_row_qc4(const float* x, float bias, uint8_t* row, size_t k);
void dequantize_row_qc8(const uint8_t* row, float* y, size_t k);
void dequantize_row_qc4(const uint8_t* row, float* y, size_t k);

// Fields of a row of either format.
float channel_scale(const uint8_t* row);
float channel_bias(const uint8_t* row);
int qc4_value(const uint8_t* row, size_t c);  // element c of a QC4 row, -8..7
int qc8_value(const uint8_t* row, size_t c);

}  // namespace qmm
