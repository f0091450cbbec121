// The chat page of qmm serve in a real browser: headless Chromium driven over its DevTools
// protocol (a small client on node's WebSocket). A message typed into the page streams a reply
// from stories260K into the DOM (the same text the API gives at temperature 0, in several
// pieces), the speed and model are shown, the conversation survives a reload (localStorage),
// the stop button ends a reply that never comes, and markup in a reply or a message
// (streamed, or reloaded from storage) is shown as text and never runs.
// Usage: node --experimental-websocket chat_page_browser.mjs CHROMIUM QMM_BINARY MODEL.gguf
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const [chromium, qmm, model] = process.argv.slice(2);

// Starts `cmd args` and resolves with the first match of `re` in its stdout or stderr.
function startAndMatch(cmd, args, re, what) {
  const proc = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`${what} did not start in 60 s: ${out.slice(-2000)}`)), 60000);
    proc.on('exit', (code) => reject(new Error(`${what} exited with ${code}: ${out.slice(-2000)}`)));
    const look = (d) => {
      out += d;
      const m = out.match(re);
      if (m) {
        clearTimeout(timer);
        resolve({ proc, match: m });
      }
    };
    proc.stdout.on('data', look);
    proc.stderr.on('data', look);
  });
}

// A DevTools protocol client over one WebSocket (the browser's), with flat sessions.
class Cdp {
  constructor(url) {
    this.ws = new WebSocket(url);
    this.next = 1;
    this.pending = new Map();
    this.listeners = [];
    this.ws.onmessage = (ev) => {
      const msg = JSON.parse(ev.data);
      if (msg.id && this.pending.has(msg.id)) {
        const { resolve, reject } = this.pending.get(msg.id);
        this.pending.delete(msg.id);
        if (msg.error) reject(new Error(JSON.stringify(msg.error)));
        else resolve(msg.result);
      } else if (msg.method) {
        for (const l of this.listeners) l(msg);
      }
    };
    this.opened = new Promise((resolve, reject) => {
      this.ws.onopen = resolve;
      this.ws.onerror = () => reject(new Error('cannot connect to ' + url));
    });
  }
  send(method, params = {}, sessionId) {
    const id = this.next++;
    this.ws.send(JSON.stringify({ id, method, params, sessionId }));
    return new Promise((resolve, reject) => this.pending.set(id, { resolve, reject }));
  }
  on(fn) {
    this.listeners.push(fn);
  }
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const server = await startAndMatch(qmm, ['serve', '-m', model, '--port', '0', '--chat-template', 'chatml', '-np', '2',
                                         '-c', '1024', '-t', '1'], /on http:\/\/127\.0\.0\.1:(\d+)/, 'qmm serve');
const base = `http://127.0.0.1:${server.match[1]}`;
const profile = mkdtempSync(path.join(os.tmpdir(), 'qmm-chromium-'));
const browser = await startAndMatch(chromium, ['--headless', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage',
                                               '--no-first-run', '--disable-extensions', '--remote-debugging-port=0',
                                               `--user-data-dir=${profile}`, 'about:blank'],
                                    /DevTools listening on (ws:\/\/\S+)/, 'chromium');
let failed = false;
const cdp = new Cdp(browser.match[1]);
try {
  await cdp.opened;
  const { targetId } = await cdp.send('Target.createTarget', { url: 'about:blank' });
  const { sessionId } = await cdp.send('Target.attachToTarget', { targetId, flatten: true });
  const page = (method, params) => cdp.send(method, params, sessionId);
  const evaluate = async (expression) => {
    const r = await page('Runtime.evaluate', { expression, awaitPromise: true, returnByValue: true });
    if (r.exceptionDetails) throw new Error(`${expression}: ${JSON.stringify(r.exceptionDetails)}`);
    return r.result.value;
  };
  const waitFor = async (expression, what, ms = 30000) => {
    const end = Date.now() + ms;
    for (;;) {
      const v = await evaluate(expression).catch(() => undefined);
      if (v) return v;
      if (Date.now() > end) throw new Error(`timed out waiting for ${what} (${expression})`);
      await sleep(50);
    }
  };
  const step = async (name, fn) => {
    try {
      await fn();
      console.log(`ok   ${name}`);
    } catch (e) {
      failed = true;
      console.log(`FAIL ${name}: ${e.stack || e}`);
    }
  };
  const load = async () => {
    await page('Page.enable');
    await page('Page.navigate', { url: base + '/' });
    await waitFor(`document.readyState === 'complete' && document.getElementById('model').textContent === 'stories260K'`,
                  'the page and the model name');
  };
  const type = (text) => evaluate(`(() => {
      document.getElementById('input').value = ${JSON.stringify(text)};
      document.getElementById('send').click();
      return true;
    })()`);
  const lastReply = `(() => { const m = [...document.querySelectorAll('#log .msg.assistant')].pop();
      return m && m.dataset.state === 'done' ? { text: m.querySelector('.text').textContent, chunks: +(m.dataset.chunks || 0) } : null; })()`;
  const markupInLog = `document.querySelectorAll('#log script, #log img, #log b, #log iframe').length`;

  await step('the page loads, shows the model, and streams a reply into the DOM', async () => {
    await load();
    await evaluate(`(() => { localStorage.clear(); document.getElementById('clear').click();
        document.getElementById('temperature').value = '0'; document.getElementById('max_tokens').value = '40';
        document.getElementById('temperature').dispatchEvent(new Event('change')); return true; })()`);
    await type('Tell me a story about a cat.');
    const reply = await waitFor(lastReply, 'the reply');
    // The same text the API gives for the same request (greedy).
    const api = await fetch(base + '/v1/chat/completions', {
      method: 'POST', headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ messages: [{ role: 'user', content: 'Tell me a story about a cat.' }], temperature: 0, max_tokens: 40 }),
    }).then((r) => r.json());
    assert.ok(reply.text.length > 0, 'an empty reply');
    assert.equal(reply.text, api.choices[0].message.content);
    assert.ok(reply.chunks > 1, `streamed in ${reply.chunks} piece(s)`);
    assert.match(await evaluate(`document.getElementById('speed').textContent`), /^\d+ tokens, [\d.]+ tok\/s$/);
    assert.equal(await evaluate(`document.getElementById('error').textContent`), '');
  });

  await step('the conversation is kept across a reload', async () => {
    const before = await evaluate(`[...document.querySelectorAll('#log .text')].map((e) => e.textContent)`);
    assert.equal(before.length, 2);
    await load();
    const after = await evaluate(`[...document.querySelectorAll('#log .text')].map((e) => e.textContent)`);
    assert.deepEqual(after, before);
    assert.equal(await evaluate(`document.getElementById('temperature').value`), '0');
  });

  await step('stop ends a reply that does not come', async () => {
    await page('Fetch.enable', { patterns: [{ urlPattern: '*/v1/chat/completions*' }] });
    const paused = new Promise((resolve) => cdp.on((m) => m.method === 'Fetch.requestPaused' && resolve(m.params)));
    await type('This one hangs.');
    const req = await paused;  // held: no answer comes
    assert.equal(await evaluate(`document.getElementById('stop').disabled`), false);
    await evaluate(`document.getElementById('stop').click(), true`);
    const reply = await waitFor(lastReply, 'the stopped reply');
    assert.equal(reply.text, '');
    assert.equal(await evaluate(`document.getElementById('stop').disabled && !document.getElementById('send').disabled`), true);
    assert.equal(await evaluate(`document.getElementById('error').textContent`), '');
    await page('Fetch.failRequest', { requestId: req.requestId, errorReason: 'Aborted' }).catch(() => {});
    await page('Fetch.disable');
  });

  await step('markup in a streamed reply and in a message is text, and never runs', async () => {
    const sse = [
      { choices: [{ index: 0, delta: { role: 'assistant', content: '' } }] },
      { choices: [{ index: 0, delta: { content: '<script>window.pwned = 1</script>' } }] },
      { choices: [{ index: 0, delta: { content: '<img src=x onerror="window.pwned = 2"><b>bold</b>' } }] },
      { choices: [{ index: 0, delta: {}, finish_reason: 'stop' }], usage: { completion_tokens: 2 } },
    ].map((j) => `data: ${JSON.stringify(j)}\n\n`).join('') + 'data: [DONE]\n\n';
    await page('Fetch.enable', { patterns: [{ urlPattern: '*/v1/chat/completions*' }] });
    const paused = new Promise((resolve) => cdp.on((m) => m.method === 'Fetch.requestPaused' && resolve(m.params)));
    await type('<b>hi</b><script>window.pwned = 3</script><img src=y onerror="window.pwned = 4">');
    const req = await paused;
    await page('Fetch.fulfillRequest', {
      requestId: req.requestId, responseCode: 200,
      responseHeaders: [{ name: 'Content-Type', value: 'text/event-stream' }],
      body: Buffer.from(sse).toString('base64'),
    });
    const reply = await waitFor(lastReply, 'the hostile reply');
    await page('Fetch.disable');
    assert.equal(reply.text, '<script>window.pwned = 1</script><img src=x onerror="window.pwned = 2"><b>bold</b>');
    const texts = await evaluate(`[...document.querySelectorAll('#log .text')].map((e) => e.textContent)`);
    assert.equal(texts[texts.length - 2], '<b>hi</b><script>window.pwned = 3</script><img src=y onerror="window.pwned = 4">');
    await sleep(300);  // (an injected image would have failed to load by now)
    assert.equal(await evaluate(markupInLog), 0);
    assert.equal(await evaluate(`typeof window.pwned`), 'undefined');
    // The same conversation rendered from localStorage after a reload.
    await load();
    await sleep(300);
    assert.equal(await evaluate(markupInLog), 0);
    assert.equal(await evaluate(`typeof window.pwned`), 'undefined');
    assert.equal(await evaluate(`[...document.querySelectorAll('#log .text')].pop().textContent`), reply.text);
  });
} catch (e) {
  failed = true;
  console.log(`FAIL: ${e.stack || e}`);
} finally {
  try {
    await Promise.race([cdp.send('Browser.close'), sleep(3000)]);
  } catch (e) {
    // already gone
  }
  browser.proc.kill('SIGKILL');
  server.proc.kill('SIGTERM');
  await sleep(200);
  rmSync(profile, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
