// The serving front end between a benchmark client and the engine's scheduler: when a request a
// client sent reaches the scheduler. The API server tokenizes prompts one at a time (vLLM's
// single-thread tokenizer executor, trtllm-serve's inline tokenization on its event loop), so a
// prompt waits for those sent before it, and every request spends a fixed time on the rest of the
// path (HTTP, chat template, IPC to the engine). A request is visible to the scheduler only after
// that path, so a closed loop's replacement, sent when a request completes, never joins the
// iteration the engine builds at that instant ("Why closed-loop TTFT grows", mechanisms 1 and 5).
#pragma once

#include <cstdint>

namespace shardwise {

class FrontEnd {
 public:
  FrontEnd(double request_path_s, double tokenize_s_per_token)
      : request_path_s_(request_path_s), tokenize_s_per_token_(tokenize_s_per_token) {}

  // When a request sent at `sent_s` with a prompt of `prompt_tokens` reaches the scheduler.
  // Requests are offered in the order they were sent; later ones never overtake earlier ones.
  double Visible(double sent_s, int64_t prompt_tokens);

 private:
  double request_path_s_ = 0;
  double tokenize_s_per_token_ = 0;
  double tokenizer_free_s_ = 0;  // when the tokenizer finishes the prompts offered so far
};

}  // namespace shardwise
