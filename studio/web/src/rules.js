// The Rules page: per service with rules, the source in force with
// coverage (how often each expression was true, false or an error) and
// lint marks, the lint findings and compiler diagnostics, and, for the
// rules whose page says so (sessionTools), the session tools (indexes,
// fixtures, re-running the session on a branch). The page names no
// service: the tabs are the services with rules, the first by default.
import { useState, useEffect } from 'preact/hooks';
import { html, useApi, Err, Source, useRoutes, labelOf, useRuleServices } from './kit.js';
import { SessionTools } from './session.js';

export function Rules() {
  const routes = useRoutes();
  const ruleServices = useRuleServices();
  const [picked, setSvc] = useState(() => new URLSearchParams(location.search).get('service'));
  const svc = ruleServices.includes(picked) ? picked : ruleServices[0];
  const [{ data, error }, reload] = useApi('/api/rules?service=' + (svc || ''));
  useEffect(() => { const t = setInterval(reload, 3000); return () => clearInterval(t); }, [reload]);
  const pick = x => { setSvc(x); window.history.replaceState(null, '', '/rules?service=' + x); };
  const tabs = html`<div class="row" role="tablist" aria-label="rules service">${ruleServices.map(x => html`<button role="tab" aria-selected=${x === svc ? 'true' : 'false'} class=${x === svc ? 'primary' : ''} data-rules-service=${x} onClick=${() => pick(x)}>${labelOf(routes, x)}</button>`)}</div>`;
  if (error) return html`<h1>Rules</h1>${tabs}<${Err} error=${error} />`;
  if (!data || data.service !== svc) return html`<h1>Rules</h1>${tabs}<p class="muted">Loading…</p>`;
  const r = data.rules, st = data.status || {};
  return html`<h1>${labelOf(routes, svc)} rules <span class="muted mono">${st.file || r.file}</span></h1>${tabs}
  ${!data.loaded ? html`<p class="error">No rules loaded: every client request is denied.</p>` : null}
  ${st.state === 'error' ? html`<div class="card error"><p>The rules file on disk does not compile; ${data.loaded ? 'the last good rules stay live' : 'no rules are live'}.</p>${(st.errors || []).map(d => html`<div class="mono" data-rules-error>${d.where}: ${d.message}<pre>${d.sourceLine}</pre></div>`)}</div>` : null}
  <div class="grid cols2"><div class="card"><h2>Source with coverage <span class="muted">(✓ true ✗ false ! error, since the rules were loaded)</span></h2><${Source} text=${r.source} cov=${data.coverage} lint=${r.lint} /></div>
  <div class="card"><h2>Lint findings</h2>${r.lint.length ? html`<table aria-label="lint"><tbody>${r.lint.map(d => html`<tr data-lint=${d.code}><td class="mono">${d.where}</td><td>${d.severity}</td><td><b>${d.code}</b> ${d.message}${d.fix ? html`<div class="muted">${d.fix}</div>` : null}</td></tr>`)}</tbody></table>` : html`<p class="ok">No findings.</p>`}
    ${r.diagnostics.length ? html`<h2>Compiler</h2>${r.diagnostics.map(d => html`<div class="mono">${d.where} ${d.severity}: ${d.message}</div>`)}` : null}
    <h2>Expression counts</h2><table aria-label="expression counts"><thead><tr><th>where</th><th>expression</th><th>true</th><th>false</th><th>error</th></tr></thead><tbody>${(data.coverage || []).map(c => html`<tr data-expr=${c.text}><td class="mono">L${c.line}:${c.column}</td><td class="mono">${c.text}</td><td>${c.true}</td><td>${c.false}</td><td>${c.error}</td></tr>`)}</tbody></table></div></div>
  ${data.sessionTools ? html`<${SessionTools} source=${data.loaded ? r.source : undefined} />` : null}`;
}
