// Shared by the GPU tests: skip with a clear message when this machine has no GPU (the tests
// still build in CI, which has the CUDA toolkit but no GPU).
#pragma once

#include <gtest/gtest.h>

#include "shardwise/runtime/cuda/device.h"

#define SW_SKIP_WITHOUT_GPU()                                                       \
  do {                                                                              \
    const ::shardwise::cuda::GpuInventory sw_gpus_ = ::shardwise::cuda::FindGpus(); \
    if (sw_gpus_.count == 0)                                                        \
      GTEST_SKIP() << "no GPU on this machine (" << sw_gpus_.why_none               \
                   << "); this GPU test runs where one is";                         \
  } while (0)
