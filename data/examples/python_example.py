#!/usr/bin/env python3
"""hwplan from Python, notebook style: run each block in a cell, or the whole file.

    cmake --preset default && cmake --build --preset default
    PYTHONPATH=build/python python3 data/examples/python_example.py

(after `cmake --install build`, a plain `import hwplan` works too.)
"""
import hwplan

# 1. One estimate: the same dict as `hwplan estimate ... --format json`.
e = hwplan.estimate(model="llama-2-7b", device="rtx-4090", task="lora", batch=4, seq=1024, recompute="full")
print(f"fits: {e['memory']['fits']}, {e['memory']['per_device_bytes'] / 2**30:.1f} GiB of "
      f"{e['memory']['capacity_bytes'] / 2**30:.1f} GiB, step {e['time']['step_seconds'] * 1e3:.0f} ms, "
      f"{e['time']['tokens_per_second']:.0f} tokens/s (typically within +/-{100 * e['uncertainty']['time_relative_p80']:.0f}%)")

# 2. What would make a 13B full fine-tune fit on that card? Infeasible carries the answer when nothing does.
try:
    f = hwplan.fit(model="llama-2-13b", device="rtx-4090", task="finetune", batch=4, seq=2048)
    print("cheapest changes:", [(c["change"], c["fits"]) for c in f["changes"][:3]])
except hwplan.Infeasible as x:
    print("nothing fits; combined:", x.result.get("combined"))

# 3. Side by side, and the best device to rent for a 70B inference service.
for c in hwplan.compare(model="llama-3-70b", devices=["h100-sxm", "mi300x"], counts=[2, 4], task="infer", batch=16):
    print(f"{c['device']['id']:>10} x{c['device']['count']}: fits {c['memory']['fits']}, "
          f"{c['inference']['decode_tokens_per_second']:.0f} decode tokens/s")
r = hwplan.recommend(model="llama-3-70b", task="infer", batch=8, min_decode_tps=20, rent=True, top=3)
print("recommend:", [(c["device"], c["count"], round(c["cost_usd"])) for c in r["candidates"]])

# 4. A sweep on all cores: a dict of lists runs every combination (here 3 x 3 x 2 = 18 scenarios).
results = hwplan.sweep({"model": ["llama-3-8b"], "device": ["rtx-4090", "l40s", "h100-sxm"],
                        "task": ["lora"], "batch": [1, 4, 8], "seq": [1024, 4096]}, errors="return")
print(len(results), "scenarios")

# 5. As a table, when pandas is installed.
try:
    df = hwplan.to_dataframe(results)
    print(df[["device.id", "plan.micro_batch", "workload.seq", "memory.fits", "time.tokens_per_second"]].head(3).to_string(index=False))
except ImportError as x:
    print(x)

# 6. Serving: the devices that carry 20 requests/s within p95 targets (a seeded simulation of vLLM's scheduler),
#    then the concurrency sweep of two devices as a table.
s = hwplan.serve(model="llama-3-8b", device="h100-sxm", rate=20, prompt=2000, generate=300, ttft_p95=1, tpot_p95=0.05)
print(f"serve: {s['serve']['devices_total']} x h100-sxm (tp={s['serve']['layout']['tp']}), "
      f"p95 TTFT {s['latency']['ttft_seconds']['p95'] * 1e3:.0f} ms, p95 TPOT {s['latency']['tpot_seconds']['p95'] * 1e3:.1f} ms, "
      f"${s['cost']['usd_per_million_output_tokens']:.3f} per million output tokens; bound by {s['serve']['binding_constraint_key']}")
plans = hwplan.sweep({"model": ["llama-3-8b"], "device": ["h100-sxm", "l40s"], "concurrency": [4, 32],
                      "prompt": [1000], "generate": [300], "requests": [500]}, command="serve")
for p in plans:
    print(f"  {p['device']['id']:>9} {p['traffic']['concurrency']:>3.0f} clients: "
          f"{p['throughput']['output_tokens_per_second']:6.0f} output tokens/s, p95 TPOT {p['latency']['tpot_seconds']['p95'] * 1e3:5.1f} ms")

# 7. Owning against renting the 8 GPUs of a 70B service at 30% utilisation, and the purchase price that flips it.
t = hwplan.tco(model="llama-3-70b", device="h100-sxm", count=8, task="infer", batch=32, utilization=0.3)
flips = {f["input"]: f["flips_at"] for f in t["tco"]["sensitivity"]}
print(f"tco: own ${t['tco']['own']['total_usd']:,.0f}, rent ${t['tco']['rent']['total_usd']:,.0f} over "
      f"{t['inputs']['years']:g} years: {t['tco']['cheaper']} is cheaper; break-even utilisation "
      f"{100 * t['tco']['break_even_utilization']:.1f}%; owning wins below ${flips['device_usd']:,.0f} per GPU")

# 8. Bad input raises InputError with the CLI's message.
try:
    hwplan.estimate(model="llama-2-7b", device="rtx-4090x")
except hwplan.InputError as x:
    print("InputError:", x)
