// qmm serve driven by the official `openai` npm client, unchanged: models, chat and text
// completions, streamed and not (greedy, so both must give the same text), logprobs of both,
// embeddings (the client's default base64 and float), the client's
// error classes for 400 / 401 / 404, a stream the client aborts (its slot is freed), and a
// clean exit on SIGTERM. Usage: node openai_client.mjs NPM_DIR QMM_BINARY MODEL.gguf
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';

const [npmDir, qmm, model] = process.argv.slice(2);
const require = createRequire(path.join(npmDir, 'package.json'));
const { OpenAI } = require('openai');
const KEY = 'test-key';

// Starts the server on a free port of 127.0.0.1 and waits for its "on http://..." line.
function startServer() {
  const proc = spawn(qmm, ['serve', '-m', model, '--port', '0', '--chat-template', 'chatml', '--api-key', KEY,
                           '-np', '4', '-c', '2048', '-t', '1'], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error('qmm serve did not start in 30 s: ' + out)), 30000);
    proc.on('exit', (code) => reject(new Error(`qmm serve exited with ${code}: ${out}`)));
    proc.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/on http:\/\/127\.0\.0\.1:(\d+)/);
      if (m) {
        clearTimeout(timer);
        resolve({ proc, base: `http://127.0.0.1:${m[1]}` });
      }
    });
  });
}

async function expectError(promise, cls, status) {
  try {
    await promise;
  } catch (e) {
    assert.ok(e instanceof cls, `expected ${cls.name}, got ${e.constructor.name}: ${e.message}`);
    assert.equal(e.status, status);
    assert.ok(e.error && typeof e.error.message === 'string' && e.error.message.length > 0, 'error.message');
    return e;
  }
  assert.fail(`expected ${cls.name}`);
}

const { proc, base } = await startServer();
const exited = new Promise((resolve) => proc.on('exit', (code, signal) => resolve({ code, signal })));
let failed = false;
const step = async (name, fn) => {
  try {
    await fn();
    console.log(`ok   ${name}`);
  } catch (e) {
    failed = true;
    console.log(`FAIL ${name}: ${e.stack || e}`);
  }
};
const client = new OpenAI({ baseURL: `${base}/v1`, apiKey: KEY, maxRetries: 0, timeout: 30000 });
const messages = [
  { role: 'system', content: 'You are a storyteller.' },
  { role: 'user', content: 'Tell me a story about a cat.' },
];

await step('models.list', async () => {
  const list = await client.models.list();
  assert.equal(list.data.length, 1);
  assert.equal(list.data[0].id, 'stories260K');
  assert.equal((await client.models.retrieve('stories260K')).id, 'stories260K');
});

let chatText;
await step('chat.completions.create', async () => {
  const r = await client.chat.completions.create({ model: 'stories260K', messages, max_tokens: 24, temperature: 0 });
  assert.equal(r.object, 'chat.completion');
  assert.match(r.id, /^chatcmpl-/);
  assert.equal(r.choices[0].message.role, 'assistant');
  chatText = r.choices[0].message.content;
  assert.equal(typeof chatText, 'string');
  assert.ok(chatText.length > 0);
  assert.equal(r.choices[0].finish_reason, 'length');
  assert.equal(r.usage.completion_tokens, 24);
  assert.equal(r.usage.total_tokens, r.usage.prompt_tokens + 24);
});

await step('chat.completions.create stream', async () => {
  const stream = await client.chat.completions.create({
    model: 'stories260K', messages, max_tokens: 24, temperature: 0, stream: true,
    stream_options: { include_usage: true },
  });
  const chunks = [];
  for await (const c of stream) chunks.push(c);
  assert.equal(chunks[0].choices[0].delta.role, 'assistant');
  const text = chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('');
  assert.equal(text, chatText);
  const fin = chunks.filter((c) => c.choices[0]?.finish_reason);
  assert.equal(fin.length, 1);
  assert.equal(fin[0].choices[0].finish_reason, 'length');
  assert.equal(chunks.at(-1).usage.completion_tokens, 24);
  assert.ok(chunks.every((c) => c.id === chunks[0].id && c.object === 'chat.completion.chunk'));
});

await step('chat stop string', async () => {
  const stop = chatText.slice(4, 7);
  const r = await client.chat.completions.create({ model: 'x', messages, max_tokens: 24, temperature: 0, stop: [stop] });
  assert.equal(r.choices[0].finish_reason, 'stop');
  assert.equal(r.choices[0].message.content, chatText.slice(0, chatText.indexOf(stop)));
});

await step('completions.create, streamed and not', async () => {
  const r = await client.completions.create({ model: 'stories260K', prompt: 'Once upon a time', max_tokens: 16, temperature: 0 });
  assert.equal(r.object, 'text_completion');
  assert.match(r.choices[0].text, /^, there was a little girl/);
  const stream = await client.completions.create({ model: 'stories260K', prompt: 'Once upon a time', max_tokens: 16, temperature: 0, stream: true });
  let text = '';
  for await (const c of stream) text += c.choices[0]?.text ?? '';
  assert.equal(text, r.choices[0].text);
});

