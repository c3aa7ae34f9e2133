"""hwplan: plan deep-learning hardware (will it fit, how long, how fast, what it costs) from Python.

Every function runs the same C++ code as the ``hwplan`` command line and returns the document that
``hwplan <command> ... --format json`` prints, as plain dicts and lists: same keys, same numbers.
Keyword arguments are the CLI's flags in snake_case (``--grad-accum 4`` is ``grad_accum=4``,
``--fused-kernels on`` is ``fused_kernels=True``, ``--class consumer`` is ``device_class="consumer"``).

    >>> import hwplan
    >>> r = hwplan.estimate(model="llama-2-7b", device="rtx-4090", task="lora", batch=4, seq=1024)
    >>> r["memory"]["fits"], r["time"]["step_seconds"]

Bad input raises :class:`InputError` with the CLI's message; a question with no feasible answer
(``recommend`` finds no device, ``fit`` no change, ``serve`` no layout within the targets, ``tco`` a workload
that does not fit) raises :class:`Infeasible`, which carries the result when the CLI prints one.
The C++ code runs without the GIL; :func:`sweep` runs many scenarios on all cores.
"""

import itertools as _itertools

from . import _native

__version__ = _native.version
__all__ = ["estimate", "recommend", "fit", "compare", "serve", "tco", "catalog", "device", "models", "model", "load_profile",
           "set_assumptions", "assumptions", "sweep", "to_dataframe", "run", "InputError", "Infeasible", "HwplanError"]


class HwplanError(Exception):
    """Base class of hwplan's errors."""


class InputError(HwplanError, ValueError):
    """Bad input: an unknown model or device, a bad value, a wrong combination. The message is the CLI's."""


class Infeasible(HwplanError):
    """Nothing feasible (the CLI's exit code 3). ``result`` holds the full answer (rejections, nearest misses),
    or None where the CLI prints none (``tco`` of a workload that does not fit: the message says why)."""

    def __init__(self, message, result):
        super().__init__(message)
        self.result = result


# Python names that cannot be the flag's own spelling.
_ALIASES = {"device_class": "class", "class_": "class"}


def _value(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, dict) and "path" in v:  # a load_profile() result
        return str(v["path"])
    return str(v)


def _options(kwargs):
    out = []
    for name, value in kwargs.items():
        if value is None:
            continue
        name = _ALIASES.get(name, name)
        if isinstance(value, (list, tuple)):
            out.extend((name, _value(v)) for v in value)
        else:
            out.append((name, _value(value)))
    return out


def _check(command, outcome):
    result, exit_code, error, input_error = outcome
    if error is not None:
        if exit_code == 3:
            raise Infeasible(error, result)
        raise (InputError if input_error else HwplanError)(error)
    if exit_code == 3:
        raise Infeasible(f"hwplan {command}: nothing feasible", result)
    return result


def run(command, **options):
    """Runs any command the facade offers (``"estimate"``, ``"catalog show"``, ...) with CLI options.

    ``run("catalog show", ...)`` takes the id as part of the command: ``run("catalog show h100-sxm")``.
    """
    return _check(command, _native.run(command, _options(options)))


def estimate(model, device, count=None, task="train", **workload):
    """Memory and time of one workload on ``count`` devices (default 1): ``hwplan estimate --format json``.

    ``deadline="30d"`` with ``tokens=`` searches the count instead (leave ``count`` out), as ``--deadline`` does.

    model: zoo id (see :func:`models`), a YAML path, or a size such as ``"7B"``.
    device: catalog id, alias or driver name (see :func:`catalog`).
    task: ``train``, ``finetune``, ``lora``, ``qlora`` or ``infer``.
    workload: the other flags of ``hwplan estimate --help`` in snake_case, e.g. ``precision="bf16"``,
    ``batch=4``, ``seq=2048``, ``sample_tokens="lognormal:300:0.8"`` (unpacked samples, padded per micro-batch),
    ``grad_accum=8``, ``global_batch=512``, ``tokens=2e10``, ``tp=``, ``pp=``,
    ``dp=``, ``zero=3``, ``recompute="full"``, ``weights="int4"``, ``prompt=``, ``generate=``, ``kv_cache=``,
    ``framework="fsdp"``, ``engine="vllm"``, ``fused_kernels=True``, ``profile=load_profile(path)``.

    Returns the estimate as a dict (``memory``, ``time`` or ``inference``, ``plan``, ``uncertainty``,
    ``notes``, ``warnings``, ...). A workload that does not fit is a normal result (``memory.fits`` false).
    """
    return run("estimate", model=model, device=device, count=count, task=task, **workload)


