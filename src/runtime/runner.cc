#include "shardwise/runtime/runner.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <memory>

#include "shardwise/runtime/compute_registry.h"
#include "shardwise/runtime/finite_check.h"
#include "shardwise/runtime/forward/stage_forward.h"
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
    d.ops[i].wait_seconds -= b.ops[i].wait_seconds;
  }
  return d;
}

}  // namespace

std::vector<int64_t> PromptTokens(const RunConfig& c, int64_t sequence) {
  std::vector<int64_t> out;
  for (int64_t i = 0; i < c.prompt_tokens; ++i) {
    out.push_back(
        static_cast<int64_t>(Mix(c.seed * 1000003ull + static_cast<uint64_t>(sequence) * 65537ull +
                                 static_cast<uint64_t>(i)) %
                             static_cast<uint64_t>(c.model.vocab_size)));
  }
  return out;
}

Status CheckRunConfig(const RunConfig& c) {
  SW_RETURN_IF_ERROR(CheckRuntimeSupport(c.model, c.layout));
  SW_RETURN_IF_ERROR(CheckDeviceCompute(c.device_compute, c.model, c.layout, c.kernels.weights));
  if (c.kernels.threads < 1 || c.kernels.threads > kMaxRankThreads) {
    return Error(
        fmt::format("`threads` ({}) must be between 1 and {}", c.kernels.threads, kMaxRankThreads));
  }
  if (c.batch < 1 || c.prompt_tokens < 1 || c.generate_tokens < 1) {
    return Error("`batch`, `prompt_len` and `gen` must be at least 1");
  }
  if (c.batch % c.layout.dp != 0) {
    return Error(
        fmt::format("`batch` ({}) must be a multiple of dp ({}): each data-parallel rank "
                    "serves its own sequences",
                    c.batch, c.layout.dp));
  }
  if (c.batch > kMaxRunBatch) {
    return Error(
        fmt::format("`batch` {} is more than a run takes ({}); the runtime checks the "
                    "split, it does not serve traffic (see 'shardwise simulate')",
                    c.batch, kMaxRunBatch));
  }
  const int64_t context =
      c.model.max_position_embeddings > 0 ? c.model.max_position_embeddings : 1'000'000;
  if (c.prompt_tokens > context || c.generate_tokens > context - c.prompt_tokens) {
    return Error(fmt::format("`prompt_len` {} plus `gen` {} exceeds {}'s context of {} tokens",
                             c.prompt_tokens, c.generate_tokens, c.model.name, context));
  }
  if (c.micro_batches < 0 || c.micro_batches > c.batch / c.layout.dp) {
    return Error(
        fmt::format("`micro_batches` ({}) must be between 1 and the sequences per DP "
                    "rank ({}); 0 picks min(pp, sequences)",
                    c.micro_batches, c.batch / c.layout.dp));
  }
  if (c.layout.GathersTokensForExperts()) {
    return FieldError(
        "layout",
        fmt::format("`layout` {}: expert-TP over attention DP (etp) is modelled by explain, "
                    "simulate and plan, but the runtime's MoE dispatch sends each token to one "
                    "rank per expert; run it as dp{}ep{}",
                    c.layout.ToString(), c.layout.dp, c.layout.ep * c.layout.etp));
  }
  if (c.redundant_experts != 0 && (!c.model.is_moe() || c.layout.ep == 1)) {
    return Error(
        fmt::format("`redundant_experts` ({}) needs a mixture-of-experts model and "
                    "ep > 1 (replicas sit on different EP ranks)",
                    c.redundant_experts));
  }
  if (c.model.is_moe() && c.layout.ep > 1) {
    SW_RETURN_IF_ERROR(
        PlaceExperts(c.model.moe.num_experts, c.layout.ep, c.redundant_experts).status());
  }
  if (!(c.capacity_factor >= 0 && c.capacity_factor < 1e6)) {  // also refuses NaN
    return Error(
        fmt::format("the capacity factor ({}) must be a finite number above 0", c.capacity_factor));
  }
  if (c.capacity_factor > 0 && !c.model.is_moe()) {
    return Error(fmt::format("a capacity factor needs a mixture-of-experts model; {} is dense",
                             c.model.name));
  }
  const int64_t chunks = 2 * c.layout.cp;
  if (c.layout.cp > 1 && c.prompt_tokens % chunks != 0) {
    return Error(fmt::format(
        "`prompt_len` ({}) must split into 2 x cp = {} equal chunks: context parallelism gives "
        "each of the {} CP ranks two mirrored chunks of the prompt (causal load balancing); use "
        "a multiple of {} or a smaller cp",
        c.prompt_tokens, chunks, c.layout.cp, chunks));
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
  // Groups: TP (same stage, DP and CP rank), CP (same stage, DP and TP rank), PP (same DP, CP
  // and TP rank), the replica's stage (EP).
  const int tp = static_cast<int>(l.tp), cp = static_cast<int>(l.cp);
  const int stage_dp = p.stage * static_cast<int>(l.dp) + p.dp_index;
  SW_ASSIGN_OR_RETURN(auto tp_comm, world.Split(stage_dp * cp + p.cp_index, p.tp_index));
  SW_ASSIGN_OR_RETURN(auto cp_comm, world.Split(stage_dp * tp + p.tp_index, p.cp_index));
  SW_ASSIGN_OR_RETURN(auto pp,
                      world.Split((p.dp_index * cp + p.cp_index) * tp + p.tp_index, p.stage));
  SW_ASSIGN_OR_RETURN(
      auto stage, world.Split(p.stage * static_cast<int>(l.Replicas()) + p.replica, p.stage_rank));
  const RankComms comms{tp_comm.get(), stage.get(), cp_comm.get()};
  const std::vector<Communicator*> all = {&world, tp_comm.get(), cp_comm.get(), pp.get(),
                                          stage.get()};

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
  // This rank's prompt positions: under CP, chunks cp_index and 2 cp - 1 - cp_index of 2 cp
  // (the early chunk's causal work is light, the mirrored late one's heavy).
  std::vector<int64_t> prompt_positions;
  const int64_t chunk = c.prompt_tokens / (2 * l.cp);
  for (int64_t part : {static_cast<int64_t>(p.cp_index), 2 * l.cp - 1 - p.cp_index}) {
    if (l.cp == 1 && part > 0) break;
    const int64_t size = l.cp == 1 ? c.prompt_tokens : chunk;
    for (int64_t i = 0; i < size; ++i) prompt_positions.push_back(part * chunk + i);
  }
  // Its KV cache: its prompt positions and every cp-th generated token.
  const int64_t cache_tokens =
      static_cast<int64_t>(prompt_positions.size()) + (c.generate_tokens + l.cp - 1) / l.cp;
  SW_ASSIGN_OR_RETURN(std::unique_ptr<Kernels> kernels,
                      MakeKernels(c.device_compute, world.rank(), c.kernels.threads));
  SW_ASSIGN_OR_RETURN(
      std::unique_ptr<StageForward> stage_forward,
      StageForward::Load(c.model, l, world.rank(), {weights.get()}, std::move(kernels), per_rank,
                         cache_tokens, {c.redundant_experts, c.capacity_factor},
                         c.kernels.weights));
  StageForward& model = *stage_forward;
  const int64_t stage_first_layer = model.layers().begin;
  const int64_t stage_last_layer = model.layers().end - 1;
  weights.reset();

  // Micro-batches (default: one per stage, as many as there are sequences).
  const int64_t micro = c.micro_batches > 0 ? c.micro_batches : std::min<int64_t>(l.pp, per_rank);
  std::vector<std::vector<int>> groups(static_cast<size_t>(micro));
  for (int64_t s = 0; s < per_rank; ++s)
    groups[static_cast<size_t>(s % micro)].push_back(static_cast<int>(s));
  std::vector<std::vector<int64_t>> next(
      static_cast<size_t>(micro));  // tokens to feed, per micro-batch
  for (int64_t m = 0; m < micro; ++m) {
    for (int s : groups[m]) {
      const std::vector<int64_t> prompt = PromptTokens(c, first_seq + s);
      for (int64_t i : prompt_positions) next[m].push_back(prompt[static_cast<size_t>(i)]);
    }
  }
  const int64_t hidden = model.hidden(), vocab = model.vocab();
  std::vector<float> my_logits(static_cast<size_t>(per_rank * vocab), 0.0f);
  std::vector<std::vector<int64_t>> generated(static_cast<size_t>(per_rank));
  std::vector<std::vector<float>> margins(static_cast<size_t>(per_rank));  // RunResult::margins
  const bool last = model.last_stage(), first = model.first_stage();
  const int last_stage = static_cast<int>(l.pp) - 1;

  RunResult result;
  result.micro_batches = micro;
  // Each phase starts on every rank at once and ends when every rank has finished it: the first
  // token exists only once the last stage has produced it, so the first stage waits for it at a
  // barrier (its `barrier` time) instead of stopping its clock early. What a rank spends waiting
  // on its PP neighbours (activations, the new tokens coming back to the first stage) or at that
  // barrier is its share of the bubble.
  std::vector<float> busy_wall;  // per phase: busy s, wall s
  SW_RETURN_IF_ERROR(world.Barrier());
  auto t0 = std::chrono::steady_clock::now();
  CommStats before = Snapshot(all);
  const auto waited = [&] {
    return pp->stats()[CommOp::kSendRecv].seconds + world.stats()[CommOp::kBarrier].seconds;
  };
  double wait_before = waited();
  auto end_phase = [&]() -> StatusOr<PhaseTime> {
    SW_RETURN_IF_ERROR(world.Barrier());
    const auto t1 = std::chrono::steady_clock::now();
    const CommStats after = Snapshot(all);
    const double wall = std::chrono::duration<double>(t1 - t0).count();
    busy_wall.push_back(static_cast<float>(wall - (waited() - wait_before)));
    busy_wall.push_back(static_cast<float>(wall));
    PhaseTime phase{wall, Minus(after, before)};
    t0 = t1;
    before = after;
    wait_before = waited();
    return phase;
  };
  std::vector<float> x, token_buf;
  for (int64_t step = 0; step < c.generate_tokens; ++step) {
    const std::vector<int64_t> positions =
        step == 0 ? prompt_positions : std::vector<int64_t>{c.prompt_tokens + step - 1};
    const int64_t len = static_cast<int64_t>(positions.size());
    const int64_t context = c.prompt_tokens + step;
    for (int64_t m = 0; m < micro; ++m) {
      const std::vector<int>& seqs = groups[m];
      const int64_t n = static_cast<int64_t>(seqs.size());
      if (first) {
        if (step > 0 && l.pp > 1) {  // the last stage sends back each sequence's new token
          token_buf.assign(static_cast<size_t>(n), 0.0f);
          SW_RETURN_IF_ERROR(pp->Recv(token_buf, last_stage));
          next[m].assign(token_buf.begin(), token_buf.end());
        }
        SW_RETURN_IF_ERROR(model.Embed(next[m]));
      } else {
        x.assign(static_cast<size_t>(n * len * hidden), 0.0f);
        SW_RETURN_IF_ERROR(pp->Recv(x, p.stage - 1));
        SW_RETURN_IF_ERROR(model.SetActivations(x));
      }
      SW_RETURN_IF_ERROR(model.Forward(seqs, positions, context, step == 0, comms));
      SW_RETURN_IF_ERROR(
          model.CheckActivations(fmt::format("the activations after layers {} to {} (step {})",
                                             stage_first_layer, stage_last_layer, step)));
      if (!last) {
        SW_RETURN_IF_ERROR(model.Activations(x));
        SW_RETURN_IF_ERROR(pp->Send(x, p.stage + 1));
        continue;
      }
      // The prompt's last position is in CP rank 0's second chunk: its logits decide, and the
      // chosen tokens go to the whole CP group (decode rows are the same on every CP rank).
      SW_ASSIGN_OR_RETURN(
          const Sampled sampled,
          model.Sample(n, len, *tp_comm, fmt::format("the logits (step {})", step)));
      token_buf.assign(sampled.tokens.begin(), sampled.tokens.end());
      SW_RETURN_IF_ERROR(cp_comm->Broadcast(token_buf, 0));
      next[m].clear();
      for (int64_t i = 0; i < n; ++i) {
        const auto token = static_cast<int64_t>(token_buf[static_cast<size_t>(i)]);
        next[m].push_back(token);
        generated[static_cast<size_t>(seqs[i])].push_back(token);
        margins[static_cast<size_t>(seqs[i])].push_back(sampled.margins[static_cast<size_t>(i)]);
      }
      if (step == c.generate_tokens - 1) {
        std::vector<float> logits;
        SW_RETURN_IF_ERROR(model.Logits(n, logits, *tp_comm));
        for (int64_t i = 0; i < n; ++i) {
          std::copy_n(logits.data() + i * vocab, vocab, my_logits.data() + seqs[i] * vocab);
        }
      }
      if (l.pp > 1 && step + 1 < c.generate_tokens) {
        token_buf.assign(next[m].begin(), next[m].end());
        SW_RETURN_IF_ERROR(pp->Send(token_buf, 0));
      }
    }
    if (c.on_step && world.rank() == 0) c.on_step(step + 1, c.generate_tokens);
    if (step == 0) {
      SW_ASSIGN_OR_RETURN(result.prefill, end_phase());
    }
  }
  SW_ASSIGN_OR_RETURN(result.decode, end_phase());
  // Measured bubble of a phase: 1 - (busy time of all ranks) / (ranks x the phase's span).
  std::vector<float> every(busy_wall.size() * static_cast<size_t>(world.size()));
  SW_RETURN_IF_ERROR(world.AllGather(busy_wall, every));
  for (int phase = 0; phase < 2; ++phase) {
    double busy = 0, span = 0;
    for (int r = 0; r < world.size(); ++r) {
      busy += every[static_cast<size_t>(r * 4 + phase * 2)];
      span = std::max(span, static_cast<double>(every[static_cast<size_t>(r * 4 + phase * 2 + 1)]));
    }
    PhaseTime& t = phase == 0 ? result.prefill : result.decode;
    t.bubble = span > 0 ? std::max(0.0, 1.0 - busy / (span * world.size())) : 0.0;
  }

  // Gather every sequence's tokens and final logits onto all ranks: the owners (last stage,
  // TP rank 0) contribute, everyone else adds zeros.
  const bool owner = last && p.tp_index == 0 && p.cp_index == 0;
  std::vector<float> all_logits(static_cast<size_t>(c.batch * vocab), 0.0f);
  std::vector<float> all_tokens(static_cast<size_t>(c.batch * c.generate_tokens), 0.0f);
  std::vector<float> all_margins(all_tokens.size(), 0.0f);
  if (owner) {
    std::copy(my_logits.begin(), my_logits.end(), all_logits.begin() + first_seq * vocab);
    for (int64_t s = 0; s < per_rank; ++s) {
      for (int64_t g = 0; g < c.generate_tokens; ++g) {
        const size_t at = static_cast<size_t>((first_seq + s) * c.generate_tokens + g);
        all_tokens[at] =
            static_cast<float>(generated[static_cast<size_t>(s)][static_cast<size_t>(g)]);
        all_margins[at] = margins[static_cast<size_t>(s)][static_cast<size_t>(g)];
      }
    }
  }
  std::vector<float> moe_counts = {static_cast<float>(model.moe_counts().routed),
                                   static_cast<float>(model.moe_counts().dropped)};
  SW_RETURN_IF_ERROR(world.AllReduceSum(moe_counts));
  result.routed_pairs = static_cast<int64_t>(moe_counts[0]);
  result.dropped_pairs = static_cast<int64_t>(moe_counts[1]);
  // Each sequence's smallest routing margin over every rank that routed its tokens.
  std::vector<float> router(static_cast<size_t>(c.batch), 1.0f);
  std::copy(model.router_margins().begin(), model.router_margins().end(),
            router.begin() + first_seq);
  std::vector<float> all_router(router.size() * static_cast<size_t>(world.size()));
  SW_RETURN_IF_ERROR(world.AllGather(router, all_router));
  result.router_margins.assign(static_cast<size_t>(c.batch), 1.0f);
  for (size_t i = 0; i < all_router.size(); ++i) {
    float& min = result.router_margins[i % router.size()];
    min = std::min(min, all_router[i]);
  }
  SW_RETURN_IF_ERROR(world.AllReduceSum(all_logits));
  SW_RETURN_IF_ERROR(world.AllReduceSum(all_tokens));
  SW_RETURN_IF_ERROR(world.AllReduceSum(all_margins));
  result.logits = std::move(all_logits);
  result.vocab = vocab;
  result.ranks = world.size();
  result.tokens.assign(static_cast<size_t>(c.batch), {});
  result.margins.assign(static_cast<size_t>(c.batch), {});
  for (int64_t s = 0; s < c.batch; ++s) {
    for (int64_t g = 0; g < c.generate_tokens; ++g) {
      const size_t at = static_cast<size_t>(s * c.generate_tokens + g);
      result.tokens[static_cast<size_t>(s)].push_back(static_cast<int64_t>(all_tokens[at]));
      result.margins[static_cast<size_t>(s)].push_back(all_margins[at]);
    }
  }
  return result;
}

}  // namespace shardwise
