#include "report/plots.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/units.hpp"
#include "estimators/efficiency.hpp"
#include "estimators/estimate.hpp"
#include "estimators/inference.hpp"
#include "estimators/memory.hpp"
#include "estimators/operators.hpp"
#include "estimators/training.hpp"
#include "serve/capacity.hpp"

namespace hwplan::report {

RooflineChart roofline_chart(const EstimateInput& in, const std::string& task) {
  const Device& d = *in.device;
  // The GEMMs' precision as the estimate takes it: inference runs in the weights' compute format (fp8 weights, fp8
  // GEMMs; int8 weights on an int8 engine).
  const Precision compute = in.workload.task == Task::kInfer ? inference_compute_precision(in.workload) : in.workload.precision;
  RooflineChart chart;
  // The title names what runs: a precision the device lacks falls back as the estimate's (fp8 on an A100: bf16).
  chart.title = fmt::format("{}: {} {} ({})", d.name, in.model->id, task, to_string(effective_precision(d, compute).effective));
  // The roof the estimators time traffic against (a device that streams its parameters lists its host link as its
  // bandwidth; its on-chip traffic runs at the stand-in efficiency.cpp's device_rates gives it).
  chart.bandwidth_bytes_per_s = device_rates(d, compute, nullptr).bandwidth;
  if (d.streams_parameters()) chart.bandwidth_name = "on-chip stand-in";  // 1 byte per op: efficiency.cpp
  // A catalog's measured streaming rate (the Neural Engine's port): the memory's peak is the roof, the measured rate
  // the line the estimates run at (a calibration profile's below replaces it).
  if (d.measured_bandwidth_bytes_per_s && !d.streams_parameters()) {
    chart.bandwidth_bytes_per_s = d.memory_bandwidth_bytes_per_s;
    chart.measured_bandwidth_bytes_per_s = *d.measured_bandwidth_bytes_per_s;
  }
  for (Precision p : {Precision::kFp32, Precision::kTf32, Precision::kBf16, Precision::kFp16, Precision::kFp8,
                      Precision::kInt8}) {
    if (!d.supports(p)) continue;
    // The int8 roof where int8 is what runs (integer-only NPUs, int8 engines).
    if (p == Precision::kInt8 && effective_precision(d, compute).effective != Precision::kInt8) continue;
    if (p == Precision::kFp16 && d.supports(Precision::kBf16) && d.peak(p) == d.peak(Precision::kBf16)) continue;
    chart.ceilings.push_back({fmt::format("{} peak {:.0f} TFLOP/s", to_string(p), d.peak(p) / kTera), d.peak(p)});
    auto m = d.measured_matmul_flops.find(p);
    if (m != d.measured_matmul_flops.end())
      chart.ceilings.push_back({fmt::format("{} measured {:.0f} TFLOP/s", to_string(p), m->second / kTera), m->second});
    else if (p == Precision::kBf16 || (p == Precision::kFp16 && !d.supports(Precision::kBf16)))
      if (d.sibling_matmul_fraction > 0) {
        const double rate = std::min(1.0, d.sibling_matmul_fraction) * d.peak(p);
        chart.ceilings.push_back({fmt::format("{} from {} {:.0f} TFLOP/s", to_string(p), d.sibling_matmul_reference, rate / kTera), rate});
      }
  }
  if (d.fp32_matrix_flops) chart.ceilings.push_back({fmt::format("fp32 matrix {:.0f} TFLOP/s", *d.fp32_matrix_flops / kTera), *d.fp32_matrix_flops});
  if (in.profile) {
    // The memory roof is what streaming from device memory sustains: the best of the largest sizes measured (the
    // last two octaves), never a smaller size that stays in a cache (an H200's 32 MiB copy runs from its L2 at
    // 6.3 TB/s, over the HBM's 4.8 TB/s peak).
    double largest = 0, best_bw = 0;
    for (const auto& c : in.profile->bandwidth) largest = std::max(largest, c.size);
    for (const auto& c : in.profile->bandwidth)
      if (c.size >= largest / 4) best_bw = std::max(best_bw, c.achieved);
    chart.measured_bandwidth_bytes_per_s = best_bw;
    for (const auto& [p, curve] : in.profile->gemm) {
      double best = 0;
      for (const auto& c : curve) best = std::max(best, c.achieved);
      if (best > 0) chart.ceilings.push_back({fmt::format("{} profile {:.1f} TFLOP/s", to_string(p), best / kTera), best});
    }
  }
  // A transformer's layer and head operators; a CNN's listed convolutions as one point (FLOPs over their own traffic).
  const bool transformer = in.model->is_transformer();
  if (!transformer && in.model->convolutions.empty()) return chart;
  const bool infer = in.workload.task == Task::kInfer;
  // An inference at the rates the estimate prices it at (inference_rates: no launch floors in an NPU graph).
  const DeviceRates rates = infer ? inference_rates(in) : device_rates(d, compute, in.profile);
  LayerShape s = training_shape(in);
  // fp8 training keeps the attention core in bf16, as the training estimate prices it.
  const std::optional<DeviceRates> sixteen = sixteen_bit_rates(in);
  if (sixteen && in.workload.task != Task::kInfer) s.attention_rates = &*sixteen;
  if (infer) {
    s.training = false;
    s.seq = static_cast<double>(std::max<std::int64_t>(1, in.workload.prompt));
    // As the inference estimate prices a CNN: 8-bit tensors between an 8-bit engine's layers.
    if (!transformer) s.activation_bytes = generic_inference_activation_bytes(in.workload);
  }
  std::vector<OpRecord> ops;
  if (transformer) {
    layer_cost(s, rates, &ops);
    head_cost(s, rates, &ops);
  } else {
    generic_cost(s, rates, &ops);
  }
  for (const auto& op : ops) {
    if (op.forward_flops <= 0 || op.forward_bytes <= 0 || op.forward_seconds <= 0) continue;
    chart.points.push_back({op.name, op.forward_flops / op.forward_bytes, op.forward_flops / op.forward_seconds});
  }
  // The operators above are the prefill's (the prompt's tokens at once). Generation is a different regime: one
  // decode step reads every weight and the KV cache for one token per sequence, drawn as one point at the rate the
  // estimate's decode step achieves (its whole device time, communication included).
  if (in.workload.task == Task::kInfer && !one_forward_pass(*in.model, in.workload.generate)) {
    const Estimate e = estimate(in);
    const InferenceTime& t = e.infer;
    const double flops = 2 * e.params.active / std::max(1, e.plan.tp * e.plan.pp) * static_cast<double>(e.plan.micro_batch);
    const double bytes = t.decode_weight_bytes + t.decode_kv_bytes;
    // A device runs its own stage of the step: the stages take their turns within decode_gpu_seconds.
    const double device_seconds = t.decode_gpu_seconds / std::max(1, e.plan.pp);
    if (flops > 0 && bytes > 0 && device_seconds > 0)
      chart.points.push_back({fmt::format("decode step (batch {})", e.plan.micro_batch), flops / bytes, flops / device_seconds});
  }
  return chart;
}

MemoryBar memory_bar(const std::string& label, const Estimate& e) {
  const MemoryBreakdown& m = e.memory;
  return {label, e.capacity_bytes,
          {{"weights", m.weights}, {"gradients", m.gradients}, {"optimizer", m.optimizer}, {"activations", m.activations},
           {"KV cache", m.kv_cache}, {"runtime", m.runtime()}}};
}

std::optional<LatencySeries> serve_latency_series(const std::vector<const EstimateInput*>& layouts,
                                                  const serve::ServeQuestion& q, const serve::ServeAnswer& a,
                                                  const std::string& label) {
  std::optional<size_t> pick = a.chosen;
  for (size_t i = 0; !pick && i < a.layouts.size(); ++i)
    if (a.layouts[i].fits) pick = i;
  if (!pick) return std::nullopt;
  const serve::LayoutOption& l = a.layouts[*pick];
  serve::Replica r{layouts[*pick], q.engine, l.kv, q.overhead_seconds};
  const bool closed = q.load.closed_loop;
  // The sweep ends past the knee, or past the saturated throughput when no targets were given.
  double top = l.capacity.max_load.value_or(0) * 1.6;
  if (!(top > 0)) {
    double clients = std::max<double>(1, std::min<double>(static_cast<double>(q.engine.max_sequences), static_cast<double>(l.kv.max_sequences)));
    // Open loop: past the rate the replica sustains saturated, as serve finds it (its pipeline stages included).
    top = closed ? 2 * clients : 1.3 * serve::saturation_run(r, q.traffic).requests_per_second;
  }
  if (!(top > 0)) top = closed ? 8 : 1;
  LatencySeries s;
  s.label = label + " " + serve::layout_name(l.tp, l.pp);
  s.knee_load = l.capacity.max_load.value_or(0);
  constexpr int kPoints = 16;
  for (int i = 1; i <= kPoints; ++i) {
    double load = top * i / kPoints;
    if (closed) load = std::max(1.0, std::round(load));
    serve::SimResult sim = serve::simulate_replica(r, q.traffic, {closed, load});
    if (sim.unservable) continue;
    // The percentile the targets name (p99 where one is given), as the knee was found against it.
    s.points.push_back({load, q.targets.ttft_p99 ? sim.ttft.p99 : sim.ttft.p95, q.targets.tpot_p99 ? sim.tpot.p99 : sim.tpot.p95});
  }
  return s;
}

LatencyChart serve_latency_chart(const std::string& model_id, std::vector<LatencySeries> series, const serve::ServeQuestion& q) {
  LatencyChart chart;
  chart.ttft_percentile = q.targets.ttft_p99 ? 99 : 95;
  chart.tpot_percentile = q.targets.tpot_p99 ? 99 : 95;
  chart.title = fmt::format("{} ({}): {} latency against load per replica", model_id, q.engine.preset,
                            chart.ttft_percentile == chart.tpot_percentile ? fmt::format("p{}", chart.ttft_percentile)
                                                                           : std::string("tail"));
  if (q.load.closed_loop) chart.load_label = "Concurrent clients per replica";
  chart.series = std::move(series);
  // The targets the panels' percentiles answer to (both a p95 and a p99 target: the p99 one is drawn).
  chart.ttft_target_seconds = q.targets.ttft_p99 ? *q.targets.ttft_p99 : q.targets.ttft_p95.value_or(0);
  chart.tpot_target_seconds = q.targets.tpot_p99 ? *q.targets.tpot_p99 : q.targets.tpot_p95.value_or(0);
  return chart;
}

}  // namespace hwplan::report