def recommend(model, task="train", **options):
    """Which hardware to buy or rent, ranked and explained: ``hwplan recommend --format json``.

    options: the workload flags of :func:`estimate` and the constraints ``budget_usd=``, ``max_count=``,
    ``max_power_w=``, ``deadline="7d"``, ``buy=True`` / ``rent=True``, ``device_class="consumer"``,
    ``vendor=``, ``exclude=[...]``, ``require_interconnect=True``, ``top=5``, ``optimize="cost"``,
    ``min_decode_tps=``, ``threads=`` (results do not depend on it).

    Raises :class:`Infeasible` (with ``.result``: rejections and nearest misses) when no device qualifies.
    """
    return run("recommend", model=model, task=task, **options)


def fit(model, device, count=1, task="train", **workload):
    """Why a workload does not fit, and the cheapest changes that make it fit: ``hwplan fit --format json``.

    Takes the arguments of :func:`estimate`. Raises :class:`Infeasible` when no change (nor all of them
    together) makes it fit; ``.result`` holds the changes tried.
    """
    return run("fit", model=model, device=device, count=count, task=task, **workload)


def compare(model, devices, counts=None, task="train", **workload):
    """The same workload on several devices side by side: ``hwplan compare --format json``.

    devices: a list of device ids; counts: device counts to try on each (default: ``count``, 1).
    Returns a list of estimates, each shaped as :func:`estimate`'s result plus a ``comparison`` dict (the table's
    ``cost_usd``, ``cost_basis`` and ``energy_kwh``), devices outer, counts inner.
    """
    return run("compare", model=model, devices=list(devices), counts=None if counts is None else list(counts),
               task=task, **workload)


def serve(model, device, **options):
    """Serving capacity: the devices (replicas x tensor-parallel layout) that carry a traffic within latency
    targets, from a simulation of the engine's scheduler: ``hwplan serve --format json``.

    traffic: ``rate=`` requests/s (open loop; ``arrival="gamma"``, ``burstiness=`` CV), ``concurrency=`` clients
    (closed loop) or ``trace=`` a CSV/JSONL file; ``prompt=``, ``generate=`` tokens (or ``prompt_dist=``,
    ``generate_dist=`` such as ``"lognormal:2000:0.8"``), ``requests=``, ``warmup=`` (share left out
    of the statistics, default 0.1), ``seed=``, ``prefix_cache_hit=``.
    targets (seconds): ``ttft_p95=``, ``ttft_p99=``, ``tpot_p95=``, ``tpot_p99=``, ``e2e_p95=``, ``e2e_p99=``;
    without targets the figures describe ``count=`` devices at that load.
    engine: ``engine="vllm"`` (``sglang``, ``trtllm``, ``llamacpp``), ``block_size=``, ``kv_memory_fraction=``,
    ``max_batched_tokens=``, ``max_sequences=``, ``chunked_prefill="off"``, ``separate_prefill="on"``,
    ``kv_admission="reserve"`` (``on-demand``, ``estimate``), ``preempted_kv="freed"``,
    ``kv_profile="device-used"``, ``scheduler_steps=``, ``step_overhead_ms=``,
    ``request_overhead_ms=``; and the
    workload flags of :func:`estimate` that apply to inference (``weights="int4"``, ``kv_cache="fp8"``, ``tp=``).
    ``threads=`` (results do not depend on it).

    Returns the plan (``serve``: devices, replicas, layout, binding constraint; ``latency``, ``throughput``,
    ``kv_cache``, ``cost``, ``energy``, ``simulation``, ``layouts`` tried, ``warnings``). Raises
    :class:`Infeasible` (with ``.result``) when no layout serves the load within the targets, when the given
    devices cannot keep up with an open-loop rate (``serve.sustainable`` false), or when a request needs more KV cache
    than a replica holds.
    """
    return run("serve", model=model, device=device, **options)


def tco(model, device, count=1, task="train", **options):
    """Cost of owning the devices a workload needs against renting them: ``hwplan tco --format json``.

    Takes the workload arguments of :func:`estimate` (the estimate sets the job length and tokens/s) and the
    cost inputs ``years=3``, ``utilization=0.5`` (or ``jobs=`` over the horizon), ``used=True``, ``rent="reserved"``,
    ``rent_usd_per_hour=``, ``usd_per_kwh=``, ``pue=``, ``usd_per_kw_month=``, ``operations=``, ``resale=``,
    ``host_usd=``, ``host_watts=``, ``devices_per_host=``, ``network_usd_per_host=``.

    Returns ``tco`` (own and rent totals with the own parts, break-even months and utilisation, cost per job,
    device-hour and million tokens, ``sensitivity``: where each input flips the decision), ``inputs`` (every
    value used, defaults included) and ``notes`` (old prices). Raises :class:`Infeasible` when the workload
    does not fit as configured (see :func:`fit`).
    """
    return run("tco", model=model, device=device, count=count, task=task, **options)


