// `models --json` and `gpus --json`: a catalog model with its exact parameter, KV and weight
// accounting; a catalog GPU with its datasheet numbers, calibration and sources.
#include "shardwise/api/json.h"
#include "shardwise/common/provenance.h"
#include "shardwise/model/accounting.h"

namespace shardwise::api {

nlohmann::json ToJson(const ModelSpec& m) {
  const ParamBreakdown p = CountParams(m);
  nlohmann::json j = {
      {"name", m.name},
      {"architecture", m.architecture},
      {"layers", m.num_layers()},
      {"hidden_size", m.hidden_size},
      {"heads", m.num_heads},
      {"kv_heads", m.num_kv_heads},
      {"head_dim", m.head_dim},
      {"attention", AttentionKindName(m.attention)},
      {"experts", m.moe.num_experts},
      {"experts_per_token", m.moe.experts_per_token},
      {"shared_experts", m.moe.num_shared_experts},
      {"moe_layers", m.num_moe_layers()},
      {"sliding_window_layers", m.num_sliding_layers()},
      {"vocab_size", m.vocab_size},
      {"total_params", p.total},
      {"active_params", p.active},
      {"active_matmul_params", p.active_matmul},
      {"embedding_params", p.embedding},
      {"attention_layers", m.num_attention_layers()},
      {"recurrent_layers", m.num_recurrent_layers()},
      {"sparse_attention_topk", m.indexer ? m.indexer->topk : 0},
      {"kv_bytes_per_token", KvBytesPerToken(m, Dtype::kBf16)},
      {"state_bytes_per_sequence", StateBytesPerSequence(m)},
      {"weight_bytes", WeightBytes(m, Dtype::kBf16)},
      {"native_dtype", DtypeName(m.native_dtype)},
      {"native_formats", m.native_formats.Describe()},
      {"native_weight_bytes", NativeWeightBytes(m)},
      {"notes", m.AllNotes()},
  };
  for (Dtype d : {Dtype::kBf16, Dtype::kFp8, Dtype::kInt4, Dtype::kMxfp4}) {
    j["weight_bytes_by_dtype"][std::string(DtypeName(d))] = WeightBytes(m, d);
  }
  return j;
}

nlohmann::json ToJson(const GpuSpec& g) {
  nlohmann::json j = {{"name", g.name},
                      {"description", g.description},
                      {"hbm_bytes", g.hbm_bytes},
                      {"hbm_bytes_per_s", g.hbm_bytes_per_s},
                      {"scale_up_bytes_per_s", g.scale_up_bytes_per_s},
                      {"scale_up", g.scale_up},
                      {"nic_bytes_per_s", g.nic_bytes_per_s},
                      {"usd_per_gpu_hour", g.usd_per_gpu_hour},
                      {"board_power_w", g.board_power_w},
                      {"hbm_fraction", g.hbm_fraction},
                      {"kernel_latency_s", g.kernel_latency_s},
                      {"calibration_measured", g.calibration_measured},
                      {"sources", g.sources}};
  for (const auto& [dtype, fraction] : g.gemm_fraction) {
    const std::string key = GpuSpec::GemmFractionKey(dtype);
    j["provenance"][key] = ProvenanceName(g.ProvenanceOf(key));
  }
  for (const char* key : {"hbm_fraction", "kernel_latency_s"}) {
    j["provenance"][key] = ProvenanceName(g.ProvenanceOf(key));
  }
  for (const auto& [dtype, flops] : g.peak_flops_per_s) {
    j["peak_flops_per_s"][std::string(DtypeName(dtype))] = flops;
  }
  for (const auto& [dtype, fraction] : g.gemm_fraction) {
    j["gemm_fraction"][std::string(DtypeName(dtype))] = fraction;
  }
  return j;
}

}  // namespace shardwise::api
