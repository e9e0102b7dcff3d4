// `shardwise train`: plan, explain and price a pre-training or fine-tuning run. Without --layout
// it searches and ranks layouts (micro-batch, schedule, ZeRO stage and recompute searched unless
// given); with one it explains that layout per phase. An adapter: it parses the options, calls
// train/ and prints.
#include <fmt/format.h>

#include <cstdio>
#include <optional>

#include "command.h"
#include "html_output.h"
#include "numbers.h"
#include "request_flags.h"
#include "shardwise/api/train.h"
#include "shardwise/text/text.h"
#include "validators.h"

namespace shardwise::cli {
namespace {

using train::TrainEstimate;

struct TrainOptions {
  api::TrainRunRequest request;
  ClusterFlags cluster;
  std::string tokens = "300B";
  bool json = false;
  HtmlOptions html;
};

// "300B", "15T", "2.5e12", "1M": decimal suffixes K, M, B (or G), T.
StatusOr<double> ParseTokens(const std::string& text) {
  const std::optional<double> parsed = ParseScaledNumber(text, 1e3, true);
  const double tokens = parsed.value_or(0);
  if (!parsed || tokens < 1 || tokens > 1e18) {
    return Error(
        fmt::format("--tokens '{}' is not a token count between 1 and 1e18; write e.g. "
                    "300B, 15T or 2.5e12",
                    text));
  }
  return tokens;
}

Status RunTrain(TrainOptions& o) {
  SW_ASSIGN_OR_RETURN(o.request.tokens, ParseTokens(o.tokens));
  o.request.cluster = o.cluster.values;
  SW_RETURN_IF_ERROR(o.html.Check());
  SW_ASSIGN_OR_RETURN(const api::TrainReport rep, api::Train(api::Catalog::BuiltIn(), o.request));
  for (const std::string& note : {rep.cluster_note, rep.calibration_note}) {
    if (!note.empty()) std::fprintf(stderr, "shardwise: warning: %s\n", note.c_str());
  }
  for (const std::string& note : rep.model_notes) {
    std::fprintf(stderr, "shardwise: note: %s\n", note.c_str());
  }
  const nlohmann::json out = api::ToJson(rep);
  if (o.json) {
    PrintJson(out);
  } else {
    std::cout << text::TrainText(rep);
  }
  return o.html.Write(out);
}

}  // namespace

void AddTrainCommand(CLI::App& app, Status& result) {
  auto opts = std::make_shared<TrainOptions>();
  CLI::App* sub = app.add_subcommand(
      "train",
      "Plan, explain and price a pre-training or fine-tuning run. Without --layout: search every\n"
      "TP/CP/PP/DP/EP layout with its micro-batch, schedule, ZeRO stage and recompute mode, drop\n"
      "what does not fit, rank by step time and say why the winner wins. With --layout: explain\n"
      "that layout per phase. Examples:\n"
      "  shardwise train --model llama-3.1-70b --cluster dgx-h100 --nodes 64 --global-batch 1024\n"
      "  shardwise train --model llama-3.1-405b --cluster dgx-h100 --nodes 128 --layout "
      "dp8tp8cp2pp8\n"
      "      --seq-len 8192 --global-batch 512 --schedule interleaved:8 --dtype fp8\n"
      "  shardwise train --model megatron-gpt-39b --cluster dgx-a100 --nodes 64 --layout "
      "tp8pp2dp32\n"
      "      --seq-len 2048 --global-batch 1536 --engine megatron-lm-sc21");
  sub->add_option("--model", opts->request.model,
                  "Catalog model or config.json (GPT2LMHeadModel too)")
      ->capture_default_str();
  opts->cluster.AddTo(sub, /*priced=*/true);
  sub->add_option("--engine", opts->request.engine,
                  "Training engine profile (data/training): megatron-core or megatron-lm-sc21")
      ->capture_default_str();
  sub->add_option("--layout", opts->request.layout,
                  "Explain this layout, e.g. tp8pp2dp4 or tp4ep8dp2pp4")
      ->check(kLayoutText);
  sub->add_option("--seq-len", opts->request.seq_len, "Tokens per sequence")->capture_default_str();
  sub->add_option("--global-batch", opts->request.global_batch, "Sequences per iteration")
      ->capture_default_str();
  sub->add_option("--micro-batch", opts->request.micro_batch,
                  "Sequences per micro-batch per data-parallel rank (default: searched)");
  sub->add_option("--schedule", opts->request.schedule,
                  "1f1b, interleaved:V or zero-bubble (default: searched among the engine's)");
  sub->add_option("--pipeline-layout", opts->request.pipeline_layout,
                  "Megatron's --pipeline-model-parallel-layout, e.g. \"Et*3|(tt|)*29m|L\" "
                  "(default: even, else embedding and loss counted as layers)");
  sub->add_option("--first-stage-layers", opts->request.first_stage_layers,
                  "Layers of the first pipeline stage (Megatron's "
                  "--decoder-first-pipeline-num-layers)");
  sub->add_option("--last-stage-layers", opts->request.last_stage_layers,
                  "Layers of the last pipeline stage (--decoder-last-pipeline-num-layers)");
  sub->add_option("--zero", opts->request.zero,
                  "ZeRO stage 0, 1, 2 or 3 (3 = FSDP; default: searched)");
  sub->add_option("--recompute", opts->request.recompute,
                  "Activation recomputation: none, selective, full, or full:N for N layers of "
                  "each model chunk (default: searched)");
  sub->add_option("--tokens", opts->tokens, "Tokens to train on, for time and cost (300B, 15T)")
      ->capture_default_str();
  sub->add_option("--dtype", opts->request.dtype, "GEMM format: bf16 or fp8")
      ->capture_default_str();
  sub->add_option("--fp8-recipe", opts->request.fp8_recipe,
                  "FP8 scaling with --dtype fp8: delayed, current (FP8-CS), blockwise (Hopper) or "
                  "mxfp8 (FP8-MX, Blackwell)")
      ->capture_default_str();
  sub->add_flag("--moe-token-drop", opts->request.moe_token_drop,
                "MoE drops tokens beyond each expert's capacity and pads to it (static shapes, no "
                "host sync, but k copies of each token through the all-to-all dispatcher: "
                "DeepEP/HybridEP refuse padding); default dropless");
  sub->add_option("--mtp-layers", opts->request.mtp_layers,
                  "Multi-token-prediction modules after the last layer (DeepSeek-V3: 1)")
      ->capture_default_str();
  sub->add_option("--interruption-rate", opts->request.interruption_rate,
                  "Job interruptions per GPU-hour (default: the engine's, from Llama 3's run)");
  sub->add_option("--restart-s", opts->request.restart_s,
                  "Seconds from an interruption to training again (default: the engine's)");
  sub->add_option("--top", opts->request.top, "Layouts to show")->capture_default_str();
  sub->add_flag("--no-sizes", opts->request.no_sizes,
                "Skip the search at smaller cluster sizes (the time-versus-cost Pareto)");
  sub->add_flag("--json", opts->json, "Print JSON");
  opts->html.AddTo(sub);
  BindCommand(sub, opts, result, RunTrain);
}

}  // namespace shardwise::cli
