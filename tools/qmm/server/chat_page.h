// The chat page of `qmm serve` (GET /, /chat.js, /chat.css): tools/qmm/server/chat_page/*,
// turned into byte arrays at build time (cmake/embed_files.cmake), so the binary serves them
// with nothing installed beside it.
#pragma once
#include <string_view>

namespace qmm::serve {

std::string_view chat_page_html();
std::string_view chat_page_js();
std::string_view chat_page_css();

}  // namespace qmm::serve
