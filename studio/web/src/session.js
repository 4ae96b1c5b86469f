// The session tools on the Rules page: the composite indexes the
// session's queries need (what `pyric firestore indexes suggest` writes),
// and keeping the captured session as a named fixture to commit (what
// `pyric capture save NAME` does), over the admin routes /__pyric/indexes
// and /__pyric/capture/save.
import { useState } from 'preact/hooks';
import { html, api, useApi, Err } from './main.js';

export function SessionTools() {
  const [{ data, error }, reload] = useApi('/__pyric/indexes');
  const [name, setName] = useState('');
  const [saved, setSaved] = useState(null);
  const [err, setErr] = useState(null);
  const save = async () => {
    setErr(null); setSaved(null);
    try { setSaved(await api('/__pyric/capture/save', { method: 'POST', body: { name } })); } catch (x) { setErr(x); }
  };
  const ix = (data && data.indexes) || [];
  return html`<div class="grid cols2"><div class="card"><h2>Indexes this session's queries need <button onClick=${reload}>Refresh</button></h2>
    ${error ? html`<${Err} error=${error} />` : !data ? html`<p class="muted">Loading…</p>` : ix.length ? html`<table aria-label="suggested indexes"><thead><tr><th>collection group</th><th>scope</th><th>fields</th><th>queries</th></tr></thead><tbody>${ix.map(i => html`<tr data-index=${i.collectionGroup}><td class="mono">${i.collectionGroup}</td><td>${i.queryScope}</td><td class="mono">${i.fields.map(f => f.fieldPath + ' ' + (f.order || f.arrayConfig)).join(', ')}</td><td>${i.events.length}</td></tr>`)}</tbody></table>
      <p class="muted">Write them into firestore.indexes.json with <span class="mono">pyric firestore indexes suggest</span>.</p>` : html`<p class="ok" data-index-none>No query of this session needs a composite index.</p>`}</div>
  <div class="card"><h2>Keep this session as a fixture</h2>
    <div class="row"><input aria-label="fixture name" placeholder="fixture name" value=${name} onInput=${e => setName(e.target.value)} /><button class="primary" disabled=${!name.trim()} onClick=${save}>Save fixture</button></div>
    <${Err} error=${err} />
    ${saved ? html`<p class="ok" data-saved=${saved.path}>${saved.events} events kept in <span class="mono">${saved.path}</span> — verify with <span class="mono">pyric verify --fixture ${saved.path} --rules firestore.rules</span></p>` : html`<p class="muted">Commit it, and <span class="mono">pyric verify</span> replays it against candidate rules.</p>`}</div></div>`;
}
