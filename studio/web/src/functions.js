// The Functions page: each loaded function with its trigger (event type
// and resource, or its URL), its newest invocations from the event
// history (outcome, duration, the event that caused it, its logs) and an
// invoke form: an HTTPS function gets a method, path and body, a
// callable {data}, an event function a payload (the one last delivered
// to it, or one edited here). Live over the event stream.
import { useState, useEffect } from 'preact/hooks';
import { html, api, Err, fmtTime, Link, useApi } from './kit.js';
import { useLive, LiveDot } from './lib.js';

const triggerOf = f => f.kind === 'event' ? f.eventType : f.kind === 'blocking' ? 'blocking · ' + f.eventType : f.kind;

export function Functions() {
  const [tick, setTick] = useState(0);
  const [st, setSt] = useState(null);
  const [err, setErr] = useState(null);
  const [sel, setSel] = useState(null);
  const live = useLive('kind=invocation', () => setTick(t => t + 1));
  useEffect(() => { api('/api/functions').then(d => { setSt(d); setErr(null); }, setErr); }, [tick]);
  if (!st) return html`<h1>Cloud Functions</h1>${err ? html`<${Err} error=${err} />` : html`<p class="muted">Loading…</p>`}`;
  const cur = st.functions.find(f => f.id === sel) || st.functions[0];
  return html`<h1>Cloud Functions <${LiveDot} live=${live} /> <span class="muted mono" style="font-size:13px">${st.project}</span></h1>
  <${Err} error=${err} />
  <div class="card"><h2>Functions <span class="muted">(${st.functions.length})</span></h2>
    ${st.functions.length ? html`<table aria-label="functions"><thead><tr><th>function</th><th>trigger</th><th>resource / URL</th><th>region</th><th>invocations</th><th>last</th></tr></thead><tbody>
      ${st.functions.map(f => { const last = f.invocations[0]; return html`<tr class=${'click' + (cur && cur.id === f.id ? ' sel' : '')} tabindex="0" data-function=${f.id} onClick=${() => setSel(f.id)} onKeyDown=${e => e.key === 'Enter' && setSel(f.id)}>
        <td class="mono">${f.id}${f.codebase ? html` <span class="muted">${f.codebase}</span>` : null}</td><td class="mono">${triggerOf(f)}</td>
        <td class="mono">${f.url ? html`<a href=${f.url} target="_blank" rel="noopener">${f.url}</a>` : f.resource || ''}</td><td>${(f.regions || []).join(', ')}</td>
        <td>${f.invocationCount}</td><td>${last ? html`<span class=${last.outcome === 'ok' ? 'v-allow' : 'v-deny'}>${last.outcome}</span> <span class="muted">${fmtTime(last.at)}</span>` : ''}</td></tr>`; })}</tbody></table>`
      : html`<p class="muted">No function is loaded: a codebase that fails to load is reported in the terminal.</p>`}</div>
  ${cur ? html`<div class="grid cols2"><${Invoke} key=${cur.id} f=${cur} onDone=${() => setTick(t => t + 1)} /><${Invocations} f=${cur} /></div>` : null}`;
}

function Invocations({ f }) {
  return html`<div class="card" data-invocations=${f.id}><h2>Last invocations of <span class="mono">${f.id}</span> <span class="muted">(${f.invocationCount})</span></h2>
    ${f.invocations.length ? f.invocations.map(i => html`<div class="delivery" data-invocation=${i.id}>
      <div class="row"><span class=${i.outcome === 'ok' ? 'v-allow' : 'v-deny'} data-outcome>${i.outcome}</span>${i.httpStatus ? html`<span class="mono">${i.httpStatus}</span>` : null}
        <span>${i.invocationMs.toFixed(1)} ms</span><span class="muted">${fmtTime(i.at)}</span>
        <${Link} to=${'/traffic/' + i.id}>${i.id}</${Link}>
        ${i.causeEventId ? html`<span>caused by <${Link} to=${'/traffic/' + i.causeEventId} data-cause>${i.causeEventId}</${Link}></span>` : html`<span class="muted">invoked directly</span>`}</div>
      ${i.error ? html`<div class="error">${i.error}</div>` : null}
      ${(i.logs || []).length ? html`<pre data-logs>${i.logs.map(l => l.severity + ' ' + l.text).join('\n')}</pre>` : null}</div>`)
      : html`<p class="muted">Not invoked yet.</p>`}</div>`;
}

