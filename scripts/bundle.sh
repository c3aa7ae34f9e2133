#!/usr/bin/env bash
# Makes a self-contained hwplan for a machine without Debian's packages (e.g. a lent GPU machine): the binary
# plus every shared library it needs that is not part of the C runtime, found beside it through RPATH=$ORIGIN.
# cuBLAS (about 550 MB) is left out unless HWPLAN_BUNDLE_CUBLAS=1: GPU machines carry it (CUDA toolkit, or
# PyTorch's nvidia-cublas wheel; scripts/gpu_check.sh finds it there).
#   bash scripts/bundle.sh [OUT_DIR]     (default: dist/hwplan)
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-dist/hwplan}"
cmake --preset default >/dev/null
cmake --build --preset default -j"$(nproc)" --target hwplan
mkdir -p "$out"
cp build/hwplan "$out/"
# The CUDA backend plugin, loaded on first use (its cuBLAS comes from the GPU machine, see above).
[ -f build/libhwplan_cuda.so ] && cp build/libhwplan_cuda.so "$out/"
# Copy the non-libc dependencies (yaml-cpp, fmt, cuBLAS, libstdc++, libgomp, ...).
ldd build/hwplan | awk '/=> \// {print $3}' | while read -r lib; do
  case "$(basename "$lib")" in
    libc.so*|libm.so*|libpthread.so*|libdl.so*|librt.so*|ld-linux*|libcuda.so*) ;;  # from the target's libc / driver
    libcublas*) [ "${HWPLAN_BUNDLE_CUBLAS:-0}" = 1 ] && cp -L "$lib" "$out/" ;;  # ~550 MB: the GPU machine has its own
    *) cp -L "$lib" "$out/" ;;
  esac
done
readelf -d "$out/hwplan" | grep -E "RPATH|RUNPATH" || echo "warning: no RPATH in the binary" >&2
du -sh "$out"
echo "bundle: $out (run $out/hwplan)"
