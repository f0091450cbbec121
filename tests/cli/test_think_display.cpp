// qmm chat's display of thinking blocks: shown, dimmed or hidden, with the markers split
// anywhere across the streamed pieces.
#include <gtest/gtest.h>

#include "qmm/cli/think_display.h"

namespace qmm::cli {
namespace {

const std::string kReply = "<think>\nThe user greets me.\n</think>\n\nHello there!";

// The reply fed in pieces of `n` bytes.
std::string stream(ThinkDisplay::Mode m, size_t n, const std::string& reply = kReply) {
  ThinkDisplay d(m);
  std::string out;
  for (size_t i = 0; i < reply.size(); i += n) out += d.push(std::string_view(reply).substr(i, n));
  return out + d.flush();
}

TEST(ThinkDisplay, ShowDimOrHideAtAnySplit) {
  for (size_t n = 1; n <= kReply.size(); ++n) {
    EXPECT_EQ(stream(ThinkDisplay::Mode::show, n), kReply) << n;
    EXPECT_EQ(stream(ThinkDisplay::Mode::dim, n), "\x1b[2m<think>\nThe user greets me.\n</think>\x1b[0m\n\nHello there!") << n;
    EXPECT_EQ(stream(ThinkDisplay::Mode::hide, n), "Hello there!") << n;
  }
}

TEST(ThinkDisplay, TextWithoutThinkingAndUnfinishedBlocks) {
  EXPECT_EQ(stream(ThinkDisplay::Mode::hide, 3, "a < b, <thin ice>"), "a < b, <thin ice>");
  EXPECT_EQ(stream(ThinkDisplay::Mode::hide, 2, "<think>cut off"), "");
  EXPECT_EQ(stream(ThinkDisplay::Mode::dim, 2, "<think>cut off"), "\x1b[2m<think>cut off\x1b[0m");
  EXPECT_EQ(stream(ThinkDisplay::Mode::hide, 4, "ends with <thi"), "ends with <thi");
}

}  // namespace
}  // namespace qmm::cli
