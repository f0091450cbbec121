// llama.cpp's speed on a GGUF file, for side-by-side tables with `qmm bench model` (same file,
// same thread count): prompt processing of P tokens in one batch (like llama-bench's pp) and
// greedy generation of N tokens (tg), each repeated R times; prints one JSON line per run.
// Usage: node llamacpp_bench.mjs MODEL [P=128] [N=32] [THREADS=1] [R=2]
// (run from the node-llama-cpp install dir, e.g. ~/.cache/qmm-llamacpp, as scripts/llamacpp_check.sh does)
import {getLlama} from "node-llama-cpp";

const [path, p = "128", n = "32", t = "1", r = "2"] = process.argv.slice(2);
const llama = await getLlama({gpu: false, build: "never", logLevel: "error"});
const model = await llama.loadModel({modelPath: path});
const prompt = Array.from({length: Number(p)}, (_, i) => 1000 + ((i * 7919) % 5000));  // fixed, valid token ids
for (let run = 0; run < Number(r); ++run) {
  const ctx = await model.createContext({contextSize: Number(p) + Number(n) + 8, batchSize: Number(p), threads: Number(t)});
  const seq = ctx.getSequence();
  const t0 = performance.now();
  await seq.evaluateWithoutGeneratingNewTokens(prompt);
  const t1 = performance.now();
  let count = 0;
  for await (const token of seq.evaluate([prompt[0]], {temperature: 0})) {
    if (++count >= Number(n)) break;
  }
  const t2 = performance.now();
  console.log(JSON.stringify({model: path, threads: Number(t), pp: Number(p), tg: count,
                              pp_tok_s: Number(p) / ((t1 - t0) / 1000), tg_tok_s: count / ((t2 - t1) / 1000)}));
  await ctx.dispose();
}
process.exit(0);
