// The OpenAI-compatible wire format of `qmm serve`: request bodies of /v1/chat/completions
// and /v1/completions parsed and validated into a Request (bad input is an ApiError with the
// HTTP status and OpenAI's error fields), and the JSON of responses, stream chunks and errors.
// No HTTP and no model here, so every rule is unit-tested on its own.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace qmm::serve {

// An error answered as {"error":{"message","type","param","code"}} with HTTP `status`.
struct ApiError : std::runtime_error {
  ApiError(int http_status, const std::string& message, std::string param_name = {}, std::string error_code = {})
      : std::runtime_error(message), status(http_status), param(std::move(param_name)), code(std::move(error_code)) {}
  int status;
  std::string param, code;
  const char* type() const;  // "invalid_request_error", "authentication_error", ...
};

struct Turn {
  std::string role, content;
};

enum class Endpoint { chat, completion, embedding };

// The log-probability of one generated token and of its most likely alternatives (apps_protocol.h).
struct TokenAlt {
  std::string token;  // its bytes (may be part of a UTF-8 character)
  float logprob = 0;
};
struct TokenLogprob {
  TokenAlt chosen;
  std::vector<TokenAlt> top;
  size_t offset = 0;  // where the token starts in the completion's text (bytes)
};

struct Request {
  Endpoint endpoint = Endpoint::chat;
  std::vector<Turn> messages;  // chat: at least one
  std::string prompt;          // completion
  std::vector<int32_t> prompt_ids;  // completion: the prompt as token ids ("prompt": [1, 2, 3]) instead
  // completion: "prompt": ["a", [1, 2]] holds several prompts, one choice each (OpenAI's
  // batch); prompt / prompt_ids above are the first. split_prompts() makes one request of each.
  struct Prompt {
    std::string text;
    std::vector<int32_t> ids;
  };
  std::vector<Prompt> more_prompts;
  std::string model;           // as sent (echoed back); may be empty
  std::optional<size_t> max_tokens;  // 0: no completion, only the usage of the prompt
  float temperature = 1.0f;    // OpenAI's defaults: temperature 1, top_p 1, no top-k / min-p
  float top_p = 1.0f;
  int top_k = 0;
  float min_p = 0.0f;
  // Penalties with llama.cpp's semantics over the last repeat_last_n tokens (prompt included):
  // a seen token's logit is divided (> 0) or multiplied by repeat_penalty, then lowered by
  // count x frequency_penalty + presence_penalty.
  float repeat_penalty = 1.0f;
  size_t repeat_last_n = 64;
  float frequency_penalty = 0.0f;
  float presence_penalty = 0.0f;
  std::optional<uint64_t> seed;
  std::vector<std::string> stop;
  bool ignore_eos = false;     // llama.cpp's extension: generate through end-of-text tokens
  bool stream = false;
  bool include_usage = false;  // stream_options.include_usage: a last chunk with the usage
  int logprobs = -1;           // >= 0: each token's log-prob and this many alternatives
};

// A request with several prompts as one request per prompt (each with more_prompts empty).
std::vector<Request> split_prompts(Request r);

// Parses a request body; throws ApiError (400) naming the offending field, also for a field
// of OpenAI's or llama-server's that qmm does not implement (unless its value changes nothing).
Request parse_request(std::string_view body, Endpoint endpoint);

enum class Finish { stop, length };
const char* finish_name(Finish f);

struct Usage {
  size_t prompt_tokens = 0, completion_tokens = 0;
};

// The fixed parts of one response: "chatcmpl-N" / "cmpl-N", the creation time and the model.
struct ResponseHead {
  Endpoint endpoint;
  std::string id, model;
  int64_t created;
};

std::string error_body(const ApiError& e);
struct Choice {
  std::string text;
  Finish finish = Finish::stop;
  std::optional<std::vector<TokenLogprob>> logprobs;  // set: the request asked for them
};
std::string completion_body(const ResponseHead& h, const std::vector<Choice>& choices, const Usage& u);
inline std::string completion_body(const ResponseHead& h, const std::string& text, Finish finish, const Usage& u) {
  return completion_body(h, std::vector<Choice>{{text, finish, std::nullopt}}, u);
}
// Stream chunks: the role (chat only), a piece of text, the finish reason (of choice `index`),
// the usage.
std::string role_chunk(const ResponseHead& h);
std::string text_chunk(const ResponseHead& h, const std::string& text, size_t index = 0,
                       const std::vector<TokenLogprob>* logprobs = nullptr);
std::string finish_chunk(const ResponseHead& h, Finish finish, size_t index = 0);
std::string usage_chunk(const ResponseHead& h, const Usage& u);
std::string models_body(const std::string& model_id, int64_t created);
std::string model_body(const std::string& model_id, int64_t created);

// One server-sent event: "data: PAYLOAD\n\n".
std::string sse_event(std::string_view payload);

}  // namespace qmm::serve