def catalog(**filters):
    """The device catalog with sources: ``hwplan catalog list --format json`` (``device_class=``, ``vendor=``)."""
    return run("catalog list", **filters)


def device(id):
    """One catalog device: ``hwplan catalog show ID --format json``."""
    return run(f"catalog show {_single_word(id)}")


def models():
    """The model zoo with parameter counts: ``hwplan models list --format json``."""
    return run("models list")


def model(id):
    """One model (zoo id, YAML path, or a size such as ``"7B"``): ``hwplan models show ID --format json``."""
    return run(f"models show {_single_word(id)}")


def _single_word(s):
    s = str(s)
    if not s or any(c.isspace() for c in s):
        raise InputError(f"'{s}' is not an id (ids and paths here cannot contain spaces)")
    return s


def load_profile(path):
    """Reads and validates a calibration profile (``hwplan calibrate -o FILE``).

    Returns a summary dict (``path``, ``device_name``, ``catalog_id``, ``backend``, ...) that can be passed
    as ``profile=`` to :func:`estimate`, :func:`fit`, :func:`recommend` and :func:`sweep`.
    """
    summary, error = _native.load_profile(str(path))
    if error is not None:
        raise InputError(error)
    return summary


def set_assumptions(values=None, files=()):
    """Sets the physics constants the following calls use (``hwplan assumptions`` lists them), process-wide.

    Starts from the defaults each time, with the files of ``HWPLAN_ASSUMPTIONS`` applied as the command line
    applies them (also at import): then ``files`` (YAML maps of ``name: value``) in order, then ``values`` (a dict
    of name to number). ``set_assumptions()`` restores that starting point. Estimates made with an override carry
    a warning naming it. Do not call it while other threads run estimates.
    """
    error = _native.set_assumptions({str(k): float(v) for k, v in (values or {}).items()}, [str(f) for f in files])
    if error is not None:
        raise InputError(error)


def assumptions():
    """The physics constants in use, with defaults, units, ranges and sources (``hwplan assumptions --format json``)."""
    return run("assumptions")["assumptions"]


def _scenarios(scenarios):
    if isinstance(scenarios, dict):
        keys = list(scenarios)
        columns = [v if isinstance(v, (list, tuple)) else [v] for v in scenarios.values()]
        return [dict(zip(keys, combo)) for combo in _itertools.product(*columns)]
    return [dict(s) for s in scenarios]


def sweep(scenarios, command="estimate", threads=0, errors="raise"):
    """Runs many scenarios on all cores (the GIL released) and returns their results in order.

    scenarios: a list of dicts of keyword arguments (as for :func:`estimate`), or a dict of lists whose
    every combination is run (``{"device": ["h100-sxm", "mi300x"], "batch": [1, 8, 32]}``: 6 scenarios).
    A scenario may name its own ``command`` (``estimate``, ``recommend``, ``fit``, ``compare``, ``serve``,
    ``tco``); ``command=`` sets it for all.
    threads: workers (0: all cores). errors: ``"raise"`` raises the first scenario's error;
    ``"return"`` puts the exception (InputError, Infeasible) in that scenario's place.
    """
    if errors not in ("raise", "return"):
        raise ValueError("errors must be 'raise' or 'return'")
    calls = []
    for s in _scenarios(scenarios):
        c = s.pop("command", command)
        if isinstance(s.get("devices"), (list, tuple)):
            s["devices"] = ",".join(s["devices"])
        calls.append((c, _options(s)))
    out = []
    for (c, _), outcome in zip(calls, _native.run_many(calls, int(threads))):
        try:
            out.append(_check(c, outcome))
        except HwplanError as e:
            if errors == "raise":
                raise
            out.append(e)
    return out


def to_dataframe(results):
    """Flattens results (a list of dicts, e.g. from :func:`sweep`) into a pandas DataFrame, one row each,
    nested keys joined by dots (``memory.per_device_bytes``). Needs pandas (optional)."""
    try:
        import pandas
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("hwplan.to_dataframe needs pandas (Debian: python3-pandas; pip install pandas)") from e
    if isinstance(results, dict):
        results = [results]
    rows = []
    for r in results:  # sweep(..., errors="return") places: Infeasible keeps its result, other errors a message
        if isinstance(r, Infeasible):
            r = r.result
        elif isinstance(r, Exception):
            r = {"error": str(r)}
        rows.append(r)
    return pandas.json_normalize(rows)
