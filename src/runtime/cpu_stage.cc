// StageCompute over the CPU RankModel.
#include "shardwise/runtime/stage_compute.h"

namespace shardwise {
namespace {

class CpuStageCompute final : public StageCompute {
 public:
  explicit CpuStageCompute(RankModel model) : model_(std::move(model)) {}
  bool first_stage() const override { return model_.first_stage(); }
  bool last_stage() const override { return model_.last_stage(); }
  int64_t hidden() const override { return model_.hidden(); }
  int64_t vocab() const override { return model_.vocab(); }
  Status Embed(const std::vector<int64_t>& tokens, std::vector<float>& x) override {
    model_.Embed(tokens, x);
    return Status();
  }
  Status Forward(std::vector<float>& x, const std::vector<int>& seqs,
                 const std::vector<int64_t>& positions, int64_t context, bool split,
                 const RankComms& comms) override {
    return model_.Forward(x, seqs, positions, context, split, comms);
  }
  Status Logits(const std::vector<float>& x, int64_t seqs, int64_t len, std::vector<float>& out,
                Communicator& tp) override {
    return model_.Logits(x, seqs, len, out, tp);
  }
  MoeCounts moe_counts() const override { return model_.moe_counts(); }

 private:
  RankModel model_;
};

}  // namespace

std::unique_ptr<StageCompute> CpuStage(RankModel model) {
  return std::make_unique<CpuStageCompute>(std::move(model));
}

}  // namespace shardwise
