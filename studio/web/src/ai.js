// The AI Logic page: every call (prompt, answer, token counts, where the
// answer came from) live from the event stream, a call's raw request and
// response, and the loaded script — shown, edited in place, replaced,
// appended to or emptied through the engine's script API.
import { useState, useEffect } from 'preact/hooks';
import { html, api, Err, fmtTime, Editor } from './kit.js';
import { useLive, useVirtual, LiveDot } from './lib.js';

const clip = (s, n) => (s && s.length > n ? s.slice(0, n) + '…' : s || '');

const EXAMPLE = `[
  {"match": {"contains": "weather"}, "text": "Sunny, 21°C.", "repeat": true},
  {"text": "The first queued answer."},
  {"functionCall": {"name": "getWeather", "args": {"city": "Paris"}}}
]`;

export function AI() {
  const [tick, setTick] = useState(0);
  const [st, setSt] = useState(null);
  const [err, setErr] = useState(null);
  const [sel, setSel] = useState(null);
  const [confirm, setConfirm] = useState(false);
  const live = useLive('service=ai&studio=true', () => setTick(t => t + 1));
  useEffect(() => { api('/api/ai').then(d => { setSt(d); setErr(null); }, setErr); }, [tick]);
  const calls = st ? st.calls.slice().reverse() : [];
  const v = useVirtual(calls.length, 30);
  const cur = sel !== null && st ? st.calls.find(c => c.seq === sel) : null;
  return html`<h1>AI Logic <${LiveDot} live=${live} /> ${st ? html`<span class="muted mono" style="font-size:13px">${st.project}</span>` : null}</h1>
  <${Err} error=${err} />
  <div class="card"><h2>Calls <span class="muted">(${st ? st.callCount : 0})</span></h2>
    ${st && (calls.length || st.script.length) ? html`<div class="row"><button class="danger" onClick=${async () => {
      if (!confirm) { setConfirm(true); setTimeout(() => setConfirm(false), 4000); return; }
      setConfirm(false); try { await api('/api/ai', { method: 'DELETE' }); setSel(null); setTick(t => t + 1); } catch (e) { setErr(e); } }}>${confirm ? 'Really clear the calls and the script?' : 'Clear calls and script'}</button></div>` : null}
    ${st && !calls.length ? html`<p class="muted">No calls yet. Point the Firebase AI Logic SDK (RequestOptions.baseUrl) or the Gen AI SDK (HTTPOptions.BaseURL) at the AI endpoint.</p>` : null}
    <div class="vscroll" ref=${v.ref} onScroll=${v.onScroll} onKeyDown=${v.onKeyDown}>
    <table aria-label="ai calls" class="vtable"><thead><tr><th style="width:95px">time</th><th style="width:150px">model</th><th style="width:30%">prompt</th><th style="width:30%">answer</th><th>tokens in/out</th><th>source</th><th>status</th></tr></thead><tbody>
      <tr class="vpad"><td colspan="7" style=${'height:' + v.padTop + 'px'}></td></tr>
      ${calls.slice(v.start, v.end).map((c, j) => html`<tr class=${'click vrow' + (sel === c.seq ? ' sel' : '')} tabindex="0" data-vi=${v.start + j} data-call=${c.seq} onClick=${() => setSel(c.seq)} onKeyDown=${e => e.key === 'Enter' && setSel(c.seq)}>
        <td>${fmtTime(c.at)}</td><td class="mono">${c.model}</td><td title=${c.prompt}>${clip(c.prompt, 120)}</td>
        <td title=${c.answer}>${c.error ? html`<span class="v-deny">${clip(c.error, 120)}</span>` : (c.functionCalls || []).length ? html`<span class="mono">${c.functionCalls.join(', ')}()</span>` : clip(c.answer, 120)}</td>
        <td>${c.promptTokens} / ${c.candidatesTokens}</td><td>${c.source}${c.entry ? html` <span class="muted">${c.entry}</span>` : ''}</td><td class=${c.status >= 400 ? 'v-deny' : 'v-allow'}>${c.status}</td></tr>`)}
      <tr class="vpad"><td colspan="7" style=${'height:' + v.padBottom + 'px'}></td></tr></tbody></table></div></div>
  <div class="grid cols2">
    <div>${cur ? html`<${Call} c=${cur} />` : html`<div class="card muted">Select a call to see what was asked and answered.</div>`}</div>
    ${st ? html`<${Script} key=${'script'} script=${st.script} onChanged=${() => setTick(t => t + 1)} />` : html`<div></div>`}
  </div>`;
}

