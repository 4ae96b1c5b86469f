// The Traffic page (every event, history then live over SSE, filtered,
// in a virtual table; requests and denials over time; verdicts per rule)
// and, below it at /traffic/<event id>, one request's inspector: the
// deciding rule, why (the explanation rendered in Go), the trace over
// the rules source, and re-running it as someone else or against edited
// rules.
import { useState, useEffect } from 'preact/hooks';
import { html, api, useApi, Err, Verdict, Explanation, Source, Editor, fmtTime, go, useRuleServices } from './kit.js';
import { useVirtual } from './lib.js';
import { InvocationEvent, Caused } from './functions.js';

// maxEvents bounds the events the Traffic page keeps (the list is
// virtual, so only the visible rows cost anything to draw).
const maxEvents = 20000;

function useEvents(filter) {
  const [events, setEvents] = useState([]);
  const [gaps, setGaps] = useState(0);
  const [live, setLive] = useState(false);
  useEffect(() => {
    let es, stop = false;
    const qs = new URLSearchParams(Object.entries(filter).filter(([, v]) => v)).toString();
    // Live events are applied once per frame, however fast they come.
    let batch = [], frame = 0;
    const flush = () => { frame = 0; const b = batch; batch = []; setEvents(list => { const out = list.concat(b); return out.length > maxEvents ? out.slice(out.length - maxEvents) : out; }); };
    // The kept history, oldest first, page by page (the server filters),
    // then live events from where the history ended.
    (async () => {
      let after = 0, got = [];
      for (;;) {
        const p = await api('/api/events?limit=1000&after=' + after + (qs ? '&' + qs : ''));
        if (stop) return null;
        got = got.concat(p.events);
        if (got.length > maxEvents) got = got.slice(got.length - maxEvents);
        if (p.next <= after || p.next >= p.latest || !p.events.length) return { got, after: p.next };
        after = p.next;
      }
    })().then(h => {
      if (!h || stop) return;
      setEvents(h.got);
      es = new EventSource('/api/events/stream?after=' + h.after + (qs ? '&' + qs : ''));
      es.onopen = () => setLive(true);
      es.onerror = () => setLive(false);
      es.onmessage = m => {
        const e = JSON.parse(m.data);
        if (e.kind === 'gap') { setGaps(g => g + e.missed); return; }
        batch.push(e);
        if (!frame) frame = requestAnimationFrame(flush);
      };
    }, () => {});
    return () => { stop = true; if (es) es.close(); if (frame) cancelAnimationFrame(frame); };
  }, [JSON.stringify(filter)]);
  return { events, gaps, live };
}

function Chart({ events }) {
  const buckets = 40, reqs = events.filter(e => e.kind === 'request');
  if (!reqs.length) return null;
  const t0 = new Date(reqs[0].at).getTime(), t1 = Math.max(new Date(reqs[reqs.length - 1].at).getTime(), t0 + 1000);
  const all = new Array(buckets).fill(0), den = new Array(buckets).fill(0);
  for (const e of reqs) { const i = Math.min(buckets - 1, Math.floor((new Date(e.at).getTime() - t0) / (t1 - t0) * buckets)); all[i]++; if (e.verdict === 'deny') den[i]++; }
  const max = Math.max(...all, 1), w = 100 / buckets;
  return html`<svg class="chart" viewBox="0 0 100 40" preserveAspectRatio="none" role="img" aria-label="requests and denials over time">
    ${all.map((n, i) => html`<rect class="req" x=${i * w + 0.2} width=${w - 0.4} y=${40 - n / max * 40} height=${n / max * 40} />`)}
    ${den.map((n, i) => html`<rect class="den" x=${i * w + 0.2} width=${w - 0.4} y=${40 - n / max * 40} height=${n / max * 40} />`)}</svg>`;
}

// Traffic draws /traffic, and the inspector of an event at /traffic/<id>.
export function Traffic({ sub }) {
  if (sub) return html`<${Inspector} key=${sub} id=${decodeURIComponent(sub)} />`;
  return html`<${Events} />`;
}

