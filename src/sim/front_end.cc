#include "shardwise/sim/front_end.h"

#include <algorithm>

namespace shardwise {

double FrontEnd::Visible(double sent_s, int64_t prompt_tokens) {
  const double start_s = std::max(sent_s, tokenizer_free_s_);
  tokenizer_free_s_ = start_s + tokenize_s_per_token_ * static_cast<double>(prompt_tokens);
  return tokenizer_free_s_ + request_path_s_;
}

}  // namespace shardwise
