#!/usr/bin/env python3
"""Measures real PyTorch workloads on the local GPU and writes them as hwplan measurement cases (YAML, one flow
mapping per line, appended as each finishes so that a run cut short keeps what it measured).

Run on a GPU machine with PyTorch and transformers (no download: every model is built from its configuration
with random weights, which changes no timing):
    python3 scripts/gpu_measure.py OUT.yaml [--quick]

What it measures, each in the convention of a measurement file in data/measurements/:
  * fp32 step latencies of Hugging Face models with eager attention (forward; forward and loss.backward() for
    training, no optimizer step), as NeuSight measured them (step-latency-neusight.yaml): TF32 off, CUDA events,
    median of the timed repetitions after warm-ups;
  * batch-1 greedy decoding with Transformers' generate() in bf16 (SDPA attention, dynamic KV cache): tokens/s
    over the generated tokens, the prefill's time taken out (a one-token generate is subtracted);
  * bf16 training steps of Llama-shaped models in a plain PyTorch loop (autocast over fp32 weights, or pure bf16
    weights), SDPA attention, fused AdamW: tokens/s per device and torch.cuda.max_memory_allocated;
  * experiments written as '# {json}' comment lines: the bytes one layer keeps for backward (two layers minus
    one), the host's eager dispatch time per op and per module call, and the CUDA kernels per generated token.
The shapes are the model zoo's (models/*.yaml); the ids written are the zoo's ids.
"""
import argparse
import json
import sys
import time
import traceback

import torch

QUICK = False


def SOURCE():
    import transformers
    return "hwplan's own measurements on a lent %s, scripts/gpu_measure.py (torch %s, transformers %s)" % (
        torch.cuda.get_device_name(0), torch.__version__, transformers.__version__)


def log(msg):
    print(f"[gpu_measure {time.strftime('%H:%M:%S')}] {msg}", flush=True)


def cuda_time(fn, warmup, reps):
    """Median seconds of fn() over reps runs timed with CUDA events, after warmup untimed runs."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) / 1e3)
    times.sort()
    return times[len(times) // 2]


def hf_config(model_id, attn):
    import transformers as tf
    if model_id == "bert-large":
        c = tf.BertConfig(hidden_size=1024, num_hidden_layers=24, num_attention_heads=16, intermediate_size=4096,
                          vocab_size=30522, max_position_embeddings=512)
        cls = tf.BertForMaskedLM
    elif model_id in ("gpt2-large", "gpt3-xl", "gpt3-2.7b"):
        layers, hidden, heads, ctx = {"gpt2-large": (36, 1280, 20, 1024), "gpt3-xl": (24, 3072, 24, 2048),
                                      "gpt3-2.7b": (32, 2560, 32, 2048)}[model_id]
        c = tf.GPT2Config(n_layer=layers, n_embd=hidden, n_head=heads, n_positions=ctx, vocab_size=50257)
        cls = tf.GPT2LMHeadModel
    elif model_id == "opt-1.3b":
        c = tf.OPTConfig(hidden_size=2048, num_hidden_layers=24, num_attention_heads=32, ffn_dim=8192,
                         vocab_size=50272, max_position_embeddings=2048, word_embed_proj_dim=2048)
        cls = tf.OPTForCausalLM
    elif model_id == "llama-2-7b":
        c = tf.LlamaConfig(hidden_size=4096, num_hidden_layers=32, num_attention_heads=32, num_key_value_heads=32,
                           intermediate_size=11008, vocab_size=32000, max_position_embeddings=4096)
        cls = tf.LlamaForCausalLM
    elif model_id == "llama-3.2-1b":
        c = tf.LlamaConfig(hidden_size=2048, num_hidden_layers=16, num_attention_heads=32, num_key_value_heads=8,
                           head_dim=64, intermediate_size=8192, vocab_size=128256, max_position_embeddings=131072,
                           tie_word_embeddings=True)
        cls = tf.LlamaForCausalLM
    elif model_id == "llama-3.2-3b":
        c = tf.LlamaConfig(hidden_size=3072, num_hidden_layers=28, num_attention_heads=24, num_key_value_heads=8,
                           head_dim=128, intermediate_size=8192, vocab_size=128256, max_position_embeddings=131072,
                           tie_word_embeddings=True)
        cls = tf.LlamaForCausalLM
    else:
        raise ValueError(model_id)
    c._attn_implementation = attn
    return cls, c


def build(model_id, attn, dtype, layers=None):
    """The model on the GPU with random weights in dtype; layers overrides the configuration's layer count."""
    cls, c = hf_config(model_id, attn)
    if layers is not None:
        set_layers(c, layers)
    torch.manual_seed(0)
    old = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        with torch.device("cuda"):
            m = cls(c)
    finally:
        torch.set_default_dtype(old)
    return m, c


