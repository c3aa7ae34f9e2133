// Numeric formats: compute precision of a run, and storage format of weights / KV cache.
#pragma once

#include <optional>
#include <string>

namespace hwplan {

enum class Precision { kFp64, kFp32, kTf32, kFp16, kBf16, kFp8, kInt8, kInt4, kFp4 };

const char* to_string(Precision p);
std::optional<Precision> parse_precision(const std::string& s);

// Bytes per element when a tensor is stored in this format (int4/fp4 pack two per byte).
double bytes_per_element(Precision p);

// Storage formats for inference weights: a precision plus the per-block scale overhead of quantised formats.
// q4_k_m: llama.cpp's most used mix (4-bit k-quant blocks, some tensors in 6 bits), as a whole file averages it.
enum class WeightFormat { kFp32, kFp16, kBf16, kFp8, kInt8, kInt4, kNf4, kQ4_0, kQ4KM };
const char* to_string(WeightFormat w);
std::optional<WeightFormat> parse_weight_format(const std::string& s);
// Average bytes per parameter including scales (q4_0: 18 bytes per 32 weights; nf4 with double quantisation
// 0.5 + 0.127/8 per QLoRA paper; int8 with per-channel scales ~1).
double bytes_per_param(WeightFormat w);
// Precision the matrix units use to compute with weights in this format (dequantised to fp16 for int4 kernels).
Precision compute_precision(WeightFormat w);

}  // namespace hwplan