function Events() {
  const [f, setF] = useState({ service: '', verdict: '', uid: '', path: '', kind: 'request', studio: '' });
  const { events, gaps, live } = useEvents(f);
  const shown = events.slice().reverse();
  const v = useVirtual(shown.length, 30);
  const perRule = {};
  for (const e of events) if (e.rule) { const k = `${e.service} L${e.rule.line}:${e.rule.column} ${e.rule.matchPath || ''}`; const o = perRule[k] || (perRule[k] = { allow: 0, deny: 0 }); if (e.verdict === 'allow') o.allow++; if (e.verdict === 'deny') o.deny++; }
  const input = (k, ph) => html`<input aria-label=${'filter ' + k} placeholder=${ph} value=${f[k]} onInput=${e => setF({ ...f, [k]: e.target.value })} />`;
  return html`<h1>Traffic <span class=${live ? 'ok' : 'muted'} style="font-size:13px" data-live=${live}>${live ? '● live' : '○ connecting'}</span></h1>
  <div class="row">${input('service', 'service')}
    <select aria-label="filter verdict" value=${f.verdict} onChange=${e => setF({ ...f, verdict: e.target.value })}><option value="">any verdict</option>${['allow', 'deny', 'bypassed', 'unsupported', 'error'].map(v => html`<option>${v}</option>`)}</select>
    ${input('uid', 'uid')}${input('path', 'path prefix')}
    <select aria-label="filter kind" value=${f.kind} onChange=${e => setF({ ...f, kind: e.target.value })}><option value="">all kinds</option>${['request', 'commit', 'listener', 'mutation', 'boundary', 'invocation'].map(v => html`<option>${v}</option>`)}</select>
    <label><input type="checkbox" checked=${!!f.studio} onChange=${e => setF({ ...f, studio: e.target.checked ? 'true' : '' })} /> show the Studio's own requests</label></div>
  ${gaps ? html`<p class="error">${gaps} events were missed (the browser fell behind); reload to catch up.</p>` : null}
  <div class="grid cols2"><div class="card"><h2>Requests and denials over time</h2><${Chart} events=${events} /></div>
    <div class="card"><h2>Verdicts per rule</h2><table aria-label="verdicts per rule"><thead><tr><th>rule</th><th>allow</th><th>deny</th></tr></thead><tbody>${Object.entries(perRule).map(([k, v]) => html`<tr><td class="mono">${k}</td><td class="v-allow">${v.allow}</td><td class="v-deny">${v.deny}</td></tr>`)}</tbody></table></div></div>
  <div class="vscroll tall" ref=${v.ref} onScroll=${v.onScroll} onKeyDown=${v.onKeyDown}>
  <table aria-label="events" class="vtable"><thead><tr><th style="width:90px">time</th><th style="width:80px">service</th><th style="width:80px">kind</th><th style="width:110px">method</th><th>path</th><th style="width:150px">who</th><th style="width:90px">verdict</th><th style="width:60px">ms</th></tr></thead>
  <tbody><tr class="vpad"><td colspan="8" style=${'height:' + v.padTop + 'px'}></td></tr>${shown.slice(v.start, v.end).map((e, j) => html`<tr key=${e.id} class="click vrow" tabindex="0" data-vi=${v.start + j} data-event=${e.id} onClick=${() => go('/traffic/' + e.id)} onKeyDown=${k => k.key === 'Enter' && go('/traffic/' + e.id)}>
    <td>${fmtTime(e.at)}</td><td>${e.service}</td><td>${e.kind}</td><td>${e.method || (e.op) || (e.phase) || ''}</td><td class="mono">${e.path || ''}</td>
    <td>${e.identity.lens === 'admin' ? 'admin' : e.identity.uid || 'unauthenticated'}${e.actor.kind !== 'app' ? html` <span class="muted">via ${e.actor.kind}</span>` : ''}${e.actor.invocation ? html` <span class="muted" data-made-by>by ${e.actor.invocation}</span>` : ''}</td><td>${e.kind === 'invocation' ? html`<span class=${e.outcome === 'ok' ? 'v-allow' : 'v-deny'}>${e.outcome}</span>${e.causeEventId ? html` <span class="muted">← ${e.causeEventId}</span>` : null}${(e.writes || []).length ? html` <span class="muted">→ ${e.writes.length + (e.moreWrites || 0)} writes</span>` : null}` : html`<${Verdict} v=${e.verdict} />`}</td><td>${e.durationMs !== undefined ? e.durationMs.toFixed(2) : e.invocationMs !== undefined ? e.invocationMs.toFixed(2) : ''}</td></tr>`)}
  <tr class="vpad"><td colspan="8" style=${'height:' + v.padBottom + 'px'}></td></tr></tbody></table></div>
  <p class="muted" data-event-count>${shown.length} events${shown.length >= maxEvents ? ` (the newest ${maxEvents} are kept)` : ''}</p>`;
}

