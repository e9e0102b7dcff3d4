#include "shardwise/perf/recurrent.h"

#include <algorithm>
#include <cmath>

namespace shardwise {

double RecurrentCore(const OpCoster& ops, const ModelShard& s, double tokens, double sequences,
                     bool prefill, PhaseBreakdown& out) {
  const double flops = tokens * (prefill ? s.recurrent_prefill_flops : s.recurrent_decode_flops);
  // Each pass over a sequence's state reads and writes it: once per decode token, once per
  // prefill chunk of recurrent_chunk_tokens.
  const double chunk = static_cast<double>(std::max<int64_t>(1, s.recurrent_chunk_tokens));
  const double passes = prefill ? std::max(sequences, std::ceil(tokens / chunk)) : sequences;
  return ops.Roofline(flops, 2.0 * passes * s.state_bytes_per_sequence, ops.attention_flops_per_s(),
                      out);
}

}  // namespace shardwise
