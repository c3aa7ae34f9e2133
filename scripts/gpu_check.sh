#!/usr/bin/env bash
# The GPU checks, in one script for a lent GPU machine (run from the repository root there, with the bundle made
# here by scripts/bundle.sh and carried along):
#   calibrate every GPU, validate against the catalog and the profile, write everything under $OUT.
set -uo pipefail
bin="${HWPLAN_BIN:-dist/hwplan/hwplan}"
out="${OUT:-/tmp/hwplan-gpu}"
mkdir -p "$out"
# cuBLAS from the machine: the CUDA toolkit's, or the one PyTorch's nvidia-cublas wheel installs.
cublas_dir=$(python3 -c "import nvidia.cublas, os; print(os.path.join(list(nvidia.cublas.__path__)[0], 'lib'))" 2>/dev/null || true)
export LD_LIBRARY_PATH="$(dirname "$bin"):${cublas_dir}:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
ldd "$bin" >"$out/ldd.txt" 2>&1
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv >"$out/nvidia-smi.csv" 2>&1 || true
"$bin" doctor >"$out/doctor.txt" 2>&1
"$bin" calibrate --backend cuda -o "$out/profile.yaml" >"$out/calibrate.txt" 2>"$out/calibrate.log"
echo "calibrate rc=$?" >>"$out/calibrate.txt"
"$bin" validate --backend cuda --profile "$out/profile.yaml" >"$out/validate.txt" 2>&1
"$bin" validate --measurements data/measurements/step-latency-neusight.yaml >"$out/validate-neusight.txt" 2>&1
"$bin" estimate --model llama-2-7b --device h200-sxm --profile "$out/profile.yaml" >"$out/estimate-with-profile.txt" 2>&1
cat "$out/calibrate.txt" "$out/validate.txt"
