#!/usr/bin/env python3
"""Python module timings: `import hwplan` (fresh interpreter, median of 20), one hwplan.estimate call (median
over 2,000), and hwplan.sweep of 10,000 scenarios (the batch benchmark's mix, median of 3) on 1 and all cores.

    cmake --build --preset default && PYTHONPATH=build/python python3 bench/python_bench.py
"""
import os
import statistics
import subprocess
import sys
import time

import hwplan


def import_seconds(n=20):
    times = []
    for _ in range(n):
        # Time the import alone, inside a fresh interpreter (its own start-up excluded).
        out = subprocess.run([sys.executable, "-c", "import time; t = time.perf_counter(); import hwplan; "
                              "print(time.perf_counter() - t)"], capture_output=True, text=True, env=os.environ, check=True)
        times.append(float(out.stdout))
    return statistics.median(times)


def estimate_seconds(n=2000, **kwargs):
    hwplan.estimate(**kwargs)
    times = []
    for _ in range(n):
        t = time.perf_counter()
        hwplan.estimate(**kwargs)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def scenarios():
    devices = ["t4", "a10", "rtx-4090", "a100-80gb-sxm", "h100-sxm", "l4", "mi300x", "rtx-3090"]
    models = ["gpt2", "llama-2-7b", "bert-large", "mistral-7b", "llama-3-8b"]
    out = []
    for i in range(10000):
        s = dict(model=models[i % 5], device=devices[i % 8], batch=1 + i % 8, seq=512 * (1 + i % 4))
        if i % 3 == 0:
            s["task"] = "infer"
        out.append(s)
    return out


def sweep_seconds(threads, n=3):
    s = scenarios()
    times = []
    for _ in range(n):
        t = time.perf_counter()
        r = hwplan.sweep(s, threads=threads, errors="return")
        times.append(time.perf_counter() - t)
    assert len(r) == 10000
    return statistics.median(times)


rows = [
    ("import hwplan (fresh interpreter, median of 20)", f"{import_seconds() * 1e3:.1f} ms", "< 50 ms"),
    ("hwplan.estimate, llama-2-7b on 1x H100 (median)",
     f"{estimate_seconds(model='llama-2-7b', device='h100-sxm') * 1e6:.0f} us", "< 50 us"),
    ("hwplan.estimate, llama-2-7b lora on an RTX 4090 (median)",
     f"{estimate_seconds(model='llama-2-7b', device='rtx-4090', task='lora', batch=4, seq=1024) * 1e6:.0f} us", ""),
    ("hwplan.sweep, 10,000 scenarios, 1 thread", f"{sweep_seconds(1):.2f} s", ""),
    (f"hwplan.sweep, 10,000 scenarios, all cores ({os.cpu_count()})", f"{sweep_seconds(0):.2f} s", "< 2 s on two cores"),
]
w = max(len(r[0]) for r in rows)
print(f"{'benchmark':<{w}}  {'measured':<12}  target")
print(f"{'-' * w}  {'-' * 12}  {'-' * 18}")
for r in rows:
    print(f"{r[0]:<{w}}  {r[1]:<12}  {r[2]}")
