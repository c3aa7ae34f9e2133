#!/usr/bin/env bash
# Quick start, step 2: the whole test suite (unit, CLI, bad-input corpus, validation against measurements).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
cmake --preset default -DHWPLAN_BUILD_TESTS=ON >/dev/null
cmake --build --preset default -j"$(nproc)"
ctest --preset default -j"$(nproc)"
