#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan+UBSan) and runs each for FUZZ_SECONDS (default 45) on a seed corpus
# made from the real files. Fails on any crash, sanitizer report or leak. Run longer: FUZZ_SECONDS=3600.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh clang libclang-rt-dev
cmake --preset fuzz -DHWPLAN_WERROR="${HWPLAN_WERROR:-OFF}" >/dev/null
cmake --build --preset fuzz -j"$(nproc)" --target fuzz_catalog fuzz_model fuzz_profile fuzz_batch fuzz_sizes fuzz_trace fuzz_hf_config fuzz_gguf fuzz_safetensors fuzz_prices fuzz_assumptions
seconds="${FUZZ_SECONDS:-45}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
declare -A seeds=(
  [catalog]="catalog/*.yaml tests/bad_inputs/catalog/*.yaml"
  [model]="models/*.yaml tests/bad_inputs/model/*.yaml"
  [profile]="data/profiles/*.yaml tests/bad_inputs/profile/*.yaml"
  [batch]="data/examples/*.yaml"
  [sizes]=""
  [trace]="data/examples/trace*.csv data/examples/trace*.jsonl"
  [hf_config]="tests/fixtures/hf/*/config.json tests/bad_inputs/hf/*.json"
  [gguf]="tests/fixtures/gguf/*.gguf tests/bad_inputs/gguf/*.gguf"
  [safetensors]="tests/fixtures/safetensors/*.safetensors tests/bad_inputs/safetensors/*.safetensors"
  [prices]="tests/bad_inputs/prices/*.yaml data/examples/prices.yaml"
  [assumptions]="data/examples/assumptions.yaml"
)
for target in catalog model profile batch sizes trace hf_config gguf safetensors prices assumptions; do
  mkdir -p "$work/$target"
  n=0; for f in ${seeds[$target]}; do [ -f "$f" ] && cp "$f" "$work/$target/$((n++))-$(basename "$f")"; done
  if [ "$target" = sizes ]; then for s in 7B 1.3b 70b 350M 14d 36h 90m 2w 1e3s; do printf '%s' "$s" >"$work/sizes/$s"; done; fi
  echo "fuzz_$target: ${seconds}s on $(ls "$work/$target" | wc -l) seeds" >&2
  ./build-fuzz/fuzz_$target -artifact_prefix="$work/" -max_total_time="$seconds" -max_len=65536 -timeout=10 -rss_limit_mb=4096 \
    -print_final_stats=1 "$work/$target" 2>"$work/$target.log" || { tail -50 "$work/$target.log"; mkdir -p fuzz-artifacts; cp "$work"/crash-* "$work"/timeout-* "$work"/leak-* "$work"/oom-* fuzz-artifacts/ 2>/dev/null || true; exit 1; }
  grep -E "stat::number_of_executed_units|stat::new_units_added" "$work/$target.log" | tr '\n' ' ' >&2; echo >&2
done
echo "fuzz: 11 passed, 0 failed"