class Writer:
    def __init__(self, path, device_name):
        self.path, self.device = path, device_name

    def case(self, **kw):
        kw = {"device": self.device, **kw}
        line = "  - " + json.dumps(kw, separators=(", ", ": "))
        with open(self.path, "a") as f:
            f.write(line + "\n")
        log(line)

    def raw(self, rec):
        line = "# " + json.dumps({"device": self.device, **rec})
        with open(self.path, "a") as f:
            f.write(line + "\n")
        log(line)


def fp32_step(w, model_id, task, batch, seq):
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    m, c = build(model_id, "eager", torch.float32)
    ids = torch.randint(0, c.vocab_size, (batch, seq), device="cuda")
    warm, reps = (1, 3) if QUICK else (2, 6)
    name = f"h200-{model_id}-{task}-b{batch}-s{seq}"
    if task == "infer":
        m.eval()
        with torch.no_grad():
            fwd = cuda_time(lambda: m(input_ids=ids), warm, reps)
        w.case(name=name, model=model_id, task="infer", engine="hf", precision="fp32", attention="eager", batch=batch,
               seq=seq, measured={"forward_ms": round(fwd * 1e3, 3)})
    else:
        m.train()
        state = {}

        def forward():
            state["loss"] = m(input_ids=ids, labels=ids).loss

        def backward():
            state["loss"].backward()

        # forward alone, then backward alone (each after its own forward), as NeuSight timed them
        fwd = cuda_time(forward, warm, reps)
        times = []
        for i in range(warm + reps):
            forward()
            torch.cuda.synchronize()
            start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            backward()
            stop.record()
            stop.synchronize()
            m.zero_grad(set_to_none=True)
            if i >= warm:
                times.append(start.elapsed_time(stop) / 1e3)
        times.sort()
        bwd = times[len(times) // 2]
        w.case(name=name, model=model_id, task="train", framework="hf-trainer", precision="fp32", attention="eager",
               batch=batch, seq=seq, measured={"forward_ms": round(fwd * 1e3, 3), "backward_ms": round(bwd * 1e3, 3)})
    del m
    torch.cuda.empty_cache()


def hf_decode(w, model_id, prompt, generate):
    m, c = build(model_id, "sdpa", torch.bfloat16)
    m.eval()
    ids = torch.randint(0, c.vocab_size, (1, prompt), device="cuda")
    kw = dict(do_sample=False, eos_token_id=None, pad_token_id=0)

    def gen(n):
        with torch.no_grad():
            m.generate(ids, max_new_tokens=n, min_new_tokens=n, **kw)

    t_one = cuda_time(lambda: gen(1), 1, 3)
    t_all = cuda_time(lambda: gen(generate), 1, 3)
    tps = (generate - 1) / (t_all - t_one)
    w.case(name=f"h200-hf-generate-{model_id}-bf16-b1", kind="decode", engine="hf", model=model_id, count=1,
           precision="bf16", seq=prompt + generate // 2, global_batch=1, tp=None, pp=None,
           measured={"decode_tokens_per_second": round(tps, 1)}, confidence="measured",
           source=SOURCE(),
           note=f"Transformers generate(), greedy, batch 1, SDPA, dynamic cache, {prompt}-token prompt, {generate} "
                f"new tokens; tokens/s = {generate - 1} / (t(generate {generate}) - t(generate 1)), medians of 3")
    del m
    torch.cuda.empty_cache()


def bf16_train(w, model_id, batch, seq, master):
    """One training step per repetition: forward, backward, fused AdamW step, zero_grad."""
    dtype = torch.float32 if master == "fp32" else torch.bfloat16
    m, c = build(model_id, "sdpa", dtype)
    m.train()
    opt = torch.optim.AdamW(m.parameters(), lr=1e-5, fused=True)
    ids = torch.randint(0, c.vocab_size, (batch, seq), device="cuda")

    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=master == "fp32"):
            loss = m(input_ids=ids, labels=ids).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    step()
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    t = cuda_time(step, 1, 3 if QUICK else 5)
    peak = torch.cuda.max_memory_allocated() / 2**30
    w.case(name=f"h200-torch-{model_id}-bf16-{'amp' if master == 'fp32' else 'pure'}-b{batch}-s{seq}",
           kind="training", model=model_id, count=1, task="finetune", precision="bf16", batch=batch, seq=seq,
           grad_accum=1, recompute="none", attention="flash", optimizer="adamw", framework="hf-trainer",
           fused_optimizer=True, clip_grad_norm=False, master_weights=master, memory_metric="allocated",
           measured={"peak_memory_gib": round(peak, 2), "tokens_per_second_per_device": round(batch * seq / t, 1)},
           confidence="measured",
           source=SOURCE(),
           note=("plain PyTorch loop over LlamaForCausalLM, SDPA attention, fused torch AdamW, no activation "
                 "checkpointing, loss over the whole vocabulary (unchunked); "
                 + ("fp32 weights under bf16 autocast" if master == "fp32" else "pure bf16 weights and optimizer state")
                 + "; step time median of the timed steps; peak = torch.cuda.max_memory_allocated over the timed steps"))
    del m, opt
    torch.cuda.empty_cache()


