// shardwise's supported API: everything a command line, a Python binding or a server needs,
// in the spirit of LevelDB's db.h. A Catalog names the models, GPUs, clusters and engine
// profiles; each verb takes a request of plain values (the options a user states) and returns a
// typed result; api/json.h turns each result into the JSON --json prints (schema 4), and
// api/saved.h reads a saved deployment back. Errors are Status values that name the field
// they concern. Thread-safe: no global state beyond the immutable built-in catalog. Running a
// split for real (api/run.h, library shardwise_api_run) links the runtime, with MPI and CUDA
// where built; the analytic verbs here do not.
#pragma once

#include "shardwise/api/calibrate.h"
#include "shardwise/api/catalog.h"
#include "shardwise/api/collectives.h"
#include "shardwise/api/deployment_spec.h"
#include "shardwise/api/explain.h"
#include "shardwise/api/json.h"
#include "shardwise/api/launch.h"
#include "shardwise/api/options.h"
#include "shardwise/api/plan.h"
#include "shardwise/api/price.h"
#include "shardwise/api/recommend.h"
#include "shardwise/api/replay.h"
#include "shardwise/api/roofline.h"
#include "shardwise/api/saved.h"
#include "shardwise/api/simulate.h"
#include "shardwise/api/size.h"
#include "shardwise/api/train.h"
