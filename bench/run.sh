#!/usr/bin/env bash
# Performance benchmarks: Google Benchmark micro-benchmarks of the estimators (one core), plus end-to-end
# process timings of `hwplan estimate` and of a 10,000-scenario batch. Prints a table.
#   bash bench/run.sh
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh libbenchmark-dev
cmake --preset default -DHWPLAN_BUILD_BENCH=ON >/dev/null
cmake --build --preset default -j"$(nproc)" >/dev/null
out=$(mktemp -d)
taskset -c 0 ./build/hwplan_bench --benchmark_format=json --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
  >"$out/bench.json"
taskset -c 0 ./build/hwplan_serve_bench --benchmark_format=json --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
  >"$out/serve.json"

# End to end: the estimate process (start-up, built-in catalog, output), median of 50 runs on one core.
python3 - "$out" <<'PY'
import json, subprocess, sys, time, statistics, os
out = sys.argv[1]
def run(cmd, n):
    times = []
    for _ in range(n):
        t = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - t)
    return statistics.median(times)
est = run(["taskset", "-c", "0", "./build/hwplan", "estimate", "--model", "llama-2-7b", "--device", "h100-sxm"], 50)
devices = ["t4", "a10", "rtx-4090", "a100-80gb-sxm", "h100-sxm", "l4", "mi300x", "rtx-3090"]
models = ["gpt2", "llama-2-7b", "bert-large", "mistral-7b", "llama-3-8b"]
with open(os.path.join(out, "batch.yaml"), "w") as f:
    f.write("scenarios:\n")
    for i in range(10000):
        extra = ", task: infer" if i % 3 == 0 else ""
        f.write(f"  - {{name: s{i}, model: {models[i % 5]}, device: {devices[i % 8]}, batch: {1 + i % 8}, seq: {512 * (1 + i % 4)}{extra}}}\n")
batch1 = run(["taskset", "-c", "0", "./build/hwplan", "batch", os.path.join(out, "batch.yaml"), "--format", "csv", "--threads", "1"], 3)
batch2 = run(["./build/hwplan", "batch", os.path.join(out, "batch.yaml"), "--format", "csv"], 3)
rec = run(["taskset", "-c", "0", "./build/hwplan", "recommend", "--model", "llama-2-7b", "--task", "lora", "--threads", "1"], 5)
b = {x["run_name"]: x for f in ("bench.json", "serve.json")
     for x in json.load(open(os.path.join(out, f)))["benchmarks"] if x.get("aggregate_name") == "median"}
def t(name, unit_scale):
    x = b[name]
    scale = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1}[x["time_unit"]]
    return x["cpu_time"] * scale / unit_scale
rows = [
    ("one training estimate (llama-2-7b, H100)", f"{t('BM_TrainingEstimate', 1e-6):.2f} us", "< 10 us"),
    ("one inference estimate (llama-3-70b, 4x H100)", f"{t('BM_InferenceEstimate', 1e-6):.2f} us", "< 10 us"),
    ("layout search, 1T model on 3,072 A100 (pruned)", f"{t('BM_LayoutSearch1T3072/1', 1e-3):.2f} ms, {b['BM_LayoutSearch1T3072/1']['layouts_per_s']/1e6:.1f} M layouts/s", "< 1 s, >= 1 M layouts/s"),
    ("layout search, same space, exhaustive", f"{t('BM_LayoutSearch1T3072/0', 1e-3):.2f} ms, {b['BM_LayoutSearch1T3072/0']['layouts_per_s']/1e6:.1f} M layouts/s", ""),
    ("recommend over the catalog (in process)", f"{t('BM_RecommendCatalog', 1e-3):.1f} ms", "< 50 ms"),
    ("recommend over the catalog (whole process, 1 thread)", f"{rec*1e3:.1f} ms", ""),
    ("10,000-scenario batch (in process)", f"{t('BM_Batch10k', 1):.2f} s", ""),
    ("10,000-scenario batch (whole process, 1 thread)", f"{batch1:.2f} s", "< 2 s"),
    ("10,000-scenario batch (whole process, all cores)", f"{batch2:.2f} s", ""),
    ("hwplan estimate process (median of 50)", f"{est*1e3:.1f} ms", "< 20 ms"),
    ("serve: 100,000 requests simulated (llama-3-8b, H100)", f"{t('BM_Simulate100k', 1e-3):.0f} ms", "<= 500 ms"),
    ("serve: one device's capacity search (tp 1-8)", f"{t('BM_CapacitySearchOneDevice', 1e-3):.0f} ms", "<= 1 s"),
    ("GGUF header of a sparse 40 GB file (llama-70b-shaped)", f"{t('BM_Gguf40GbHeader', 1e-3):.2f} ms", "< 10 ms"),
]
w = max(len(r[0]) for r in rows)
print(f"{'benchmark':<{w}}  {'measured':<36}  target")
print(f"{'-'*w}  {'-'*36}  {'-'*24}")
for r in rows:
    print(f"{r[0]:<{w}}  {r[1]:<36}  {r[2]}")
PY
rm -rf "$out"