def set_layers(c, n):
    if hasattr(c, "n_layer"):
        c.n_layer = n
    else:
        c.num_hidden_layers = n


def layer_activations(w, model_id, mode, batch, seq):
    """Bytes one layer keeps for backward: memory allocated after the forward (loss computed) with two layers
    minus with one, per token; and the step's peak over the allocations before it, for both."""
    attn = "eager" if mode == "fp32" else "sdpa"
    saved, peak = {}, {}
    for layers in (1, 2):
        m, c = build(model_id, attn, torch.bfloat16 if mode == "pure" else torch.float32, layers)
        m.train()
        ids = torch.randint(0, c.vocab_size, (batch, seq), device="cuda")
        for _ in range(2):  # the second pass is measured (allocator and autocast caches settled)
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
            base = torch.cuda.memory_allocated()
            with torch.autocast("cuda", dtype=torch.bfloat16, enabled=mode == "amp"):
                loss = m(input_ids=ids, labels=ids).loss
            after = torch.cuda.memory_allocated()
            loss.backward()
            torch.cuda.synchronize()
            top = torch.cuda.max_memory_allocated()
            m.zero_grad(set_to_none=True)
            del loss
        saved[layers], peak[layers] = after - base, top - base
        params_per_layer = None
        if layers == 2:
            layer = next(mod for name, mod in m.named_modules() if name.endswith("layers.1") or name.endswith("h.1")
                         or name.endswith("layer.1"))
            params_per_layer = sum(p.numel() for p in layer.parameters())
        del m
        torch.cuda.empty_cache()
    tokens = batch * seq
    rec = {"experiment": "layer_activations", "model": model_id, "mode": mode, "batch": batch, "seq": seq,
           "attention": attn, "layer_bytes_per_token": round((saved[2] - saved[1]) / tokens, 1),
           "params_per_layer": params_per_layer,
           "ends_bytes_per_token_after_forward": round((2 * saved[1] - saved[2]) / tokens, 1),
           "peak_over_base_1_layer_gib": round(peak[1] / 2**30, 3), "peak_over_base_2_layers_gib": round(peak[2] / 2**30, 3),
           "saved_after_forward_1_layer_gib": round(saved[1] / 2**30, 3)}
    w.raw(rec)


def lora_activations(w, model_id, targets, rank, batch, seq):
    """Bytes one layer keeps for backward under LoRA (PEFT defaults: adapters in fp32, frozen base in bf16, the
    step under bf16 autocast as the Hugging Face Trainer runs it with bf16=True): two layers minus one, per token."""
    import peft
    modules = {"qv": ["q_proj", "v_proj"], "all": ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]}[targets]
    saved = {}
    for layers in (1, 2):
        base, c = build(model_id, "sdpa", torch.bfloat16, layers)
        m = peft.get_peft_model(base, peft.LoraConfig(r=rank, lora_alpha=2 * rank, target_modules=modules, lora_dropout=0.0))
        m.train()
        ids = torch.randint(0, c.vocab_size, (batch, seq), device="cuda")
        for _ in range(2):
            torch.cuda.synchronize()
            start = torch.cuda.memory_allocated()
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = m(input_ids=ids, labels=ids).loss
            after = torch.cuda.memory_allocated()
            loss.backward()
            m.zero_grad(set_to_none=True)
            del loss
        saved[layers] = after - start
        del m, base
        torch.cuda.empty_cache()
    tokens = batch * seq
    w.raw({"experiment": "lora_activations", "model": model_id, "targets": targets, "rank": rank, "batch": batch,
           "seq": seq, "peft": peft.__version__, "layer_bytes_per_token": round((saved[2] - saved[1]) / tokens, 1),
           "ends_bytes_per_token_after_forward": round((2 * saved[1] - saved[2]) / tokens, 1)})


