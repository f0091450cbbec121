// The one tensor schema per family (llm/arch.h): what it lists is what qmm synth writes and what
// a file may hold, and the forms of Q/K/V it allows.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "gguf/gguf.h"
#include "llm/arch.h"
#include "llm/synth.h"

namespace qmm::llm {
namespace {

const TensorDims kDims{.embd = 64, .vocab = 512, .q = 64, .kv = 32, .ff = 192, .head = 16, .rot = 16,
                       .expert = 8, .ff_exp = 32, .ff_shexp = 48};

TEST(ArchSchema, NamesAreUniqueAndExtrasBelongToAWeight) {
  for (const char* name : {"llama", "mistral", "qwen2", "qwen3", "phi3", "gemma", "gemma2", "gemma3", "qwen2moe", "qwen3moe", "olmoe"}) {
    const ArchSpec& a = *find_arch(name);
    for (const QkvForm form : {QkvForm{}, QkvForm{true, false}, QkvForm{true, true}}) {
      std::set<std::string> names;
      const std::vector<TensorSpec> ts = layer_tensors(a, kDims, form);
      for (const TensorSpec& t : ts) {
        EXPECT_TRUE(names.insert(t.name).second) << name << ": " << t.name << " twice";
        const bool extra = t.role == Role::scale || t.role == Role::input_scale || t.role == Role::bias;
        if (extra && t.name != "attn_q.bias" && t.name != "attn_k.bias" && t.name != "attn_v.bias") {
          EXPECT_NE(find_tensor(ts, t.of), nullptr) << name << ": " << t.name << " of no weight";
        }
        if (t.role == Role::attn_q_norm) {
          EXPECT_EQ(t.shape[0], a.qk_norm_whole ? kDims.q : kDims.head) << name;
        }
      }
      // Q/K/V: separate or fused weights, biases separate or fused, never both forms.
      EXPECT_EQ(find_tensor(ts, Role::attn_qkv) != nullptr, form.fused) << name;
      EXPECT_EQ(find_tensor(ts, Role::attn_q) == nullptr, form.fused) << name;
      EXPECT_EQ(find_tensor(ts, Role::bias, Role::attn_qkv) != nullptr, form.fused && form.fused_bias) << name;
      EXPECT_EQ(find_tensor(ts, Role::bias, Role::attn_q) == nullptr, form.fused && form.fused_bias) << name;
      EXPECT_EQ(find_tensor(ts, Role::ffn_router) != nullptr, a.moe) << name;
      EXPECT_EQ(find_tensor(ts, Role::ffn_gate_shexp) != nullptr, a.shared_expert) << name;
    }
  }
  // Outside the layers: LongRoPE's factors or Llama 3's, as the family reads them.
  const std::vector<TensorSpec> g = global_tensors(*find_arch("llama"), kDims, false);
  EXPECT_NE(find_tensor(g, Role::rope_freqs), nullptr);
  EXPECT_EQ(find_tensor(g, Role::rope_long), nullptr);
  EXPECT_NE(find_tensor(global_tensors(*find_arch("llama"), kDims, true), Role::rope_long), nullptr);
  EXPECT_EQ(find_tensor(global_tensors(*find_arch("qwen3"), kDims, false), Role::rope_freqs), nullptr);
}

// Every tensor of a synthesized file is in its family's schema, and it holds every required and
// usual one (by the spec's features, never the family's name).
TEST(ArchSchema, SynthWritesTheSchema) {
  for (const char* shape : {"tiny", "tiny-llama3", "tiny-gemma3", "tiny-gemma2", "tiny-qwen2", "tiny-qwen3", "tiny-phi3",
                            "tiny-phi3-long", "tiny-qwen3moe", "tiny-qwen2moe", "tiny-olmoe"}) {
    const gguf::SynthShape& sh = *gguf::find_synth_shape(shape);
    const std::string path = ::testing::TempDir() + "qmm_schema_" + shape + ".gguf";
    gguf::synth_model(sh, WeightType::f32, 1, path, 1, {.replace = true, .inputs = {}});
    const gguf::File f = gguf::File::open(path);
    const ArchSpec& a = *find_arch(sh.arch);
    const TensorDims d{.embd = sh.dim, .vocab = sh.vocab, .q = uint64_t{sh.heads} * sh.head_dim,
                       .kv = uint64_t{sh.kv_heads} * sh.head_dim, .ff = sh.ffn, .head = sh.head_dim, .rot = sh.head_dim,
                       .expert = sh.experts, .ff_exp = sh.expert_ffn, .ff_shexp = sh.shared_ffn};
    std::set<std::string> listed;
    auto check = [&](const std::string& prefix, const std::vector<TensorSpec>& ts) {
      for (const TensorSpec& t : ts) {
        listed.insert(prefix + t.name);
        const gguf::TensorInfo* info = f.find_tensor(prefix + t.name);
        if (t.need == Need::required || t.need == Need::usual) {
          EXPECT_NE(info, nullptr) << shape << ": " << prefix + t.name;
        }
        if (info && t.need != Need::unused) {
          EXPECT_EQ(info->shape, t.shape) << shape << ": " << prefix + t.name;
        }
      }
    };
    check("", global_tensors(a, d, a.long_rope));
    for (uint32_t l = 0; l < sh.layers; ++l) check("blk." + std::to_string(l) + ".", layer_tensors(a, d, {.fused = a.qkv_fused_file}));
    for (const gguf::TensorInfo& t : f.tensors()) EXPECT_TRUE(listed.contains(t.name)) << shape << ": " << t.name << " not in the schema";
  }
}

}  // namespace
}  // namespace qmm::llm
