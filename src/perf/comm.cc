#include "shardwise/perf/comm.h"

#include "shardwise/collective/cost_model.h"

namespace shardwise {
namespace {

std::string LinkName(const ClusterSpec& c, const GroupShape& g) {
  const int level = g.HighestLevel();
  if (level < 0) return "-";
  return level == 0 ? c.levels[0].name : "scale-out (" + c.levels[level].name + ")";
}

}  // namespace

StatusOr<StepComm> StepComm::Create(const ClusterSpec& cluster, const Layout& layout,
                                    const EngineProfile& engine, EpExchangeSetup ep) {
  StepComm c;
  c.cluster_ = &cluster;
  c.layout_ = layout;
  c.engine_ = engine;
  if (layout.ep > 1) SW_RETURN_IF_ERROR(ValidateEpRouting(ep.routing));
  c.ep_ = std::move(ep);
  SW_ASSIGN_OR_RETURN(c.tp_group_, PlaceGroup(cluster, layout.tp, 1));
  SW_ASSIGN_OR_RETURN(c.cp_group_, PlaceGroup(cluster, layout.cp, layout.CpStride()));
  SW_ASSIGN_OR_RETURN(c.ep_group_, PlaceGroup(cluster, layout.ep, layout.EpStride()));
  if (layout.GathersTokensForExperts()) {
    SW_ASSIGN_OR_RETURN(c.expert_group_, PlaceGroup(cluster, layout.ep * layout.ExpertTp(), 1));
  }
  // All the stages: a send/recv is priced at the outermost level any stage boundary crosses.
  SW_ASSIGN_OR_RETURN(c.pp_pair_, PlaceGroup(cluster, layout.pp, layout.PpStride()));
  c.tp_in_one_domain_ = c.tp_group_.HighestLevel() == 0;
  c.tp_link_ = LinkName(cluster, c.tp_group_);
  c.ep_link_ = LinkName(cluster, layout.GathersTokensForExperts() ? c.expert_group_ : c.ep_group_);
  return c;
}

double StepComm::CustomAllReduce(double bytes) const {
  const TopologyLevel& nvlink = cluster_->levels[0];
  const double bytes_per_s = nvlink.egress_bytes_per_s * nvlink.efficiency;
  const double n = static_cast<double>(layout_.tp);
  if (bytes <= engine_.one_shot_max_bytes) {
    return engine_.custom_allreduce_latency_s + (n - 1) * bytes / bytes_per_s;
  }
  return 2 * engine_.custom_allreduce_latency_s + 2 * (n - 1) / n * bytes / bytes_per_s;
}

double StepComm::TpAllReduce(double bytes) const {
  if (layout_.tp <= 1) return 0.0;
  if (tp_in_one_domain_ && bytes <= engine_.custom_allreduce_max_bytes) {
    return CustomAllReduce(bytes);
  }
  CollectiveRequest r;
  r.bytes = bytes;
  return PredictCollective(*cluster_, tp_group_, r).time_s;
}

double StepComm::CpCombine(double bytes) const {
  if (layout_.cp <= 1) return 0.0;
  CollectiveRequest r;
  r.bytes = bytes;
  return PredictCollective(*cluster_, cp_group_, r).time_s;
}

double StepComm::CpRing(double bytes) const {
  if (layout_.cp <= 1) return 0.0;
  CollectiveRequest r;
  r.op = CollectiveOp::kSendRecv;
  r.bytes = bytes;
  return static_cast<double>(layout_.cp - 1) * PredictCollective(*cluster_, cp_group_, r).time_s;
}

EpExchange StepComm::Exchange(double tokens_per_gpu, double sent_per_gpu, bool prefill) const {
  EpExchange x;
  if (!ExchangesTokens()) return x;
  EpDispatchRequest r;
  r.tokens_per_gpu = tokens_per_gpu;
  r.hidden = ep_.hidden;
  r.dtype = ep_.dispatch_dtype;
  r.routing = ep_.routing;
  r.algorithm = ep_.algorithm;
  r.cuda_graph = !prefill;
  r.tokens_sent_per_rank = sent_per_gpu;
  const EpDispatchCost dispatch = PredictEpDispatch(*cluster_, ep_group_, ep_.kernels, r);
  r.dtype = ep_.combine_dtype;
  r.algorithm = dispatch.algorithm;
  const EpDispatchCost combine = PredictEpDispatch(*cluster_, ep_group_, ep_.kernels, r);
  x.time_s = dispatch.time_s + combine.time_s;
  x.algorithm = dispatch.algorithm;
  x.sms = dispatch.sms;
  return x;
}

EpExchange StepComm::GatherForExperts(double tokens_per_gpu) const {
  EpExchange x;
  if (!layout_.GathersTokensForExperts()) return x;
  const double group = static_cast<double>(layout_.ep * layout_.ExpertTp());
  const double token_values = tokens_per_gpu * group * static_cast<double>(ep_.hidden);
  CollectiveRequest gather;
  gather.op = CollectiveOp::kAllGather;
  gather.bytes = token_values * BytesPerElement(ep_.dispatch_dtype);
  CollectiveRequest scatter;
  scatter.op = CollectiveOp::kReduceScatter;
  scatter.bytes = token_values * BytesPerElement(ep_.combine_dtype);
  x.time_s = PredictCollective(*cluster_, expert_group_, gather).time_s +
             PredictCollective(*cluster_, expert_group_, scatter).time_s;
  return x;
}

double StepComm::HandOff(double bytes) const {
  if (layout_.pp <= 1) return 0.0;
  CollectiveRequest r;
  r.op = CollectiveOp::kSendRecv;
  r.bytes = bytes;
  return PredictCollective(*cluster_, pp_pair_, r).time_s;
}

}  // namespace shardwise
