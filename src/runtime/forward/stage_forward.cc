#include "shardwise/runtime/forward/stage_forward.h"

#include <fmt/format.h>

#include <algorithm>

#include "shardwise/runtime/finite_check.h"
#include "stage_state.h"

namespace shardwise {

Status CheckRuntimeSupport(const ModelSpec& m, const Layout& l) {
  SW_RETURN_IF_ERROR(ValidateLayout(l, m));
  SW_RETURN_IF_ERROR(CheckRopeScaling(m));
  const std::string why = m.num_recurrent_layers() > 0 ? "linear-attention or SSM layers"
                          : m.num_attention_layers() < m.num_layers() ? "a hybrid layer pattern"
                          : m.indexer                                 ? "sparse attention (DSA)"
                          : m.attention_output_gate                   ? "gated attention output"
                          : m.qk_norm == QkNorm::kPerLayer            ? "per-layer Q/K norms"
                          : !m.gated_ffn ? "a GELU MLP with LayerNorm (GPT-2 style)"
                                         : "";
  if (!why.empty()) {
    return Error(fmt::format("the runtime does not execute {} ({}) yet", m.name, why));
  }
  if (m.is_moe() &&
      m.moe.groups_per_token * (m.moe.num_experts / m.moe.num_groups) < m.moe.experts_per_token) {
    return Error(
        fmt::format("{}: topk_group ({}) groups of {} experts cannot supply {} experts "
                    "per token",
                    m.name, m.moe.groups_per_token, m.moe.num_experts / m.moe.num_groups,
                    m.moe.experts_per_token));
  }
  if (m.num_moe_layers() > 0 && m.num_moe_layers() < m.num_layers() && l.ep > 1 &&
      m.intermediate_size % l.tp != 0) {
    return Error("the dense layers' FFN width must divide by tp");
  }
  return Status();
}

std::vector<OpNeed> StageOpNeeds(const ModelSpec& m, WeightStorage storage) {
  using Kind = OpNeed::Kind;
  std::vector<OpNeed> needs = {{Kind::kGemm, storage}};
  if (m.mla) {
    const MlaSpec& a = *m.mla;
    needs.push_back({Kind::kGemm, WeightStorage::kFp32});
    // Expanded (prefill) and absorbed (decode) attention.
    needs.push_back(
        {Kind::kAttention, storage, a.qk_nope_head_dim + a.qk_rope_head_dim, a.v_head_dim});
    needs.push_back(
        {Kind::kAttention, storage, a.kv_lora_rank + a.qk_rope_head_dim, a.kv_lora_rank});
  } else {
    needs.push_back({Kind::kAttention, storage, m.head_dim, m.head_dim});
  }
  return needs;
}

StatusOr<Tensor*> ScratchTensors::Get(Kernels& k, Scratch slot, TensorKind kind, int64_t rows,
                                      int64_t cols) {
  TensorPtr& t = t_[static_cast<size_t>(slot)];
  if (!t || t->size() < rows * cols) {
    // Grown by half again, so steps of slowly rising sizes do not reallocate each time; a slot
    // used at several widths keeps the largest.
    const int64_t have = t ? t->size() / std::max<int64_t>(1, cols) : 0;
    const int64_t want = std::max(rows, have + have / 2);
    SW_ASSIGN_OR_RETURN(t, k.Alloc(kind, std::max<int64_t>(1, want), cols));
    ++generation_;
  }
  return t.get();
}

StatusOr<float*> HostView(StageState& s, const Tensor& t, int64_t n, std::vector<float>& staging) {
  if (float* p = s.k().HostData(t)) return p;
  staging.resize(static_cast<size_t>(n));
  SW_RETURN_IF_ERROR(s.k().Download(t, std::span<float>(staging.data(), staging.size())));
  return staging.data();
}

Status CommitView(StageState& s, Tensor& t, const float* view, int64_t n) {
  if (s.k().HostData(t) == view) return Status();
  return s.k().Upload(std::span<const float>(view, static_cast<size_t>(n)), t);
}

Status AllReduce(StageState& s, Communicator& comm, Tensor& t, int64_t n) {
  if (comm.size() == 1) return Status();
  SW_ASSIGN_OR_RETURN(float* host, HostView(s, t, n, s.staging));
  SW_RETURN_IF_ERROR(comm.AllReduceSum(std::span<float>(host, static_cast<size_t>(n))));
  return CommitView(s, t, host, n);
}

Status ApplyMlp(StageState& s, const MlpWeights& w, const Tensor& x, int64_t rows, Tensor& out) {
  SW_ASSIGN_OR_RETURN(Tensor * gate_up,
                      s.Get(Scratch::kGateUp, TensorKind::kFloat, rows, 2 * w.inter));
  SW_ASSIGN_OR_RETURN(Tensor * act, s.Get(Scratch::kAct, TensorKind::kGemmInput, rows, w.inter));
  SW_RETURN_IF_ERROR(s.k().Gemm(x, *w.gate_up, w.gate_up_bias.get(), *gate_up, rows));
  SW_RETURN_IF_ERROR(s.k().SwiGlu(*gate_up, *act, rows, w.inter, w.swiglu_limit));
  return s.k().Gemm(*act, *w.down, w.down_bias.get(), out, rows);
}

StageForward::StageForward(std::unique_ptr<StageState> state) : s_(std::move(state)) {}
StageForward::~StageForward() = default;

StatusOr<std::unique_ptr<StageForward>> StageForward::Load(const ModelSpec& m, const Layout& l,
                                                           int world_rank, WeightOrigin weights,
                                                           std::unique_ptr<Kernels> kernels,
                                                           int64_t sequences, int64_t cache_tokens,
                                                           const MoeRunOptions& moe,
                                                           WeightStorage storage) {
  SW_RETURN_IF_ERROR(CheckRuntimeSupport(m, l));
  auto s = std::make_unique<StageState>();
  s->model = m;
  s->layout = l;
  s->shard = ShardRank(m, l, world_rank);
  s->moe_options = moe;
  s->cache_tokens = cache_tokens;
  s->sequences = sequences;
  s->kernels = std::move(kernels);
  s->cached.assign(static_cast<size_t>(sequences), {});
  s->router_margins.assign(static_cast<size_t>(sequences), 1.0f);
  if (m.is_moe()) {
    SW_ASSIGN_OR_RETURN(
        s->placement, PlaceExperts(m.moe.num_experts, l.ep, l.ep > 1 ? moe.redundant_experts : 0));
  }
  SW_ASSIGN_OR_RETURN(s->weights, LoadStageWeights(m, s->shard, s->placement, weights, storage,
                                                   *s->kernels, sequences, cache_tokens));
  return std::unique_ptr<StageForward>(new StageForward(std::move(s)));
}

bool StageForward::first_stage() const { return s_->shard.first_stage; }
bool StageForward::last_stage() const { return s_->shard.last_stage; }
Range StageForward::layers() const { return s_->shard.layers; }
int64_t StageForward::hidden() const { return s_->model.hidden_size; }
int64_t StageForward::vocab() const { return s_->model.vocab_size; }
const MoeCounts& StageForward::moe_counts() const { return s_->moe_counts; }
const std::vector<float>& StageForward::router_margins() const { return s_->router_margins; }

Status StageForward::Embed(const std::vector<int64_t>& tokens) {
  const int64_t rows = static_cast<int64_t>(tokens.size());
  SW_ASSIGN_OR_RETURN(s_->x, s_->Get(Scratch::kX, TensorKind::kFloat, rows, hidden()));
  s_->x_rows = rows;
  return s_->k().Embed(*s_->weights.embed, tokens, *s_->x);
}

Status StageForward::SetActivations(const std::vector<float>& x) {
  const int64_t rows = static_cast<int64_t>(x.size()) / hidden();
  if (rows == 0) return Status();
  SW_ASSIGN_OR_RETURN(s_->x, s_->Get(Scratch::kX, TensorKind::kFloat, rows, hidden()));
  s_->x_rows = rows;
  return s_->k().Upload(x, *s_->x);
}

Status StageForward::Activations(std::vector<float>& x) {
  x.resize(static_cast<size_t>(s_->x_rows * hidden()));
  return s_->k().Download(*s_->x, x);
}

Status StageForward::CheckActivations(const std::string& what) {
  SW_ASSIGN_OR_RETURN(auto bad, s_->k().FirstNonFinite(*s_->x, s_->x_rows * hidden()));
  if (!bad) return Status();
  std::vector<float> x;
  SW_RETURN_IF_ERROR(Activations(x));
  return RuntimeFailure(CheckFinite(x, what).message());
}

namespace {

// The step's rows: which cache slots they fill (this rank's own prefill chunks, or for rows
// every CP rank holds, those whose position falls to it, position mod cp, so decode spreads the
// new tokens' keys evenly over the group) and the positions the caches then hold.
Status SetUpStep(StageState& s, const std::vector<int>& seqs, const std::vector<int64_t>& positions,
                 int64_t context, bool split, Communicator& cp) {
  StepRows& step = s.step;
  const int64_t len = static_cast<int64_t>(positions.size());
  s.split = split && cp.size() > 1;
  const std::vector<int64_t>& cached = s.cached[static_cast<size_t>(seqs.front())];
  const size_t count = cached.size();
  if (s.split && count > 0) {
    return Error("context parallelism splits a prefill only from the first token");
  }
  step.seqs.assign(seqs.begin(), seqs.end());
  step.positions = positions;
  step.store_slots.assign(static_cast<size_t>(len), -1);
  int64_t slot = static_cast<int64_t>(count);
  for (int64_t t = 0; t < len; ++t) {
    if (s.split || positions[t] % cp.size() == cp.rank()) step.store_slots[t] = slot++;
  }
  if (slot > s.cache_tokens) {
    return Error(
        fmt::format("the KV cache holds {} tokens per sequence on this rank; the run "
                    "needs {}",
                    s.cache_tokens, slot));
  }
  for (int sq : seqs) {
    std::vector<int64_t>& mine = s.cached[static_cast<size_t>(sq)];
    if (mine.size() != count) return Error("the sequences of one step must hold equal caches");
    for (int64_t t = 0; t < len; ++t) {
      if (step.store_slots[t] >= 0) mine.push_back(positions[t]);
    }
  }
  step.key_positions = s.cached[static_cast<size_t>(seqs.front())];
  const int64_t rope_dim = s.model.mla ? s.model.mla->qk_rope_head_dim : s.model.head_dim;
  step.rope = ComputeRopeFrequencies(s.model, rope_dim, context);
  return s.k().BeginStep(step);
}

// Decode steps with no collective inside the stage can be replayed as one graph.
bool Replayable(const StageState& s, const RankComms& c) {
  return s.step.positions.size() == 1 && s.model.num_moe_layers() == 0 && c.tp->size() == 1 &&
         c.cp->size() == 1;
}

}  // namespace

Status StageForward::Forward(const std::vector<int>& seqs, const std::vector<int64_t>& positions,
                             int64_t context, bool split, const RankComms& c) {
  StageState& s = *s_;
  SW_RETURN_IF_ERROR(SetUpStep(s, seqs, positions, context, split, *c.cp));
  const int64_t h = hidden(), rows = s.step.rows();
  if (rows != s.x_rows) return Error("Forward: the rows differ from the activations'");
  SW_ASSIGN_OR_RETURN(Tensor * y, s.Get(Scratch::kY, TensorKind::kFloat, rows, h));
  SW_ASSIGN_OR_RETURN(Tensor * normed, s.Get(Scratch::kNormed, TensorKind::kGemmInput, rows, h));
  SW_ASSIGN_OR_RETURN(Tensor * normed_f32, s.Get(Scratch::kNormedF32, TensorKind::kFloat, rows, h));
  // A graph replays the ops of a step seen before, over the same tensors: keyed by the rows and
  // the scratch tensors' generation (a reallocation moves them, the activations included).
  const bool replayable = Replayable(s, c);
  const int64_t key = rows + (s.scratch.generation() << 32);
  const bool seen = std::find(s.graph_seen.begin(), s.graph_seen.end(), key) != s.graph_seen.end();
  bool issue = true;
  if (replayable && seen) {
    SW_ASSIGN_OR_RETURN(issue, s.k().BeginGraph(key));
  }
  if (issue) {
    const double eps = s.model.rms_norm_eps;
    for (size_t i = 0; i < s.weights.layers.size(); ++i) {
      const LayerWeights& L = s.weights.layers[i];
      if (i == 0) {
        SW_RETURN_IF_ERROR(s.k().RmsNorm(*s.x, *L.input_norm, *normed, rows, eps));
      } else {
        SW_RETURN_IF_ERROR(s.k().AddRmsNorm(*s.x, *y, *L.input_norm, *normed, rows, eps));
      }
      SW_RETURN_IF_ERROR(AttentionBlock(s, L, *normed, *y, c));
      if (L.mlp) {
        SW_RETURN_IF_ERROR(s.k().AddRmsNorm(*s.x, *y, *L.post_norm, *normed, rows, eps));
        SW_RETURN_IF_ERROR(ApplyMlp(s, *L.mlp, *normed, rows, *y));
        SW_RETURN_IF_ERROR(AllReduce(s, *c.tp, *y, rows * h));
      } else {
        SW_RETURN_IF_ERROR(s.k().AddRmsNorm(*s.x, *y, *L.post_norm, *normed_f32, rows, eps));
        SW_RETURN_IF_ERROR(s.k().Copy(*normed_f32, *normed, rows * h));
        SW_RETURN_IF_ERROR(MoeBlock(s, *L.moe, *normed, *normed_f32, *y, c));
      }
    }
    if (!s.weights.layers.empty()) SW_RETURN_IF_ERROR(s.k().Add(*s.x, *y, rows * h));
  }
  if (replayable && seen) return s.k().EndGraph();
  if (replayable) s.graph_seen.push_back(key);
  return Status();
}

}  // namespace shardwise
