// DeepSeek Sparse Attention models: DeepseekV32ForCausalLM (DeepSeek-V3.2) and
// GlmMoeDsaForCausalLM (GLM-5). DeepSeek-V3's MLA and MoE, plus a lightning indexer on every
// layer that keeps the top index_topk keys per query for the attention core.
#include "../architecture_readers.h"

namespace shardwise::model_internal {

Status ReadDeepseekSparse(const JsonObject& c, ModelSpec& spec) {
  SW_RETURN_IF_ERROR(ReadDeepseekV3(c, spec));
  SparseIndexerSpec indexer;
  SW_ASSIGN_OR_RETURN(indexer.index_heads, c.Int("index_n_heads"));
  SW_ASSIGN_OR_RETURN(indexer.index_head_dim, c.Int("index_head_dim"));
  SW_ASSIGN_OR_RETURN(indexer.topk, c.Int("index_topk"));
  spec.indexer = indexer;
  return Status();
}

}  // namespace shardwise::model_internal
