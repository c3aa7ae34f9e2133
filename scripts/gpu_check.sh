#!/usr/bin/env bash
# The GPU checks, in one script for a lent GPU machine (run from the repository root there, with the bundle made
# here by scripts/bundle.sh carried along as dist/hwplan):
#   1. calibrate every GPU (CUDA backend), validate the profile against the catalog, estimate with the profile;
#   2. measure real PyTorch workloads (scripts/gpu_measure.py) as hwplan measurement cases.
# Everything lands in $OUT (default /tmp/hwplan-gpu): gpu-check.tar.gz (the hwplan outputs and the profile) and
# measured.yaml + measure.log (the PyTorch cases, appended as they finish). Each step has its own time limit, so
# that a slow one cannot cost the others.
#   HWPLAN_CALIBRATE_QUICK=1 for the quick sweep; HWPLAN_MEASURE=0 to skip step 2; HWPLAN_MEASURE_ONLY=host,kernels
#   (groups of gpu_measure.py --only) to run some of it.
set -uo pipefail
bin="${HWPLAN_BIN:-dist/hwplan/hwplan}"
out="${OUT:-/tmp/hwplan-gpu}"
work="$(mktemp -d)/check"  # outside $OUT: only the archive of it comes back
mkdir -p "$work"
# cuBLAS from the machine: the CUDA toolkit's, or the one PyTorch's nvidia-cublas wheel installs.
cublas_dir=$(python3 -c "import nvidia.cublas, os; print(os.path.join(list(nvidia.cublas.__path__)[0], 'lib'))" 2>/dev/null || true)
export LD_LIBRARY_PATH="$(dirname "$bin"):${cublas_dir}:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
quick=(); [ "${HWPLAN_CALIBRATE_QUICK:-0}" = 1 ] && quick=(--quick)
step() {  # step NAME SECONDS CMD...: runs CMD with a limit, output to $work/NAME.txt, prints its rc and time
  local name=$1 limit=$2; shift 2
  local t0=$SECONDS
  timeout "$limit" "$@" >"$work/$name.txt" 2>&1
  echo "$name: rc=$? in $((SECONDS - t0)) s" | tee -a "$work/steps.txt"
}
ldd "$bin" "$(dirname "$bin")/libhwplan_cuda.so" >"$work/ldd.txt" 2>&1
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem,power.limit --format=csv >"$work/nvidia-smi.csv" 2>&1 || true
step doctor 20 "$bin" doctor
step calibrate 180 "$bin" calibrate --backend cuda "${quick[@]}" -o "$work/profile.yaml"
step validate 30 "$bin" validate --backend cuda --profile "$work/profile.yaml"
step validate-json 30 "$bin" validate --backend cuda --profile "$work/profile.yaml" --format json
step estimate-profile 15 "$bin" estimate --model llama-2-7b --device h200-sxm --profile "$work/profile.yaml"
step estimate-catalog 15 "$bin" estimate --model llama-2-7b --device h200-sxm
nvidia-smi --query-gpu=clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv >>"$work/nvidia-smi.csv" 2>&1 || true
tar -czf "$out/gpu-check.tar.gz" -C "$(dirname "$work")" check
cat "$work/calibrate.txt" "$work/validate.txt" 2>/dev/null | head -150
if [ "${HWPLAN_MEASURE:-1}" = 1 ]; then
  t0=$SECONDS
  PYTHONUNBUFFERED=1 timeout "${HWPLAN_MEASURE_SECONDS:-270}" python3 scripts/gpu_measure.py "$out/measured.yaml" ${HWPLAN_MEASURE_ONLY:+--only "$HWPLAN_MEASURE_ONLY"} >"$out/measure.log" 2>&1
  echo "measure: rc=$? in $((SECONDS - t0)) s"
  grep -E "took|FAILED" "$out/measure.log" | head -40
fi
