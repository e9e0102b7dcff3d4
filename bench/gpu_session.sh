#!/usr/bin/env bash
# Everything the CUDA backend's validation (docs/validation.md, "what was measured on a GPU")
# needs, in one pass on a machine with a GPU: the GPU tests, the GPU benchmarks and GPU runs of
# `shardwise run`, each log written to OUT_DIR, a summary last.
#
# Usage: bench/gpu_session.sh [BUILD_DIR] [OUT_DIR]      (defaults: build, gpu-logs)
#
# The binaries may have been built on another machine (same CPU architecture) and copied into
# BUILD_DIR; the test binaries then look for the repository at the path they were built in, so
# run from the repository root and, when the paths differ, link that path here first.
set -uo pipefail
build=${1:-build}
out=${2:-gpu-logs}
mkdir -p "$out"

# cuBLAS and NCCL where the machine has them (a CUDA toolkit, or the Python wheels of them).
for lib in libcublasLt.so.13 libnccl.so.2; do
  found=$(find /usr/local/cuda* /usr/lib /opt -name "$lib" 2>/dev/null | head -1)
  if [ -n "$found" ]; then export LD_LIBRARY_PATH="$(dirname "$found"):${LD_LIBRARY_PATH:-}"; fi
done

status=0
step() {  # step NAME COMMAND...: run, log to OUT_DIR/NAME.log, record the exit code
  local name=$1
  shift
  echo "== $name: $*"
  local t0=$SECONDS
  timeout 300 stdbuf -oL "$@" >"$out/$name.log" 2>&1
  local rc=$?
  echo "   exit $rc after $((SECONDS - t0)) s"
  [ $rc -eq 0 ] || status=1
  tail -n 25 "$out/$name.log"
}

nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,clocks.max.mem,driver_version \
  --format=csv | tee "$out/gpu.csv"
step cuda_test "$build/tests/cuda_test"
step backend_ops "$build/tests/runtime_test" --gtest_filter='BackendOps*'
step run_gpu_cli "$build/tests/cli_test" --gtest_filter='RunGpuCli*'
step run_cuda_tp2 "$build/shardwise" run --backend cuda --model tiny-dense --layout tp2
step run_cuda_moe "$build/shardwise" run --device-compute cuda --model tiny-moe --layout tp2ep2
step run_cuda_moe_b64 "$build/shardwise" run --backend cuda --model tiny-moe --layout tp2ep2 --batch 64
step run_cuda_cp "$build/shardwise" run --backend cuda --model tiny-dense --layout tp2cp2 --prompt-len 16
step run_cuda_mla "$build/shardwise" run --backend cuda --model tiny-mla --layout tp2cp2ep4 --prompt-len 32 \
  --redundant-experts 4 --capacity-factor 1.0
step run_cuda_gptoss "$build/shardwise" run --backend cuda --model tiny-gptoss --layout tp2ep2
step run_nccl_tp1 "$build/shardwise" run --backend nccl --model tiny-dense --layout tp1
step hbm_bench "$build/bench/gpu_hbm_bench"
step gemm_bench "$build/bench/gpu_gemm_bench"
step decode_bench "$build/bench/gpu_decode_bench"
step gemm_k_sweep_bench "$build/bench/gpu_gemm_k_sweep_bench"
step kernel_latency_bench "$build/bench/gpu_kernel_latency_bench"
exit $status