function Invoke({ f, onDone }) {
  const http = f.kind === 'https';
  const [method, setMethod] = useState('POST');
  const [path, setPath] = useState('/');
  const [body, setBody] = useState(f.kind === 'callable' ? '{}' : '');
  const [res, setRes] = useState(null);
  const [err, setErr] = useState(null);
  const [busy, setBusy] = useState(false);
  const recorded = async () => { setErr(null); try { const d = await api('/api/functions/' + encodeURIComponent(f.id) + '/payload'); setBody(JSON.stringify(d.payload, null, 2)); } catch (e) { setErr(e); } };
  const invoke = async () => {
    setErr(null); setRes(null);
    const req = {};
    let parsed;
    if (body.trim()) { try { parsed = JSON.parse(body); } catch (e) { if (!http) { setErr(new Error('The body is not valid JSON: ' + e.message)); return; } parsed = undefined; } }
    if (http) { req.method = method; req.path = path; if (body.trim()) req.body = parsed !== undefined ? parsed : body; }
    else if (f.kind === 'callable') req.data = parsed === undefined ? null : parsed;
    else if (f.kind === 'event' || f.kind === 'schedule') { if (parsed !== undefined) req.payload = parsed; }
    else if (body.trim()) req.body = parsed;
    setBusy(true);
    try { setRes(await api('/api/functions/' + encodeURIComponent(f.id) + '/invoke', { method: 'POST', body: req })); onDone(); } catch (e) { setErr(e); }
    setBusy(false);
  };
  const evt = f.kind === 'event' || f.kind === 'schedule';
  return html`<div class="card" data-invoke=${f.id}><h2>Invoke <span class="mono">${f.id}</span></h2>
    ${http ? html`<div class="row"><select aria-label="method" value=${method} onChange=${e => setMethod(e.target.value)}>${['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].map(m => html`<option>${m}</option>`)}</select>
      <input class="mono" aria-label="path" value=${path} onInput=${e => setPath(e.target.value)} /></div>` : null}
    <p class="muted">${http ? 'Body (JSON is sent as application/json, other text as text/plain):' : f.kind === 'callable' ? 'data (sent as {"data": …}):' : evt ? 'Payload (empty: the payload last delivered to it):' : 'Body:'}</p>
    <textarea aria-label="body" value=${body} onInput=${e => setBody(e.target.value)}></textarea>
    <div class="row">${evt ? html`<button disabled=${!f.hasPayload} onClick=${recorded}>Load the last payload</button>` : null}
      <button class="primary" disabled=${busy} onClick=${invoke}>${busy ? 'Running…' : 'Invoke'}</button></div>
    <${Err} error=${err} />
    ${res ? html`<div data-result>${res.outcome ? html`<p>Outcome: <span class=${res.outcome === 'ok' ? 'v-allow' : 'v-deny'}>${res.outcome}</span>${res.error ? html` <span class="error">${res.error}</span>` : null}</p>`
      : html`<p>Status <b data-status>${res.status}</b></p><pre data-body>${typeof res.body === 'string' ? res.body : JSON.stringify(res.body, null, 2)}</pre>`}</div>` : null}</div>`;
}

// InvocationEvent is the Traffic inspector's view of an invocation
// event: the run, the event that caused it, its logs.
export function InvocationEvent({ e }) {
  return html`<h1>Invocation <span class="mono">${e.id}</span> <span class=${e.outcome === 'ok' ? 'v-allow' : 'v-deny'} data-outcome>${e.outcome}</span></h1>
  <div class="card" data-invocation-event><div class="row"><b>functions</b><span class="mono">${e.function}</span><span class="mono">${e.triggerType}</span>
    ${e.httpStatus ? html`<span class="mono">HTTP ${e.httpStatus}</span>` : null}<span>${e.invocationMs.toFixed(1)} ms</span><span class="muted">${e.at}</span></div>
    <p>${e.causeEventId ? html`Caused by <${Link} to=${'/traffic/' + e.causeEventId} data-cause>${e.causeEventId}</${Link}>` : html`<span class="muted">Invoked directly (an HTTP request, a callable, or the Studio).</span>`}
      · <${Link} to="/functions">the Functions page</${Link}></p>
    ${e.error ? html`<div class="error">${e.error.message}</div>` : null}
    ${(e.writes || []).length ? html`<h2>Writes it made</h2><div class="row" data-writes>${e.writes.map(w => html`<${Link} to=${'/traffic/' + w} data-write>${w}</${Link}>`)}${e.moreWrites ? html`<span class="muted">and ${e.moreWrites} more</span>` : null}</div>` : null}
    ${(e.logs || []).length ? html`<h2>Logs</h2><pre data-logs>${e.logs.map(l => l.severity + ' ' + l.text).join('\n')}</pre>` : html`<p class="muted">No log lines.</p>`}</div>
  <${Caused} id=${e.id} />`;
}

// Caused lists the function runs an event caused (a write's triggers),
// so the inspector walks write → trigger → writes.
export function Caused({ id }) {
  const [{ data }] = useApi('/api/events?studio=true&kind=invocation&limit=1000&cause=' + encodeURIComponent(id));
  if (!data || !data.events.length) return null;
  return html`<div class="card" data-caused><h2>Functions this event triggered</h2>${data.events.map(i => html`<div class="row" data-caused-invocation=${i.id}>
    <${Link} to=${'/traffic/' + i.id}>${i.id}</${Link}><span class="mono">${i.function}</span><span class=${i.outcome === 'ok' ? 'v-allow' : 'v-deny'}>${i.outcome}</span><span>${i.invocationMs.toFixed(1)} ms</span></div>`)}</div>`;
}
