// The most sequences a layout holds is what every pipeline stage holds: the stage that binds at
// one sequence (the most weights) need not bind at thousands (the most KV layers). DeepSeek-R1
// in pp2 has the embedding and the 3 dense layers on its first stage, and 31 of the 61 layers'
// KV on the second with the LM head: at one sequence the first is the fuller, at the most
// sequences the second. Found as `plan --emit` refusing the plan's own winner ("short by 660.6
// MB"), because the capacity was taken from the first stage.
#include <gtest/gtest.h>

#include "perf_models.h"
#include "shardwise/hw/cluster.h"
#include "shardwise/perf/step.h"

namespace shardwise {
namespace {

TEST(MemoryStages, TheMostSequencesFitOnEveryStage) {
  PerfOptions o;
  o.weight_dtype = Dtype::kFp8;
  o.kv_dtype = Dtype::kFp8;
  const ClusterSpec cluster = WithNodes(LoadCluster("dgx-h200").value(), 2).value();
  const ModelSpec model = testing::Model("deepseek-r1");  // the step model refers to it
  for (const char* layout : {"dp8pp2ep8", "dp4pp4ep4", "tp8pp2"}) {
    auto step = StepModel::Create(model, cluster, ParseLayout(layout).value(), o);
    ASSERT_TRUE(step.ok()) << step.status().message();
    Workload w;
    w.prompt_tokens = 2048;
    w.output_tokens = 1024;
    w.batch = 1;
    const int64_t most = step->Estimate(w).memory.max_sequences;
    ASSERT_GT(most, 0) << layout;
    w.batch = most;
    EXPECT_TRUE(step->Estimate(w).memory.Fits()) << layout << " at " << most;
    // ... and it is the most: one more sequence on every attention rank does not fit.
    w.batch = most + step->layout().AttentionDp();
    EXPECT_FALSE(step->Estimate(w).memory.Fits()) << layout << " at " << w.batch;
  }
}

}  // namespace
}  // namespace shardwise