LAUNCH_CALLS = ("cudaLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernel", "cuLaunchKernelEx")


def profiled(fn):
    """Runs fn() under torch.profiler: (CUDA kernels run, kernel launch calls made, fn's result)."""
    from torch.profiler import profile, ProfilerActivity
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        out = fn()
        torch.cuda.synchronize()
    events = prof.events()
    kernels = sum(1 for e in events if e.device_type == torch.autograd.DeviceType.CUDA)
    launches = sum(1 for e in events if e.name in LAUNCH_CALLS)
    return kernels, launches, out


def step_kernels(w, model_id, mode, batch, seq, task):
    """CUDA kernels of one forward and of one backward (torch.profiler): what a host-bound eager step issues."""
    attn = "eager" if mode == "fp32" else "sdpa"
    dtype = torch.float32 if mode == "fp32" else torch.bfloat16
    m, c = build(model_id, attn, dtype)
    ids = torch.randint(0, c.vocab_size, (batch, seq), device="cuda")
    torch.backends.cuda.matmul.allow_tf32 = False
    if task == "train":
        m.train()
    else:
        m.eval()

    def fwd():
        if task == "train":
            return m(input_ids=ids, labels=ids).loss
        with torch.no_grad():
            return m(input_ids=ids).logits

    for _ in range(2):  # warm
        loss = fwd()
        if task == "train":
            loss.backward()
            m.zero_grad(set_to_none=True)
    f_kernels, _, loss = profiled(fwd)
    b_kernels = 0
    if task == "train":
        b_kernels, _, _ = profiled(lambda: loss.backward())
        m.zero_grad(set_to_none=True)
    w.raw({"experiment": "step_kernels", "model": model_id, "mode": mode, "task": task, "batch": batch, "seq": seq,
           "forward_kernels": f_kernels, "backward_kernels": b_kernels})
    del m
    torch.cuda.empty_cache()


def host_dispatch(w):
    """Host time of eager PyTorch per op and per module call, on tiny CUDA tensors (the GPU keeps up, so the loop
    runs at the host's dispatch rate)."""
    import platform
    cpu = ""
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    x = torch.zeros(64, device="cuda")
    y = torch.ones(64, device="cuda")
    z = torch.empty(64, device="cuda")
    lin = torch.nn.Linear(64, 64, device="cuda")
    import transformers as tf
    norm = tf.models.llama.modeling_llama.LlamaRMSNorm(64).cuda()

    def per_call(fn, n=20000):
        for _ in range(500):
            fn()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        t1 = time.perf_counter()
        torch.cuda.synchronize()
        return (t1 - t0) / n

    with torch.no_grad():
        rec = {"experiment": "host_dispatch", "cpu": cpu, "python": platform.python_version(), "torch": torch.__version__,
               "add_out_us": round(per_call(lambda: torch.add(x, y, out=z)) * 1e6, 2),
               "mul_us": round(per_call(lambda: x * y) * 1e6, 2),
               "linear_module_us": round(per_call(lambda: lin(x)) * 1e6, 2),
               "rmsnorm_module_us": round(per_call(lambda: norm(x[None])) * 1e6, 2)}
    w.raw(rec)


def decode_kernels(w, model_id, prompt):
    """CUDA kernels per generated token in Transformers generate() (bf16, SDPA, batch 1), from the profiler."""
    m, c = build(model_id, "sdpa", torch.bfloat16)
    m.eval()
    ids = torch.randint(0, c.vocab_size, (1, prompt), device="cuda")
    kw = dict(do_sample=False, eos_token_id=None, pad_token_id=0)

    def count(n):
        with torch.no_grad():
            m.generate(ids, max_new_tokens=n, min_new_tokens=n, **kw)  # warm
            kernels, launches, _ = profiled(lambda: m.generate(ids, max_new_tokens=n, min_new_tokens=n, **kw))
        return kernels, launches

    k1, l1 = count(1)
    k2, l2 = count(17)
    t1 = cuda_time(lambda: m.generate(ids, max_new_tokens=1, min_new_tokens=1, **kw), 1, 5)
    t2 = cuda_time(lambda: m.generate(ids, max_new_tokens=65, min_new_tokens=65, **kw), 1, 5)
    w.raw({"experiment": "decode_kernels", "model": model_id, "layers": c.num_hidden_layers,
           "device_events_per_token": (k2 - k1) / 16, "launch_calls_per_token": (l2 - l1) / 16,
           "ms_per_token": round((t2 - t1) / 64 * 1e3, 3)})
    del m
    torch.cuda.empty_cache()


