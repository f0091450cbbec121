// qmm's built-in chat templates, written for qmm. For conversations of system, user and
// assistant messages each renders the same bytes as the model family's published template
// (tests/llm/test_chat_template.cpp checks that with python3-jinja2); tool calls are not covered.
#include <array>
#include <utility>

#include "text/chat_template.h"

namespace qmm::llm {
namespace {

// Llama 3.1 / 3.2 Instruct: a system header always, dated; every turn's content trimmed.
constexpr const char* kLlama3 = R"tmpl({#- qmm built-in: Llama 3.x -#}
{%- set sys = namespace(text='', turns=messages) -%}
{%- if messages and messages[0].role == 'system' -%}
  {%- set sys.text = messages[0].content | trim -%}
  {%- set sys.turns = messages[1:] -%}
{%- endif -%}
{%- set today = strftime_now('%d %b %Y') if strftime_now is defined else '26 Jul 2024' -%}
{{- bos_token + '<|start_header_id|>system<|end_header_id|>\n\n' -}}
{{- 'Cutting Knowledge Date: December 2023\nToday Date: ' ~ today ~ '\n\n' ~ sys.text ~ '<|eot_id|>' -}}
{%- for turn in sys.turns -%}
  {{- '<|start_header_id|>' ~ turn.role ~ '<|end_header_id|>\n\n' ~ (turn.content | trim) ~ '<|eot_id|>' -}}
{%- endfor -%}
{%- if add_generation_prompt -%}
  {{- '<|start_header_id|>assistant<|end_header_id|>\n\n' -}}
{%- endif -%})tmpl";

// Llama 2 chat: [INST] turns, each user turn after BOS; the system text in <<SYS>> inside the
// first user turn; user and assistant must alternate.
constexpr const char* kLlama2 = R"tmpl({#- qmm built-in: Llama 2 chat -#}
{%- set sys = namespace(text=none, turns=messages) -%}
{%- if messages and messages[0].role == 'system' -%}
  {%- set sys.text = messages[0].content -%}
  {%- set sys.turns = messages[1:] -%}
{%- endif -%}
{%- for turn in sys.turns -%}
  {%- if (turn.role == 'user') != loop.index0 is even -%}
    {{- raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') -}}
  {%- endif -%}
  {%- set text = turn.content -%}
  {%- if loop.first and sys.text is not none -%}
    {%- set text = '<<SYS>>\n' ~ sys.text ~ '\n<</SYS>>\n\n' ~ text -%}
  {%- endif -%}
  {%- if turn.role == 'user' -%}
    {{- bos_token ~ '[INST] ' ~ text.strip() ~ ' [/INST]' -}}
  {%- elif turn.role == 'assistant' -%}
    {{- ' ' ~ text.strip() ~ ' ' ~ eos_token -}}
  {%- endif -%}
{%- endfor -%})tmpl";

// Mistral Instruct v0.3 ("v3" tokenizer): [INST]…[/INST] with no spaces inside; the system text
// goes in front of the last user turn; user and assistant must alternate.
constexpr const char* kMistral = R"tmpl({#- qmm built-in: Mistral v3 -#}
{%- set has_system = messages and messages[0].role == 'system' -%}
{%- set turns = messages[1:] if has_system else messages -%}
{%- if turns[::2] | rejectattr('role', 'equalto', 'user') | list or turns[1::2] | selectattr('role', 'equalto', 'user') | list -%}
  {{- raise_exception('After the optional system message, conversation roles must alternate user/assistant/user/assistant/...') -}}
{%- endif -%}
{{- bos_token -}}
{%- for turn in turns -%}
  {%- if turn.role == 'user' -%}
    {{- '[INST] ' ~ (messages[0].content ~ '\n\n' if has_system and loop.last) ~ turn.content ~ '[/INST]' -}}
  {%- elif turn.role == 'assistant' -%}
    {{- ' ' ~ (turn.content | trim) ~ eos_token -}}
  {%- else -%}
    {{- raise_exception('Only user and assistant roles are supported, with the exception of an initial optional system message!') -}}
  {%- endif -%}
{%- endfor -%})tmpl";

// ChatML (Qwen 2.5 / 3, SmolLM 2, …): <|im_start|>role\ncontent<|im_end|>\n per message.
constexpr const char* kChatML = R"tmpl({#- qmm built-in: ChatML -#}
{%- for turn in messages -%}
  {{- '<|im_start|>' ~ turn.role ~ '\n' ~ turn.content ~ '<|im_end|>\n' -}}
{%- endfor -%}
{%- if add_generation_prompt -%}
  {{- '<|im_start|>assistant\n' -}}
{%- endif -%})tmpl";

// Gemma 2 / 3 instruction-tuned: no system turn (its text opens the first user turn), the
// assistant is "model", contents trimmed; user and model must alternate.
constexpr const char* kGemma = R"tmpl({#- qmm built-in: Gemma -#}
{%- set sys = namespace(prefix='', turns=messages) -%}
{%- if messages and messages[0].role == 'system' -%}
  {%- set sys.prefix = messages[0].content ~ '\n\n' -%}
  {%- set sys.turns = messages[1:] -%}
{%- endif -%}
{{- bos_token -}}
{%- for turn in sys.turns -%}
  {%- if (turn.role == 'user') != loop.index0 is even -%}
    {{- raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') -}}
  {%- endif -%}
  {%- set who = 'model' if turn.role == 'assistant' else turn.role -%}
  {{- '<start_of_turn>' ~ who ~ '\n' ~ (sys.prefix if loop.first else '') ~ (turn.content | trim) ~ '<end_of_turn>\n' -}}
{%- endfor -%}
{%- if add_generation_prompt -%}
  {{- '<start_of_turn>model\n' -}}
{%- endif -%})tmpl";

// Phi-3 / Phi-3.5 mini: <|role|>\ncontent<|end|>\n; without a generation prompt, EOS ends it.
constexpr const char* kPhi3 = R"tmpl({#- qmm built-in: Phi-3 -#}
{%- for turn in messages if turn.role in ['system', 'user', 'assistant'] -%}
  {{- '<|' ~ turn.role ~ '|>\n' ~ turn.content ~ '<|end|>\n' -}}
{%- endfor -%}
{{- '<|assistant|>\n' if add_generation_prompt else eos_token -}})tmpl";

constexpr std::array<std::pair<const char*, const char*>, 6> kBuiltins = {{
    {"llama3", kLlama3},
    {"llama2", kLlama2},
    {"mistral", kMistral},
    {"chatml", kChatML},
    {"gemma", kGemma},
    {"phi3", kPhi3},
}};

}  // namespace

std::optional<std::string> builtin_chat_template(std::string_view name) {
  for (const auto& [n, source] : kBuiltins)
    if (name == n) return std::string(source);
  return std::nullopt;
}

std::vector<std::string> builtin_chat_template_names() {
  std::vector<std::string> names;
  for (const auto& b : kBuiltins) names.emplace_back(b.first);
  return names;
}

}  // namespace qmm::llm
