// TrainEngine: how a training framework runs a step, as far as time and memory depend on it:
// which attention kernel (materialised scores or FlashAttention), whether TP uses sequence
// parallelism, dropout, the element-wise and FP8-cast traffic of its kernels, how many kernels a
// layer launches (each costs the GPU a gap and the host a launch), gradient and optimizer formats,
// what communication it overlaps (TP, EP, DP gradient reduce and parameter gather), which
// schedules and ZeRO stages it offers, its memory reserve; and per GPU (TrainGpuRates) the GEMM
// and attention rates it achieves in each precision and its host's time per kernel launch.
// Read from data/training/*.json (or a user file of the same form); every number is
// {value, provenance: measured|fitted|assumed, source}. Plain value type.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "shardwise/common/provenance.h"
#include "shardwise/common/status.h"
#include "shardwise/hw/gpu.h"
#include "shardwise/train/options.h"

namespace shardwise::train {

// What one framework achieves on one GPU. A fraction is of the GPU catalog's dense peak for the
// format (bf16 for attention), for large shapes; the catalog's shape model (waves, tile overhead)
// applies on top. A recipe without a fraction is one the GPU (or the framework on it) lacks.
struct TrainGpuRates {
  std::map<std::string, double> gemm_fraction;  // "bf16", "fp8-tensor", "fp8-block", "mxfp8"
  double attention_forward_fraction = 0;        // FlashAttention at head dim 128
  double attention_backward_fraction = 0;
  double host_s_per_kernel = 0;  // host (Python, PyTorch, launch) time per kernel
};

// How often a job is interrupted and what an interruption and a checkpoint cost (goodput.h).
struct Reliability {
  double interruptions_per_gpu_hour = 0;
  double restart_s = 0;  // from an interruption to training again (detect, reschedule, reload)
  double checkpoint_bytes_per_param = 0;            // weights, fp32 master copy, Adam moments
  double checkpoint_write_bytes_per_s_per_gpu = 0;  // storage write bandwidth per GPU
};

// The GEMM-rate key a precision uses: "bf16", "fp8-tensor" (delayed or current per-tensor
// scaling), "fp8-block" or "mxfp8".
std::string GemmRateKey(const TrainConfig& config);

// The range of measured / predicted throughput over the published runs of one model on one GPU.
struct ModelGpuSpread {
  std::string model, gpu;   // catalog names
  std::string moe_routing;  // an MoE model's runs: "dropless" or "token-drop"; else empty
  double ratio_low = 1, ratio_high = 1;
  int64_t rows = 0;
  std::string runs;  // what they were: "BF16", "FP8-CS, FP8-MX"
};

// The 10th and 90th percentile of measured / predicted throughput over an engine's published
// runs, what those runs were and the GPUs (catalog names) they ran on; and, where the profile
// states it, the range over each model's runs on each GPU (a model the engine misses more than
// the rest shows there).
struct MeasuredSpread {
  double ratio_p10 = 1, ratio_p90 = 1;
  std::string on;
  std::vector<std::string> gpus;
  std::vector<ModelGpuSpread> by_model;
};

struct TrainEngine {
  std::string name;
  std::string description;
  bool flash_attention = true;    // scores stay on chip; else S and P go through HBM
  bool sequence_parallel = true;  // TP splits norms and dropout over the sequence
  bool dropout = false;           // dropout masks stored for the backward pass
  // FlashAttention's rate falls with the head dimension d as d / (d + this) (tiles per byte).
  double attention_head_dim_overhead = 0;
  // Forward HBM traffic of the element-wise kernels per token and layer, in bf16 tensor passes
  // (one read or write of a tensor): of hidden width (norms, residual adds), of the query and
  // key width (rotary embedding), and per attention score when scores are materialised.
  double hidden_tensors = 0;
  double rope_tensors = 0;
  double score_tensors = 0;
  // MoE: passes over the routed token copies (hidden width) per layer forward: permutation
  // before dispatch and after combine, regrouping by local expert.
  double moe_token_tensors = 0;
  // An expert activation with clamped inputs (GPT-OSS's SwiGLU limit) has no fused kernel: its
  // forward passes over the FFN width and its kernels, where a fused SwiGLU takes 3 and 1.
  double clamped_glu_tensors = 0;
  double clamped_glu_kernels = 0;
  double backward_traffic_factor = 2;  // backward element-wise traffic over forward
  // Bytes moved per element cast to FP8 for a GEMM, by recipe (read bf16, write the row-wise
  // and column-wise copies, the scaling's own passes).
  std::map<Fp8Recipe, double> fp8_cast_bytes;
  // Kernels launched per layer and micro-batch, forward: the attention block (norm, QKV, rotary,
  // attention, projection, residual), a dense MLP block, a MoE block without its experts
  // (router, top-k, permutation, dispatch and combine), each local expert, and each FP8 cast.
  double kernels_attention = 0;
  double kernels_dense_mlp = 0;
  double kernels_moe = 0;
  double kernels_per_expert = 0;
  double kernels_per_fp8_cast = 0;
  double backward_kernel_factor = 2;  // backward kernels over forward
  // Layers with static shapes (attention, dense MLPs, MoE with token drop and padding) run as
  // CUDA graphs: the host launches a graph, not each kernel.
  bool cuda_graphs = false;
  // Dropless MoE copies its tokens-per-expert counts to the host in every forward layer: the host
  // waits for the GPU there (this is the round trip) and cannot run ahead.
  double host_sync_s = 0;
  double grad_bytes_per_param = 2;         // gradient buffer format (memory)
  double grad_reduce_bytes_per_param = 2;  // gradient reduce-scatter / all-reduce format
  double optimizer_bytes_per_param = 0;    // HBM traffic of the Adam step per parameter
  bool overlap_grad_reduce = false;        // gradient reduction hides behind the last backward
  bool overlap_param_gather = false;       // ZeRO parameter all-gather hides behind forward
  bool overlap_tp_comm = false;            // TP all-gathers and reduce-scatters hide behind GEMMs
  bool overlap_ep_comm = false;            // EP dispatch/combine hides behind another micro-batch
  // EP dispatch sends a token once per destination GPU in its NVLink domain and once per
  // destination node beyond it, forwarding inside the node (DeepEP, HybridEP); else k copies.
  // The second: whether that dispatcher also takes token-drop runs (experts' inputs padded to
  // capacity); where not, they send k copies.
  bool ep_dispatch_dedup = false;
  bool ep_dispatch_dedup_token_drop = false;
  double ep_network_fraction = 1;  // of the NIC's line rate such a dispatch reaches across nodes
  bool overlap_pp_comm = false;    // PP sends hide behind the next chunk's compute
  // Compute lost per second of communication hidden under it (the SMs and HBM bandwidth the
  // collective's kernels take).
  double overlap_compute_cost = 0;
  bool fp8_param_gather = false;  // FP8 recipes all-gather parameters in FP8
  std::vector<ScheduleKind> schedules;
  std::vector<int> zero_stages;
  // The GEMM formats it trains in and whether it splits sequences (cp) and experts (ep) over
  // GPUs: the profile's optional "dtypes" and "parallelisms" (default: bf16 and fp8; all).
  std::vector<Dtype> dtypes = {Dtype::kBf16, Dtype::kFp8};
  bool context_parallel = true;
  bool expert_parallel = true;
  double workspace_bytes = 0;      // cuBLAS/NCCL workspaces and the CUDA context
  double usable_hbm_fraction = 1;  // of HBM, after allocator fragmentation
  // The spread of published runs of this engine around its predictions, where the profile
  // states one (measured_ratio_p10/p90, measured_on, measured_gpus).
  std::optional<MeasuredSpread> measured;
  Reliability reliability;
  // Per GPU catalog name; "default" serves GPUs not listed (from the GPU catalog's fractions).
  std::map<std::string, TrainGpuRates> gpus;
  std::map<std::string, std::string> sources;
  std::map<std::string, Provenance> provenance;

  // Whether the engine states rates of its own for `gpu` (else "default" and the GPU catalog's
  // fractions serve it).
  bool Calibrates(const GpuSpec& gpu) const { return gpus.contains(gpu.name); }
  bool Offers(ScheduleKind kind) const;
  bool OffersZero(int stage) const;
  bool OffersDtype(Dtype dtype) const;
  // The rates on `gpu`: its own entry, else the default entry filled from the GPU catalog.
  TrainGpuRates RatesOn(const GpuSpec& gpu) const;
  // The GPUs whose own entry states the GEMM rate `key` ("fp8-mxfp8"), in name order.
  std::vector<std::string> GpusWithRate(const std::string& key) const;
};

StatusOr<TrainEngine> ParseTrainEngine(const nlohmann::json& json, const std::string& source);

std::vector<std::string> BuiltinTrainEngineNames();
// A built-in engine by name or an engine file by path; unknown names suggest the nearest.
StatusOr<TrainEngine> LoadTrainEngine(std::string_view name_or_path);

}  // namespace shardwise::train