def bf16_forward(w, model_id, batch, seq):
    """One forward pass in bf16 over batch x seq tokens (Transformers, SDPA, no KV cache kept): a prefill."""
    m, c = build(model_id, "sdpa", torch.bfloat16)
    m.eval()
    ids = torch.randint(0, c.vocab_size, (batch, seq), device="cuda")
    with torch.no_grad():
        t = cuda_time(lambda: m(input_ids=ids, use_cache=False), 2, 6)
    w.case(name=f"h200-{model_id}-bf16-forward-b{batch}-s{seq}", model=model_id, task="infer", engine="hf",
           precision="bf16", attention="flash", batch=batch, seq=seq, measured={"forward_ms": round(t * 1e3, 3)})
    del m
    torch.cuda.empty_cache()


def gemv_chain(w, model_id):
    """A decode step's weight reads alone: every linear layer of the model (fused QKV and gate+up, as vLLM and
    TensorRT-LLM lay them out) applied to a batch of 1, 8 and 32 rows, captured in a CUDA graph and replayed;
    the time per step and the bandwidth it achieves over the weight bytes."""
    import torch.nn.functional as F
    shapes = {"llama-2-7b": (32, 4096, 4096, 4096, 11008, 32000), "llama-3.1-8b": (32, 4096, 4096, 1024, 14336, 128256)}
    layers, h, q, kv, f, vocab = shapes[model_id]
    per_layer = [(q + 2 * kv, h), (h, q), (2 * f, h), (h, f)]
    torch.manual_seed(0)
    weights = [torch.randn(o, i, dtype=torch.bfloat16, device="cuda") * 0.02 for _ in range(layers) for o, i in per_layer]
    weights.append(torch.randn(vocab, h, dtype=torch.bfloat16, device="cuda") * 0.02)
    weight_bytes = sum(x.numel() * 2 for x in weights)
    for batch in (1, 8, 32):
        inputs = {i: torch.randn(batch, i, dtype=torch.bfloat16, device="cuda") for i in {h, q, f}}

        def step():
            for W in weights:
                F.linear(inputs[W.shape[1]], W)

        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            for _ in range(2):
                step()
        torch.cuda.current_stream().wait_stream(stream)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            step()
        t = cuda_time(graph.replay, 3, 20)
        eager = cuda_time(step, 2, 5)
        w.raw({"experiment": "gemv_chain", "model": model_id, "batch": batch, "linear_layers": len(weights),
               "weight_gib": round(weight_bytes / 2**30, 3), "graph_ms": round(t * 1e3, 3),
               "graph_tb_per_s": round(weight_bytes / t / 1e12, 3), "eager_loop_ms": round(eager * 1e3, 3)})
    del weights
    torch.cuda.empty_cache()


