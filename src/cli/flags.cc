#include "flags.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <vector>

namespace shardwise::cli {
namespace {

// Fields whose flag is not the field's own name.
const std::map<std::string, std::string>& Exceptions() {
  static const std::map<std::string, std::string> table = {
      {"decode.redundant_experts", "--redundant-experts"},
      {"decode.shared_experts", "--shared-experts"},
      {"prefill.max_batch", "--max-batch"},
      {"decode.max_batch", "--max-batch"},
      {"prefill.cluster", "--prefill-cluster"},
      {"decode.cluster", "--cluster"},
      {"decode.nodes", "--nodes"},
      {"prefill.nodes", "--prefill-cluster"},
      {"usd_per_gpu_hour", "--usd-per-gpu-hour"},
  };
  return table;
}

// The pool fields with a flag of their own; a pool's other fields are the flags every pool
// shares (a pool's `kv_dtype` is --kv-dtype).
bool HasPoolFlag(const std::string& field) {
  static const std::vector<std::string> own = {
      "prefill.layout", "prefill.workers",           "prefill.cluster",
      "decode.layout",  "prefill.redundant_experts", "prefill.shared_experts",
      "decode.workers"};
  return std::find(own.begin(), own.end(), field) != own.end();
}

}  // namespace

std::string FlagOf(const std::string& field) {
  const auto it = Exceptions().find(field);
  if (it != Exceptions().end()) return it->second;
  for (const std::string pool : {"prefill.", "decode."}) {
    if (field.rfind(pool, 0) == 0 && !HasPoolFlag(field)) {
      return FlagOf(field.substr(pool.size()));
    }
  }
  std::string flag = "--" + field;
  std::replace(flag.begin(), flag.end(), '_', '-');
  std::replace(flag.begin(), flag.end(), '.', '-');
  return flag;
}

std::string CliMessage(const Status& status) {
  const std::string& text = status.message();
  const std::string& field = status.field();
  const size_t dot = field.rfind('.');
  const std::string own = dot == std::string::npos ? field : field.substr(dot + 1);
  std::string out;
  size_t at = 0;
  while (true) {
    const size_t open = text.find('`', at);
    const size_t close = open == std::string::npos ? open : text.find('`', open + 1);
    if (close == std::string::npos) {
      out += text.substr(at);
      return out;
    }
    const std::string name = text.substr(open + 1, close - open - 1);
    out += text.substr(at, open - at);
    out += FlagOf(!field.empty() && name == own ? field : name);
    at = close + 1;
  }
}

std::string CliText(const std::string& text) {
  return CliMessage(Status(StatusCode::kInvalidArgument, text));
}

void PrintNotes(const std::vector<std::string>& notes) {
  for (const std::string& note : notes) {
    std::fprintf(stderr, "shardwise: note: %s\n", CliText(note).c_str());
  }
}

}  // namespace shardwise::cli
