"""The Python module against the real binary: same documents for the same question, errors as the CLI's."""

import json
import os
import subprocess

import pytest

import hwplan

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BINARY = os.environ.get("HWPLAN_BINARY", os.path.join(ROOT, "build", "hwplan"))


def cli(*args):
    p = subprocess.run([BINARY, *args, "--format", "json"], capture_output=True, text=True, cwd=ROOT)
    return p.returncode, (json.loads(p.stdout) if p.stdout else None), p.stderr


def without_clock(doc):
    """Drops the wall-clock timings (search seconds), which differ from run to run."""
    if isinstance(doc, list):
        return [without_clock(d) for d in doc]
    if isinstance(doc, dict):
        return {k: without_clock(v) for k, v in doc.items() if not (k == "seconds" and isinstance(v, float))}
    return doc


def flags(kwargs):
    out = []
    for k, v in kwargs.items():
        name = "--" + {"device_class": "class"}.get(k, k).replace("_", "-")
        if v is True:
            out.append(name)
        elif isinstance(v, (list, tuple)):
            out += [name, ",".join(str(x) for x in v)]
        else:
            out += [name, str(v)]
    return out


ESTIMATES = [
    dict(model="llama-2-7b", device="rtx-4090", task="lora", batch=4, seq=1024, recompute="full"),
    dict(model="gpt3-175b", device="a100-80gb-sxm", count=1024, global_batch=1536, tokens=3e11),
    dict(model="llama-3-70b", device="h100-sxm", count=4, task="infer", batch=16, prompt=2048, generate=512),
    dict(model="llama-2-70b", device="a100-80gb-sxm", task="infer", weights="int4", batch=8),
    dict(model="llama-3-8b", device="h100-sxm", count=8, seq=8192, global_batch=128, framework="fsdp"),
    dict(model="mixtral-8x7b", device="h100-sxm", count=8, task="infer", engine="vllm", fused_kernels="on"),
    dict(model="7b", device="rtx-3090", task="qlora", seq=2048, no_sequence_parallel=True),
    dict(model="resnet-50", device="a100-80gb-sxm", task="train", precision="fp16", batch=256, memory_format="nhwc"),
    dict(model="llama-2-70b", device="rtx-4090", task="infer", weights="q4_k_m", engine="llamacpp", gpu_layers="auto",
         host_memory_gbps=96),
]


@pytest.mark.parametrize("kwargs", ESTIMATES, ids=lambda k: f"{k['model']}-{k['device']}")
def test_estimate_matches_cli(kwargs):
    code, expected, _ = cli("estimate", *flags(kwargs))
    assert code == 0
    assert without_clock(hwplan.estimate(**kwargs)) == without_clock(expected)


def test_recommend_matches_cli():
    kwargs = dict(model="llama-2-7b", task="lora", budget_usd=3000, buy=True, threads=2)
    code, expected, _ = cli("recommend", *flags(kwargs))
    assert code == 0
    got = hwplan.recommend(**kwargs)
    assert without_clock(got) == without_clock(expected)
    assert got["candidates"][0]["device"] == expected["candidates"][0]["device"]


def test_recommend_with_class_filter_matches_cli():
    kwargs = dict(model="3b", task="infer", weights="int4", device_class="edge", max_power_w=15, prompt=256, generate=128)
    code, expected, _ = cli("recommend", *flags(kwargs))
    assert without_clock(hwplan.recommend(**kwargs)) == without_clock(expected)


def test_fit_matches_cli():
    kwargs = dict(model="llama-2-13b", device="rtx-4090", task="finetune", batch=4, seq=2048)
    code, expected, _ = cli("fit", *flags(kwargs))
    assert code == 0
    assert hwplan.fit(**kwargs) == expected


def test_compare_matches_cli_and_estimate():
    kwargs = dict(model="llama-2-7b", devices=["rtx-4090", "a100-80gb-sxm"], counts=[1, 2], task="lora", batch=4, seq=1024)
    code, expected, _ = cli("compare", *flags(kwargs))
    assert code == 0
    got = hwplan.compare(**kwargs)
    assert without_clock(got) == without_clock(expected)
    assert [(g["device"]["id"], g["device"]["count"]) for g in got] == [
        ("rtx-4090", 1), ("rtx-4090", 2), ("a100-80gb-sxm", 1), ("a100-80gb-sxm", 2)]
    one = hwplan.estimate(model="llama-2-7b", device="a100-80gb-sxm", count=2, task="lora", batch=4, seq=1024)
    # Each configuration is the estimate plus the table's cost and energy rows (comparison).
    last = dict(got[3])
    assert last.pop("comparison")["cost_basis"] in ("rent", "buy")
    assert without_clock(last) == without_clock(one)


