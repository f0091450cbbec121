// The routes applications use beside the OpenAI generation routes: llama-server's /tokenize and
// /detokenize, /v1/embeddings (OpenAI's shape), and the chat page at GET / (chat_page.*,
// embedded into the binary at build time: no files to install, nothing fetched from elsewhere).
#include <httplib.h>

#include <algorithm>

#include "apps_protocol.h"
#include "chat_page.h"
#include "connections.h"
#include "http_server.h"

namespace qmm::serve {
namespace {

const char* const kJson = "application/json";
constexpr auto kPoll = std::chrono::milliseconds(250);  // how often a waiting request checks its client

[[noreturn]] void no_tokenizer() { throw ApiError(501, "this server has no tokenizer", {}, "not_implemented"); }

// The page may only run its own script and style and talk to this server: a reply that
// smuggled markup into the page could neither run code nor send anything elsewhere.
constexpr const char* kCsp =
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

}  // namespace

std::vector<int32_t> Backend::tokenize(const std::string&, bool) const { no_tokenizer(); }
std::string Backend::token_piece(int32_t) const { no_tokenizer(); }
std::string Backend::detokenize(const std::vector<int32_t>&) const { no_tokenizer(); }

std::vector<Event> HttpServer::wait_all(const std::vector<std::shared_ptr<Job>>& jobs) {
  auto cancel_all = [&jobs] {
    for (const std::shared_ptr<Job>& j : jobs) j->cancel();
  };
  std::vector<Event> out(jobs.size());
  auto checked = std::chrono::steady_clock::now();
  for (size_t i = 0; i < jobs.size();) {
    Event e;
    const bool got = jobs[i]->next(e, kPoll);
    if (const auto now = std::chrono::steady_clock::now(); now - checked >= kPoll) {  // is the client still there?
      checked = now;
      if (ConnectionServer::client_gone()) {
        cancel_all();
        ConnectionServer::close_after_response();
        throw ApiError(499, "the client closed the connection");
      }
    }
    if (!got) continue;
    if (!e.embedding.empty()) out[i].embedding = std::move(e.embedding);
    if (!e.done) continue;
    if (!e.error.empty()) {
      cancel_all();
      throw ApiError(500, e.error);
    }
    out[i].usage = e.usage;
    out[i].done = true;
    ++i;
  }
  return out;
}

void HttpServer::app_routes(const Guard& guarded) {
  using httplib::Request;
  using httplib::Response;
  const auto tokenize = guarded(true, [this](const Request&, Response& res, const std::string& body) {
    const TokenizeRequest t = parse_tokenize(body);
    const std::vector<int32_t> ids = backend_.tokenize(t.content, t.add_special);
    std::vector<std::string> pieces;
    if (t.with_pieces) {
      for (const int32_t id : ids) pieces.push_back(backend_.token_piece(id));
    }
    res.set_content(tokenize_body(ids, t.with_pieces ? &pieces : nullptr), kJson);
  });
  const auto detokenize = guarded(true, [this](const Request&, Response& res, const std::string& body) {
    res.set_content(detokenize_body(backend_.detokenize(parse_detokenize(body))), kJson);
  });
  const auto embeddings = guarded(true, [this](const Request&, Response& res, const std::string& body) {
    EmbeddingRequest e = parse_embeddings(body);
    const size_t dim = backend_.embedding_size();
    if (dim == 0) throw ApiError(501, "this server computes no embeddings", {}, "not_implemented");
    if (e.dimensions && static_cast<size_t>(*e.dimensions) != dim) {
      throw ApiError(400, "'dimensions' must be the model's embedding size, " + std::to_string(dim) +
                              " (qmm does not shorten embeddings)", "dimensions");
    }
    const std::string model = e.inputs.model.empty() ? opt_.model_id : e.inputs.model;
    // The inputs go in waves of one per slot (decoded together), so that a batch larger than
    // the queue is served rather than refused.
    std::vector<serve::Request> parts = split_prompts(std::move(e.inputs));
    const size_t wave = std::max<size_t>(1, backend_.load().slots);
    std::vector<std::vector<float>> vectors;
    size_t tokens = 0;
    for (size_t at = 0; at < parts.size(); at += wave) {
      std::vector<std::shared_ptr<Job>> jobs;
      try {
        for (size_t i = at; i < std::min(parts.size(), at + wave); ++i) jobs.push_back(backend_.submit(std::move(parts[i])));
      } catch (...) {
        for (const std::shared_ptr<Job>& j : jobs) j->cancel();  // answered whole or not at all
        throw;
      }
      for (Event& ev : wait_all(jobs)) {
        if (ev.embedding.size() != dim) throw ApiError(500, "an input gave no embedding");
        vectors.push_back(std::move(ev.embedding));
        tokens += ev.usage.prompt_tokens;
      }
    }
    res.set_content(embeddings_body(model, vectors, e.base64, tokens), kJson);
  });
  // The chat page needs no key (it asks for one when the API does), as llama-server's web UI.
  const auto page = [](std::string_view content, const char* type) {
    return [content, type](const Request&, Response& res) {
      res.set_header("Content-Security-Policy", kCsp);
      res.set_header("X-Content-Type-Options", "nosniff");
      res.set_header("Referrer-Policy", "no-referrer");
      res.set_header("Cache-Control", "no-cache");
      res.set_content(std::string(content), type);
    };
  };
  const auto get_refused = [h = guarded(false, [](const Request& req, Response& res, const std::string&) {
                              res.set_header("Allow", "POST");
                              throw ApiError(405, req.method + " is not allowed on " + req.path + " (use POST)", {},
                                             "method_not_allowed");
                            })](const Request& req, Response& res) { h(req, res, httplib::ContentReader(nullptr, nullptr)); };
  for (const char* p : {"/tokenize", "/v1/tokenize"}) svr_->Post(p, tokenize).Get(p, get_refused);
  for (const char* p : {"/detokenize", "/v1/detokenize"}) svr_->Post(p, detokenize).Get(p, get_refused);
  for (const char* p : {"/v1/embeddings", "/embeddings"}) svr_->Post(p, embeddings).Get(p, get_refused);
  svr_->Get("/", page(chat_page_html(), "text/html; charset=utf-8"));
  svr_->Get("/index.html", page(chat_page_html(), "text/html; charset=utf-8"));
  svr_->Get("/chat.js", page(chat_page_js(), "text/javascript; charset=utf-8"));
  svr_->Get("/chat.css", page(chat_page_css(), "text/css; charset=utf-8"));
}

}  // namespace qmm::serve
