// Synthetic but well-formed tokenizer vocabularies for `qmm synth`:
//  - SentencePiece-style (`llama`): <unk>, <s>, </s>, the 256 byte tokens <0x00>..<0xFF>, then
//    single characters and pseudo-words ("▁" marks a word start) with decreasing scores. Every
//    multi-character piece is the concatenation of two earlier pieces, so SentencePiece's
//    pair merging can reach it.
//  - GPT-2 byte-level BPE (`gpt2`, as Llama 3): the 256 byte symbols (bytes_to_unicode), one
//    token per merge ("left right", both earlier tokens), then 256 control tokens
//    <|begin_of_text|>, <|end_of_text|>, ... <|eot_id|>, <|reserved_special_token_N|>.
// Family flavours put each family's special tokens where the real vocabulary has them (ids,
// types) and add the symbols its tokenizer treats specially:
//  - gemma: <pad> <eos> <bos> <unk> <mask> ... <start_of_turn> <end_of_turn>, byte tokens,
//    runs of "▁", "\n" and "\t" (Gemma has no space prefix), a few accented and CJK letters;
//  - phi3: the llama layout plus Phi-3's added tokens at the end (<|endoftext|>, <|assistant|>,
//    <|system|>, <|end|>, <|user|>, placeholders);
//  - qwen2 / qwen3: byte-level BPE with space, newline, digit and punctuation merges, then
//    Qwen's <|endoftext|> <|im_start|> <|im_end|> ... (<tool_call>, Qwen 3's <think> as
//    user-defined tokens), padded with [PADn] unused tokens.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace qmm::gguf {

enum class VocabFlavor { llama, gemma, phi3, llama3, qwen2, qwen3 };

struct SynthVocab {
  std::string model;                // "llama" or "gpt2"
  std::string pre;                  // gpt2 only: tokenizer.ggml.pre
  bool add_bos = true, add_space_prefix = true;
  std::vector<std::string> tokens;
  std::vector<float> scores;        // llama only
  std::vector<int32_t> token_type;  // 1 normal, 2 unknown, 3 control, 6 byte
  std::vector<std::string> merges;  // gpt2 only
  uint32_t bos = 0, eos = 0, unk = 0;
  bool has_unk = false;
};

// `size` tokens in all (llama: >= 259 + 80; gpt2: >= 256 + 256 + 1), deterministic in `seed`.
SynthVocab make_spm_vocab(size_t size, uint64_t seed);
SynthVocab make_bpe_vocab(size_t size, uint64_t seed);
SynthVocab make_vocab(VocabFlavor flavor, size_t size, uint64_t seed);

// GPT-2's byte -> unicode code point map, UTF-8 encoded (bytes that are printable map to
// themselves; space is "Ġ").
std::string gpt2_byte_symbol(uint8_t b);

}  // namespace qmm::gguf
