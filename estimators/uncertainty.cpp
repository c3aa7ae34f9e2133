#include "estimators/uncertainty.hpp"

namespace hwplan {
namespace {

// From `hwplan validate --measurements data/measurements/step-latency-neusight.yaml --measurements
// data/measurements/published-throughput.yaml --measurements data/measurements/finetune.yaml --measurements
// data/measurements/measured-h200.yaml --measurements data/measurements/bert-squad-lambda.yaml --measurements
// data/measurements/training-public.yaml --measurements data/measurements/decode-engines.yaml --measurements
// data/measurements/training-scaling.yaml`, table "regime",
// column p80 |error|. step: single-device forward/backward latencies; throughput: training tokens/s and
// TFLOP/s per device; decode: decode speed at batch 1-8 in the engine each source ran (eager Transformers,
// llama.cpp, gpt-fast, vLLM, TensorRT-LLM, ...: the engine decode set's 48 rows widen the band from the 12.2% of
// the 20 batch-1 rows alone); memory: peak training memory as the stack reports it.
constexpr Band kBands[] = {
    {Regime::kStep, "step", 0.128, 76},
    {Regime::kThroughput, "throughput", 0.210, 160},
    {Regime::kDecode, "decode", 0.272, 68},
    {Regime::kMemory, "memory", 0.138, 72},
    // From `hwplan validate --measurements data/measurements/cnn-throughput.yaml`, regime "image": training and
    // inference images/s of generic networks (ResNet-50) across stacks and GPUs; every CNN estimate prints it.
    {Regime::kImage, "image", 0.274, 59},
};

}  // namespace

const Band& band(Regime r) {
  for (const auto& b : kBands)
    if (b.regime == r) return b;
  return kBands[0];
}

const char* to_string(Regime r) { return band(r).name; }

}  // namespace hwplan
