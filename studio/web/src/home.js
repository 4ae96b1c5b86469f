// The Home page: every running endpoint with the variables that point
// clients at it and its request counts, each service with rules with
// their status (live, missing, or a file that does not compile), and the
// event counts. Reloaded every two seconds.
import { useEffect } from 'preact/hooks';
import { html, useApi, Err, Link, useRoutes, labelOf, pathOf } from './kit.js';

// RulesStatus is one service's rules status: the loaded file, or a rules
// file that does not compile with file:line:col and the source line.
export function RulesStatus({ r }) {
  const routes = useRoutes();
  return html`<div class="card" data-rules-state=${r.state} data-rules-status=${r.service}><h2>${labelOf(routes, r.service)} rules</h2>
    ${r.state === 'live' ? html`<p class="ok">Live: ${r.file}</p>` : null}
    ${r.state === 'none' ? html`<p class="error">No rules loaded: every client request is denied (admin bypasses rules).</p>` : null}
    ${r.state === 'changed on disk' ? html`<p>The file on disk differs from the live rules (reload pending).</p>` : null}
    ${r.state === 'error' ? html`<div class="error"><p>The rules file does not compile; ${r.loaded ? 'the last good rules stay live' : 'no rules are live'}.</p>
      ${(r.errors || []).map(d => html`<div class="mono" data-rules-error><b>${d.where}</b>: ${d.message}<pre>${d.sourceLine}\n${' '.repeat(Math.max(0, d.column - 1))}^</pre></div>`)}</div>` : null}
    ${r.fileError ? html`<p class="error">${r.fileError}</p>` : null}
  </div>`;
}

export function Home() {
  const routes = useRoutes();
  const [{ data, error }, reload] = useApi('/api/services');
  useEffect(() => { const t = setInterval(reload, 2000); return () => clearInterval(t); }, [reload]);
  if (error) return html`<${Err} error=${error} />`;
  if (!data) return html`<p class="muted">Loading…</p>`;
  const counts = (data.counts && data.counts.byService) || {};
  return html`<h1>Pyric · ${data.project}</h1>
  <div class="card"><h2>Services</h2>
  <table><thead><tr><th>Service</th><th>Address</th><th>Speaks</th><th>Environment</th><th>Requests</th><th>Denied</th></tr></thead>
  <tbody>${(data.endpoints || []).map(e => html`<tr data-service=${e.service}><td><b>${pathOf(routes, e.service) ? html`<${Link} to=${pathOf(routes, e.service)}>${e.service}</${Link}>` : e.service}</b></td><td class="mono">${e.addr}</td><td>${e.what}</td>
    <td class="mono">${(e.env || []).map(v => html`<div>${v.name}=${v.value}</div>`)}</td>
    <td>${(counts[e.service] || {}).total || 0}</td><td class="v-deny">${(counts[e.service] || {}).deny || 0}</td></tr>`)}</tbody></table></div>
  ${(data.rules || []).map(r => html`<${RulesStatus} r=${r} />`)}
  <div class="card"><h2>Events</h2><p>${data.events.seq} events so far, ${data.events.kept} kept. <${Link} to="/traffic">Traffic →</${Link}></p></div>`;
}