def test_catalog_and_models_match_cli():
    assert hwplan.catalog() == cli("catalog", "list")[1]
    assert hwplan.catalog(device_class="consumer") == cli("catalog", "list", "--class", "consumer")[1]
    assert hwplan.device("h100-sxm") == cli("catalog", "show", "h100-sxm")[1]
    assert hwplan.models() == cli("models", "list")[1]
    assert hwplan.model("mixtral-8x7b") == cli("models", "show", "mixtral-8x7b")[1]


def test_schema_version_everywhere():
    assert hwplan.estimate(model="7b", device="h100-sxm")["schema_version"] == 1
    assert hwplan.models()["schema_version"] == 1


@pytest.mark.parametrize("kwargs", [
    dict(model="llama-2-7b", device="rtx-4090x"),
    dict(model="llama-2-7b", device="rtx-4090", task="bogus"),
    dict(model="llama-2-7b", device="rtx-4090", batch="four"),
    dict(model="llama-2-7b", device="rtx-4090", no_such_flag=3),
])
def test_input_error_has_the_cli_message(kwargs):
    code, _, stderr = cli("estimate", *flags(kwargs))
    assert code == 2
    with pytest.raises(hwplan.InputError) as e:
        hwplan.estimate(**kwargs)
    assert stderr.splitlines()[0] == "hwplan: error: " + str(e.value)


def test_infeasible_carries_the_result():
    kwargs = dict(model="llama-2-70b", task="train", device_class="edge", max_count=1)
    code, expected, _ = cli("recommend", *flags(kwargs))
    assert code == 3
    with pytest.raises(hwplan.Infeasible) as e:
        hwplan.recommend(**kwargs)
    assert without_clock(e.value.result) == without_clock(expected)
    assert e.value.result["candidates"] == []


def test_sweep_equals_single_calls_in_order():
    grid = {"model": ["llama-2-7b"], "device": ["rtx-4090", "h100-sxm", "mi300x"], "task": ["lora"], "batch": [1, 4]}
    results = hwplan.sweep(grid, threads=2)
    assert len(results) == 6
    for r, b in zip(results[:2], [1, 4]):
        assert r["device"]["id"] == "rtx-4090"
        assert without_clock(r) == without_clock(hwplan.estimate(model="llama-2-7b", device="rtx-4090", task="lora", batch=b))
    assert without_clock(hwplan.sweep(grid, threads=1)) == without_clock(results)


def test_sweep_errors_in_place():
    out = hwplan.sweep([dict(model="7b", device="h100-sxm"), dict(model="7b", device="nope")], errors="return")
    assert out[0]["model"]["id"]
    assert isinstance(out[1], hwplan.InputError)
    with pytest.raises(hwplan.InputError):
        hwplan.sweep([dict(model="7b", device="nope")])


def test_sweep_mixed_commands():
    out = hwplan.sweep([dict(model="7b", device="h100-sxm", command="fit"), dict(model="7b", device="h100-sxm")])
    assert "changes" in out[0] and "memory" in out[1]


PROFILE = """schema_version: 1
device: NVIDIA H200
catalog_id: h200-sxm
backend: cuda
host: test
date: 2026-12-02
kernel_launch_us: 4
bandwidth:
  - {bytes: 1000000, gb_per_s: 1000}
  - {bytes: 1000000000, gb_per_s: 4200}
gemm:
  bf16:
    - {flops: 2000000000, tflops: 200}
    - {flops: 1000000000000, tflops: 780}
measurements: []
"""


