#!/usr/bin/env bash
# Quick start, step 1: install what is missing, build, and run the main job (a recommendation on the built-in
# catalog).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
cmake --preset default -DHWPLAN_BUILD_TESTS=ON >/dev/null
cmake --build --preset default -j"$(nproc)"
echo
if ./build/hwplan recommend --help >/dev/null 2>&1; then
  ./build/hwplan recommend --model llama-2-7b --task lora --budget-usd 3000 --buy
else
  ./build/hwplan catalog list
fi
