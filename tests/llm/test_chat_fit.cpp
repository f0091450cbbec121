// qmm chat's history in a full context (text/chat.h's fit_conversation): the oldest turns go
// first, the system prompt never; a message that cannot fit even alone is refused untouched.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gguf/gguf.h"
#include "test_models.h"
#include "text/chat.h"

namespace qmm::llm {
namespace {

TEST(ChatFit, OldestTurnsDroppedSystemKept) {
  QMM_REQUIRE_STORIES260K();
  const Tokenizer tok = Tokenizer::from_gguf(gguf::File::open(test::stories260k_path()));
  const ChatFormat fmt =
      ChatFormat::from_template(tok, "{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}assistant:", "test");
  const std::string turn(200, 'a');
  std::vector<ChatMessage> msgs = {{"system", "Be brief."}, {"user", turn}, {"assistant", turn}, {"user", turn},
                                   {"assistant", turn},   {"user", "last"}};
  const size_t all = fmt.tokens(tok, msgs, true).size();
  // Room for everything: nothing dropped.
  std::vector<ChatMessage> m = msgs;
  FittedPrompt f = fit_conversation(fmt, tok, m, all + 10, 10);
  EXPECT_TRUE(f.fits);
  EXPECT_EQ(f.dropped, 0u);
  EXPECT_EQ(f.tokens.size(), all);
  // A context that holds one old turn less: the first (user + reply) goes, the system stays.
  m = msgs;
  f = fit_conversation(fmt, tok, m, all, 1);
  EXPECT_TRUE(f.fits);
  EXPECT_EQ(f.dropped, 1u);
  ASSERT_EQ(m.size(), 4u);
  EXPECT_EQ(m[0].role, "system");
  EXPECT_EQ(m[1].role, "user");
  EXPECT_EQ(f.tokens, fmt.tokens(tok, m, true));
  // Too small for the last message alone: refused, nothing dropped.
  m = msgs;
  f = fit_conversation(fmt, tok, m, 4, 1);
  EXPECT_FALSE(f.fits);
  EXPECT_EQ(m.size(), msgs.size());
  EXPECT_GE(f.tokens.size(), 4u);
  // drop_oldest_turn never drops the last message.
  std::vector<ChatMessage> one = {{"system", "s"}, {"user", "u"}};
  EXPECT_FALSE(drop_oldest_turn(one));
}

}  // namespace
}  // namespace qmm::llm
