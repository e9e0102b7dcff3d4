#include "shardwise/train/json.h"

namespace shardwise::train {

nlohmann::json PassJson(const PassTimes& p) {
  return {{"gemm_s", p.gemm_s},       {"attention_s", p.attention_s}, {"memory_s", p.memory_s},
          {"launch_s", p.launch_s},   {"tp_comm_s", p.tp_comm_s},     {"ep_comm_s", p.ep_comm_s},
          {"cp_comm_s", p.cp_comm_s}, {"pp_comm_s", p.pp_comm_s},     {"host_s", p.host_s},
          {"total_s", p.GpuTotal()}};
}

nlohmann::json EntryJson(const TrainPlanEntry& entry) {
  const TrainEstimate& e = entry.estimate;
  const TrainMemory& mem = e.memory;
  const TrainingCost& cost = entry.cost;
  // A labelled series: the part's name as the text output prints it, and its time per step.
  nlohmann::json parts = nlohmann::json::array();
  for (const auto& [name, seconds] : StepParts(e)) {
    parts.push_back({{"part", name}, {"time_s", seconds}});
  }
  return {{"layout", e.layout.ToString()},
          {"gpus", e.layout.gpus()},
          {"dp", e.layout.dp},
          {"tp", e.layout.tp},
          {"pp", e.layout.pp},
          {"cp", e.layout.cp},
          {"ep", e.layout.ep},
          {"precision", e.config.PrecisionName()},
          {"micro_batch", e.config.micro_batch},
          {"micro_batches", e.micro_batches},
          {"schedule", e.config.schedule.ToString()},
          {"pipeline_layout", e.split.ToString()},
          {"zero", e.config.zero},
          {"recompute", e.config.RecomputeText()},
          {"step_s", e.step_s},
          {"tokens_per_s", e.tokens_per_s},
          {"tokens_per_s_per_gpu", e.tokens_per_s_per_gpu},
          {"model_flops_per_s_per_gpu", e.model_tflops_per_gpu * 1e12},
          {"hardware_flops_per_s_per_gpu", e.hardware_tflops_per_gpu * 1e12},
          {"mfu", e.mfu},
          {"hfu", e.hfu},
          {"bubble_fraction", e.bubble_fraction},
          {"memory_per_gpu_bytes", mem.UsedBytes()},
          {"memory",
           {{"weights_bytes", mem.states.weight_bytes},
            {"grads_bytes", mem.states.grad_bytes},
            {"optimizer_bytes", mem.states.optimizer_bytes},
            {"activations_bytes", mem.activation_bytes},
            {"in_flight_micro_batches", mem.in_flight_micro_batches},
            {"buffers_bytes", mem.buffer_bytes},
            {"usable_bytes", mem.usable_bytes}}},
          {"forward_per_micro_batch", PassJson(e.forward)},
          {"backward_per_micro_batch", PassJson(e.backward)},
          {"host_exposed_per_micro_batch_s", e.host_exposed_s},
          {"step_parts", parts},
          {"dp_comm_s", e.dp_comm_s},
          {"dp_exposed_s", e.dp_exposed_s},
          {"bound", e.bound},
          {"largest_overhead", e.overhead},
          {"tokens", cost.tokens},
          {"steps", static_cast<int64_t>(cost.steps)},
          {"compute_s", cost.compute_s},
          {"time_s", cost.time_s},
          {"goodput", cost.goodput},
          {"interruptions", cost.interruptions},
          {"lost_s", cost.lost_s},
          // 0 without interruptions: no interval (a number, as schema 4 has it).
          {"checkpoint_interval_s", cost.checkpoint_interval_s},
          {"checkpoint_write_s", cost.checkpoint_write_s},
          {"gpu_hours", cost.gpu_hours},
          {"usd", cost.usd},
          {"why", entry.why}};
}

nlohmann::json CriticalJson(const CriticalBatch& c) {
  return {{"tokens_per_gpu_intra_node", c.tokens_per_gpu_intra},
          {"tokens_per_gpu_inter_node", c.tokens_per_gpu_inter},
          {"pure_dp_global_batch_tokens", c.pure_dp_tokens},
          {"layout_global_batch_tokens", c.layout_tokens},
          {"global_batch_tokens", c.batch_tokens},
          {"max_tp_intra_node", c.max_tp_intra},
          {"max_tp_inter_node", c.max_tp_inter}};
}

nlohmann::json PlanJson(const TrainPlan& plan) {
  nlohmann::json ranked = nlohmann::json::array();
  for (const auto& p : plan.ranked) ranked.push_back(EntryJson(p));
  nlohmann::json sizes = nlohmann::json::array();
  for (const auto& s : plan.sizes) {
    nlohmann::json j = EntryJson(s.best);
    j["pareto"] = s.pareto;
    sizes.push_back(j);
  }
  nlohmann::json out = EntryJson(plan.ranked.front());
  out["layouts_considered"] = plan.layouts_considered;
  out["configs_evaluated"] = plan.configs_evaluated;
  out["configs_fitting"] = plan.configs_fitting;
  out["critical_batch"] = CriticalJson(plan.critical);
  out["ranked"] = ranked;
  out["sizes"] = sizes;
  return out;
}

}  // namespace shardwise::train
