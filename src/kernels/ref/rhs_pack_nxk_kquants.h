// GGUF Q4_K / Q5_K / Q6_K / IQ4_NL rows [n, k] -> nr-row panels (plain C++; runs once at load).
// One packed RHS per type serves the scalar reference and the x86 kernels (nr 8: scalar, AVX2,
// AVX-VNNI; nr 16: AVX-512 VNNI). Parameters: nr a multiple of 4; kr = 4 (the chunk of K a
// 32-bit lane holds); sr = 2 (each byte carries two K positions, its two nibbles).
// kr = 8 is the NEON preset (nr 8, kernels/arm/neon_kquants.h): the same layouts with 8-byte
// chunks, byte B of a row at (B/8)·8·nr + 8·r + B%8, so a 16-byte vector is chunk B/8 of two
// rows (SMMLA's 2x8 operand; for SDOT two 4-byte groups per row). The scales are placed as
// for kr = 4. kr = 4 writes exactly the bytes below (the x86 kernels read them).
//
// Layouts (accessors: kernels/ref/layouts_k.h), super-block (or block) major within a panel.
// A row's GGUF quant bytes move in 4-byte chunks, rows interleaved: byte B of the row goes to
// (B/4)·4·nr + 4·r + B%4, so a 4·nr-byte vector is chunk B/4 of every row, one 32-bit lane per
// row. Then per-row scales, rows adjacent (a vector load gives one scale per lane).
//
//   rhs_pack_nxk_q4kp_q4k     Q4_K -> q4kp: per super-block 148·nr bytes (1.028 × GGUF's 144):
//     [0, 128nr)     qs: chunk v of 32-byte group p holds elements 64p + 4v.. (low nibbles,
//                    sub-block 2p) and 64p + 32 + 4v.. (high nibbles, sub-block 2p + 1)
//     [128nr, 144nr) sub-block j: 6-bit scale sc_j of row r at 128nr + 2nr·j + r, its min m_j
//                    at 128nr + 2nr·j + nr + r (widened from 12 packed bytes to 16, so a kernel
//                    reads them with one load and a byte shuffle instead of ggml's bit surgery)
//     [144nr, 148nr) f16 d of row r at 144nr + 2r, f16 dmin at 146nr + 2r
//   rhs_pack_nxk_q5kp_q5k     Q5_K -> q5kp: per super-block 180·nr bytes (1.023 × 176):
//     [0, 128nr) qs as q4kp · [128nr, 160nr) qh (bit j of GGUF qh[l]: bit 4 of element 32j + l)
//     · [160nr, 176nr) sc/m as q4kp · f16 d at 176nr + 2r, dmin at 178nr + 2r
//   rhs_pack_nxk_q6kp_q6k     Q6_K -> q6kp: per super-block 210·nr bytes (= GGUF):
//     [0, 192nr) ql then qh as GGUF orders them · int8 scale t (16 elements) of row r at
//     192nr + nr·t + r · f16 d at 208nr + 2r
//   rhs_pack_nxk_iq4nlp_iq4nl IQ4_NL -> iq4nlp: per 32-block 18·nr bytes (= GGUF):
//     [0, 16nr) qs (chunk v: elements 4v.. low nibbles, 16 + 4v.. high nibbles: code-book
//     indices) · f16 d at 16nr + 2r. The same bytes as the x86 Q4_0 packer writes.
//
// KleidiAI's asymmetric 4-bit RHS family (kai_rhs_pack_nxk_qai4c32p_qau4c32s0s1_f32_f32_f32_neon:
// per 32-block F32 scale and F32 offset beside u4 data) is not matched: it carries 8 bytes of
// scale/offset per 32 weights (≈ 6 bits per weight against Q4_K's 4.5) and would drop the
// super-block's two-level scales that keep the file's bits; here d·sc and dmin·m stay integer
// until one F32 step per 32-block.
#pragma once
#include "kernels/ukernel.h"

namespace qmm {

extern const RhsPacker rhs_pack_nxk_q4kp_q4k;
extern const RhsPacker rhs_pack_nxk_q5kp_q5k;
extern const RhsPacker rhs_pack_nxk_q6kp_q6k;
extern const RhsPacker rhs_pack_nxk_iq4nlp_iq4nl;

}  // namespace qmm
