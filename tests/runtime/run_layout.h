// Runs a RunConfig on in-process threads (one per rank) and returns rank 0's result; the
// relative error of two logit vectors. Shared by the runtime's differential tests.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "shardwise/runtime/comm/thread_comm.h"
#include "shardwise/runtime/runner.h"

namespace shardwise::testing {

// A failed run fails the test (naming the layout) and returns an empty result.
inline RunResult RunLayout(const RunConfig& c, int timeout_s = 30) {
  RunResult out;
  const Status s =
      RunOnThreads(static_cast<int>(c.layout.gpus()), timeout_s, [&](Communicator& w) -> Status {
        SW_ASSIGN_OR_RETURN(RunResult r, RunRank(c, w));
        if (w.rank() == 0) out = std::move(r);
        return Status();
      });
  EXPECT_TRUE(s.ok()) << c.layout.ToString() << " on " << c.device_compute << ": " << s.message();
  return out;
}

// max |ref - got| / max |ref| over the elements.
inline double MaxRelativeError(const std::vector<float>& ref, const std::vector<float>& got) {
  double scale = 0, diff = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    scale = std::max(scale, static_cast<double>(std::fabs(ref[i])));
    diff = std::max(diff, static_cast<double>(std::fabs(ref[i] - got[i])));
  }
  return diff / scale;
}

}  // namespace shardwise::testing
