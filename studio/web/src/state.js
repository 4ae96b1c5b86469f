// The generic page of a service without a view of its own: its state (the
// service's Snapshot, /api/service/<name>) as JSON, reloaded on demand,
// so a new service's page shows its data before anyone writes a view.
import { html, useApi, Err, useRoutes, labelOf } from './kit.js';

export function State({ service }) {
  const routes = useRoutes();
  const [{ data, error }, reload] = useApi('/api/service/' + encodeURIComponent(service));
  return html`<h1>${labelOf(routes, service)}</h1><div class="row"><button onClick=${reload}>Reload</button></div>
  <${Err} error=${error} />
  ${!data && !error ? html`<p class="muted">Loading…</p>` : null}
  ${data ? html`<div class="card" data-state=${service}><h2>State</h2>${data.truncated
    ? html`<p class="muted">The state is ${data.bytes} bytes: too large to show here.</p>`
    : html`<pre aria-label="state">${JSON.stringify(data.state, null, 2)}</pre>`}</div>` : null}`;
}