// Inspector is one event: a request's decision, or an invocation.
function Inspector({ id }) {
  const ruleServices = useRuleServices();
  const [{ data, error }] = useApi('/api/events/' + id);
  const svc = data && data.event.service;
  const [rules] = useApi(ruleServices.includes(svc) ? '/api/rules?service=' + svc : '');
  const [cur, setCur] = useState(0);
  const [as, setAs] = useState({ mode: 'same', uid: '', claims: '' });
  const [src, setSrc] = useState(null);
  const [rerun, setRerun] = useState(null);
  const [err, setErr] = useState(null);
  const trace = (data && data.event.trace) || [];
  useEffect(() => {
    const on = e => { if (e.target.closest && e.target.closest('input, textarea, .cm-editor, select')) return; if (e.key === 'j' || e.key === 'ArrowDown') setCur(c => Math.min(trace.length - 1, c + 1)); if (e.key === 'k' || e.key === 'ArrowUp') setCur(c => Math.max(0, c - 1)); };
    addEventListener('keydown', on); return () => removeEventListener('keydown', on);
  }, [trace.length]);
  if (error) return html`<${Err} error=${error} />`;
  if (!data) return html`<p class="muted">Loading…</p>`;
  const e = data.event, d = e.decision || {};
  if (e.kind === 'invocation') return html`<${InvocationEvent} e=${e} />`;
  const source = rules.data ? rules.data.rules.source : '';
  const failing = new Set((d.failing || []).map(s => `${s.line}:${s.column}:${s.text}`));
  const step = trace[cur];
  const doRerun = async (withSource) => {
    setErr(null);
    const body = {};
    if (as.mode === 'anon') body.as = { anonymous: true };
    if (as.mode === 'user') { body.as = { uid: as.uid }; if (as.claims) { try { body.as.claims = JSON.parse(as.claims); } catch (x) { setErr(new Error('claims: ' + x.message)); return; } } }
    if (withSource) body.source = src !== null ? src : source;
    try { setRerun(await api(`/api/events/${e.id}/rerun`, { method: 'POST', body })); } catch (x) { if (x.status === 422) setRerun(x.data); else setErr(x); }
  };
  return html`<h1>Request <span class="mono">${e.id}</span> <${Verdict} v=${e.verdict} /></h1>
  <div class="card"><div class="row"><b>${e.service}</b><span class="mono">${e.method} ${e.path}</span><span>as ${e.identity.lens === 'user' ? e.identity.uid : e.identity.lens}</span><span class="muted">${e.at}</span></div>
    ${d.reason ? html`<p class="mono" data-reason>${d.reason}</p>` : null}
    ${e.rule ? html`<p>Deciding rule: <span class="mono">L${e.rule.line}:${e.rule.column} allow ${(e.rule.operations || []).join(', ')} — match ${e.rule.matchPath}</span></p>` : html`<p class="muted">No rule decided${e.verdict === 'bypassed' ? ' (admin bypasses rules)' : ''}.</p>`}
    ${(data.explanation || []).length ? html`<h2>Why</h2><${Explanation} lines=${data.explanation} data-failing />` : null}
    ${(d.notes || []).map(n => html`<p class="muted">${n}</p>`)}</div>
  <${Caused} id=${e.id} />
  <div class="grid cols2"><div class="card"><h2>Rules source</h2><${Source} text=${source} mark=${step ? step.line : e.rule && e.rule.line} /></div>
  <div><div class="card"><h2>Trace <span class="muted">(<span class="kbd">j</span>/<span class="kbd">k</span> to step)</span></h2>
    <div class="row"><button onClick=${() => setCur(Math.max(0, cur - 1))}>← Prev</button><span>${trace.length ? cur + 1 : 0} / ${trace.length}</span><button onClick=${() => setCur(Math.min(trace.length - 1, cur + 1))}>Next →</button></div>
    <div role="list" aria-label="trace">${trace.map((s, i) => html`<div role="listitem" class=${'step' + (failing.has(`${s.line}:${s.column}:${s.text}`) ? ' fail' : '') + (i === cur ? ' cur' : '') + (s.skipped ? ' skipped' : '')} style=${'margin-left:' + s.depth * 14 + 'px'} onClick=${() => setCur(i)}>
      ${s.text} <span class="muted">${s.skipped ? '(skipped)' : s.error ? '→ error: ' + s.error : '→ ' + s.value}</span> <span class="muted">L${s.line}:${s.column}</span></div>`)}</div></div>
    <div class="card"><h2>Every evaluated rule</h2><table><tbody>${(d.evaluated || []).map(r => html`<tr><td class="mono">L${r.line}:${r.column}</td><td>${(r.operations || []).join(', ')}</td><td class="mono">${r.condition}</td><td>${r.verdict}</td></tr>`)}</tbody></table></div>
    <div class="card"><h2>request / resource / auth</h2><pre>${JSON.stringify({ auth: e.identity, data: e.seen && e.seen.data, resource: e.seen && e.seen.resource, query: e.seen && e.seen.query }, null, 2)}</pre></div></div></div>
  ${e.kind === 'request' && e.verdict !== 'bypassed' && !ruleServices.includes(e.service) ? html`<div class="card" data-rerun-unavailable><h2>Re-run</h2><p class="muted">Re-run is for requests Security Rules decide (Firestore, Storage, the Realtime Database).</p></div>` : null}
  ${ruleServices.includes(e.service) && e.kind === 'request' && e.verdict !== 'bypassed' ? html`<div class="card"><h2>Re-run (state untouched)</h2>
    <div class="row"><label>As <select aria-label="rerun as" value=${as.mode} onChange=${x => setAs({ ...as, mode: x.target.value })}><option value="same">the same identity</option><option value="user">another user</option><option value="anon">unauthenticated</option></select></label>
      ${as.mode === 'user' ? html`<input aria-label="rerun uid" placeholder="uid" value=${as.uid} onInput=${x => setAs({ ...as, uid: x.target.value })} /><input aria-label="rerun claims" placeholder="claims JSON" value=${as.claims} onInput=${x => setAs({ ...as, claims: x.target.value })} />` : null}
      <button onClick=${() => doRerun(false)}>Re-run with live rules</button><button class="primary" onClick=${() => doRerun(true)}>Re-run against edited rules</button></div>
    ${source ? html`<${Editor} label="edited rules" value=${src !== null ? src : source} onChange=${setSrc} />` : null}
    <${Err} error=${err} />
    ${rerun ? html`<div class="card" data-rerun=${rerun.verdict || 'error'}><b>Re-run:</b> <${Verdict} v=${rerun.verdict} /> <span class="mono">${rerun.reason}</span>
      <${Explanation} lines=${rerun.explanation} />
      ${rerun.verdict ? (rerun.notes || []).length ? html`<div data-rerun-notes><p>Not exact:</p>${rerun.notes.map(n => html`<p class="muted">${n}</p>`)}</div>` : html`<p class="ok" data-rerun-exact>Exact: the rules saw what the request's rules saw.</p>` : null}
      ${rerun.rules && !rerun.rules.compiles ? rerun.rules.diagnostics.filter(x => x.severity === 'error').map(x => html`<div class="error mono">${x.where}: ${x.message}</div>`) : null}</div>` : null}</div>` : null}`;
}
