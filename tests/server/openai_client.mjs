// qmm serve driven by the official `openai` npm client, unchanged: models, chat and text
// completions, streamed and not (greedy, so both must give the same text), logprobs of both,
// embeddings (the client's default base64 and float), the tool-call flow and response_format
// (forced by grammars: stories260K only tells stories), the client's
// error classes for 400 / 401 / 404, a stream the client aborts (its slot is freed), the
// served name (--alias) and /metrics, and SIGTERM's drain: a stream in flight is answered whole,
// then the server exits 0. Usage: node openai_client.mjs NPM_DIR QMM_BINARY MODEL.gguf
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
                           '-np', '4', '-c', '2048', '-t', '1', '--alias', 'storyteller', '--metrics'], { stdio: ['ignore', 'pipe', 'inherit'] });
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
  assert.equal(list.data[0].id, 'storyteller');
  assert.equal((await client.models.retrieve('storyteller')).id, 'storyteller');
});

let chatText;
await step('chat.completions.create', async () => {
  const r = await client.chat.completions.create({ model: 'stories260K', messages, max_tokens: 24, temperature: 0 });
  assert.equal(r.object, 'chat.completion');
  assert.equal(r.model, 'storyteller');  // any model asked is served by the loaded one, named by its alias
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
  // The same conversation again: all but the last prompt token come from the cache.
  const u = chunks.at(-1).usage;
  assert.equal(u.prompt_tokens_details.cached_tokens, u.prompt_tokens - 1);
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

// Tool calls: stories260K never calls a tool by itself, so tool_choice 'required' makes it
// (through a grammar), then the result goes back as a tool message and the model answers.
const tools = [{
  type: 'function',
  function: {
    name: 'get_weather', description: 'The weather in a city',
    parameters: { type: 'object', properties: { city: { type: 'string', maxLength: 16 }, days: { type: 'integer' } },
                  required: ['city', 'days'] },
  },
}];
await step('tool-call flow', async () => {
  const ask = [{ role: 'user', content: 'What is the weather in Oslo?' }];
  const r = await client.chat.completions.create({ model: 'm', messages: ask, tools, tool_choice: 'required', max_tokens: 100, temperature: 0 });
  assert.equal(r.choices[0].finish_reason, 'tool_calls');
  const msg = r.choices[0].message;
  assert.equal(msg.content, null);
  assert.equal(msg.tool_calls.length, 1);
  const call = msg.tool_calls[0];
  assert.equal(call.type, 'function');
  assert.equal(call.function.name, 'get_weather');
  const args = JSON.parse(call.function.arguments);
  assert.equal(typeof args.city, 'string');
  assert.ok(Number.isInteger(args.days));
  // Streamed: the same call as delta.tool_calls.
  const stream = await client.chat.completions.create({ model: 'm', messages: ask, tools, tool_choice: { type: 'function', function: { name: 'get_weather' } },
                                                        max_tokens: 100, temperature: 0, stream: true });
  let streamed = null, finish = null;
  for await (const c of stream) {
    const d = c.choices[0]?.delta;
    if (d?.tool_calls) streamed = d.tool_calls[0];
    if (c.choices[0]?.finish_reason) finish = c.choices[0].finish_reason;
  }
  assert.equal(finish, 'tool_calls');
  assert.equal(streamed.index, 0);
  assert.equal(streamed.function.name, 'get_weather');
  assert.equal(streamed.function.arguments, call.function.arguments);
  // The result goes back; the model answers in text.
  const next = await client.chat.completions.create({
    model: 'm', tools, max_tokens: 8, temperature: 0,
    messages: [...ask, msg, { role: 'tool', tool_call_id: call.id, content: 'Sunny, 21 C' }],
  });
  assert.equal(typeof next.choices[0].message.content, 'string');
  assert.notEqual(next.choices[0].finish_reason, 'tool_calls');
});

await step('response_format json_schema', async () => {
  const schema = { type: 'object', properties: { name: { type: 'string', maxLength: 10 }, legs: { type: 'integer' },
                                                 kind: { enum: ['cat', 'dog'] } }, required: ['name', 'legs', 'kind'], additionalProperties: false };
  const r = await client.chat.completions.create({ model: 'm', messages, max_tokens: 200, temperature: 0,
                                                   response_format: { type: 'json_schema', json_schema: { name: 'pet', schema, strict: true } } });
  assert.equal(r.choices[0].finish_reason, 'stop');
  const pet = JSON.parse(r.choices[0].message.content);
  assert.deepEqual(Object.keys(pet), ['name', 'legs', 'kind']);
  assert.ok(pet.name.length <= 10 && Number.isInteger(pet.legs) && ['cat', 'dog'].includes(pet.kind));
  const o = await client.chat.completions.create({ model: 'm', messages, max_tokens: 300, temperature: 0.7, seed: 3,
                                                   response_format: { type: 'json_object' } });
  if (o.choices[0].finish_reason === 'stop') assert.equal(typeof JSON.parse(o.choices[0].message.content), 'object');
  await expectError(client.chat.completions.create({ model: 'm', messages, response_format: { type: 'json_schema', json_schema: { name: 'x', schema: { $ref: '#' } } } }),
                    OpenAI.BadRequestError, 400);
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

await step('tokenize / detokenize (plain fetch, as curl)', async () => {
  const post = (p, body) => fetch(`${base}${p}`, {
    method: 'POST', headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${KEY}` }, body: JSON.stringify(body),
  });
  const t = await (await post('/tokenize', { content: 'Once upon a time', add_special: true, with_pieces: true })).json();
  assert.ok(t.tokens.length > 2 && t.tokens.every((x) => Number.isInteger(x.id) && typeof x.piece === 'string'));
  const d = await (await post('/detokenize', { tokens: t.tokens.map((x) => x.id) })).json();
  assert.match(d.content, /Once upon a time/);
  const bad = await post('/detokenize', { tokens: [1, 1e9] });
  assert.equal(bad.status, 400);
  assert.equal((await bad.json()).error.param, 'tokens');
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

await step('metrics count the requests', async () => {
  const r = await fetch(`${base}/metrics`, { headers: { Authorization: `Bearer ${KEY}` } });
  assert.equal(r.status, 200);
  const text = await r.text();
  const value = (name) => Number(text.match(new RegExp(`^${name} (\\S+)$`, 'm'))?.[1]);
  assert.ok(value('llamacpp:tokens_predicted_total') >= 24 * 3, text);
  assert.ok(value('qmm:http_requests_total\\{code="401"\\}') >= 1, text);
  assert.equal(value('llamacpp:requests_processing'), 0);
});

await step('SIGTERM drains: the stream in flight is answered whole, then exit 0', async () => {
  const stream = await client.completions.create({ model: 'm', prompt: 'Once', max_tokens: 500, ignore_eos: true,
                                                   temperature: 0, stream: true, stream_options: { include_usage: true } });
  let text = '';
  let finish;
  let usage;
  for await (const c of stream) {
    if (!text) proc.kill('SIGTERM');
    text += c.choices[0]?.text ?? '';
    finish = c.choices[0]?.finish_reason ?? finish;
    usage = c.usage ?? usage;
  }
  assert.equal(finish, 'length');
  assert.equal(usage.completion_tokens, 500);
  const timeout = new Promise((resolve) => setTimeout(() => resolve('timeout'), 10000));
  const r = await Promise.race([exited, timeout]);
  assert.notEqual(r, 'timeout', 'qmm serve did not exit within 10 s of SIGTERM');
  assert.equal(r.code, 0);
});

if (proc.exitCode === null) proc.kill('SIGKILL');
console.log(failed ? 'openai client tests FAILED' : 'openai client tests passed');
process.exit(failed ? 1 : 0);
