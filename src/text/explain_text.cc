// `explain`'s text: one deployment per phase, what binds, memory per GPU; aggregated, or a
// disaggregated deployment's prefill and decode workers (text/text.h).
#include <fmt/format.h>

#include <algorithm>

#include "cost_text.h"
#include "shardwise/common/format.h"
#include "shardwise/perf/speculative.h"
#include "shardwise/report/table.h"
#include "shardwise/text/text.h"

namespace shardwise::text {
namespace {

std::string EpExchangeLine(const api::Explanation& e) {
  const StepEstimate& s = e.Step();
  const PerfOptions& perf = e.deployment.decode().perf;
  auto phase = [](const PhaseBreakdown& p) {
    return p.ep_algorithm ? std::string(EpAlgorithmName(*p.ep_algorithm)) : std::string("-");
  };
  std::string line =
      fmt::format("EP exchange: prefill {}, decode {} (dispatch {}, combine {}){}\n",
                  phase(e.estimate.prefill().one.prefill), phase(s.decode),
                  DtypeName(perf.ep.dispatch_dtype), DtypeName(perf.activation_dtype),
                  perf.ep.two_batch_overlap ? "; two micro-batches overlap it with compute" : "");
  if (s.expert_dropped_share > 0) {
    line += fmt::format(
        "capacity factor {:g}: the busiest EP rank drops {:.1f}% of its (token, expert) pairs "
        "in decode\n",
        perf.capacity_factor.value_or(0.0), 100 * s.expert_dropped_share);
  }
  return line;
}

// One phase's row of the breakdown table.
std::vector<std::string> PhaseRow(const std::string& name, const PhaseBreakdown& p) {
  return {name,
          FormatSeconds(p.compute_s),
          FormatSeconds(p.memory_s),
          FormatSeconds(p.tp_comm_s),
          FormatSeconds(p.ep_comm_s),
          FormatSeconds(p.cp_comm_s),
          FormatSeconds(p.pp_comm_s),
          FormatSeconds(p.bubble_s),
          FormatSeconds(p.launch_s + p.overhead_s),
          FormatSeconds(p.total_s)};
}

std::string Phases(const std::string& prefill_name, const PhaseBreakdown& prefill,
                   const std::string& decode_name, const PhaseBreakdown& decode) {
  // Each operation is FLOP-bound or HBM-bound by its roofline (a decode's usually all HBM);
  // kernels' fixed times and the engine's host time complete the step.
  Table table({"phase", "FLOP-bound", "HBM-bound", "TP comm", "EP comm", "CP comm", "PP comm",
               "bubble", "launch + host", "total"});
  table.AddRow(PhaseRow(prefill_name, prefill));
  table.AddRow(PhaseRow(decode_name, decode));
  return table.Render() + "\n";
}

std::string Memory(const MemoryPerGpu& m, const PerfOptions& perf, int64_t context) {
  std::string out;
  if (m.state_bytes_per_sequence > 0) {
    out += fmt::format(
        "\nfixed state: {} per sequence per GPU (linear-attention/SSM state, sliding-window KV), "
        "the same at any context beyond the windows (included in KV below)",
        FormatBytes(m.state_bytes_per_sequence));
  }
  // How the usable memory follows from the engine's rule (perf/memory.cc).
  const std::string rule =
      perf.engine.kv_rule == KvMemoryRule::kFractionOfFreeAfterWeights
          ? fmt::format(
                "{}: weights, activations and buffers, then {:g} of what they leave of {} "
                "less the runtime's {}",
                perf.engine.name, perf.gpu_memory_utilization, FormatBytes(m.hbm_bytes),
                FormatBytes(perf.engine.runtime_reserve_bytes))
          : fmt::format("{} x {:g}, reserve {}", FormatBytes(m.hbm_bytes),
                        perf.gpu_memory_utilization, FormatBytes(m.reserve_bytes));
  out += fmt::format(
      "\nmemory per GPU: weights {}, KV {}, activations {}, comm buffers {} = {} of {} usable\n"
      "({}); up to {} sequences at {} tokens\n",
      FormatBytes(m.weight_bytes), FormatBytes(m.kv_bytes), FormatBytes(m.activation_bytes),
      FormatBytes(m.comm_buffer_bytes), FormatBytes(m.UsedBytes()), FormatBytes(m.usable_bytes),
      rule, m.max_sequences, context);
  return out;
}

// What the engine's API server adds to a lone request's TTFT before its scheduler sees it, which
// explain leaves out and simulate and price include ("" where the profile states none).
std::string FrontEndClause(const Pool& prefill, int64_t prompt_tokens) {
  const double front_s = prefill.perf.engine.FrontEndS(prompt_tokens);
  if (front_s <= 0) return "";
  const bool tokenizes = prefill.perf.engine.tokenize_s_per_token > 0;
  return fmt::format("; simulate and price add the server's request path{}, {}",
                     tokenizes ? " and tokenization" : "", FormatSeconds(front_s));
}

// That the API servers pass fewer requests than the GPUs serve ("" where they do not).
std::string ApiServersBind(const api::Explanation& e) {
  if (!e.FrontEndBinds()) return "";
  const int64_t n = e.estimate.api_servers;
  return n > 1 ? fmt::format("its {} API servers bind, tokenizing one prompt at a time each", n)
               : "its API server binds, tokenizing one prompt at a time";
}

std::string Aggregated(const api::Explanation& e) {
  std::string out;
  const StepEstimate& s = e.Step();
  const Layout& l = e.deployment.prefill().layout;
  const PerfOptions& perf = e.deployment.prefill().perf;
  out += fmt::format(
      "{} on {} ({} x {}), layout {} ({}: {} of {}), batch {}, context {}\n"
      "weights {}, KV cache {}; TP group over {}, EP group over {}\n\n",
      e.model.name, e.cluster.name, e.cluster.num_gpus, e.cluster.gpu.name, l.ToString(),
      Counted(l.gpus(), "GPU", "GPUs"), Counted(l.Replicas(), "replica", "replicas"),
      l.InstanceGpus(), e.workload.batch, e.workload.prompt_tokens, WeightFormatName(perf),
      DtypeName(perf.kv_dtype), e.tp_link, e.ep_link);
  out += Phases("prefill (1 prompt)", s.prefill, "decode (1 step)", s.decode);
  const double output = e.OutputTokensPerS();
  const PhaseBreakdown& d = s.decode;
  const double top = std::max({d.memory_s, d.compute_s, d.launch_s, d.tp_comm_s, d.ep_comm_s,
                               d.cp_comm_s, d.pp_comm_s, d.bubble_s, d.overhead_s});
  out += fmt::format(
      "TTFT        {} ±{:.0f}%  (one {}-token prompt{}, unloaded{})\n"
      "TPOT        {} ±{:.0f}%  ({:.1f} tokens/s per user; a decode step without prompts mixed "
      "in, which add to it under load: simulate)\n"
      "throughput  {:.0f} output tokens/s, {:.1f} per GPU (offline, {} output tokens per "
      "request{})\n"
      "cost        {}\n"
      "energy      {}\n"
      "decode is bound by {} ({:.0f}% of the step)\n",
      FormatSeconds(s.ttft_s), 100 * e.ttft_band.relative, e.workload.prompt_tokens,
      perf.prefix_hit_rate > 0
          ? fmt::format(", {:g}% of it in the prefix cache", 100 * perf.prefix_hit_rate)
          : "",
      FrontEndClause(e.deployment.prefill(), e.workload.prompt_tokens), FormatSeconds(s.tpot_s),
      100 * e.tpot_band.relative, s.output_tokens_per_s_per_user, output,
      output / static_cast<double>(e.deployment.gpus()), e.workload.output_tokens,
      e.FrontEndBinds() ? fmt::format("; {}: {:.2f} requests/s", ApiServersBind(e),
                                      e.estimate.front_end_requests_per_s)
                        : "",
      CostLine(e.deployment, output),
      FormatEnergy(e.deployment.BoardPowerW(), e.JoulesPerOutputToken()), s.bound,
      100 * top / d.total_s);
  if (perf.speculative.DraftTokens() > 0) {
    const SpeculativeOptions& sp = perf.speculative;
    out += fmt::format(
        "speculative {}{}: {} draft tokens, {:.3f} tokens per step on average; a step is the "
        "draft's {} and verifying {} tokens per sequence, {}\n",
        SpeculativeMethodName(sp.method), sp.draft_model ? " (" + sp.draft_model->name + ")" : "",
        sp.DraftTokens(), s.tokens_per_step, FormatSeconds(s.draft_s), sp.DraftTokens() + 1,
        FormatSeconds(s.decode.total_s - s.draft_s));
  }
  if (e.model.is_moe() && l.ep > 1) {
    out += fmt::format(
        "experts: {:g} per GPU ({} routed + {} redundant over ep {}); the busiest EP rank "
        "carries {:.3f}x the mean load from placement{}\n",
        e.experts_per_gpu, e.model.moe.num_experts, perf.redundant_experts, l.ep,
        e.expert_placement_imbalance,
        perf.expert_skew ? fmt::format(" (Zipf skew {:g})", *perf.expert_skew) : "");
  }
  if (s.decode.ep_algorithm) out += EpExchangeLine(e);
  if (s.over_parallelised) {
    out += fmt::format(
        "over-parallelised: TP communication per layer ({}) exceeds compute per layer ({}); fewer "
        "TP ranks would be faster (the over-parallelisation rule of \"7 Scaling Across "
        "Hardware\")\n",
        FormatSeconds(s.tp_comm_per_layer_s), FormatSeconds(s.compute_per_layer_s));
  }
  out += Memory(s.memory, perf, e.workload.prompt_tokens);
  return out;
}

std::string Disaggregated(const api::Explanation& e) {
  std::string out;
  const DeploymentEstimate& est = e.estimate;
  const Pool& pp = e.deployment.prefill();
  const Pool& dp = e.deployment.decode();
  const StepEstimate& p = est.prefill().one;
  const StepEstimate& s = e.Step();
  const double prefill_per_s = est.prefill().requests_per_s;
  const double decode_per_s = est.decode().requests_per_s;
  const double output = e.OutputTokensPerS();
  out += fmt::format(
      "{} disaggregated: {} ({}: {} prefill on {}, {} decode on {}), context {}, decode "
      "batch {} per worker\n\n",
      e.model.name, e.deployment.ToString(), Counted(e.deployment.gpus(), "GPU", "GPUs"), pp.Gpus(),
      pp.cluster.name, dp.Gpus(), dp.cluster.name, e.workload.prompt_tokens, e.workload.batch);
  out += Phases("prefill worker (1 prompt)", p.prefill, "decode worker (1 step)", s.decode);
  out += fmt::format(
      "TTFT        {} ±{:.0f}%  (prefill {} + KV transfer {} over {}, {}{})\n"
      "TPOT        {} ±{:.0f}%  ({:.1f} tokens/s per user; decode bound by {})\n"
      "pools       prefill {:.2f} requests/s at full load, decode {:.2f} requests/s at batch {}\n"
      "serves      {:.2f} requests/s = {:.0f} output tokens/s, {:.1f} per GPU; {}\n"
      "cost        {}\n"
      "energy      {}\n"
      "balance     {:.2f} decode workers of {} keep up with this prefill pool\n",
      FormatSeconds(est.unloaded_ttft_s), 100 * e.ttft_band.relative, FormatSeconds(p.ttft_s),
      FormatSeconds(est.transfer_s), est.link.name, KvTransferModeName(e.deployment.transfer()),
      FrontEndClause(pp, e.workload.prompt_tokens), FormatSeconds(s.tpot_s),
      100 * e.tpot_band.relative, 1.0 / s.tpot_s, s.bound, prefill_per_s, decode_per_s,
      e.workload.batch, e.ServedRequestsPerS(), output,
      output / static_cast<double>(e.deployment.gpus()),
      e.FrontEndBinds() ? ApiServersBind(e)
                        : std::string(prefill_per_s < decode_per_s ? "the prefill pool binds"
                                                                   : "the decode pool binds"),
      CostLine(e.deployment, output),
      FormatEnergy(e.deployment.BoardPowerW(), e.JoulesPerOutputToken()),
      est.balanced_decode_workers, dp.layout.ToString());
  return out;
}

}  // namespace

std::string ExplainText(const api::Explanation& e) {
  return e.deployment.disaggregated() ? Disaggregated(e) : Aggregated(e);
}

}  // namespace shardwise::text
