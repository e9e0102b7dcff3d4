// The layouts the differential tests cover: every layout of 2 to 8 ranks built from
// tp in {1,2,3,4}, pp in {1,2,4}, ep in {1,2,4} (MoE), dp in {1,2} and cp in `cps` that the
// model allows.
#pragma once

#include <vector>

#include "shardwise/layout/layout.h"
#include "shardwise/model/model_spec.h"
#include "shardwise/runtime/forward/stage_forward.h"

namespace shardwise::testing {

inline std::vector<Layout> DifferentialLayouts(const ModelSpec& m, std::vector<int64_t> cps = {1}) {
  std::vector<Layout> out;
  for (int64_t cp : cps) {
    for (int64_t tp : {1, 2, 3, 4}) {
      for (int64_t pp : {1, 2, 4}) {
        for (int64_t dp : {1, 2}) {
          for (int64_t ep : {1, 2, 4}) {
            const Layout l{dp, tp, pp, ep, cp};
            if (l.gpus() > 8 || l.gpus() == 1) continue;
            if (ep > 1 && (!m.is_moe() || l.StageRanks() % ep != 0)) continue;
            if (ep > tp * cp && ep % (tp * cp) != 0) continue;
            if (!CheckRuntimeSupport(m, l).ok()) continue;
            out.push_back(l);
          }
        }
      }
    }
  }
  return out;
}

}  // namespace shardwise::testing
