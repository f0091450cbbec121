// The wire format of qmm serve's application routes, beside protocol.h: log-probabilities
// (OpenAI's chat `logprobs` / `top_logprobs`, the legacy completions' `logprobs` N, llama-server's
// `n_probs`), llama-server's /tokenize and /detokenize, and /v1/embeddings. Parsing and JSON
// only (no HTTP, no model), unit-tested on their own.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "protocol.h"

namespace qmm::serve {

constexpr int kMaxTopLogprobs = 20;  // OpenAI's limit of top_logprobs (and here of completions' logprobs)
constexpr int kMaxNProbs = 100;      // llama-server's n_probs, bounded
constexpr size_t kMaxEmbeddingInputs = 64;

// Sets r.logprobs from the body's logprobs / top_logprobs / n_probs (400 for bad values).
void parse_logprobs(const nlohmann::json& body, Request& r);

// The chat shape {"content": [{token, logprob, bytes, top_logprobs}], "refusal": null} or the
// legacy completions one {tokens, token_logprobs, top_logprobs, text_offset}.
nlohmann::ordered_json logprobs_json(Endpoint ep, const std::vector<TokenLogprob>& lp);

// POST /tokenize {"content", "add_special" (false), "parse_special" (true), "with_pieces" (false)}.
struct TokenizeRequest {
  std::string content;
  bool add_special = false, with_pieces = false;
};
TokenizeRequest parse_tokenize(std::string_view body);
// {"tokens": [ids]} or, with pieces, {"tokens": [{"id", "piece"}]}: the piece is a string when
// it is valid UTF-8, else its bytes (llama-server's answer).
std::string tokenize_body(const std::vector<int32_t>& ids, const std::vector<std::string>* pieces);

// POST /detokenize {"tokens": [ids]} (the range of each id is the backend's to check).
std::vector<int32_t> parse_detokenize(std::string_view body);
std::string detokenize_body(const std::string& content);

// POST /v1/embeddings {"input": string | [strings] | [ids] | [[ids]], "model", "encoding_format":
// "float" | "base64", "dimensions" (only the model's), "user"}: one Request (Endpoint::embedding)
// per input in prompt / more_prompts.
struct EmbeddingRequest {
  Request inputs;
  bool base64 = false;
  std::optional<int64_t> dimensions;
};
EmbeddingRequest parse_embeddings(std::string_view body);
std::string embeddings_body(const std::string& model, const std::vector<std::vector<float>>& vectors, bool base64,
                            size_t prompt_tokens);
std::string base64_floats(const std::vector<float>& v);  // little-endian float32, as OpenAI's

}  // namespace qmm::serve