def test_load_profile_and_use_it(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("device: [unclosed\n")
    with pytest.raises(hwplan.InputError) as e:
        hwplan.load_profile(bad)
    assert str(bad) in str(e.value)
    good = tmp_path / "h200.yaml"
    good.write_text(PROFILE)
    p = hwplan.load_profile(good)
    assert p["catalog_id"] == "h200-sxm" and p["gemm_precisions"] == ["bf16"]
    kwargs = dict(model="llama-2-7b", device="h200-sxm", seq=2048)
    code, expected, _ = cli("estimate", *flags(kwargs), "--profile", str(good))
    assert code == 0
    assert hwplan.estimate(profile=p, **kwargs) == expected
    assert hwplan.estimate(profile=p, **kwargs) != hwplan.estimate(**kwargs)


def test_docstrings():
    for f in (hwplan.estimate, hwplan.recommend, hwplan.fit, hwplan.compare, hwplan.catalog, hwplan.models,
              hwplan.load_profile, hwplan.sweep, hwplan.to_dataframe):
        assert f.__doc__ and len(f.__doc__) > 40
    assert hwplan.__version__


def test_to_dataframe():
    pandas = pytest.importorskip("pandas")
    df = hwplan.to_dataframe(hwplan.sweep({"model": ["7b"], "device": ["h100-sxm", "rtx-4090"], "task": ["infer"]}))
    assert isinstance(df, pandas.DataFrame)
    assert list(df["device.id"]) == ["h100-sxm", "rtx-4090"]
    assert (df["inference.decode_tokens_per_second"] > 0).all()


def test_options_do_not_leak_between_calls():
    """The parser is reused between calls: an option given once must not stay set for the next call."""
    base = dict(model="llama-2-7b", device="rtx-4090", task="lora", batch=4, seq=1024)
    first = hwplan.estimate(**base)
    hwplan.estimate(recompute="full", fused_kernels=False, **base)
    assert hwplan.estimate(**base) == first
    assert hwplan.estimate(**base) == cli("estimate", *flags(base))[1]
    a = hwplan.recommend(model="llama-2-7b", task="lora", budget_usd=3000, buy=True, top=2)
    b = hwplan.recommend(model="llama-2-7b", task="lora")
    assert without_clock(b) == without_clock(cli("recommend", "--model", "llama-2-7b", "--task", "lora")[1])
    assert len(a["candidates"]) == 2
    assert hwplan.catalog(vendor="nvidia") != hwplan.catalog()
    assert hwplan.catalog() == cli("catalog", "list")[1]


TRACE = os.path.join(ROOT, "data", "examples", "trace.csv")

SERVES = [
    dict(model="llama-3-8b", device="h100-sxm", rate=20, prompt=2000, generate=300, ttft_p95=1, tpot_p95=0.05, requests=500),
    dict(model="llama-3-8b", device="rtx-4090", concurrency=16, prompt=512, generate=256, engine="sglang"),
    dict(model="llama-2-7b", device="l40s", rate=4, prompt_dist="lognormal:1000:0.8", generate_dist="uniform:50:400",
         weights="int4", ttft_p95=2, requests=400, seed=7),
    dict(model="llama-3-8b", device="a100-80gb-sxm", trace=TRACE, ttft_p95=2, engine="vllm", max_sequences=64),
]


@pytest.mark.parametrize("kwargs", SERVES, ids=lambda k: f"{k['model']}-{k['device']}")
def test_serve_matches_cli(kwargs):
    code, expected, _ = cli("serve", *flags(kwargs))
    assert code == 0
    got = hwplan.serve(**kwargs)
    assert got == expected  # the simulation is deterministic: every number, "seconds" (simulated) included
    assert got["schema_version"] == 1 and got["serve"]["devices_total"] >= 1


def test_serve_infeasible_carries_the_plan():
    kwargs = dict(model="llama-3-8b", device="rtx-4090", rate=5, prompt=2000, generate=300, ttft_p95=0.001, requests=200)
    code, expected, _ = cli("serve", *flags(kwargs))
    assert code == 3
    with pytest.raises(hwplan.Infeasible) as e:
        hwplan.serve(**kwargs)
    assert e.value.result == expected
    assert e.value.result["serve"]["devices_total"] is None


@pytest.mark.parametrize("kwargs", [
    dict(model="llama-3-8b", device="h100-sxm", prompt=512, generate=128),  # no traffic
    dict(model="llama-3-8b", device="h100-sxm", rate=1, concurrency=4),
    dict(model="llama-3-8b", device="h100-sxm", rate=1, batch=8),
    dict(model="llama-3-8b", device="h100-sxm", rate=1, engine="bogus"),
    dict(model="llama-3-8b", device="h100-sxm", trace="/nonexistent/trace.csv"),
])
def test_serve_input_errors_have_the_cli_message(kwargs):
    code, _, stderr = cli("serve", *flags(kwargs))
    assert code == 2
    with pytest.raises(hwplan.InputError) as e:
        hwplan.serve(**kwargs)
    assert stderr.splitlines()[0] == "hwplan: error: " + str(e.value)


def test_serve_switches_take_bools_as_every_on_off_flag_does():
    base = dict(model="llama-3-8b", device="h100-sxm", rate=2, prompt=2000, generate=100, requests=100)
    assert hwplan.serve(**base, chunked_prefill=False) == hwplan.serve(**base, chunked_prefill="off")
    assert hwplan.serve(**base, separate_prefill=True) == hwplan.serve(**base, separate_prefill="on")
    assert hwplan.serve(**base, chunked_prefill=False) != hwplan.serve(**base, chunked_prefill=True)


TCOS = [
    dict(model="llama-3-70b", device="h100-sxm", count=8, task="infer", batch=32, utilization=0.3),
    dict(model="llama-2-7b", device="rtx-4090", task="lora", batch=1, seq=1024, recompute="full", tokens="1e8", years=2),
    dict(model="7B", device="mi300x", count=2, task="infer", batch=16, rent_usd_per_hour=1.5, usd_per_kwh=0.25),
    dict(model="llama-2-7b", device="rtx-3090", used=True, task="lora", batch=1, recompute="full", tokens="1e8", jobs=50),
    dict(model="llama-3-8b", device="a100-80gb-sxm", count=8, seq=4096, tokens="2e9", rent="reserved", pue=1.3, resale=0.2),
]


@pytest.mark.parametrize("kwargs", TCOS, ids=lambda k: f"{k['model']}-{k['device']}")
def test_tco_matches_cli(kwargs):
    code, expected, _ = cli("tco", *flags(kwargs))
    assert code == 0
    got = hwplan.tco(**kwargs)
    assert without_clock(got) == without_clock(expected)
    assert got["tco"]["own"]["total_usd"] > 0 and got["inputs"]["device"] == kwargs["device"]


def test_tco_does_not_fit_is_infeasible():
    kwargs = dict(model="llama-3-70b", device="rtx-4090", task="infer")
    code, expected, stderr = cli("tco", *flags(kwargs))
    assert code == 3 and expected is None
    with pytest.raises(hwplan.Infeasible) as e:
        hwplan.tco(**kwargs)
    assert e.value.result is None
    assert stderr.splitlines()[-1] == "hwplan: nothing feasible: " + str(e.value)


@pytest.mark.parametrize("kwargs", [
    dict(model="7B", device="mi250x", task="infer"),  # no price in the catalog
    dict(model="7B", device="rtx-4090", task="infer", utilization=1.5),
    dict(model="7B", device="rtx-4090", task="infer", rent="spot"),
    dict(model="7B", device="rtx-4090", task="infer", years=0),
    dict(model="7B", device="rtx-4090", task="infer", jobs=1e9),  # more jobs than the horizon holds
])
def test_tco_input_errors_have_the_cli_message(kwargs):
    code, _, stderr = cli("tco", *flags(kwargs))
    assert code == 2
    with pytest.raises(hwplan.InputError) as e:
        hwplan.tco(**kwargs)
    assert stderr.splitlines()[0] == "hwplan: error: " + str(e.value)


def test_recommend_serve_matches_cli():
    kwargs = dict(model="llama-3-8b", task="serve", rate=50, prompt=2000, generate=300, ttft_p95=1, tpot_p95=0.05,
                  device_class="datacenter", requests=200, threads=2)
    code, expected, _ = cli("recommend", *flags(kwargs))
    assert code == 0
    got = hwplan.recommend(**kwargs)
    assert got == expected
    assert got["task"] == "serve" and got["candidates"]


def test_serve_and_tco_options_do_not_leak_between_calls():
    base = dict(model="llama-3-8b", device="rtx-4090", concurrency=8, prompt=512, generate=128, requests=200)
    first = hwplan.serve(**base)
    hwplan.serve(engine="sglang", max_sequences=4, seed=3, **base)
    assert hwplan.serve(**base) == first == cli("serve", *flags(base))[1]
    t = dict(model="7B", device="rtx-4090", task="infer", batch=4)
    plain = hwplan.tco(**t)
    hwplan.tco(used=True, years=5, usd_per_kwh=0.4, rent_usd_per_hour=0.2, **t)
    assert without_clock(hwplan.tco(**t)) == without_clock(plain)
    hwplan.recommend(model="llama-3-8b", task="serve", rate=5, prompt=256, generate=64, ttft_p95=2, requests=100,
                     device_class="consumer")
    assert without_clock(hwplan.recommend(model="llama-2-7b", task="lora")) == without_clock(
        cli("recommend", "--model", "llama-2-7b", "--task", "lora")[1])


def test_sweep_runs_serve_and_tco():
    grid = {"model": ["llama-3-8b"], "device": ["h100-sxm", "l40s"], "concurrency": [4, 16], "prompt": [512],
            "generate": [128], "requests": [200]}
    out = hwplan.sweep(grid, command="serve", threads=2)
    assert len(out) == 4
    assert out[3] == hwplan.serve(model="llama-3-8b", device="l40s", concurrency=16, prompt=512, generate=128, requests=200)
    assert hwplan.sweep(grid, command="serve", threads=1) == out
    mixed = hwplan.sweep([dict(command="tco", model="7B", device="rtx-4090", task="infer", batch=4),
                          dict(command="tco", model="llama-3-70b", device="rtx-4090", task="infer")], errors="return")
    assert mixed[0]["tco"]["own"]["total_usd"] > 0
    assert isinstance(mixed[1], hwplan.Infeasible)


def test_serve_and_tco_docstrings():
    for f in (hwplan.serve, hwplan.tco):
        assert f.__doc__ and len(f.__doc__) > 200


def test_assumptions_listed_set_and_restored():
    names = {a["name"]: a for a in hwplan.assumptions()}
    assert "bandwidth_efficiency" in names and names["bandwidth_efficiency"]["source"]
    base = hwplan.estimate("llama-2-7b", "h100-sxm", task="infer", batch=1)
    try:
        hwplan.set_assumptions({"bandwidth_efficiency": 0.425})
        slow = hwplan.estimate("llama-2-7b", "h100-sxm", task="infer", batch=1)
        assert slow["inference"]["time_per_output_token_seconds"] > 1.5 * base["inference"]["time_per_output_token_seconds"]
        assert any("bandwidth_efficiency 0.425" in w for w in slow["warnings"])
        with pytest.raises(hwplan.InputError):
            hwplan.set_assumptions({"bandwith_efficiency": 0.5})
        with pytest.raises(hwplan.InputError):
            hwplan.set_assumptions({"bandwidth_efficiency": 7})
    finally:
        hwplan.set_assumptions()
    again = hwplan.estimate("llama-2-7b", "h100-sxm", task="infer", batch=1)
    assert again["inference"]["time_per_output_token_seconds"] == pytest.approx(base["inference"]["time_per_output_token_seconds"])


def test_cnn_memory_format_is_an_input():
    """channels_last skips the transposes around each tensor-core convolution: faster, and the stack says so."""
    common = dict(model="resnet-50", device="a100-80gb-sxm", task="train", precision="fp16", batch=256)
    nchw = hwplan.estimate(**common)
    nhwc = hwplan.estimate(memory_format="nhwc", **common)
    assert nchw["stack"]["memory_format"] == "nchw" and nhwc["stack"]["memory_format"] == "nhwc"
    assert nhwc["time"]["samples_per_second"] > 1.2 * nchw["time"]["samples_per_second"]
    assert any("NCHW" in n for n in nchw["notes"]) and not any("NCHW" in n for n in nhwc["notes"])


def test_estimate_deadline_searches_the_count_as_the_command_line_does():
    r = hwplan.estimate("llama-2-7b", "h100-sxm", tokens=1e11, deadline="60d")
    cli = hwplan.run("estimate", model="llama-2-7b", device="h100-sxm", tokens=1e11, deadline="60d")
    assert r["deadline"]["smallest_count"] == cli["deadline"]["smallest_count"] >= 1


def test_hwplan_assumptions_applies_to_the_module_as_to_the_command_line():
    import sys
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, HWPLAN_ASSUMPTIONS=os.path.join(root, "data", "examples", "assumptions.yaml"))
    code = ("import json, hwplan; r = hwplan.estimate('llama-2-7b', 'h100-sxm', count=16); "
            "print(json.dumps([r['time']['step_seconds'], r['warnings']]))")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    step, warnings = json.loads(out)
    plain = hwplan.estimate("llama-2-7b", "h100-sxm", count=16)
    assert any("assumptions overridden" in w for w in warnings)
    assert step != plain["time"]["step_seconds"]
