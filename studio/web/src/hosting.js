// The Hosting page: each site firebase.json serves with its URL and
// public folder, and the newest requests with the rule that answered
// each (redirect, header, file, rewrite, 404) — what production's
// Hosting would have done with the same request. Reloaded every two
// seconds while open (static-file requests are not events).
import { useState, useEffect } from 'preact/hooks';
import { html, api, Err, fmtTime } from './kit.js';

export function Hosting() {
  const [tick, setTick] = useState(0);
  const [st, setSt] = useState(null);
  const [err, setErr] = useState(null);
  useEffect(() => { const t = setInterval(() => setTick(n => n + 1), 2000); return () => clearInterval(t); }, []);
  useEffect(() => { api('/__pyric/hosting').then(d => { setSt(d); setErr(null); }, setErr); }, [tick]);
  if (!st) return html`<h1>Hosting</h1>${err ? html`<${Err} error=${err} />` : html`<p class="muted">Loading…</p>`}`;
  return html`<h1>Hosting</h1>
  <${Err} error=${err} />
  <div class="card"><h2>Sites <span class="muted">(${st.sites.length})</span></h2>
    <table aria-label="sites"><thead><tr><th>site</th><th>URL</th><th>public</th></tr></thead><tbody>
      ${st.sites.map(s => html`<tr data-site=${s.name}><td class="mono">${s.name}</td><td class="mono"><a href=${s.url} target="_blank" rel="noopener">${s.url}</a></td><td class="mono muted">${s.public || ''}</td></tr>`)}</tbody></table></div>
  <div class="card"><h2>Requests <span class="muted">(${st.requests.length})</span></h2>
    ${st.requests.length ? html`<table aria-label="requests"><thead><tr><th>at</th><th>site</th><th>request</th><th>status</th><th>answered by</th><th>ms</th></tr></thead><tbody>
      ${st.requests.slice().reverse().map(r => html`<tr data-path=${r.path}><td>${fmtTime(r.at)}</td><td class="mono">${r.site}</td><td class="mono">${r.method} ${r.path}</td>
        <td><span class=${r.status < 400 ? 'v-allow' : 'v-deny'}>${r.status}</span></td><td class="mono">${r.rule}${r.file ? html` <span class="muted">${r.file}</span>` : null}</td><td>${r.durationMs.toFixed(1)}</td></tr>`)}</tbody></table>`
      : html`<p class="muted">No request yet: open a site's URL.</p>`}</div>`;
}