function Call({ c }) {
  const pretty = raw => { try { return JSON.stringify(raw, null, 2); } catch { return String(raw); } };
  return html`<div class="card" data-call-detail=${c.seq}><h2>Call ${c.seq} <span class="muted mono">${c.method} · ${c.model} · ${c.backend}${c.location ? ' ' + c.location : ''}</span></h2>
    <h2>Prompt</h2><pre data-prompt>${c.prompt}</pre>
    <h2>Answer</h2>${c.error ? html`<pre class="error">${c.status}: ${c.error}</pre>` : html`<pre data-answer>${c.answer}</pre>`}
    ${(c.functionCalls || []).length ? html`<p>Function calls: <span class="mono">${c.functionCalls.join(', ')}</span></p>` : null}
    <p class="muted">tokens: prompt ${c.promptTokens} · candidates ${c.candidatesTokens} · total ${c.totalTokens} · answered by ${c.source}${c.entry ? ' (' + c.entry + ')' : ''}</p>
    ${c.request ? html`<details><summary>Raw request</summary><pre>${pretty(c.request)}</pre></details>` : null}
    ${c.response ? html`<details><summary>Raw response</summary><pre>${pretty(c.response)}</pre></details>` : null}
    ${c.truncated ? html`<p class="muted">The raw bodies were truncated in the call log.</p>` : null}</div>`;
}

function Script({ script, onChanged }) {
  const loaded = JSON.stringify(script, null, 2);
  const [text, setText] = useState(script.length ? loaded : EXAMPLE);
  const [dirty, setDirty] = useState(false);
  const [err, setErr] = useState(null);
  const [msg, setMsg] = useState('');
  // While the text is not being edited it follows the live script.
  useEffect(() => { if (!dirty) setText(script.length ? loaded : EXAMPLE); }, [loaded]);
  const send = async (method, body) => {
    setErr(null); setMsg('');
    try {
      const r = await fetch('/api/ai/script', { method, body, headers: body ? { 'Content-Type': 'application/json' } : {} });
      const d = await r.json();
      if (!r.ok) { const e = new Error(d.error || r.statusText); e.data = d; throw e; }
      setDirty(false); setMsg(method === 'DELETE' ? 'The script is empty.' : `Loaded: ${d.entries} entr${d.entries === 1 ? 'y' : 'ies'} waiting.`); onChanged();
    } catch (e) { setErr(e); }
  };
  const fromFile = async e => { const f = e.target.files[0]; e.target.value = ''; if (f) { setText(await f.text()); setDirty(true); } };
  return html`<div class="card"><h2>Script <span class="muted">(${script.length} entr${script.length === 1 ? 'y' : 'ies'} waiting)</span></h2>
    <p class="muted">A JSON array of entries (or {"entries": [...]}): text, chunks, json, functionCall(s), raw envelopes, errors; with "match" ({contains, regex, model, functionResponse}) an entry answers matching prompts ahead of the FIFO queue.</p>
    <${Editor} label="ai script" value=${text} onChange=${t => { setText(t); setDirty(t !== (script.length ? loaded : EXAMPLE)); }} />
    <div class="row"><button class="primary" onClick=${() => send('PUT', text)}>Load (replace)</button><button onClick=${() => send('POST', text)}>Append</button>
      <button class="danger" onClick=${() => send('DELETE')}>Empty the script</button>
      <label class="btn">From a file…<input type="file" accept=".json,application/json" aria-label="script file" style="display:none" onChange=${fromFile} /></label>
      ${dirty ? html`<button onClick=${() => { setDirty(false); setText(script.length ? loaded : EXAMPLE); }}>Revert</button><span class="muted">edited</span>` : null}
      ${msg ? html`<span class="ok" data-script-msg>${msg}</span>` : null}</div>
    ${err ? html`<div class="error" role="alert" data-script-error>${err.message}</div>` : null}</div>`;
}
