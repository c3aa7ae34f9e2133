#include "core/workload_options.hpp"

namespace hwplan {

const std::vector<WorkloadOptionName>& workload_option_names() {
  static const std::vector<WorkloadOptionName> names = {
      // Model and workload.
      {"--model", "model"}, {"--task", "task"}, {"--precision", "precision"}, {"--weights", "weights"},
      {"--batch", "batch"}, {"--seq", "seq"}, {"--sample-tokens", "sample_tokens"}, {"--grad-accum", "grad_accum"}, {"--global-batch", "global_batch"},
      {"--tokens", "tokens"}, {"--optimizer", "optimizer"}, {"--lora-rank", "lora_rank"},
      {"--lora-targets", "lora_targets"}, {"--lm-head", "lm_head"}, {"--prompt", "prompt"}, {"--generate", "generate"}, {"--kv-cache", "kv_cache"},
      {"--gpu-layers", "gpu_layers"},
      // System.
      {"--device", "device"}, {"--count", "count"}, {"--devices-per-node", "devices_per_node"},
      {"--network-gbps", "network_gbps"}, {"--profile", "profile"}, {"--headroom", "headroom"},
      {"--host-memory-gbps", "host_memory_gbps"}, {"--host-tflops", "host_tflops"},
      // Parallelism and memory savings.
      {"--tp", "tp"}, {"--cp", "cp"}, {"--pp", "pp"}, {"--dp", "dp"}, {"--ep", "ep"}, {"--vp", "vp"}, {"--zero", "zero"},
      {"--shard-group", "shard_group"}, {"--recompute", "recompute"},
      {"--recompute-layers", "recompute_layers"}, {"--offload", "offload"},
      {"--no-sequence-parallel", "sequence_parallel"}, {"--no-overlap-grad-reduce", "overlap_grad_reduce"},
      // Software stack.
      {"--attention", "attention"}, {"--framework", "framework"}, {"--engine", "engine"},
      {"--master-weights", "master_weights"}, {"--fused-kernels", "fused_kernels"}, {"--cuda-graphs", "cuda_graphs"},
      {"--chunked-loss", "chunked_loss"}, {"--optimizer-in-backward", "optimizer_in_backward"},
      {"--activation-offload", "activation_offload"}, {"--paged-optimizer", "paged_optimizer"},
      {"--native-attention", "native_attention"}, {"--autocast", "autocast"},
      {"--persistent-grads", "persistent_grads"}, {"--foreach-optimizer", "foreach_optimizer"},
      {"--fused-optimizer", "fused_optimizer"}, {"--clip-grad-norm", "clip_grad_norm"},
      {"--fp8-head", "fp8_head"}, {"--fp32-grads", "fp32_grads"},
      {"--fp32-reduce", "fp32_reduce"}, {"--defer-grad-sync", "defer_grad_sync"},
      {"--loss-parallel", "loss_parallel"},
      {"--overlap-scheduling", "overlap_scheduling"}, {"--overlap-p2p", "overlap_p2p"},
      {"--quantized-head", "quantized_head"},
      {"--quantized-embedding", "quantized_embedding"}, {"--embedding-on-host", "embedding_on_host"},
      {"--custom-allreduce", "custom_allreduce"}, {"--gather-copy-out", "gather_copy_out"},
      {"--zero3-live-params", "zero3_live_params"}, {"--host-kernel-us", "host_kernel_us"},
      {"--memory-metric", "memory_metric"}, {"--memory-format", "memory_format"}};
  return names;
}

}  // namespace hwplan
