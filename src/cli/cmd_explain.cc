// `shardwise explain`: one layout, per phase: where the time goes, what binds, memory per GPU.
#include <fmt/format.h>

#include "cluster_options.h"
#include "command.h"
#include "disagg_options.h"
#include "explain_disagg.h"
#include "html_output.h"
#include "perf_options.h"
#include "shardwise/common/format.h"
#include "shardwise/model/catalog.h"
#include "shardwise/perf/speculative.h"
#include "shardwise/perf/step.h"
#include "shardwise/perf/uncertainty.h"
#include "shardwise/report/table.h"

namespace shardwise::cli {
namespace {

struct ExplainOptions {
  std::string model = "llama-3.1-70b";
  ClusterOptions cluster;
  PerfCliOptions perf;
  std::string layout = "tp8";
  CLI::Option* layout_option = nullptr;
  DisaggCliOptions disagg;
  int64_t batch = 32;
  int64_t context = 2048;
  int64_t osl = 256;
  bool json = false;
  HtmlOptions html;
};

// How the MoE layers exchange tokens in each phase, in words.
std::string EpExchangeLine(const StepEstimate& e, const PerfOptions& perf) {
  auto phase = [](const PhaseBreakdown& p) {
    return p.ep_algorithm ? std::string(EpAlgorithmName(*p.ep_algorithm)) : std::string("-");
  };
  std::string line = fmt::format(
      "EP exchange: prefill {}, decode {} (dispatch {}, combine {}){}\n", phase(e.prefill),
      phase(e.decode), DtypeName(perf.ep.dispatch_dtype), DtypeName(perf.activation_dtype),
      perf.ep.two_batch_overlap ? "; two micro-batches overlap it with compute" : "");
  if (e.expert_dropped_share > 0) {
    line += fmt::format(
        "capacity factor {:g}: the busiest EP rank drops {:.1f}% of its (token, expert) pairs "
        "in decode\n",
        perf.capacity_factor.value_or(0.0), 100 * e.expert_dropped_share);
  }
  return line;
}

Status RunExplain(const ExplainOptions& o) {
  SW_ASSIGN_OR_RETURN(ModelSpec model, LoadModel(o.model));
  SW_ASSIGN_OR_RETURN(ClusterSpec cluster, o.cluster.Load());
  SW_ASSIGN_OR_RETURN(PerfOptions perf, o.perf.Build(model));
  SW_RETURN_IF_ERROR(o.html.Check());
  if (o.batch < 1 || o.batch > 1'000'000) return Error("--batch must be between 1 and 1,000,000");
  if (o.context < 1 || o.context > 10'000'000)
    return Error("--context must be between 1 and 10,000,000");
  if (o.osl < 1 || o.osl > 10'000'000) return Error("--osl must be between 1 and 10,000,000");
  if (o.disagg.Given()) {
    const bool layout_given = o.layout_option && *o.layout_option;
    SW_ASSIGN_OR_RETURN(DisaggSetup d, BuildDisaggSetup(o.disagg, cluster, layout_given));
    return ExplainDisaggregated(model, d, perf, o.batch, o.context, o.osl, o.json, o.html);
  }
  SW_ASSIGN_OR_RETURN(Layout layout, ParseLayout(o.layout));
  SW_RETURN_IF_ERROR(CheckRedundantExperts(layout, perf));
  SW_ASSIGN_OR_RETURN(StepModel step, StepModel::Create(model, cluster, layout, perf));
  Workload w;
  w.batch = o.batch;
  w.prompt_tokens = o.context;
  w.output_tokens = o.osl;
  w.decode_context_tokens = o.context;
  const StepEstimate e = step.Estimate(w);
  const PhaseUncertainty ttft_band = PhaseBand(e.prefill, cluster.gpu, perf.engine);
  const PhaseUncertainty tpot_band = PhaseBand(e.decode, cluster.gpu, perf.engine);
  if (!e.memory.Fits()) return Error(DoesNotFitMessage(model, cluster, e, perf));

  const MemoryPerGpu& m = e.memory;
  PrintFormatNotes(cluster.gpu, perf);
  const nlohmann::json out = {{"command", "explain"},
                              {"model", model.name},
                              {"cluster", cluster.name},
                              {"layout", layout.ToString()},
                              {"gpus", layout.gpus()},
                              {"dp", layout.dp},
                              {"tp", layout.tp},
                              {"pp", layout.pp},
                              {"ep", layout.ep},
                              {"cp", layout.cp},
                              {"batch", o.batch},
                              {"moe", MoeJson(model, layout, perf)},
                              {"expert_dropped_fraction", e.expert_dropped_share},
                              {"speculative", SpeculativeJson(perf.speculative)},
                              {"tokens_per_step", e.tokens_per_step},
                              {"draft_s", e.draft_s},
                              {"prefix_hit_rate", perf.prefix_hit_rate},
                              {"pipeline", PipelineJson(e)},
                              {"roofline", RooflineJson(model, cluster, perf)},
                              {"cluster_tree", ClusterTreeJson(cluster)},
                              {"context", o.context},
                              {"prefill", PhaseJson(e.prefill)},
                              {"decode", PhaseJson(e.decode)},
                              {"unloaded_ttft_s", e.ttft_s},
                              {"unloaded_ttft_s_low", Widen(e.ttft_s, ttft_band.relative).low},
                              {"unloaded_ttft_s_high", Widen(e.ttft_s, ttft_band.relative).high},
                              {"decode_tpot_s", e.tpot_s},
                              {"decode_tpot_s_low", Widen(e.tpot_s, tpot_band.relative).low},
                              {"decode_tpot_s_high", Widen(e.tpot_s, tpot_band.relative).high},
                              {"assumed_inputs", AssumedInputs(ttft_band, tpot_band)},
                              {"output_tokens_per_s", e.output_tokens_per_s},
                              {"output_tokens_per_s_per_gpu", e.output_tokens_per_s_per_gpu},
                              {"output_tokens_per_s_per_user", e.output_tokens_per_s_per_user},
                              {"bound", e.bound},
                              {"over_parallelised", e.over_parallelised},
                              {"tp_comm_per_layer_s", e.tp_comm_per_layer_s},
                              {"compute_per_layer_s", e.compute_per_layer_s},
                              {"memory_per_gpu_bytes", m.UsedBytes()},
                              {"memory",
                               {{"weights_bytes", m.weight_bytes},
                                {"kv_bytes", m.kv_bytes},
                                {"state_bytes_per_sequence", m.state_bytes_per_sequence},
                                {"activation_bytes", m.activation_bytes},
                                {"comm_buffer_bytes", m.comm_buffer_bytes},
                                {"reserve_bytes", m.reserve_bytes},
                                {"usable_bytes", m.usable_bytes},
                                {"max_sequences", m.max_sequences}}}};
  if (o.json) {
    PrintJson(out);
    return o.html.Write(out);
  }
  std::cout << fmt::format(
      "{} on {} ({} x {}), layout {} ({} GPUs: {} replica{} of {}), batch {}, context {}\n"
      "weights {}, KV cache {}; TP group over {}, EP group over {}\n\n",
      model.name, cluster.name, cluster.num_gpus, cluster.gpu.name, layout.ToString(),
      layout.gpus(), layout.Replicas(), layout.Replicas() == 1 ? "" : "s", layout.InstanceGpus(),
      o.batch, o.context, WeightFormatName(perf), DtypeName(perf.kv_dtype), step.TpLink(),
      step.EpLink());
  Table table({"phase", "compute", "memory", "TP comm", "EP comm", "CP comm", "PP comm", "bubble",
               "total"});
  table.AddRow(PhaseRow("prefill (1 prompt)", e.prefill));
  table.AddRow(PhaseRow("decode (1 step)", e.decode));
  std::cout << table.Render() << "\n";
  const double share = [&] {
    const PhaseBreakdown& d = e.decode;
    const double top = std::max({d.memory_s, d.compute_s, d.launch_s, d.tp_comm_s, d.ep_comm_s,
                                 d.cp_comm_s, d.pp_comm_s, d.bubble_s, d.overhead_s});
    return top / d.total_s;
  }();
  std::cout << fmt::format(
      "TTFT        {} ±{:.0f}%  (one {}-token prompt{}, unloaded)\n"
      "TPOT        {} ±{:.0f}%  ({:.1f} tokens/s per user)\n"
      "throughput  {:.0f} output tokens/s, {:.1f} per GPU (offline, {} output tokens per request)\n"
      "decode is bound by {} ({:.0f}% of the step)\n",
      FormatSeconds(e.ttft_s), 100 * ttft_band.relative, o.context,
      perf.prefix_hit_rate > 0
          ? fmt::format(", {:g}% of it in the prefix cache", 100 * perf.prefix_hit_rate)
          : "",
      FormatSeconds(e.tpot_s), 100 * tpot_band.relative, e.output_tokens_per_s_per_user,
      e.output_tokens_per_s, e.output_tokens_per_s_per_gpu, o.osl, e.bound, 100 * share);
  if (perf.speculative.DraftTokens() > 0) {
    const SpeculativeOptions& s = perf.speculative;
    std::cout << fmt::format(
        "speculative {}{}: {} draft tokens, {:.3f} tokens per step on average; a step is the "
        "draft's {} and verifying {} tokens per sequence, {}\n",
        SpeculativeMethodName(s.method), s.draft_model ? " (" + s.draft_model->name + ")" : "",
        s.DraftTokens(), e.tokens_per_step, FormatSeconds(e.draft_s), s.DraftTokens() + 1,
        FormatSeconds(e.decode.total_s - e.draft_s));
  }
  if (model.is_moe() && layout.ep > 1) {
    std::cout << fmt::format(
        "experts: {:g} per GPU ({} routed + {} redundant over ep {}); the busiest EP rank "
        "carries {:.3f}x the mean load from placement{}\n",
        step.shard().experts_per_gpu, model.moe.num_experts, perf.redundant_experts, layout.ep,
        step.shard().expert_placement_imbalance,
        perf.expert_skew ? fmt::format(" (Zipf skew {:g})", *perf.expert_skew) : "");
  }
  if (e.decode.ep_algorithm) {
    std::cout << EpExchangeLine(e, perf);
  }
  if (e.over_parallelised) {
    std::cout << fmt::format(
        "over-parallelised: TP communication per layer ({}) exceeds compute per layer ({}); fewer "
        "TP ranks would be faster (the over-parallelisation rule of \"7 Scaling Across "
        "Hardware\")\n",
        FormatSeconds(e.tp_comm_per_layer_s), FormatSeconds(e.compute_per_layer_s));
  }
  if (m.state_bytes_per_sequence > 0) {
    std::cout << fmt::format(
        "\nfixed state: {} per sequence per GPU (linear-attention/SSM state, sliding-window KV), "
        "the same at any context beyond the windows (included in KV below)",
        FormatBytes(m.state_bytes_per_sequence));
  }
  std::cout << fmt::format(
      "\nmemory per GPU: weights {}, KV {}, activations {}, comm buffers {} = {} of {} usable\n"
      "({} x {:g}, reserve {}); up to {} sequences at {} tokens\n",
      FormatBytes(m.weight_bytes), FormatBytes(m.kv_bytes), FormatBytes(m.activation_bytes),
      FormatBytes(m.comm_buffer_bytes), FormatBytes(m.UsedBytes()), FormatBytes(m.usable_bytes),
      FormatBytes(m.hbm_bytes), perf.gpu_memory_utilization, FormatBytes(m.reserve_bytes),
      m.max_sequences, o.context);
  return o.html.Write(out);
}

}  // namespace

void AddExplainCommand(CLI::App& app, Status& result) {
  auto opts = std::make_shared<ExplainOptions>();
  CLI::App* sub = app.add_subcommand(
      "explain",
      "One layout in detail: prefill and decode time split into compute, memory, each\n"
      "communication and the pipeline bubble; TTFT, TPOT, throughput; memory per GPU.\n"
      "Layouts: tp8pp2, ep16 (= dp16ep16), tp4ep8dp2, dp2tp4cp2. Example:\n"
      "  shardwise explain --model llama-3.1-70b --cluster dgx-h100 --nodes 2 --layout tp16");
  sub->add_option("--model", opts->model, "Catalog model or config.json")->capture_default_str();
  opts->cluster.AddTo(sub);
  opts->perf.AddTo(sub);
  opts->layout_option =
      sub->add_option("--layout", opts->layout, "Parallel layout")->capture_default_str();
  opts->disagg.AddTo(sub);
  sub->add_option("--batch", opts->batch, "Concurrent sequences per replica")
      ->capture_default_str();
  sub->add_option("--context", opts->context, "Prompt length and decode KV length, tokens")
      ->capture_default_str();
  sub->add_option("--osl", opts->osl, "Output tokens per request (throughput)")
      ->capture_default_str();
  sub->add_flag("--json", opts->json, "Print JSON");
  opts->html.AddTo(sub);
  BindCommand(sub, opts, result, RunExplain);
}

}  // namespace shardwise::cli
