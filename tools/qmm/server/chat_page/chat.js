// qmm's chat page: the conversation is kept in this browser (localStorage) and sent whole to
// /v1/chat/completions, whose reply streams in as server-sent events. Everything shown goes
// through textContent, never markup: a reply holding "<script>" is shown as those characters.
'use strict';

const $ = (id) => document.getElementById(id);
const STORE = 'qmm-chat';
const SETTINGS = ['system', 'temperature', 'max_tokens', 'key'];

let state = loadState();
let model = '';
let running = null;  // the AbortController of the reply being streamed

function loadState() {
  try {
    const s = JSON.parse(localStorage.getItem(STORE));
    if (s && Array.isArray(s.messages)) return { messages: s.messages, settings: s.settings || {} };
  } catch (e) {
    // a damaged entry: start over
  }
  return { messages: [], settings: {} };
}

function save() {
  for (const k of SETTINGS) state.settings[k] = $(k).value;
  try {
    localStorage.setItem(STORE, JSON.stringify(state));
  } catch (e) {  // over the browser's quota: the page goes on, the conversation is not kept
    showError('this conversation is too long to keep in the browser (New chat starts over): ' + e.message);
  }
}

function bubble(role, text) {
  const msg = document.createElement('div');
  msg.className = 'msg ' + (role === 'user' ? 'user' : 'assistant');
  const who = document.createElement('div');
  who.className = 'role';
  who.textContent = role;
  const body = document.createElement('div');
  body.className = 'text';
  body.textContent = String(text);
  msg.append(who, body);
  $('log').append(msg);
  $('log').scrollTop = $('log').scrollHeight;
  return body;
}

function render() {
  $('log').replaceChildren();
  for (const m of state.messages) bubble(m.role, m.content);
}

function headers() {
  const h = { 'Content-Type': 'application/json' };
  if ($('key').value) h.Authorization = 'Bearer ' + $('key').value;
  return h;
}

function showError(message) {
  $('error').textContent = message;
}

async function errorOf(res) {
  try {
    const j = await res.json();
    if (j && j.error && j.error.message) return `${res.status}: ${j.error.message}`;
  } catch (e) {
    // not JSON
  }
  return `HTTP ${res.status}`;
}

async function loadModel() {
  try {
    const res = await fetch('/v1/models', { headers: headers() });
    if (!res.ok) throw new Error(await errorOf(res));
    const j = await res.json();
    model = j.data[0].id;
    $('model').textContent = model;
    showError('');
  } catch (e) {
    $('model').textContent = '?';
    showError('cannot list the model: ' + e.message);
  }
}

function setRunning(ctrl) {
  running = ctrl;
  $('send').disabled = !!ctrl;
  $('stop').disabled = !ctrl;
}

// Reads the SSE stream, calling onEvent with each parsed JSON payload.
async function readEvents(res, onEvent) {
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buf = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buf += decoder.decode(value, { stream: true });
    let at;
    while ((at = buf.indexOf('\n\n')) >= 0) {
      const ev = buf.slice(0, at);
      buf = buf.slice(at + 2);
      for (const line of ev.split('\n')) {
        if (!line.startsWith('data: ')) continue;
        const data = line.slice(6);
        if (data !== '[DONE]') onEvent(JSON.parse(data));
      }
    }
  }
}

async function send(text) {
  showError('');
  state.messages.push({ role: 'user', content: text });
  save();
  bubble('user', text);
  const out = bubble('assistant', '');
  const msg = out.parentElement;
  msg.dataset.state = 'streaming';
  const ctrl = new AbortController();
  setRunning(ctrl);
  const messages = state.messages.slice();
  if ($('system').value) messages.unshift({ role: 'system', content: $('system').value });
  const body = { model, messages, stream: true, stream_options: { include_usage: true } };
  const temperature = parseFloat($('temperature').value);
  if (!Number.isNaN(temperature)) body.temperature = temperature;
  const maxTokens = parseInt($('max_tokens').value, 10);
  if (maxTokens > 0) body.max_tokens = maxTokens;
  let reply = '';
  let chunks = 0;
  let usage = null;
  let first = 0;
  let last = 0;
  try {
    const res = await fetch('/v1/chat/completions', {
      method: 'POST', headers: headers(), body: JSON.stringify(body), signal: ctrl.signal,
    });
    if (!res.ok) throw new Error(await errorOf(res));
    await readEvents(res, (j) => {
      if (j.error) throw new Error(j.error.message);
      if (j.usage) usage = j.usage;
      const delta = j.choices && j.choices[0] && j.choices[0].delta;
      if (!delta || !delta.content) return;
      last = performance.now();
      if (!first) first = last;
      reply += delta.content;
      chunks += 1;
      out.textContent = reply;
      msg.dataset.chunks = String(chunks);
      $('log').scrollTop = $('log').scrollHeight;
    });
  } catch (e) {
    if (e.name !== 'AbortError') showError(e.message);
  } finally {
    // The speed of the tokens after the first (the first one waits for the prompt).
    const tokens = usage ? usage.completion_tokens : chunks;
    if (tokens > 1 && last > first) {
      $('speed').textContent = `${tokens} tokens, ${((tokens - 1) / ((last - first) / 1000)).toFixed(1)} tok/s`;
    }
    state.messages.push({ role: 'assistant', content: reply });
    save();
    msg.dataset.state = 'done';
    setRunning(null);
  }
}

$('form').addEventListener('submit', (ev) => {
  ev.preventDefault();
  const text = $('input').value;
  if (!text.trim() || running) return;
  $('input').value = '';
  send(text);
});
$('input').addEventListener('keydown', (ev) => {
  if (ev.key === 'Enter' && !ev.shiftKey) {
    ev.preventDefault();
    $('form').requestSubmit();
  }
});
$('stop').addEventListener('click', () => running && running.abort());
$('clear').addEventListener('click', () => {
  if (running) running.abort();
  state.messages = [];
  save();
  render();
  $('speed').textContent = '';
});
for (const k of SETTINGS) {
  if (state.settings[k] !== undefined) $(k).value = state.settings[k];
  $(k).addEventListener('change', () => {
    save();
    if (k === 'key') loadModel();
  });
}
render();
loadModel();
