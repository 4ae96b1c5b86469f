// The Conformance page: every service's public behaviors from the
// registry (internal/compat, served at /api/conformance) with their
// status against production, the tests that prove them, and a score per
// service — the same table `pyric conformance` prints. The search box
// filters rows by id, API, behavior, note or test; the status buttons
// keep one status.
import { useState } from 'preact/hooks';
import { html, useApi, Err } from './kit.js';

const statuses = ['conforming', 'diverged', 'not implemented', 'unverified'];
const mark = { conforming: '✓', diverged: '⚠', 'not implemented': '✗', unverified: '?' };

export function Conformance() {
  const [st] = useApi('/api/conformance');
  const [q, setQ] = useState('');
  const [only, setOnly] = useState('');
  const [svc, setSvc] = useState('');
  if (!st.data) return html`<h1>Conformance</h1>${st.error ? html`<${Err} error=${st.error} />` : html`<p class="muted">Loading…</p>`}`;
  const words = q.toLowerCase().split(/\s+/).filter(Boolean);
  const match = r => (!only || r.status === only) && words.every(w =>
    [r.id, r.api, r.behavior, r.status, r.note || '', ...(r.tests || [])].join(' ').toLowerCase().includes(w));
  const services = st.data.services.filter(s => !svc || s.id === svc);
  let shown = 0;
  const tables = services.map(s => {
    const rows = s.rows.filter(match);
    shown += rows.length;
    if (!rows.length) return null;
    return html`<div class="card" data-service=${s.id}><h2>${s.name} <span class="muted">${s.percent}% · ${s.score.conforming + s.score.diverged} of ${s.score.total}</span></h2>
      <table aria-label=${s.name + ' conformance'}><thead><tr><th>id</th><th>API</th><th>behavior</th><th>status</th><th>tests</th></tr></thead><tbody>
      ${rows.map(r => html`<tr data-row=${r.id}><td class="mono">${r.id}</td><td class="mono">${r.api}</td><td>${r.behavior}</td>
        <td><span class=${r.status === 'conforming' || r.status === 'diverged' ? 'v-allow' : 'v-deny'}>${mark[r.status]} ${r.status}</span>${r.note ? html`<div class="muted">${r.note}</div>` : null}</td>
        <td class="mono muted">${(r.tests || []).map(t => html`<div>${t}</div>`)}</td></tr>`)}</tbody></table></div>`;
  });
  const t = st.data.total;
  return html`<h1>Conformance</h1>
  <div class="card"><h2>Scores</h2><table aria-label="scores"><thead><tr><th>service</th><th>score</th><th>conforming</th><th>diverged</th><th>not implemented</th><th>unverified</th><th>rows</th></tr></thead><tbody>
    ${st.data.services.map(s => html`<tr data-score=${s.id}><td><a href="#" onClick=${e => { e.preventDefault(); setSvc(svc === s.id ? '' : s.id); }} aria-pressed=${svc === s.id}>${s.name}</a></td><td>${s.percent}%</td><td>${s.score.conforming}</td><td>${s.score.diverged}</td><td>${s.score.notImplemented}</td><td>${s.score.unverified}</td><td>${s.score.total}</td></tr>`)}
    <tr><td><b>all</b></td><td>${t.total ? Math.round(1000 * (t.conforming + t.diverged) / t.total) / 10 : 0}%</td><td>${t.conforming}</td><td>${t.diverged}</td><td>${t.notImplemented}</td><td>${t.unverified}</td><td>${t.total}</td></tr></tbody></table></div>
  <div class="row"><input type="search" aria-label="search conformance rows" placeholder="search id, API, behavior, test…" value=${q} onInput=${e => setQ(e.target.value)} />
    ${['', ...statuses].map(s => html`<button aria-pressed=${only === s} onClick=${() => setOnly(s)}>${s || 'all'}</button>`)}
    <span class="muted" data-shown>${shown} rows</span></div>
  ${tables}`;
}