def main():
    global QUICK
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only", default="", help="comma-separated groups: fp32, decode, train, activations, host, kernels, gemv, prefill, lora (and train7b, decode7b, fp32small, stepkernels)")
    a = ap.parse_args()
    QUICK = a.quick
    name = torch.cuda.get_device_name(0)
    log(f"device {name}, torch {torch.__version__}")
    w = Writer(a.out, name)
    with open(a.out, "a") as f:
        f.write(f"# {name}, torch {torch.__version__}, measured {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}\n")
    # The default set fits the 270 s scripts/gpu_check.sh gives it on an H200 (about 240 s there); the profiler
    # groups (kernels, stepkernels) and the extra rows (train7b, decode7b, fp32small) run when asked for.
    groups = set(a.only.split(",")) if a.only else {"fp32", "decode", "train", "activations", "host", "gemv", "prefill", "lora"}
    jobs = []
    if "decode" in groups:
        jobs += [(hf_decode, ("llama-3.2-1b", 128, 256)), (hf_decode, ("llama-2-7b", 128, 256)),
                 (hf_decode, ("llama-3.2-3b", 128, 256))]
    if "train" in groups:
        jobs += [(bf16_train, ("llama-3.2-1b", 4, 2048, "fp32")), (bf16_train, ("llama-3.2-3b", 2, 2048, "none")),
                 (bf16_train, ("llama-3.2-1b", 8, 1024, "none"))]
    if "fp32" in groups:
        jobs += [(fp32_step, ("bert-large", "infer", 8, 512)), (fp32_step, ("bert-large", "train", 8, 512)),
                 (fp32_step, ("gpt2-large", "infer", 4, 1024)), (fp32_step, ("gpt2-large", "train", 1, 1024)),
                 (fp32_step, ("opt-1.3b", "infer", 2, 2048)), (fp32_step, ("opt-1.3b", "train", 1, 2048)),
                 (fp32_step, ("gpt3-xl", "infer", 2, 2048)), (fp32_step, ("gpt3-2.7b", "infer", 2, 2048)),
                 (fp32_step, ("gpt3-2.7b", "train", 1, 2048)), (fp32_step, ("bert-large", "train", 2, 512)),
                 (fp32_step, ("gpt2-large", "infer", 8, 1024)), (fp32_step, ("opt-1.3b", "infer", 8, 2048))]
    if "prefill" in groups:
        jobs += [(bf16_forward, ("llama-2-7b", 1, 512)), (bf16_forward, ("llama-2-7b", 1, 2048)),
                 (bf16_forward, ("llama-2-7b", 1, 8192)), (bf16_forward, ("llama-2-7b", 8, 512)),
                 (bf16_forward, ("llama-3.2-1b", 1, 2048)), (bf16_forward, ("llama-3.2-3b", 4, 2048))]
    if "fp32small" in groups:
        jobs += [(fp32_step, ("bert-large", "train", 1, 512)), (fp32_step, ("bert-large", "train", 4, 512)),
                 (fp32_step, ("gpt2-large", "train", 2, 1024)), (fp32_step, ("gpt2-large", "infer", 1, 1024)),
                 (fp32_step, ("opt-1.3b", "train", 2, 2048)), (fp32_step, ("bert-large", "infer", 1, 512))]
    if "gemv" in groups:
        jobs += [(gemv_chain, ("llama-2-7b",)), (gemv_chain, ("llama-3.1-8b",))]
    if "train7b" in groups:
        jobs += [(bf16_train, ("llama-2-7b", 1, 4096, "none")), (bf16_train, ("llama-2-7b", 4, 1024, "none"))]
    if "decode7b" in groups:
        jobs += [(hf_decode, ("llama-2-7b", 128, 256))]
    if "host" in groups:
        jobs += [(host_dispatch, ())]
    if "stepkernels" in groups:
        jobs += [(step_kernels, ("bert-large", "fp32", 1, 512, "train")), (step_kernels, ("gpt2-large", "fp32", 1, 1024, "train")),
                 (step_kernels, ("llama-3.2-1b", "bf16", 1, 2048, "infer")), (step_kernels, ("llama-2-7b", "bf16", 1, 512, "infer")),
                 (step_kernels, ("opt-1.3b", "fp32", 1, 2048, "train"))]
    if "lora" in groups:
        jobs += [(lora_activations, ("llama-2-7b", "qv", 8, 2, 2048)), (lora_activations, ("llama-2-7b", "all", 16, 2, 2048)),
                 (lora_activations, ("llama-3.2-1b", "qv", 8, 2, 2048)), (lora_activations, ("llama-3.2-1b", "all", 16, 2, 2048))]
    if "kernels" in groups:
        jobs += [(decode_kernels, ("llama-3.2-1b", 128)), (decode_kernels, ("llama-2-7b", 128)),
                 (decode_kernels, ("llama-3.2-3b", 128))]
    if "activations" in groups:
        jobs += [(layer_activations, ("llama-3.2-1b", "pure", 2, 2048)), (layer_activations, ("llama-3.2-1b", "amp", 2, 2048)),
                 (layer_activations, ("llama-3.2-3b", "pure", 2, 2048)), (layer_activations, ("llama-2-7b", "pure", 2, 2048)),
                 (layer_activations, ("llama-2-7b", "amp", 2, 2048)), (layer_activations, ("gpt2-large", "fp32", 2, 1024)),
                 (layer_activations, ("bert-large", "fp32", 8, 512)), (layer_activations, ("opt-1.3b", "fp32", 1, 2048))]
    failures = 0
    for fn, args in jobs:
        t0 = time.time()
        try:
            fn(w, *args)
        except Exception:  # one failed case must not lose the others
            failures += 1
            log(f"FAILED {fn.__name__}{args}:\n{traceback.format_exc()}")
            torch.cuda.empty_cache()
        log(f"{fn.__name__}{args} took {time.time() - t0:.1f} s")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
