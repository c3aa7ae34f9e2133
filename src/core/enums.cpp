// Names of the enumerations, in one place so that parsing and printing agree.
#include <array>
#include <utility>

#include "core/device.hpp"
#include "core/model.hpp"
#include "core/precision.hpp"
#include "core/workload.hpp"

namespace hwplan {
namespace {

template <typename E, std::size_t N>
const char* name_of(const std::array<std::pair<E, const char*>, N>& table, E value) {
  for (const auto& [e, name] : table)
    if (e == value) return name;
  return "?";
}

template <typename E, std::size_t N>
std::optional<E> parse_of(const std::array<std::pair<E, const char*>, N>& table, const std::string& s) {
  for (const auto& [e, name] : table)
    if (s == name) return e;
  return std::nullopt;
}

constexpr std::array<std::pair<Precision, const char*>, 9> kPrecisions{{
    {Precision::kFp64, "fp64"}, {Precision::kFp32, "fp32"}, {Precision::kTf32, "tf32"},
    {Precision::kFp16, "fp16"}, {Precision::kBf16, "bf16"}, {Precision::kFp8, "fp8"},
    {Precision::kInt8, "int8"}, {Precision::kInt4, "int4"}, {Precision::kFp4, "fp4"},
}};
constexpr std::array<std::pair<WeightFormat, const char*>, 9> kWeightFormats{{
    {WeightFormat::kFp32, "fp32"}, {WeightFormat::kFp16, "fp16"}, {WeightFormat::kBf16, "bf16"},
    {WeightFormat::kFp8, "fp8"}, {WeightFormat::kInt8, "int8"}, {WeightFormat::kInt4, "int4"},
    {WeightFormat::kNf4, "nf4"}, {WeightFormat::kQ4_0, "q4_0"}, {WeightFormat::kQ4KM, "q4_k_m"},
}};
constexpr std::array<std::pair<Framework, const char*>, 7> kFrameworks{{
    {Framework::kHfTrainer, "hf-trainer"}, {Framework::kDeepspeed, "deepspeed"}, {Framework::kFsdp, "fsdp"},
    {Framework::kTorchtune, "torchtune"}, {Framework::kTorchtitan, "torchtitan"}, {Framework::kMegatron, "megatron"},
    {Framework::kLitgpt, "litgpt"},
}};
constexpr std::array<std::pair<Engine, const char*>, 8> kEngines{{
    {Engine::kHf, "hf"}, {Engine::kVllm, "vllm"}, {Engine::kSglang, "sglang"}, {Engine::kTrtllm, "trtllm"},
    {Engine::kLlamacpp, "llamacpp"}, {Engine::kExllama, "exllama"}, {Engine::kMlc, "mlc"},
    {Engine::kNpuRuntime, "npu-runtime"},
}};
constexpr std::array<std::pair<MemoryMetric, const char*>, 3> kMemoryMetrics{{
    {MemoryMetric::kAllocated, "allocated"}, {MemoryMetric::kReserved, "reserved"}, {MemoryMetric::kDevice, "device"},
}};
constexpr std::array<std::pair<DeviceClass, const char*>, 5> kClasses{{
    {DeviceClass::kConsumer, "consumer"}, {DeviceClass::kWorkstation, "workstation"},
    {DeviceClass::kDatacenter, "datacenter"}, {DeviceClass::kNpu, "npu"}, {DeviceClass::kEdge, "edge"},
}};
constexpr std::array<std::pair<ModelFamily, const char*>, 4> kFamilies{{
    {ModelFamily::kDecoder, "decoder"}, {ModelFamily::kEncoder, "encoder"},
    {ModelFamily::kEncoderDecoder, "encoder-decoder"}, {ModelFamily::kGeneric, "generic"},
}};
constexpr std::array<std::pair<Activation, const char*>, 5> kActivations{{
    {Activation::kGelu, "gelu"}, {Activation::kRelu, "relu"}, {Activation::kSwiglu, "swiglu"},
    {Activation::kGeglu, "geglu"}, {Activation::kGeluTanh, "gelu-tanh"},
}};
constexpr std::array<std::pair<PositionEmbedding, const char*>, 4> kPositions{{
    {PositionEmbedding::kLearned, "learned"}, {PositionEmbedding::kRope, "rope"},
    {PositionEmbedding::kAlibi, "alibi"}, {PositionEmbedding::kRelative, "relative"},
}};
constexpr std::array<std::pair<NormKind, const char*>, 2> kNorms{{
    {NormKind::kLayerNorm, "layernorm"}, {NormKind::kRmsNorm, "rmsnorm"},
}};
constexpr std::array<std::pair<LinearBias, const char*>, 3> kBiases{{
    {LinearBias::kAll, "all"}, {LinearBias::kQkv, "qkv"}, {LinearBias::kNone, "none"},
}};
constexpr std::array<std::pair<Task, const char*>, 5> kTasks{{
    {Task::kTrain, "train"}, {Task::kFinetune, "finetune"}, {Task::kLora, "lora"}, {Task::kQlora, "qlora"},
    {Task::kInfer, "infer"},
}};
constexpr std::array<std::pair<Recompute, const char*>, 3> kRecomputes{{
    {Recompute::kNone, "none"}, {Recompute::kSelective, "selective"}, {Recompute::kFull, "full"},
}};
constexpr std::array<std::pair<Offload, const char*>, 3> kOffloads{{
    {Offload::kNone, "none"}, {Offload::kOptimizer, "optimizer"}, {Offload::kParams, "params"},
}};
constexpr std::array<std::pair<Attention, const char*>, 2> kAttentions{{
    {Attention::kEager, "eager"}, {Attention::kFlash, "flash"},
}};
constexpr std::array<std::pair<Optimizer, const char*>, 4> kOptimizers{{
    {Optimizer::kAdamW, "adamw"}, {Optimizer::kSgd, "sgd"}, {Optimizer::kAdafactor, "adafactor"},
    {Optimizer::kAdam8bit, "adam8bit"},
}};

}  // namespace

const char* to_string(Precision p) { return name_of(kPrecisions, p); }
std::optional<Precision> parse_precision(const std::string& s) { return parse_of(kPrecisions, s); }
const char* to_string(WeightFormat w) { return name_of(kWeightFormats, w); }
std::optional<WeightFormat> parse_weight_format(const std::string& s) { return parse_of(kWeightFormats, s); }
const char* to_string(DeviceClass c) { return name_of(kClasses, c); }
std::optional<DeviceClass> parse_device_class(const std::string& s) { return parse_of(kClasses, s); }
const char* to_string(ModelFamily f) { return name_of(kFamilies, f); }
const char* to_string(Activation a) { return name_of(kActivations, a); }
const char* to_string(PositionEmbedding p) { return name_of(kPositions, p); }
const char* to_string(NormKind n) { return name_of(kNorms, n); }
const char* to_string(LinearBias b) { return name_of(kBiases, b); }
const char* to_string(Task t) { return name_of(kTasks, t); }
const char* to_string(Recompute r) { return name_of(kRecomputes, r); }
const char* to_string(Offload o) { return name_of(kOffloads, o); }
const char* to_string(Attention a) { return name_of(kAttentions, a); }
const char* to_string(Optimizer o) { return name_of(kOptimizers, o); }
const char* to_string(Framework f) { return name_of(kFrameworks, f); }
const char* to_string(Engine e) { return name_of(kEngines, e); }
const char* to_string(MemoryMetric m) { return name_of(kMemoryMetrics, m); }
std::optional<Framework> parse_framework(const std::string& s) { return parse_of(kFrameworks, s); }
// "tensorrt" names the TensorRT family for networks TensorRT-LLM does not serve (a CNN through TensorRT): the same
// preset (fused kernels, layouts of its choosing, no per-op host cost).
// "tflite", "coreml" and "qnn" name an NPU's own runtime (one preset: a graph compiled ahead of time).
std::optional<Engine> parse_engine(const std::string& s) {
  if (s == "tensorrt") return Engine::kTrtllm;
  if (s == "tflite" || s == "coreml" || s == "qnn") return Engine::kNpuRuntime;
  return parse_of(kEngines, s);
}
std::optional<MemoryMetric> parse_memory_metric(const std::string& s) { return parse_of(kMemoryMetrics, s); }
std::optional<Task> parse_task(const std::string& s) { return parse_of(kTasks, s); }
std::optional<Recompute> parse_recompute(const std::string& s) { return parse_of(kRecomputes, s); }
std::optional<Offload> parse_offload(const std::string& s) { return parse_of(kOffloads, s); }
std::optional<Attention> parse_attention(const std::string& s) { return parse_of(kAttentions, s); }
std::optional<Optimizer> parse_optimizer(const std::string& s) { return parse_of(kOptimizers, s); }

std::optional<ModelFamily> parse_model_family(const std::string& s) { return parse_of(kFamilies, s); }
std::optional<Activation> parse_activation(const std::string& s) { return parse_of(kActivations, s); }
std::optional<PositionEmbedding> parse_position_embedding(const std::string& s) { return parse_of(kPositions, s); }
std::optional<NormKind> parse_norm(const std::string& s) { return parse_of(kNorms, s); }
std::optional<LinearBias> parse_linear_bias(const std::string& s) { return parse_of(kBiases, s); }

double bytes_per_element(Precision p) {
  switch (p) {
    case Precision::kFp64: return 8;
    case Precision::kFp32:
    case Precision::kTf32: return 4;
    case Precision::kFp16:
    case Precision::kBf16: return 2;
    case Precision::kFp8:
    case Precision::kInt8: return 1;
    case Precision::kInt4:
    case Precision::kFp4: return 0.5;
  }
  return 4;
}

double bytes_per_param(WeightFormat w) {
  switch (w) {
    case WeightFormat::kFp32: return 4;
    case WeightFormat::kFp16:
    case WeightFormat::kBf16: return 2;
    case WeightFormat::kFp8: return 1;
    case WeightFormat::kInt8: return 1.0 + 2.0 / 128.0;      // fp16 scale per 128-column group
    case WeightFormat::kInt4: return 0.5 + 2.0 / 128.0;      // GPTQ/AWQ-style fp16 scale per 128 weights
    case WeightFormat::kNf4: return 0.5 + 0.127 / 8.0;       // QLoRA paper: 0.127 bits/param with double quant
    case WeightFormat::kQ4_0: return 18.0 / 32.0;            // llama.cpp block: 32 x 4 bit + fp16 scale
    // llama-quantize's own table (tools/quantize/quantize.cpp): Q4_K_M 4.58 GiB and Q8_0 (8.5 bits a weight) 7.96 GiB
    // for Llama 3 8B: 4.58 / 7.96 x 8.5 = 4.89 bits a weight over the whole file, head and embedding included.
    case WeightFormat::kQ4KM: return 4.58 / 7.96 * 8.5 / 8.0;
  }
  return 2;
}

Precision compute_precision(WeightFormat w) {
  switch (w) {
    case WeightFormat::kFp32: return Precision::kFp32;
    case WeightFormat::kBf16: return Precision::kBf16;
    case WeightFormat::kFp8: return Precision::kFp8;
    case WeightFormat::kInt8: return Precision::kInt8;
    default: return Precision::kFp16;
  }
}

ReferenceNetwork reference_network(const Device& d) {
  struct Family {
    const char* family;
    double gbps;
    const char* system;
  };
  // Per device = the reference node's scale-out NICs / its devices. Sources: NVIDIA DGX-1 (V100) datasheet, 4x EDR
  // InfiniBand 100 Gb/s for 8 GPUs; DGX A100 datasheet, 8x ConnectX-6 HDR 200 Gb/s; DGX H100 and DGX B200
  // datasheets, 8x ConnectX-7 NDR 400 Gb/s; AMD Instinct MI300X platforms (e.g. Azure ND MI300X v5), 8x 400 Gb/s;
  // Frontier (MI250X), 4x Slingshot 200 Gb/s per node of 8 GCDs; Intel Gaudi 2 and Gaudi 3 (HLS-Gaudi2 / HLS-Gaudi3
  // server specs), 3 of each card's 24 integrated 100 / 200 GbE ports go off the node; Huawei Atlas 800T A2, one
  // 200 GE RoCE port per Ascend 910B; AWS Trn2 (trn2.48xlarge), 3.2 Tb/s EFA for 16 Trainium2.
  static constexpr Family kFamilies[] = {
      {"pascal", 50, "DGX-1: 4x 100 Gb/s EDR for 8 GPUs"},
      {"volta", 50, "DGX-1V: 4x 100 Gb/s EDR for 8 GPUs"},
      {"ampere-ga100", 200, "DGX A100: 8x 200 Gb/s HDR, one per GPU"},
      {"hopper", 400, "DGX H100: 8x 400 Gb/s NDR, one per GPU"},
      {"blackwell", 400, "DGX B200: 8x 400 Gb/s ConnectX-7, one per GPU"},
      {"cdna1", 100, "MI100 servers: 100 Gb/s per GPU"},
      {"cdna2", 100, "Frontier: 4x 200 Gb/s Slingshot for 8 MI250X GCDs"},
      {"cdna3", 400, "MI300X platforms: 8x 400 Gb/s, one per GPU"},
      {"gaudi2", 300, "HLS-Gaudi2: 3x 100 GbE scale-out ports per card"},
      {"gaudi3", 600, "HLS-Gaudi3: 3x 200 GbE scale-out ports per card"},
      {"ascend-910b", 200, "Atlas 800T A2: one 200 GE RoCE port per NPU"},
      {"trainium2", 200, "trn2.48xlarge: 3.2 Tb/s EFA for 16 Trainium2"},
  };
  for (const auto& f : kFamilies)
    if (d.architecture_family == f.family) return {f.gbps, f.system};
  // No multi-node reference system: PCIe servers of inference cards (two 100 GbE ports for four to eight cards),
  // workstations and desktops (one 25 GbE port per card is already generous), edge modules (gigabit Ethernet).
  switch (d.device_class) {
    case DeviceClass::kDatacenter:
    case DeviceClass::kNpu:
      return {50, "a PCIe server: 2x 100 GbE for 4 cards"};
    case DeviceClass::kConsumer:
    case DeviceClass::kWorkstation:
      return {25, "a desktop or workstation: 25 GbE per card"};
    case DeviceClass::kEdge:
      return {1, "an edge module: gigabit Ethernet"};
  }
  return {400, "a 400 Gb/s NIC per device"};
}

double HostLink::bytes_per_s() const {
  if (type == "usb3") return 5e9 / 8 * 0.8;  // 5 Gb/s with 8b/10b encoding
  if (type == "soc" || type == "cloud" || pcie_gen <= 0 || pcie_lanes <= 0) return 0;
  // GT/s per lane: gen1 2.5 (8b/10b), gen2 5 (8b/10b), gen3 8, gen4 16, gen5 32, gen6 64 (128b/130b).
  double gts = pcie_gen == 1 ? 2.5 : pcie_gen == 2 ? 5.0 : 8.0;
  for (int g = 3; g < pcie_gen; ++g) gts *= 2;
  double efficiency = pcie_gen <= 2 ? 0.8 : 128.0 / 130.0;
  return gts * 1e9 / 8 * efficiency * pcie_lanes;
}

}  // namespace hwplan
