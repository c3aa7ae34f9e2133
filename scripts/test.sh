#!/usr/bin/env bash
# Quick start, step 2: the whole test suite.
#   1. release build + ctest (unit tests, CLI tests on the real binary, the bad-input corpus, the Python module's
#      pytest suite, the HTML reports in headless Chromium, validation against
#      the recorded measurements);
#   2. the same suite under AddressSanitizer + UndefinedBehaviorSanitizer (the asan preset): zero reports;
#   3. each libFuzzer target for FUZZ_SECONDS (default 30) on seeds made from the real files.
# HWPLAN_QUICK_TESTS=1 runs step 1 only. HWPLAN_WERROR=ON (as .ci/run sets it) makes compiler warnings errors.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh clang libclang-rt-dev
jobs="$(nproc)"
werror="-DHWPLAN_WERROR=${HWPLAN_WERROR:-OFF}"
cmake --preset default -DHWPLAN_BUILD_TESTS=ON "$werror" >/dev/null
cmake --build --preset default -j"$jobs"
ctest --preset default -j"$jobs"
if [ "${HWPLAN_QUICK_TESTS:-0}" = 1 ]; then exit 0; fi

echo "== sanitizers (ASan + UBSan) ==" >&2
cmake --preset asan -DHWPLAN_BUILD_TESTS=ON "$werror" >/dev/null
cmake --build --preset asan -j"$jobs"
ctest --preset asan -j"$jobs"

echo "== fuzzing ==" >&2
FUZZ_SECONDS="${FUZZ_SECONDS:-30}" bash scripts/fuzz.sh
