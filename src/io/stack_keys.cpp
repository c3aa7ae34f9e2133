#include "io/stack_keys.hpp"

namespace hwplan::io {

void read_stack_keys(YamlMap& m, WorkloadSpec& w) {
  auto text = [&](const char* key, std::optional<std::string>& into) {
    if (auto v = m.str(key, false)) into = *v;
  };
  auto flag = [&](const char* key, std::optional<bool>& into) {
    if (auto v = m.boolean(key, false)) into = *v;
  };
  text("framework", w.framework);
  text("engine", w.engine);
  text("master_weights", w.master_weights);
  flag("fused_kernels", w.fused_kernels);
  flag("cuda_graphs", w.cuda_graphs);
  flag("chunked_loss", w.chunked_loss);
  flag("optimizer_in_backward", w.optimizer_in_backward);
  flag("activation_offload", w.activation_offload);
  flag("paged_optimizer", w.paged_optimizer);
  flag("native_attention", w.native_attention);
  flag("autocast", w.autocast);
  flag("persistent_grads", w.persistent_grads);
  flag("foreach_optimizer", w.foreach_optimizer);
  flag("fused_optimizer", w.fused_optimizer);
  flag("clip_grad_norm", w.clip_grad_norm);
  flag("fp8_head", w.fp8_head);
  flag("fp32_grads", w.fp32_grads);
  flag("fp32_reduce", w.fp32_reduce);
  flag("defer_grad_sync", w.defer_grad_sync);
  flag("loss_parallel", w.loss_parallel);
  flag("overlap_scheduling", w.overlap_scheduling);
  flag("overlap_p2p", w.overlap_p2p);
  flag("quantized_head", w.quantized_head);
  flag("quantized_embedding", w.quantized_embedding);
  flag("embedding_on_host", w.embedding_on_host);
  flag("custom_allreduce", w.custom_allreduce);
  flag("gather_copy_out", w.gather_copy_out);
  if (auto v = m.number("zero3_live_params", false, 0, 1e13, false)) w.zero3_live_params = *v;
  if (auto v = m.number("host_kernel_us", false, 0, 1e4, false)) w.host_kernel_us = *v;
  text("memory_metric", w.memory_metric);
  text("memory_format", w.memory_format);
}

}  // namespace hwplan::io
