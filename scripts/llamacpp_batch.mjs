// llama.cpp as the oracle of the tokenizer and model tests (tests/llm/test_llamacpp.cpp): one
// node process for many models, so CI pays llama.cpp's start-up once. Reads a JSON request
//   {"models": [{"path": "...", "strings": ["..."], "prompts": ["..."], "n": 32, "top": 8, "ctx": 256, "kv": "f32"}]}
// ("kv": "f32", the default: F32 attention and cache; "f16": llama.cpp's default flash attention
// and F16 cache)
// and prints one line per answer (ids are decimal, space-separated):
//   T <model> <string> <ids>            tokenization of a string (special tokens parsed, no BOS)
//   P <model> <prompt> <ids>            the prompt as evaluated (BOS first when add_bos_token)
//   G <model> <prompt> <ids>            the greedy continuation, n tokens (stops early at end of generation)
//   L <model> <prompt> <step> <id:p>... the top probabilities before each greedy token
//   E <model> <message>                 the model could not be loaded or run
// Usage: node llamacpp_batch.mjs REQUEST.json (the prebuilt CPU build of node-llama-cpp).
import {readFileSync} from "node:fs";
import {getLlama} from "node-llama-cpp";

const request = JSON.parse(readFileSync(process.argv[2], "utf8"));
const llama = await getLlama({gpu: false, build: "never", logLevel: "error"});
const out = (line) => process.stdout.write(line + "\n");

for (const [mi, m] of request.models.entries()) {
  try {
    const model = await llama.loadModel({modelPath: m.path, vocabOnly: m.vocab_only ?? false});
    const t = model.tokens;
    out(`V ${mi} ${t.bos ?? -1} ${t.shouldPrependBosToken ? 1 : 0} ${t.eos ?? -1}`);
    for (const [si, s] of (m.strings ?? []).entries()) {
      const ids = model.tokenize(s, true);
      out(`T ${mi} ${si} ${ids.join(" ")}`);
      if (m.detokenize) out(`D ${mi} ${si} ${Buffer.from(model.detokenize(ids, false), "utf8").toString("hex")}`);
    }
    if (m.eog) out(`Q ${mi} ${m.eog.filter((id) => model.isEogToken(id)).join(" ")}`);
    const prompts = m.prompts ?? [];
    if (prompts.length === 0) {
      await model.dispose();
      continue;
    }
    const bos = model.tokens.bos;
    const add_bos = model.fileInfo.metadata?.tokenizer?.ggml?.add_bos_token ?? true;
    for (const [pi, prompt] of prompts.entries()) {
      // Attention in F32 as qmm's F32 cache: without these llama.cpp's CPU flash attention rounds
      // Q, K and V to F16 (whatever the cache type), which alone moved F32 models' probabilities by
      // 3e-4. "kv": "f16" asks for llama.cpp's defaults instead: flash attention, an F16 K/V cache.
      const ctx = await model.createContext(m.kv === "f16" ? {contextSize: m.ctx ?? 256, threads: 1, flashAttention: true}
                                            : {contextSize: m.ctx ?? 256, threads: 1, flashAttention: false,
                                               experimentalKvCacheKeyType: "F32", experimentalKvCacheValueType: "F32"});
      const seq = ctx.getSequence();
      const prompt_tokens = Array.isArray(prompt) ? prompt : [...(add_bos && bos != null ? [bos] : []), ...model.tokenize(prompt, true)];
      out(`P ${mi} ${pi} ${prompt_tokens.join(" ")}`);
      const tokens = [];
      const meta = {probabilities: (m.top ?? 0) > 0};
      for await (const r of seq.evaluateWithMetadata(prompt_tokens, meta, {temperature: 0})) {
        if (meta.probabilities) {
          const top = [...r.probabilities.entries()].sort((a, b) => b[1] - a[1]).slice(0, m.top);
          out(`L ${mi} ${pi} ${tokens.length} ${top.map(([id, p]) => `${id}:${p}`).join(" ")}`);
        }
        tokens.push(r.token);
        if (tokens.length >= (m.n ?? 32) || model.isEogToken(r.token)) break;
      }
      out(`G ${mi} ${pi} ${tokens.join(" ")}`);
      await ctx.dispose();
    }
    await model.dispose();
  } catch (e) {
    out(`E ${mi} ${String(e?.message ?? e).replace(/\s+/g, " ")}`);
  }
}
process.exit(0);
