// The session tools on the Rules page: the composite indexes the
// session's queries need (what `pyric firestore indexes suggest` writes),
// keeping the captured session as a named fixture to commit (what
// `pyric capture save NAME` does), and re-running the whole session
// against edited rules on a branch (fork, replay, diff against live, then
// promote or discard), over the admin routes /__pyric/indexes,
// /__pyric/capture/save and /__pyric/branch.
import { useState } from 'preact/hooks';
import { html, api, useApi, Err, Editor, Verdict } from './kit.js';

export function SessionTools({ source }) {
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
    ${saved ? html`<p class="ok" data-saved=${saved.path}>${saved.events} events kept in <span class="mono">${saved.path}</span> — verify with <span class="mono">pyric verify --fixture ${saved.path} --rules firestore.rules</span></p>` : html`<p class="muted">Commit it, and <span class="mono">pyric verify</span> replays it against candidate rules.</p>`}</div></div>
  <${SessionBranch} source=${source} />`;
}

// SessionBranch re-runs the session's Firestore writes against edited
// rules on a branch and shows what would change.
function SessionBranch({ source }) {
  const [src, setSrc] = useState(null);
  const [br, setBr] = useState(null);
  const [done, setDone] = useState(null);
  const [err, setErr] = useState(null);
  const call = async (path, method, body) => { setErr(null); try { return await api('/__pyric/branch' + path, { method, body }); } catch (x) { setErr(x.data && x.data.diagnostics ? new Error(x.message + ': ' + x.data.diagnostics.map(d => `L${d.line}:${d.column} ${d.message}`).join('; ')) : x); return null; } };
  const fork = async () => { setDone(null); const r = await call('', 'POST', { rules: src !== null ? src : source }); if (r) setBr(r); };
  const finish = async verb => { const r = await call('/' + br.id + (verb === 'promote' ? '/promote' : ''), verb === 'promote' ? 'POST' : 'DELETE'); if (r) { setBr(null); setDone(r); } };
  const divs = br ? br.replay.divergences : [];
  return html`<div class="card"><h2>Re-run this session against edited rules</h2>
    <p class="muted">Forks the state the session started from, replays its Firestore writes with these rules, and compares with the live database. Nothing changes until you promote.</p>
    ${source !== undefined ? html`<${Editor} label="session rules" value=${src !== null ? src : source} onChange=${setSrc} />` : null}
    <div class="row"><button class="primary" onClick=${fork}>Re-run session</button>
      ${br ? html`<button onClick=${() => finish('promote')}>Promote to live</button><button onClick=${() => finish('discard')}>Discard</button>` : null}</div>
    <${Err} error=${err} />
    ${br ? html`<div data-branch=${br.id}><p>${br.replay.checkedEvents} requests re-decided; ${divs.length} diverge; ${br.changes.length} differences from live.</p>
      ${divs.length ? html`<table aria-label="branch divergences"><tbody>${divs.map(d => html`<tr data-divergence=${d.kind}><td><b>${d.kind}</b></td><td class="mono">${d.method || ''} ${d.path}</td><td>${d.uid || ''}</td><td>${d.before ? html`<${Verdict} v=${d.before} /> → <${Verdict} v=${d.after} />` : ''}</td><td class="mono">${d.explanation || ''}</td></tr>`)}</tbody></table>` : null}
      ${br.changes.length ? html`<table aria-label="branch changes"><thead><tr><th>path</th><th>live</th><th>branch</th></tr></thead><tbody>${br.changes.map(c => html`<tr data-change=${c.path}><td class="mono">${c.path}</td><td class="mono">${JSON.stringify(c.before)}</td><td class="mono">${JSON.stringify(c.after)}</td></tr>`)}</tbody></table>` : null}</div>` : null}
    ${done ? html`<p class="ok" data-branch-done=${done.promoted ? 'promoted' : 'discarded'}>${done.promoted ? `Promoted: ${done.changes.length} documents written to live.` : 'Discarded: live unchanged.'}</p>` : null}</div>`;
}
