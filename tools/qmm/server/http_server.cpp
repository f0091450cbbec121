#include "http_server.h"

#include <httplib.h>

#include <malloc.h>
#include <sys/socket.h>

#include <algorithm>
#include <ctime>
#include <nlohmann/json.hpp>

#include "connections.h"
#include "core/error.h"

namespace qmm::serve {
namespace {

constexpr auto kPoll = std::chrono::milliseconds(250);  // how often a waiting stream checks its client
constexpr uint64_t kLargeBody = 64 << 10;
const char* const kJson = "application/json";

void reply_error(httplib::Response& res, const ApiError& e) {
  res.status = e.status;
  res.set_content(error_body(e), kJson);
}

// The message of an error httplib produced itself (no route, body too large, bad request line).
ApiError http_error(const httplib::Request& req, int status, size_t max_body) {
  switch (status) {
    case 404: return ApiError(404, "no route for " + req.method + " " + req.path, {}, "not_found");
    case 413:
      return ApiError(413, "the request body is larger than the limit of " + std::to_string(max_body) + " bytes", {},
                      "request_too_large");
    case 400: return ApiError(400, "malformed HTTP request");
    default: return ApiError(status, "HTTP status " + std::to_string(status));
  }
}

// Constant-time comparison, so the key cannot be guessed byte by byte from response times.
bool same_key(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

}  // namespace

namespace {

ConnectionLimits limits(const ServerOptions& o) {
  ConnectionLimits l;
  l.threads = o.threads;
  l.max_connections = o.max_connections;
  l.idle_timeout = o.idle_timeout;
  l.header_timeout = o.header_timeout;
  l.body_timeout = o.body_timeout;
  l.busy_body = error_body(ApiError(503, "too many open connections (" + std::to_string(o.max_connections) +
                                             "); retry later"));
  return l;
}

}  // namespace

void limit_malloc_retention() {
  mallopt(M_ARENA_MAX, 2);
  mallopt(M_MMAP_THRESHOLD, 256 << 10);
}

HttpServer::HttpServer(Backend& backend, ServerOptions opt)
    : backend_(backend),
      opt_(std::move(opt)),
      svr_(std::make_unique<ConnectionServer>(limits(opt_))),
      created_(std::time(nullptr)) {
  svr_->set_payload_max_length(opt_.max_body_bytes);
  svr_->set_socket_options([this](int sock) {
    const int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);  // (no SO_REUSEPORT: one server per port)
    listen_fd_ = sock;
  });
  routes();
}

HttpServer::~HttpServer() = default;

bool HttpServer::authorized(const httplib::Request& req) const {
  if (opt_.api_key.empty()) return true;
  const std::string h = req.get_header_value("Authorization");
  const std::string prefix = "Bearer ";
  if (h.size() > prefix.size() && h.compare(0, prefix.size(), prefix) == 0) return same_key(h.substr(prefix.size()), opt_.api_key);
  return req.has_header("X-Api-Key") && same_key(req.get_header_value("X-Api-Key"), opt_.api_key);  // llama-server's too
}

bool HttpServer::cors_allows(const std::string& origin) const {
  if (origin.empty() || opt_.cors.empty()) return false;
  if (opt_.cors == "*") return true;
  for (size_t at = 0; at <= opt_.cors.size();) {
    const size_t comma = std::min(opt_.cors.find(',', at), opt_.cors.size());
    if (opt_.cors.compare(at, comma - at, origin) == 0 && comma - at == origin.size()) return true;
    at = comma + 1;
  }
  return false;
}

void HttpServer::routes() {
  using httplib::ContentReader;
  using httplib::Request;
  using httplib::Response;
  // Every handler: the key first (except /health), then ApiError -> its JSON body. POST bodies
  // are read here (httplib's own reading would parse form-encoded bodies, with a smaller limit).
  using Fn = std::function<void(const Request&, Response&, const std::string& body)>;
  auto guarded = [this](bool needs_key, Fn fn) {
    return [this, needs_key, fn = std::move(fn)](const Request& req, Response& res, const ContentReader& reader) {
      try {
        // Requests with a large body (or one of unknown size) are handled two at a time, from
        // reading the body to queueing the prompt: their copies of it, parsed and tokenized,
        // would otherwise multiply with the clients sending them.
        const bool large = req.get_header_value("Transfer-Encoding") == "chunked" ||
                           req.get_header_value<uint64_t>("Content-Length") > kLargeBody;
        if (large) large_requests_.acquire();
        struct Release {
          std::counting_semaphore<>* s;
          ~Release() {
            if (s) s->release();
          }
        } release{large ? &large_requests_ : nullptr};
        const std::string body = read_body(req, res, reader);
        if (needs_key && !authorized(req)) {
          throw ApiError(401, "invalid or missing API key (send 'Authorization: Bearer KEY' or 'X-Api-Key: KEY')", {},
                         "invalid_api_key");
        }
        fn(req, res, body);
      } catch (const ApiError& e) {
        reply_error(res, e);
      }
    };
  };
  auto get = [guarded](bool needs_key, Fn fn) {  // a GET handler has no body to read
    return [h = guarded(needs_key, std::move(fn))](const Request& req, Response& res) {
      h(req, res, ContentReader(nullptr, nullptr));
    };
  };
  auto not_allowed = [guarded](const char* allow) {
    return guarded(false, [allow](const Request& req, Response& res, const std::string&) {
      res.set_header("Allow", allow);
      throw ApiError(405, req.method + " is not allowed on " + req.path + " (use " + allow + ")", {},
                     "method_not_allowed");
    });
  };

  const auto health = get(false, [this](const Request&, Response& res, const std::string&) {
    const Load l = backend_.load();
    if (l.loading) throw ApiError(503, "Loading model", {}, "loading");  // llama-server's answer
    res.set_content(nlohmann::json{{"status", "ok"},
                                   {"slots_idle", l.slots - l.active},
                                   {"slots_processing", l.active},
                                   {"requests_queued", l.queued},
                                   {"requests_cancelled", l.cancelled}}
                        .dump(),
                    kJson);
  });
  const auto models = get(true, [this](const Request&, Response& res, const std::string&) {
    res.set_content(models_body(opt_.model_id, created_), kJson);
  });
  const auto model = get(true, [this](const Request& req, Response& res, const std::string&) {
    const std::string id = req.matches[1];
    if (id != opt_.model_id) throw ApiError(404, "the model '" + id + "' does not exist", "model", "model_not_found");
    res.set_content(model_body(opt_.model_id, created_), kJson);
  });
  const auto chat = guarded(true, [this](const Request& req, Response& res, const std::string& body) {
    generate(req, res, body, Endpoint::chat);
  });
  const auto completion = guarded(true, [this](const Request& req, Response& res, const std::string& body) {
    generate(req, res, body, Endpoint::completion);
  });
  const auto get_not_allowed = [not_allowed](const char* allow) {
    return [h = not_allowed(allow)](const Request& req, Response& res) { h(req, res, ContentReader(nullptr, nullptr)); };
  };

  for (const char* p : {"/health", "/v1/health"}) svr_->Get(p, health).Post(p, not_allowed("GET"));
  svr_->Get("/v1/models", models).Post("/v1/models", not_allowed("GET"));
  svr_->Get("/v1/models/(.+)", model);
  for (const char* p : {"/v1/chat/completions", "/chat/completions"}) svr_->Post(p, chat).Get(p, get_not_allowed("POST"));
  for (const char* p : {"/v1/completions", "/completions"}) {
    svr_->Post(p, completion).Get(p, get_not_allowed("POST"));
  }
  app_routes(guarded);  // routes_apps.cpp: /tokenize, /detokenize, /v1/embeddings, the chat page

  // CORS as llama-server: an allowed Origin is echoed on every answer; a preflight OPTIONS
  // request is answered at once (no key: browsers send none with it). A request whose length
  // is ambiguous is refused, and its connection closed (whatever follows could be read as a
  // request): more than one Content-Length, one that is not a number, or one with
  // Transfer-Encoding (request smuggling).
  svr_->set_pre_routing_handler([this](const Request& req, Response& res) {
    const std::string origin = req.get_header_value("Origin");
    const bool allowed = cors_allows(origin);
    if (allowed) {
      res.set_header("Access-Control-Allow-Origin", origin);
      res.set_header("Vary", "Origin");
    }
    const size_t lengths = req.get_header_value_count("Content-Length");
    const std::string len = req.get_header_value("Content-Length");
    std::string bad;
    if (lengths > 1) bad = "more than one Content-Length header";
    else if (lengths == 1 && (len.empty() || len.size() > 19 || len.find_first_not_of("0123456789") != std::string::npos))
      bad = "Content-Length is not a number: '" + len.substr(0, 40) + "'";
    else if (lengths == 1 && req.has_header("Transfer-Encoding")) bad = "both Content-Length and Transfer-Encoding";
    if (!bad.empty()) {
      ConnectionServer::close_after_response();
      res.set_header("Connection", "close");
      reply_error(res, ApiError(400, "malformed HTTP request: " + bad));
      return httplib::Server::HandlerResponse::Handled;
    }
    if (req.method != "OPTIONS") return httplib::Server::HandlerResponse::Unhandled;
    if (allowed) {
      res.set_header("Access-Control-Allow-Credentials", "true");
      res.set_header("Access-Control-Allow-Methods", "GET, POST");
      res.set_header("Access-Control-Allow-Headers", "*");
      res.set_header("Access-Control-Max-Age", "86400");
    }
    res.status = 204;
    return httplib::Server::HandlerResponse::Handled;
  });

  // httplib's own errors (no route, body too large, bad request) get a JSON body too.
  svr_->set_error_handler([this](const Request& req, Response& res) {
    if (res.body.empty()) reply_error(res, http_error(req, res.status, opt_.max_body_bytes));
  });
  svr_->set_exception_handler([](const Request&, Response& res, std::exception_ptr ep) {
    std::string what = "internal error";
    try {
      std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    reply_error(res, ApiError(500, what));
  });
}

std::string HttpServer::read_body(const httplib::Request& req, httplib::Response& res,
                                  const httplib::ContentReader& reader) const {
  std::string body;
  const bool has_body = req.has_header("Content-Length") || req.get_header_value("Transfer-Encoding") == "chunked";
  if (!reader.reader_ || !has_body) return body;
  if (req.is_multipart_form_data()) throw ApiError(400, "the request body must be JSON, not multipart/form-data");
  bool too_large = false;
  const bool ok = reader([&](const char* data, size_t n) {
    if (body.size() + n > opt_.max_body_bytes) {
      too_large = true;
      return false;
    }
    body.append(data, n);
    return true;
  });
  if (too_large || res.status == 413) throw http_error(req, 413, opt_.max_body_bytes);
  if (!ok) throw ApiError(400, "could not read the request body");
  return body;
}

void HttpServer::generate(const httplib::Request&, httplib::Response& res, const std::string& body, Endpoint ep) {
  Request r = parse_request(body, ep);
  const bool streaming = r.stream;
  ResponseHead head{ep, (ep == Endpoint::chat ? "chatcmpl-" : "cmpl-") + std::to_string(next_id_++),
                    r.model.empty() ? opt_.model_id : r.model, std::time(nullptr)};
  // One job per prompt (a completion's "prompt" may hold several: one choice each).
  std::vector<std::shared_ptr<Job>> jobs;
  auto cancel_all = [&jobs] {
    for (const std::shared_ptr<Job>& j : jobs) j->cancel();
  };
  try {
    for (Request& part : split_prompts(std::move(r))) jobs.push_back(backend_.submit(std::move(part)));
  } catch (...) {
    cancel_all();  // a batch is answered whole or not at all
    throw;
  }
  if (streaming) return stream(std::move(jobs), head, res);

  std::vector<Choice> choices(jobs.size());
  if (jobs.front()->request().logprobs >= 0) {
    for (Choice& c : choices) c.logprobs.emplace();
  }
  Usage usage;
  auto checked = std::chrono::steady_clock::now();
  for (size_t i = 0; i < jobs.size();) {
    Event e;
    const bool got = jobs[i]->next(e, kPoll);
    if (const auto now = std::chrono::steady_clock::now(); now - checked >= kPoll) {  // is the client still there?
      checked = now;
      if (ConnectionServer::client_gone()) {
        cancel_all();  // nobody waits for the answer: free the slots
        ConnectionServer::close_after_response();
        throw ApiError(499, "the client closed the connection");
      }
    }
    if (!got) continue;
    choices[i].text += e.text;
    if (choices[i].logprobs) choices[i].logprobs->insert(choices[i].logprobs->end(), e.logprobs.begin(), e.logprobs.end());
    if (!e.done) continue;
    if (!e.error.empty()) {
      cancel_all();
      throw ApiError(500, e.error);
    }
    choices[i].finish = e.finish;
    usage.prompt_tokens += e.usage.prompt_tokens;
    usage.completion_tokens += e.usage.completion_tokens;
    ++i;
  }
  res.set_content(completion_body(head, choices, usage), kJson);
}

void HttpServer::stream(std::vector<std::shared_ptr<Job>> jobs, const ResponseHead& head, httplib::Response& res) {
  res.set_header("Cache-Control", "no-cache");
  const bool usage = jobs.front()->request().include_usage;
  std::vector<bool> finished(jobs.size(), false);
  auto provider = [jobs, head, usage, finished, left = jobs.size(), total = Usage{}, started = false](
                      size_t, httplib::DataSink& sink) mutable {
    auto send = [&sink](const std::string& payload) {
      const std::string ev = sse_event(payload);
      return sink.write(ev.data(), ev.size());
    };
    if (!started) {
      started = true;
      if (head.endpoint == Endpoint::chat && !send(role_chunk(head))) return false;
    }
    // The next event of each unfinished choice (one choice: waits up to kPoll; several: a glance each).
    bool any = false;
    for (size_t i = 0; i < jobs.size(); ++i) {
      if (finished[i]) continue;
      Event e;
      if (!jobs[i]->next(e, left == 1 ? kPoll : std::chrono::milliseconds(1))) continue;
      any = true;
      if ((!e.text.empty() || !e.logprobs.empty()) &&
          !send(text_chunk(head, e.text, i, jobs[i]->request().logprobs >= 0 ? &e.logprobs : nullptr))) {
        return false;
      }
      if (!e.done) continue;
      if (!e.error.empty()) {
        for (const std::shared_ptr<Job>& j : jobs) j->cancel();
        send(error_body(ApiError(500, e.error)));
        if (!send("[DONE]")) return false;
        sink.done();
        return true;
      }
      if (!send(finish_chunk(head, e.finish, i))) return false;
      total.prompt_tokens += e.usage.prompt_tokens;
      total.completion_tokens += e.usage.completion_tokens;
      finished[i] = true;
      --left;
    }
    if (left > 0) return any || sink.is_writable();  // nothing yet: is the client still there?
    if (usage && !send(usage_chunk(head, total))) return false;
    if (!send("[DONE]")) return false;
    sink.done();
    return true;
  };
  // The releaser runs when the stream ends; unless it ended well the client is gone (or the
  // server stops): cancel the jobs, which frees their slots at the engine's next step.
  res.set_chunked_content_provider("text/event-stream", std::move(provider), [jobs](bool success) {
    if (!success) {
      for (const std::shared_ptr<Job>& j : jobs) j->cancel();
    }
  });
}

int HttpServer::bind() {
  int port = opt_.port;
  if (port == 0) {
    port = svr_->bind_to_any_port(opt_.host);
    if (port <= 0) fail(Status::io, "cannot listen on " + opt_.host + " (any port)");
  } else if (!svr_->bind_to_port(opt_.host, port)) {
    fail(Status::io, "cannot listen on " + opt_.host + ":" + std::to_string(port) + " (in use, or not an address here)");
  }
  // httplib 0.11 listens with a backlog of 5: a burst of clients would overflow it, and a
  // connection whose request the kernel dropped meanwhile arrives too late and is closed.
  if (listen_fd_ >= 0) ::listen(listen_fd_, SOMAXCONN);
  return port;
}

void HttpServer::run() { svr_->listen_after_bind(); }

void HttpServer::stop() { svr_->stop(); }

bool HttpServer::running() const { return svr_->is_running(); }

}  // namespace qmm::serve
