// Loads a GGUF file in llama.cpp (the prebuilt CPU build of the node-llama-cpp npm package)
// and decodes greedily: a cross-check that qmm's files load in llama.cpp and a reference
// for `qmm run`. Usage: node llamacpp_run.mjs MODEL [PROMPT] [N_TOKENS]
import {getLlama} from "node-llama-cpp";

const [path, prompt = "Once upon a time", n = "32"] = process.argv.slice(2);
const llama = await getLlama({gpu: false, build: "never", logLevel: "error"});
const model = await llama.loadModel({modelPath: path});
const ctx = await model.createContext({contextSize: 512, threads: 1});
const seq = ctx.getSequence();
// BOS first when the model asks for it (tokenizer.ggml.add_bos_token), as llama-cli does.
const bos = model.tokens.bos;
const add_bos = model.fileInfo.metadata?.tokenizer?.ggml?.add_bos_token ?? true;
const prompt_tokens = [...(add_bos && bos != null ? [bos] : []), ...model.tokenize(prompt)];
const tokens = [];
for await (const t of seq.evaluate(prompt_tokens, {temperature: 0})) {
  tokens.push(t);
  if (tokens.length >= Number(n)) break;
}
console.log(JSON.stringify({model: path, prompt, prompt_tokens, tokens, text: model.detokenize(tokens)}));
process.exit(0);
