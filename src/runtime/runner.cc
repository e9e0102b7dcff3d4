#include "shardwise/runtime/runner.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <memory>

#include "shardwise/runtime/finite_check.h"
#include "shardwise/runtime/rank_model.h"
#include "shardwise/runtime/weights.h"

namespace shardwise {
namespace {

uint64_t Mix(uint64_t x) {  // SplitMix64
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

CommStats Snapshot(const std::vector<Communicator*>& comms) {
  CommStats s;
  for (const Communicator* c : comms) s.Merge(c->stats());
  return s;
}

CommStats Minus(const CommStats& a, const CommStats& b) {
  CommStats d = a;
  for (int i = 0; i < kCommOpCount; ++i) {
    d.ops[i].calls -= b.ops[i].calls;
    d.ops[i].bytes -= b.ops[i].bytes;
    d.ops[i].seconds -= b.ops[i].seconds;
  }
  return d;
}

}  // namespace

std::vector<int64_t> PromptTokens(const RunConfig& c, int64_t sequence) {
  std::vector<int64_t> out;
  for (int64_t i = 0; i < c.prompt_tokens; ++i) {
    out.push_back(static_cast<int64_t>(
        Mix(c.seed * 1000003ull + static_cast<uint64_t>(sequence) * 65537ull + static_cast<uint64_t>(i)) %
        static_cast<uint64_t>(c.model.vocab_size)));
  }
  return out;
}

Status CheckRunConfig(const RunConfig& c) {
  SW_RETURN_IF_ERROR(CheckRuntimeSupport(c.model, c.layout));
  if (c.batch < 1 || c.prompt_tokens < 1 || c.generate_tokens < 1) {
    return Error("--batch, --prompt-len and --gen must be at least 1");
  }
  if (c.batch % c.layout.dp != 0) {
    return Error(fmt::format("--batch ({}) must be a multiple of dp ({}): each data-parallel rank "
                             "serves its own sequences",
                             c.batch, c.layout.dp));
  }
  if (c.batch > kMaxRunBatch) {
    return Error(
        fmt::format("--batch {} is more than a run takes ({}); the runtime checks the "
                    "split, it does not serve traffic (see 'shardwise simulate')",
                    c.batch, kMaxRunBatch));
  }
  const int64_t context =
      c.model.max_position_embeddings > 0 ? c.model.max_position_embeddings : 1'000'000;
  if (c.prompt_tokens > context || c.generate_tokens > context - c.prompt_tokens) {
    return Error(fmt::format("--prompt-len {} plus --gen {} exceeds {}'s context of {} tokens",
                             c.prompt_tokens, c.generate_tokens, c.model.name, context));
  }
  return Status();
}

StatusOr<RunResult> RunRank(const RunConfig& c, Communicator& world) {
  SW_RETURN_IF_ERROR(CheckRunConfig(c));
  const Layout& l = c.layout;
  if (world.size() != l.gpus()) {
    return Error(fmt::format("layout {} needs {} ranks; the run has {}", l.ToString(), l.gpus(),
                             world.size()));
  }
  const RankPlacement p = PlaceRank(l, world.rank());
  // Groups: TP (same stage and DP rank), PP (same DP and TP rank), the replica's stage (EP).
  const int tp_color = p.stage * static_cast<int>(l.dp) + p.dp_index;
  SW_ASSIGN_OR_RETURN(auto tp, world.Split(tp_color, p.tp_index));
  SW_ASSIGN_OR_RETURN(auto pp, world.Split(p.dp_index * static_cast<int>(l.tp) + p.tp_index, p.stage));
  SW_ASSIGN_OR_RETURN(auto stage, world.Split(p.stage * static_cast<int>(l.Replicas()) + p.replica,
                                              p.stage_rank));
  const RankComms comms{tp.get(), stage.get()};
  const std::vector<Communicator*> all = {&world, tp.get(), pp.get(), stage.get()};

  // This rank's sequences: the batch split evenly over DP ranks.
  const int64_t per_rank = c.batch / l.dp;
  const int64_t first_seq = p.dp_index * per_rank;
  std::unique_ptr<WeightSource> weights;
  if (c.weights_dir.empty()) {
    weights = GeneratedWeights(c.seed);
  } else {
    SW_ASSIGN_OR_RETURN(weights, OpenSafetensors(c.weights_dir));
  }
  weights = FiniteWeights(std::move(weights));
  const int64_t max_tokens = c.prompt_tokens + c.generate_tokens;
  SW_ASSIGN_OR_RETURN(RankModel model,
                      RankModel::Load(c.model, l, p, *weights, per_rank, max_tokens));
  weights.reset();

  // Micro-batches: up to one per stage.
  const int64_t micro = std::min<int64_t>(l.pp, per_rank);
  std::vector<std::vector<int>> groups(static_cast<size_t>(micro));
  for (int64_t s = 0; s < per_rank; ++s) groups[static_cast<size_t>(s % micro)].push_back(static_cast<int>(s));
  std::vector<std::vector<int64_t>> next(static_cast<size_t>(micro));  // tokens to feed, per micro-batch
  for (int64_t m = 0; m < micro; ++m) {
    for (int s : groups[m]) {
      const std::vector<int64_t> prompt = PromptTokens(c, first_seq + s);
      next[m].insert(next[m].end(), prompt.begin(), prompt.end());
    }
  }
  const int64_t hidden = model.hidden(), vocab = model.vocab();
  std::vector<float> my_logits(static_cast<size_t>(per_rank * vocab), 0.0f);
  std::vector<std::vector<int64_t>> generated(static_cast<size_t>(per_rank));
  const bool last = model.last_stage(), first = model.first_stage();
  const int last_stage = static_cast<int>(l.pp) - 1;

  RunResult result;
  auto t0 = std::chrono::steady_clock::now();
  CommStats before = Snapshot(all);
  std::vector<float> x, logits, token_buf;
  for (int64_t step = 0; step < c.generate_tokens; ++step) {
    const int64_t len = step == 0 ? c.prompt_tokens : 1;
    const int64_t pos = step == 0 ? 0 : c.prompt_tokens + step - 1;
    for (int64_t m = 0; m < micro; ++m) {
      const std::vector<int>& seqs = groups[m];
      const int64_t n = static_cast<int64_t>(seqs.size());
      if (first) {
        if (step > 0 && l.pp > 1) {  // the last stage sends back each sequence's new token
          token_buf.assign(static_cast<size_t>(n), 0.0f);
          SW_RETURN_IF_ERROR(pp->Recv(token_buf, last_stage));
          next[m].assign(token_buf.begin(), token_buf.end());
        }
        model.Embed(next[m], x);
      } else {
        x.assign(static_cast<size_t>(n * len * hidden), 0.0f);
        SW_RETURN_IF_ERROR(pp->Recv(x, p.stage - 1));
      }
      SW_RETURN_IF_ERROR(model.Forward(x, seqs, pos, len, comms));
      if (const Status finite =
              CheckFinite(x, fmt::format("the activations after layers {} to {} (step {})",
                                         model.layer_begin(), model.layer_end() - 1, step));
          !finite.ok()) {
        return RuntimeFailure(finite.message());
      }
      if (!last) {
        SW_RETURN_IF_ERROR(pp->Send(x, p.stage + 1));
        continue;
      }
      model.Logits(x, n, len, logits);
      if (const Status finite = CheckFinite(logits, fmt::format("the logits (step {})", step));
          !finite.ok()) {
        return RuntimeFailure(finite.message());
      }
      next[m].clear();
      for (int64_t i = 0; i < n; ++i) {
        const float* row = logits.data() + i * vocab;
        const int64_t token = std::max_element(row, row + vocab) - row;
        next[m].push_back(token);
        generated[static_cast<size_t>(seqs[i])].push_back(token);
        if (step == c.generate_tokens - 1) {
          std::copy_n(row, vocab, my_logits.data() + seqs[i] * vocab);
        }
      }
      if (l.pp > 1 && step + 1 < c.generate_tokens) {
        token_buf.assign(next[m].begin(), next[m].end());
        SW_RETURN_IF_ERROR(pp->Send(token_buf, 0));
      }
    }
    if (c.on_step && world.rank() == 0) c.on_step(step + 1, c.generate_tokens);
    if (step == 0) {
      const auto t1 = std::chrono::steady_clock::now();
      const CommStats after = Snapshot(all);
      result.prefill = {std::chrono::duration<double>(t1 - t0).count(), Minus(after, before)};
      t0 = t1;
      before = after;
    }
  }
  result.decode = {std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(),
                   Minus(Snapshot(all), before)};

  // Gather every sequence's tokens and final logits onto all ranks: the owners (last stage,
  // TP rank 0) contribute, everyone else adds zeros.
  const bool owner = last && p.tp_index == 0;
  std::vector<float> all_logits(static_cast<size_t>(c.batch * vocab), 0.0f);
  std::vector<float> all_tokens(static_cast<size_t>(c.batch * c.generate_tokens), 0.0f);
  if (owner) {
    std::copy(my_logits.begin(), my_logits.end(), all_logits.begin() + first_seq * vocab);
    for (int64_t s = 0; s < per_rank; ++s) {
      for (int64_t g = 0; g < c.generate_tokens; ++g) {
        all_tokens[static_cast<size_t>((first_seq + s) * c.generate_tokens + g)] =
            static_cast<float>(generated[static_cast<size_t>(s)][static_cast<size_t>(g)]);
      }
    }
  }
  SW_RETURN_IF_ERROR(world.AllReduceSum(all_logits));
  SW_RETURN_IF_ERROR(world.AllReduceSum(all_tokens));
  result.logits = std::move(all_logits);
  result.vocab = vocab;
  result.ranks = world.size();
  result.tokens.assign(static_cast<size_t>(c.batch), {});
  for (int64_t s = 0; s < c.batch; ++s) {
    for (int64_t g = 0; g < c.generate_tokens; ++g) {
      result.tokens[static_cast<size_t>(s)].push_back(
          static_cast<int64_t>(all_tokens[static_cast<size_t>(s * c.generate_tokens + g)]));
    }
  }
  return result;
}

}  // namespace shardwise
