// The LM head of the last stage: each TP rank applies its vocabulary rows to the sequences' last
// rows, reduces its share of every row to the best two logits and the largest magnitude on its
// backend, and the ranks combine those few numbers; the logits themselves leave the backend only
// when asked for (the run's last step).
#include <algorithm>
#include <cmath>

#include "shardwise/runtime/finite_check.h"
#include "stage_state.h"

namespace shardwise {
namespace {

constexpr int64_t kStatFloats = 5;  // best index, best, second, max |logit|, non-finite count

}  // namespace

Status GatherVocabShares(const std::vector<float>& mine, int64_t seqs, int64_t part, int64_t vocab,
                         Communicator& tp, std::vector<float>& out) {
  std::vector<float> all(mine.size() * static_cast<size_t>(tp.size()));
  SW_RETURN_IF_ERROR(tp.AllGather(mine, all));
  out.assign(static_cast<size_t>(seqs * vocab), 0.0f);
  for (int r = 0; r < tp.size(); ++r) {
    const int64_t begin = r * part, n = std::max<int64_t>(0, std::min(part, vocab - begin));
    for (int64_t s = 0; s < seqs; ++s) {
      std::copy_n(all.data() + (r * seqs + s) * part, n, out.data() + s * vocab + begin);
    }
  }
  return Status();
}

StatusOr<Sampled> StageForward::Sample(int64_t n, int64_t len, Communicator& tp,
                                       const std::string& what) {
  StageState& s = *s_;
  const int64_t h = hidden(), part = s.shard.vocab.padded_rows;
  std::vector<int32_t> last(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    last[static_cast<size_t>(i)] = static_cast<int32_t>((i + 1) * len - 1);
  SW_ASSIGN_OR_RETURN(Tensor * rows, s.Get(Scratch::kLastRows, TensorKind::kFloat, n, h));
  SW_ASSIGN_OR_RETURN(Tensor * normed, s.Get(Scratch::kLastNormed, TensorKind::kGemmInput, n, h));
  SW_ASSIGN_OR_RETURN(Tensor * logits, s.Get(Scratch::kLogits, TensorKind::kFloat, n, part));
  SW_RETURN_IF_ERROR(s.k().GatherRows(*s.x, last, *rows, h));
  SW_RETURN_IF_ERROR(s.k().RmsNorm(*rows, *s.weights.final_norm, *normed, n, s.model.rms_norm_eps));
  SW_RETURN_IF_ERROR(s.k().Gemm(*normed, *s.weights.lm_head, nullptr, *logits, n));
  s.logit_rows = n;
  std::vector<LogitStat> stats(static_cast<size_t>(n));
  SW_RETURN_IF_ERROR(s.k().LogitStats(*logits, n, part, s.shard.vocab.rows.size(), stats));
  std::vector<float> mine(static_cast<size_t>(n * kStatFloats));
  for (int64_t i = 0; i < n; ++i) {
    const LogitStat& st = stats[static_cast<size_t>(i)];
    float* m = mine.data() + i * kStatFloats;
    m[0] = static_cast<float>(s.shard.vocab.rows.begin + st.best_index);
    m[1] = st.best;
    m[2] = st.second;
    m[3] = st.max_abs;
    m[4] = static_cast<float>(st.non_finite);
  }
  std::vector<float> all(mine.size() * static_cast<size_t>(tp.size()));
  SW_RETURN_IF_ERROR(tp.AllGather(mine, all));
  Sampled out;
  bool finite = true;
  for (int64_t i = 0; i < n; ++i) {
    LogitStat row;
    for (int r = 0; r < tp.size(); ++r) {  // in vocabulary order
      const float* m = all.data() + (r * n + i) * kStatFloats;
      row.Fold(m[1], static_cast<int64_t>(m[0]));
      row.Fold(m[2], 0);  // never the best: it is at most the share's best
      row.max_abs = std::max(row.max_abs, m[3]);
      finite = finite && m[4] == 0;
    }
    out.tokens.push_back(row.best_index);
    out.margins.push_back(vocab() < 2       ? 1.0f
                          : row.max_abs > 0 ? (row.best - row.second) / row.max_abs
                                            : 0.0f);
  }
  if (!finite) {
    std::vector<float> full;
    SW_RETURN_IF_ERROR(Logits(n, full, tp));
    return RuntimeFailure(CheckFinite(full, what).message());
  }
  return out;
}

Status StageForward::Logits(int64_t n, std::vector<float>& out, Communicator& tp) {
  StageState& s = *s_;
  SW_CHECK(n == s.logit_rows, "Logits: the rows differ from the last Sample's");
  const int64_t part = s.shard.vocab.padded_rows;
  SW_ASSIGN_OR_RETURN(Tensor * logits, s.Get(Scratch::kLogits, TensorKind::kFloat, n, part));
  std::vector<float> mine(static_cast<size_t>(n * part));
  SW_RETURN_IF_ERROR(s.k().Download(*logits, mine));
  return GatherVocabShares(mine, n, part, vocab(), tp, out);
}

}  // namespace shardwise