await step('chat logprobs, streamed and not', async () => {
  const req = { model: 'm', messages, max_tokens: 12, temperature: 0, logprobs: true, top_logprobs: 3 };
  const r = await client.chat.completions.create(req);
  const lp = r.choices[0].logprobs.content;
  assert.equal(lp.length, r.usage.completion_tokens);
  for (const t of lp) {
    assert.equal(typeof t.token, 'string');
    assert.ok(t.logprob <= 0);
    assert.deepEqual(t.bytes, [...Buffer.from(t.token)]);
    assert.equal(t.top_logprobs.length, 3);
    assert.equal(t.top_logprobs[0].token, t.token);  // greedy: the best one
  }
  const stream = await client.chat.completions.create({ ...req, stream: true });
  const streamed = [];
  for await (const c of stream) streamed.push(...(c.choices[0]?.logprobs?.content ?? []));
  assert.deepEqual(streamed, lp);
  await expectError(client.chat.completions.create({ ...req, top_logprobs: 21 }), OpenAI.BadRequestError, 400);
});

await step('completions logprobs', async () => {
  const r = await client.completions.create({ model: 'm', prompt: 'Once upon a time', max_tokens: 8, temperature: 0, logprobs: 2 });
  const lp = r.choices[0].logprobs;
  assert.equal(lp.tokens.join(''), r.choices[0].text);
  assert.equal(lp.token_logprobs.length, 8);
  assert.ok(lp.top_logprobs.every((t) => Object.keys(t).length === 2));
});

await step('embeddings.create (base64 by default, float)', async () => {
  // The client asks for base64 and decodes it unless told otherwise.
  const r = await client.embeddings.create({ model: 'stories260K', input: ['The cat sat.', 'A dog ran.'] });
  assert.equal(r.object, 'list');
  assert.equal(r.data.length, 2);
  const v = r.data[0].embedding;
  assert.ok(Array.isArray(v) && v.length > 0);
  assert.ok(Math.abs(v.reduce((s, x) => s + x * x, 0) - 1) < 1e-4, 'unit length');
  assert.ok(r.usage.prompt_tokens > 0 && r.usage.total_tokens === r.usage.prompt_tokens);
  const f = await client.embeddings.create({ model: 'stories260K', input: 'The cat sat.', encoding_format: 'float' });
  assert.equal(f.data[0].embedding.length, v.length);
  f.data[0].embedding.forEach((x, i) => assert.ok(Math.abs(x - v[i]) < 1e-6));
  await expectError(client.embeddings.create({ model: 'm', input: [] }), OpenAI.BadRequestError, 400);
});

await step('errors: 401, 400, 404', async () => {
  const bad = new OpenAI({ baseURL: `${base}/v1`, apiKey: 'wrong', maxRetries: 0 });
  await expectError(bad.chat.completions.create({ model: 'm', messages }), OpenAI.AuthenticationError, 401);
  const e = await expectError(client.chat.completions.create({ model: 'm', messages, temperature: 5 }), OpenAI.BadRequestError, 400);
  assert.equal(e.param, 'temperature');
  await expectError(client.chat.completions.create({ model: 'm', messages: [] }), OpenAI.BadRequestError, 400);
  await expectError(client.chat.completions.create({ model: 'm', messages: [{ role: 'wizard', content: 'x' }] }), OpenAI.BadRequestError, 400);
  await expectError(client.models.retrieve('no-such-model'), OpenAI.NotFoundError, 404);
});

await step('an aborted stream frees its slot', async () => {
  const stream = await client.chat.completions.create({ model: 'm', messages, max_tokens: 1900, temperature: 0, stream: true, ignore_eos: true });
  let n = 0;
  for await (const c of stream) {
    if (++n === 3) {
      stream.controller.abort();
      break;
    }
  }
  let h;
  for (let i = 0; i < 200; i++) {
    h = await (await fetch(`${base}/health`)).json();
    if (h.requests_cancelled >= 1 && h.slots_processing === 0) break;
    await new Promise((r) => setTimeout(r, 10));
  }
  assert.equal(h.slots_processing, 0);
  assert.ok(h.requests_cancelled >= 1, JSON.stringify(h));
});

await step('SIGTERM stops the server cleanly', async () => {
  proc.kill('SIGTERM');
  const timeout = new Promise((resolve) => setTimeout(() => resolve('timeout'), 10000));
  const r = await Promise.race([exited, timeout]);
  assert.notEqual(r, 'timeout', 'qmm serve did not exit within 10 s of SIGTERM');
  assert.equal(r.code, 0);
});

if (proc.exitCode === null) proc.kill('SIGKILL');
console.log(failed ? 'openai client tests FAILED' : 'openai client tests passed');
process.exit(failed ? 1 : 0);
