// The feed-forward block of a Mixture-of-Experts layer (ArchSpec::moe: qwen3moe, qwen2moe), as
// llama.cpp's build_moe_ffn computes it for these families:
//   p = softmax(x · Wrouterᵀ) over all n_expert experts (ffn_gate_inp, [n_embd, n_expert])
//   the n_used experts of highest p (ties: the lower index), weights w_s = p_{e_s}, divided by
//   their sum (clamped to ≥ 2^-14) where the family renormalises (Qwen 3 MoE)
//   out = ((w_0·E_0(x) + w_1·E_1(x)) + ...) in slot order, E_e(x) = Wdown_e (silu(Wgate_e x) ⊙ Wup_e x)
//   Qwen 2 MoE adds sigmoid(ffn_gate_inp_shexp · x) · S(x), S the shared expert (a SwiGLU FFN).
// The experts are the slices [.., .., e] of the 3-D tensors ffn_{gate,up,down}_exps, each packed
// as an ordinary 2-D weight (gate and up together, as for a dense FFN). A batch's rows are
// grouped by expert (llama.cpp's mul_mat_id): each chosen expert runs one GEMM over the rows
// that chose it (prefill), or one GEMV (decode: only the selected experts' weights are read).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "matmul/matmul.h"
namespace qmm::gguf {
struct TensorInfo;
class File;
}  // namespace qmm::gguf

namespace qmm::llm {

struct Config;
struct Experts;
struct LoadStats;
class Model;
class State;

// Reads the experts' keys of an MoE family into c (a dense family's file with experts is refused): expert_count (1..1024), expert_used_count
// (1..expert_count), expert_feed_forward_length (else feed_forward_length / expert_used_count),
// for a shared expert expert_shared_feed_forward_length (else feed_forward_length). llama.cpp
// reads neither expert_weights_norm, expert_weights_scale nor expert_gating_func for these
// families; a file whose value of one would make it another model is refused by name.
void read_moe_config(const gguf::File& f, Config& c);

// ", 128 experts of width 768, 8 per token (weights renormalised)" for --trace ("" if dense).
std::string moe_summary(const Config& c);

// Expert e's [n, k] slice of a 3-D tensor of shape [k, n, n_expert], as a 2-D tensor of its own
// (same type; the name gets "[e]").
gguf::TensorInfo expert_slice(const gguf::TensorInfo& t, size_t e);

// The MoE block's scratch for batches of up to n_batch rows, sized once (State owns it).
struct MoeScratch {
  std::vector<float> probs;        // [n_batch, n_expert]: router logits, then probabilities
  std::vector<uint32_t> chosen;    // [n_batch, n_used]: row i's experts, best first
  std::vector<float> weight;       // [n_batch, n_used]: their weights
  std::vector<uint32_t> first;     // [n_expert + 1]: expert e's rows are grouped rows first[e]..first[e+1]-1
  std::vector<uint32_t> grouped;   // [n_batch, n_used]: the grouped row of (row i, slot s)
  std::vector<uint32_t> row_of;    // [n_batch, n_used]: the batch row of grouped row g
  std::vector<MatmulPart> parts;   // the experts' products of a step (matmul_group)
  std::vector<float> in, hidden, out;  // grouped rows: inputs [.., n_embd], gate|up [.., 2·n_ff_exp], outputs [.., n_embd]
  std::vector<float> shared;       // shared expert: gate|up [n_batch, 2·n_ff_shexp], then outputs [n_batch, n_embd]
  std::vector<uint32_t> last;      // [n_layer, n_used]: the experts the last batch's first row chose, per layer
  void size_for(const Config& c, size_t n_batch);
  size_t bytes() const;
};

// out[i] = the MoE block of layer `layer` applied to row x[i], for m rows of width n_embd
// (out may be x). The chosen experts' matmuls run as one pool job (matmul_group): a GEMV for an
// expert chosen by one row of the batch (every expert of a decode step), else a GEMM.
// `next`: the weights multiplied after the block (prefetched, as for matmul).
void moe_ffn(const Config& c, const Experts& E, size_t layer, size_t m, const float* x, float* out, MoeScratch& s,
             Context& ctx, const PackedWeights* next = nullptr);

// LoadStats' active_bytes, matmul_ops and int8_ops of a loaded model: what one token reads and
// computes, every weight but of an MoE layer's experts only expert_used_count of expert_count.
void count_active(const Model& model, LoadStats& st);

// The packed weights the last forward pass of one row read: every dense weight, and in each
// MoE layer the router and the experts that row chose (what `qmm bench model` pairs a decode
// step with).
void decode_weights(const Model& model, const State& s, std::vector<const PackedWeights*>& out);

}  // namespace qmm::llm
