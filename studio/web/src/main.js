// The Pyric Studio: Preact + htm pages over the Studio's JSON and event
// API, a CodeMirror 6 editor for rules. Routes: / /firestore /auth
// /database /storage /messaging /ai /functions /hosting /traffic /traffic/evt-N /rules. The
// service pages of database.js, storage.js, messaging.js, ai.js and functions.js share
// this file's helpers and lib.js's hooks (virtual lists, paging, live).
import { h, render } from 'preact';
import { useState, useEffect, useRef, useCallback, useErrorBoundary } from 'preact/hooks';
import htm from 'htm';
import { EditorState } from '@codemirror/state';
import { EditorView, keymap, lineNumbers, highlightActiveLine } from '@codemirror/view';
import { defaultKeymap, history as cmHistory, historyKeymap } from '@codemirror/commands';
import { useVirtual, usePaged } from './lib.js';
import { Database } from './database.js';
import { Storage } from './storage.js';
import { Messaging } from './messaging.js';
import { AI } from './ai.js';
import { Functions, InvocationEvent, Caused } from './functions.js';
import { Hosting } from './hosting.js';
import { Conformance } from './conformance.js';
import { SessionTools } from './session.js';

export const html = htm.bind(h);

// ---- data ----
export async function api(path, opts = {}) {
  const init = { method: opts.method || 'GET', headers: {} };
  if (opts.body !== undefined) { init.body = JSON.stringify(opts.body); init.headers['Content-Type'] = 'application/json'; }
  const r = await fetch(path, init);
  const text = await r.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch { data = { error: text }; }
  if (!r.ok) { const e = new Error((data && data.error) || r.statusText); e.status = r.status; e.data = data; throw e; }
  return data;
}

export function useApi(path, deps = []) {
  const [state, set] = useState({ data: null, error: null, loading: true });
  const reload = useCallback(() => {
    if (!path) return;
    set(s => ({ ...s, loading: true }));
    api(path).then(data => set({ data, error: null, loading: false }), error => set({ data: null, error, loading: false }));
  }, [path]);
  useEffect(reload, [path, ...deps]);
  return [state, reload];
}

// ---- routing ----
function usePath() {
  const [p, set] = useState(location.pathname);
  useEffect(() => {
    const on = () => set(location.pathname);
    addEventListener('popstate', on);
    return () => removeEventListener('popstate', on);
  }, []);
  return p;
}
export function go(to) { window.history.pushState(null, '', to); dispatchEvent(new PopStateEvent('popstate')); }
export function Link({ to, children, ...rest }) {
  return html`<a href=${to} onClick=${e => { if (e.metaKey || e.ctrlKey || e.button) return; e.preventDefault(); go(to); }} ...${rest}>${children}</a>`;
}

// ---- theme ----
function ThemeToggle() {
  const [t, set] = useState(localStorage.getItem('pyric-theme') || '');
  useEffect(() => { if (t) document.documentElement.dataset.theme = t; else delete document.documentElement.dataset.theme; localStorage.setItem('pyric-theme', t); }, [t]);
  const next = t === '' ? 'dark' : t === 'dark' ? 'light' : '';
  return html`<button title="Theme: ${t || 'system'}" aria-label="Switch theme" onClick=${() => set(next)}>${t === 'dark' ? '☾' : t === 'light' ? '☀' : '◐'} ${t || 'system'}</button>`;
}

// ---- small helpers ----
export const Verdict = ({ v }) => v ? html`<span class="badge v-${v}" data-verdict=${v}>${v}</span>` : null;
export const Err = ({ error }) => error ? html`<div class="error" role="alert">${error.message}${error.data && error.data.details && error.data.details.explanation ? '\n' + error.data.details.explanation.join('\n') : ''}${error.data && error.data.details && error.data.details.event ? html` <${Link} to=${'/traffic/' + error.data.details.event} data-inspect>Inspect →</${Link}>` : null}</div>` : null;
export const fmtTime = t => { try { return new Date(t).toLocaleTimeString(); } catch { return t; } };

export function typeOf(v) {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'object') {
    if (v.__type) return v.__type;
    if (v.__type__ === '__vector__') return 'vector';
    return 'map';
  }
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'double';
  return typeof v;
}
export function showValue(v) {
  const t = typeOf(v);
  switch (t) {
    case 'timestamp': return new Date(v.seconds * 1000 + Math.floor((v.nanos || 0) / 1e6)).toISOString();
    case 'reference': return '→ ' + v.path;
    case 'latlng': return `${v.lat}, ${v.lng}`;
    case 'bytes': return 'b64:' + v.base64;
    case 'vector': return 'vector(' + JSON.stringify(v.value) + ')';
    case 'float': return String(v.value);
    case 'map': case 'array': return JSON.stringify(v);
    default: return JSON.stringify(v);
  }
}

// explainStep renders a failing step as the server's explanation does:
// the expression, then with its direct operands replaced by their values.
function explainStep(f, trace) {
  if (f.error) return `${f.text} → error: ${f.error}`;
  const at = (trace || []).findIndex(s => s.text === f.text && s.line === f.line && s.column === f.column && !s.skipped);
  if (at >= 0) {
    let out = '', rest = f.text, n = 0, ok = true;
    const base = trace[at].depth;
    for (let j = at + 1; j < trace.length && trace[j].depth > base; j++) {
      const c = trace[j];
      if (c.depth !== base + 1 || c.skipped || !c.value || c.text === c.value) continue;
      const k = rest.indexOf(c.text);
      if (k < 0) { ok = false; break; }
      out += rest.slice(0, k) + c.value; rest = rest.slice(k + c.text.length); n++;
    }
    if (ok && n) return `${f.text} → ${out + rest} is ${f.value}`;
  }
  return `${f.text} is ${f.value}`;
}

// ---- CodeMirror wrapper ----
export function Editor({ value, onChange, readOnly, label }) {
  const host = useRef(null), view = useRef(null), cb = useRef(onChange);
  cb.current = onChange;
  useEffect(() => {
    const v = new EditorView({
      parent: host.current,
      state: EditorState.create({
        doc: value || '',
        extensions: [lineNumbers(), highlightActiveLine(), cmHistory(), keymap.of([...defaultKeymap, ...historyKeymap]),
          EditorState.readOnly.of(!!readOnly), EditorView.contentAttributes.of({ 'aria-label': label || 'editor' }),
          EditorView.updateListener.of(u => { if (u.docChanged && cb.current) cb.current(u.state.doc.toString()); })],
      }),
    });
    view.current = v;
    return () => v.destroy();
  }, []);
  useEffect(() => {
    const v = view.current;
    if (v && value !== undefined && value !== v.state.doc.toString()) v.dispatch({ changes: { from: 0, to: v.state.doc.length, insert: value } });
  }, [value]);
  return html`<div ref=${host} class="editor" data-editor=${label || ''}></div>`;
}

// Source shows rules text with a marked line, coverage and lint marks.
function Source({ text, mark, cov, lint }) {
  const lines = (text || '').split('\n');
  const covBy = {};
  for (const c of cov || []) { const o = covBy[c.line] || (covBy[c.line] = { t: 0, f: 0, e: 0 }); o.t += c.true; o.f += c.false; o.e += c.error; }
  const lintBy = {};
  for (const d of lint || []) (lintBy[d.line] = lintBy[d.line] || []).push(d);
  return html`<div class="src" role="region" aria-label="rules source">${lines.map((l, i) => {
    const n = i + 1, c = covBy[n], ld = lintBy[n];
    return html`<div class=${'ln' + (n === mark ? ' mark' : '') + (ld ? ' lint' : '')} data-line=${n} title=${ld ? ld.map(d => d.code + ': ' + d.message).join('\n') : ''}>
      <span class="no">${n}</span>${cov ? html`<span class="cov">${c ? `✓${c.t} ✗${c.f}${c.e ? ' !' + c.e : ''}` : ''}</span>` : null}<span>${l || ' '}</span></div>`;
  })}</div>`;
}

// rulesLabel names a service whose rules the Studio shows.
const rulesLabel = svc => ({ firestore: 'Firestore', storage: 'Storage', database: 'Realtime Database' })[svc] || svc;

// RulesStatus is one service's rules status: the loaded file, or a rules
// file that does not compile with file:line:col and the source line.
function RulesStatus({ r }) {
  return html`<div class="card" data-rules-state=${r.state} data-rules-status=${r.service}><h2>${rulesLabel(r.service)} rules</h2>
    ${r.state === 'live' ? html`<p class="ok">Live: ${r.file}</p>` : null}
    ${r.state === 'none' ? html`<p class="error">No rules loaded: every client request is denied (admin bypasses rules).</p>` : null}
    ${r.state === 'changed on disk' ? html`<p>The file on disk differs from the live rules (reload pending).</p>` : null}
    ${r.state === 'error' ? html`<div class="error"><p>The rules file does not compile; ${r.loaded ? 'the last good rules stay live' : 'no rules are live'}.</p>
      ${(r.errors || []).map(d => html`<div class="mono" data-rules-error><b>${d.where}</b>: ${d.message}<pre>${d.sourceLine}\n${' '.repeat(Math.max(0, d.column - 1))}^</pre></div>`)}</div>` : null}
    ${r.fileError ? html`<p class="error">${r.fileError}</p>` : null}
  </div>`;
}

// ---- Home ----
function Home() {
  const [{ data, error }, reload] = useApi('/api/services');
  useEffect(() => { const t = setInterval(reload, 2000); return () => clearInterval(t); }, [reload]);
  if (error) return html`<${Err} error=${error} />`;
  if (!data) return html`<p class="muted">Loading…</p>`;
  const counts = (data.counts && data.counts.byService) || {};
  return html`<h1>Pyric · ${data.project}</h1>
  <div class="card"><h2>Services</h2>
  <table><thead><tr><th>Service</th><th>Address</th><th>Speaks</th><th>Environment</th><th>Requests</th><th>Denied</th></tr></thead>
  <tbody>${(data.endpoints || []).map(e => html`<tr data-service=${e.service}><td><b>${pageOf(e.service) ? html`<${Link} to=${pageOf(e.service)}>${e.service}</${Link}>` : e.service}</b></td><td class="mono">${e.addr}</td><td>${e.what}</td>
    <td class="mono">${(e.env || []).map(v => html`<div>${v.name}=${v.value}</div>`)}</td>
    <td>${(counts[e.service] || {}).total || 0}</td><td class="v-deny">${(counts[e.service] || {}).deny || 0}</td></tr>`)}</tbody></table></div>
  ${(data.rules || []).map(r => html`<${RulesStatus} r=${r} />`)}
  <div class="card"><h2>Events</h2><p>${data.events.seq} events so far, ${data.events.kept} kept. <${Link} to="/traffic">Traffic →</${Link}></p></div>`;
}

// ---- Firestore ----
export function Lens({ lens, setLens }) {
  return html`<div class="row" role="group" aria-label="lens">
    <label>Lens <select aria-label="lens" value=${lens.mode} onChange=${e => setLens({ ...lens, mode: e.target.value })}>
      <option value="admin">admin (bypasses rules)</option><option value="user">app: signed-in user</option><option value="anon">app: unauthenticated</option></select></label>
    ${lens.mode === 'user' ? html`<input aria-label="uid" placeholder="uid" value=${lens.uid} onInput=${e => setLens({ ...lens, uid: e.target.value })} />
      <input aria-label="claims" placeholder='claims {"admin":true}' value=${lens.claims} onInput=${e => setLens({ ...lens, claims: e.target.value })} />` : null}
  </div>`;
}
export function lensQuery(l) {
  if (l.mode === 'anon') return '&as=~anon';
  if (l.mode === 'user' && l.uid) return '&as=' + encodeURIComponent(l.uid) + (l.claims ? '&claims=' + encodeURIComponent(l.claims) : '');
  return '';
}

function Firestore() {
  const [lens, setLens] = useState({ mode: 'admin', uid: '', claims: '' });
  const [parent, setParent] = useState('');      // document path whose collections are shown
  const [coll, setColl] = useState('');
  const [docPath, setDocPath] = useState('');
  const [tick, setTick] = useState(0);
  const [cols] = useApi('/api/firestore/collections?parent=' + encodeURIComponent(parent), [tick]);
  const [docs, moreDocs] = usePaged(coll ? `/api/firestore/documents?collection=${encodeURIComponent(coll)}&pageSize=300${lensQuery(lens)}` : null, 'documents', [tick]);
  const [doc] = useApi(docPath ? `/api/firestore/document?path=${encodeURIComponent(docPath)}${lensQuery(lens)}` : null, [tick, lens]);
  const [subs] = useApi(docPath ? '/api/firestore/collections?parent=' + encodeURIComponent(docPath) : null, [tick]);
  const [edit, setEdit] = useState(null);
  const [err, setErr] = useState(null);
  const [newPath, setNewPath] = useState('');
  const crumbs = parent ? parent.split('/') : [];
  const openDoc = p => { setDocPath(p); setEdit(null); setErr(null); };
  const openColl = c => { setColl(c); setDocPath(''); setEdit(null); };
  const save = async (path, text) => {
    setErr(null);
    let data;
    try { data = JSON.parse(text); } catch (e) { setErr(new Error('Not valid JSON: ' + e.message)); return; }
    try { await api(`/api/firestore/document?path=${encodeURIComponent(path)}${lensQuery(lens)}`, { method: 'PUT', body: { data } }); setEdit(null); setDocPath(path); setTick(t => t + 1); }
    catch (e) { setErr(e); }
  };
  const del = async (recursive) => {
    setErr(null);
    try { await api(`/api/firestore/document?path=${encodeURIComponent(docPath)}${recursive ? '&recursive=true' : ''}${lensQuery(lens)}`, { method: 'DELETE' }); setDocPath(''); setTick(t => t + 1); }
    catch (e) { setErr(e); }
  };
  return html`<h1>Firestore</h1>
  <${Lens} lens=${lens} setLens=${setLens} />
  <div class="row mono" aria-label="breadcrumbs"><button onClick=${() => { setParent(''); openColl(''); setDocPath(''); }}>/</button>
    ${crumbs.map((c, i) => html`<span>/</span><button onClick=${() => { const p = crumbs.slice(0, i + 1).join('/'); if ((i + 1) % 2 === 1) { setParent(crumbs.slice(0, i).join('/')); openColl(p); } else { setParent(p); openColl(''); openDoc(p); } }}>${c}</button>`)}</div>
  <${Err} error=${err} />
  <div class="grid cols3">
    <div class="card"><h2>Collections ${parent ? html`<span class="muted mono">of ${parent}</span>` : ''}</h2>
      <ul class="list" aria-label="collections">${((cols.data && cols.data.collections) || []).map(c => {
        const p = parent ? parent + '/' + c : c;
        return html`<li><button class=${coll === p ? 'sel' : ''} onClick=${() => openColl(p)}>${c}</button></li>`; })}</ul>
      ${cols.data && cols.data.collections.length === 0 ? html`<p class="muted">No collections.</p>` : null}
      <div class="row"><input aria-label="new document path" placeholder="new doc path e.g. posts/p1" value=${newPath} onInput=${e => setNewPath(e.target.value)} />
        <button onClick=${() => { setDocPath(''); setEdit({ path: newPath, text: '{\n  \n}' }); }}>New</button></div>
    </div>
    <div class="card"><h2>Documents ${coll ? html`<span class="muted mono">${coll}</span>` : ''}</h2>
      <${Err} error=${docs.error} />
      <${DocList} docs=${docs} more=${moreDocs} sel=${docPath} onOpen=${openDoc} />
    </div>
    <div class="card"><h2>Document ${docPath ? html`<span class="mono">${docPath}</span>` : ''}</h2>
      ${edit ? html`<div><div class="row mono">${edit.path}</div><textarea aria-label="document JSON" value=${edit.text} onInput=${e => setEdit({ ...edit, text: e.target.value })}></textarea>
        <div class="row"><button class="primary" onClick=${() => save(edit.path, edit.text)}>Save</button><button onClick=${() => setEdit(null)}>Cancel</button>
        <span class="muted">Typed values: {"__type":"timestamp","seconds":…}, {"__type":"reference","path":…}, {"__type":"latlng",…}, {"__type":"bytes","base64":…}</span></div></div>` : null}
      ${!edit && doc.error ? html`<${Err} error=${doc.error} />` : null}
      ${!edit && doc.data ? html`<div>
        ${doc.data.missing ? html`<p class="muted">No document here (it has subcollections).</p>` : html`<table aria-label="fields"><thead><tr><th>Field</th><th>Value</th></tr></thead><tbody>
          ${Object.keys(doc.data.data || {}).sort().map(k => html`<tr data-field=${k}><td class="mono">${k}</td><td class="mono">${showValue(doc.data.data[k])}<span class="type">${typeOf(doc.data.data[k])}</span></td></tr>`)}</tbody></table>
          <p class="muted">updated ${doc.data.updateTime}</p>`}
        <div class="row"><button onClick=${() => setEdit({ path: docPath, text: JSON.stringify(doc.data.data || {}, null, 2) })}>Edit</button>
          <button class="danger" onClick=${() => del(false)}>Delete</button>
          ${lens.mode === 'admin' ? html`<button class="danger" onClick=${() => del(true)}>Delete with subcollections</button>` : null}</div>
        ${subs.data && subs.data.collections.length ? html`<h2>Subcollections</h2><ul class="list">${subs.data.collections.map(c => html`<li><button onClick=${() => { setParent(docPath); openColl(docPath + '/' + c); }}>${c}</button></li>`)}</ul>` : null}
      </div>` : null}
    </div>
  </div>
  <${Query} lens=${lens} parent=${parent} onOpen=${openDoc} />`;
}

// DocList is a collection's documents as a virtual list: pages load as
// the end scrolls into view, and only the visible rows are in the DOM, so
// a collection of 100k documents scrolls like one of ten.
function DocList({ docs, more, sel, onOpen }) {
  const v = useVirtual(docs.items.length, 28, { onEnd: more });
  return html`<div class="vscroll short" ref=${v.ref} onScroll=${v.onScroll} onKeyDown=${v.onKeyDown}>
    <ul class="list" aria-label="documents"><li class="vpad" aria-hidden="true" style=${'height:' + v.padTop + 'px'}></li>
    ${docs.items.slice(v.start, v.end).map((d, j) => html`<li key=${d.path}><button class=${'vrow' + (sel === d.path ? ' sel' : '')} data-vi=${v.start + j} onClick=${() => onOpen(d.path)}>${d.missing ? html`<i class="muted">${d.id}</i>` : d.id}</button></li>`)}
    <li class="vpad" aria-hidden="true" style=${'height:' + v.padBottom + 'px'}></li></ul></div>
    <p class="muted" data-doc-count>${docs.items.length}${docs.done ? '' : '+'} documents${docs.loading ? ' · loading…' : ''}</p>`;
}

function Query({ lens, parent, onOpen }) {
  const [q, setQ] = useState({ coll: '', field: '', op: 'EQUAL', value: '' });
  const [res, setRes] = useState(null);
  const [err, setErr] = useState(null);
  const run = async () => {
    setErr(null);
    const query = { from: [{ collectionId: q.coll }] };
    if (q.field) {
      let v; try { v = JSON.parse(q.value); } catch { v = q.value; }
      const val = typeof v === 'number' ? (Number.isInteger(v) ? { integerValue: String(v) } : { doubleValue: v }) : typeof v === 'boolean' ? { booleanValue: v } : v === null ? { nullValue: null } : { stringValue: String(v) };
      query.where = { fieldFilter: { field: { fieldPath: q.field }, op: q.op, value: val } };
    }
    try { setRes(await api('/api/firestore/query?' + lensQuery(lens).slice(1), { method: 'POST', body: { parent, query } })); } catch (e) { setErr(e); setRes(null); }
  };
  return html`<div class="card"><h2>Run a query</h2><div class="row">
    <input aria-label="query collection" placeholder="collection id" value=${q.coll} onInput=${e => setQ({ ...q, coll: e.target.value })} />
    <input aria-label="query field" placeholder="field" value=${q.field} onInput=${e => setQ({ ...q, field: e.target.value })} />
    <select aria-label="query operator" value=${q.op} onChange=${e => setQ({ ...q, op: e.target.value })}>${['EQUAL', 'NOT_EQUAL', 'LESS_THAN', 'LESS_THAN_OR_EQUAL', 'GREATER_THAN', 'GREATER_THAN_OR_EQUAL', 'ARRAY_CONTAINS'].map(o => html`<option>${o}</option>`)}</select>
    <input aria-label="query value" placeholder="value (JSON)" value=${q.value} onInput=${e => setQ({ ...q, value: e.target.value })} />
    <button class="primary" onClick=${run}>Run</button></div>
    <${Err} error=${err} />
    ${res ? html`<p class="muted">${res.documents.length} documents</p><ul class="list">${res.documents.map(d => html`<li><button onClick=${() => onOpen(d.path)}>${d.path}</button></li>`)}</ul>` : null}</div>`;
}

// ---- Auth ----
function Auth() {
  const [tick, setTick] = useState(0);
  const [users, moreUsers] = usePaged('/api/auth/users?pageSize=200', 'users', [tick]);
  const uv = useVirtual(users.items.length, 30, { onEnd: moreUsers });
  const [oob] = useApi('/api/auth/oob', [tick]);
  const [sel, setSel] = useState(null);
  const [form, setForm] = useState({ uid: '', email: '', password: '', claims: '' });
  const [err, setErr] = useState(null);
  const create = async () => {
    setErr(null);
    const body = { password: form.password || undefined, uid: form.uid || undefined };
    if (form.email) body.email = form.email;
    if (form.claims) { try { body.customClaims = JSON.parse(form.claims); } catch (e) { setErr(new Error('Custom claims are not valid JSON: ' + e.message)); return; } }
    try { await api('/api/auth/users', { method: 'POST', body }); setForm({ uid: '', email: '', password: '', claims: '' }); setTick(t => t + 1); } catch (e) { setErr(e); }
  };
  return html`<h1>Auth</h1>
  <div class="card"><h2>Add a user</h2><div class="row">
    <input aria-label="new uid" placeholder="uid (optional)" value=${form.uid} onInput=${e => setForm({ ...form, uid: e.target.value })} />
    <input aria-label="new email" placeholder="email" value=${form.email} onInput=${e => setForm({ ...form, email: e.target.value })} />
    <input aria-label="new password" placeholder="password" type="password" value=${form.password} onInput=${e => setForm({ ...form, password: e.target.value })} />
    <input aria-label="new claims" placeholder='custom claims {"role":"admin"}' value=${form.claims} onInput=${e => setForm({ ...form, claims: e.target.value })} />
    <button class="primary" onClick=${create}>Create</button></div><${Err} error=${err} /></div>
  <div class="grid cols2"><div class="card"><h2>Users</h2><${Err} error=${users.error} />
    <div class="vscroll" ref=${uv.ref} onScroll=${uv.onScroll} onKeyDown=${uv.onKeyDown}>
    <table aria-label="users" class="vtable"><thead><tr><th style="width:30%">uid</th><th style="width:35%">email</th><th>providers</th><th>state</th></tr></thead><tbody>
    <tr class="vpad"><td colspan="4" style=${'height:' + uv.padTop + 'px'}></td></tr>
    ${users.items.slice(uv.start, uv.end).map((u, j) => html`<tr key=${u.localId} class=${'click vrow' + (sel === u.localId ? ' sel' : '')} tabindex="0" data-vi=${uv.start + j} data-uid=${u.localId} onClick=${() => setSel(u.localId)} onKeyDown=${e => e.key === 'Enter' && setSel(u.localId)}>
      <td class="mono">${u.localId}</td><td>${u.email || ''}</td><td>${(u.providerUserInfo || []).map(p => p.providerId).join(', ') || (u.email ? 'password' : 'anonymous')}</td><td>${u.disabled ? html`<span class="v-deny">disabled</span>` : 'active'}</td></tr>`)}
    <tr class="vpad"><td colspan="4" style=${'height:' + uv.padBottom + 'px'}></td></tr></tbody></table></div>
    <p class="muted">${users.items.length}${users.done ? '' : '+'} users${users.loading ? ' · loading…' : ''}</p></div>
    <div>${sel ? html`<${UserEdit} key=${sel + tick} uid=${sel} user=${users.items.find(u => u.localId === sel)} onDone=${() => setTick(t => t + 1)} onGone=${() => { setSel(null); setTick(t => t + 1); }} />` : html`<div class="card muted">Select a user to edit it.</div>`}
    <div class="card"><h2>Email / OOB outbox</h2>${oob.data && oob.data.oobCodes.length ? html`<table><thead><tr><th>email</th><th>type</th><th>link</th></tr></thead><tbody>${oob.data.oobCodes.map(o => html`<tr><td>${o.email}</td><td>${o.requestType}</td><td class="mono"><a href=${o.oobLink}>${o.oobCode}</a></td></tr>`)}</tbody></table>` : html`<p class="muted">No codes sent.</p>`}</div></div></div>`;
}

function UserEdit({ uid, user, onDone, onGone }) {
  const [claims, setClaims] = useState(user && user.customAttributes ? JSON.stringify(JSON.parse(user.customAttributes), null, 2) : '{}');
  const [name, setName] = useState((user && user.displayName) || '');
  const [err, setErr] = useState(null);
  let claimsErr = null;
  try { const v = JSON.parse(claims); if (v === null || typeof v !== 'object' || Array.isArray(v)) claimsErr = 'Custom claims must be a JSON object'; } catch (e) { claimsErr = 'Not valid JSON: ' + e.message; }
  const patch = async body => { setErr(null); try { await api('/api/auth/users/' + encodeURIComponent(uid), { method: 'PATCH', body }); onDone(); } catch (e) { setErr(e); } };
  return html`<div class="card" data-editing=${uid}><h2>User <span class="mono">${uid}</span></h2>
    <div class="row"><label>Display name <input aria-label="display name" value=${name} onInput=${e => setName(e.target.value)} /></label><button onClick=${() => patch({ displayName: name })}>Save name</button></div>
    <h2>Custom claims</h2><textarea aria-label="custom claims" value=${claims} onInput=${e => setClaims(e.target.value)}></textarea>
    ${claimsErr ? html`<div class="error">${claimsErr}</div>` : null}
    <div class="row"><button class="primary" disabled=${!!claimsErr} onClick=${() => patch({ customClaims: JSON.parse(claims) })}>Save claims</button>
      <button onClick=${() => patch({ disabled: !(user && user.disabled) })}>${user && user.disabled ? 'Enable' : 'Disable'}</button>
      <button class="danger" onClick=${async () => { try { await api('/api/auth/users/' + encodeURIComponent(uid), { method: 'DELETE' }); onGone(); } catch (e) { setErr(e); } }}>Delete</button></div>
    <${Err} error=${err} /></div>`;
}

// ---- Traffic ----
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

function Traffic() {
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
    <td>${e.identity.lens === 'admin' ? 'admin' : e.identity.uid || 'unauthenticated'}${e.actor.kind !== 'app' ? html` <span class="muted">via ${e.actor.kind}</span>` : ''}</td><td>${e.kind === 'invocation' ? html`<span class=${e.outcome === 'ok' ? 'v-allow' : 'v-deny'}>${e.outcome}</span>${e.causeEventId ? html` <span class="muted">← ${e.causeEventId}</span>` : null}` : html`<${Verdict} v=${e.verdict} />`}</td><td>${e.durationMs !== undefined ? e.durationMs.toFixed(2) : e.invocationMs !== undefined ? e.invocationMs.toFixed(2) : ''}</td></tr>`)}
  <tr class="vpad"><td colspan="8" style=${'height:' + v.padBottom + 'px'}></td></tr></tbody></table></div>
  <p class="muted" data-event-count>${shown.length} events${shown.length >= maxEvents ? ` (the newest ${maxEvents} are kept)` : ''}</p>`;
}

// ---- Rules inspector ----
// rerunnable are the services whose recorded requests can be re-run.
const rerunnable = ['firestore', 'storage', 'database'];
function Inspector({ id }) {
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
    ${(d.failing || []).length ? html`<h2>Why</h2>${d.failing.map(s => html`<div class="step fail" data-failing>${explainStep(s, e.trace)}</div>`)}` : null}
    ${(d.notes || []).map(n => html`<p class="muted">${n}</p>`)}</div>
  <${Caused} id=${e.id} />
  <div class="grid cols2"><div class="card"><h2>Rules source</h2><${Source} text=${source} mark=${step ? step.line : e.rule && e.rule.line} /></div>
  <div><div class="card"><h2>Trace <span class="muted">(<span class="kbd">j</span>/<span class="kbd">k</span> to step)</span></h2>
    <div class="row"><button onClick=${() => setCur(Math.max(0, cur - 1))}>← Prev</button><span>${trace.length ? cur + 1 : 0} / ${trace.length}</span><button onClick=${() => setCur(Math.min(trace.length - 1, cur + 1))}>Next →</button></div>
    <div role="list" aria-label="trace">${trace.map((s, i) => html`<div role="listitem" class=${'step' + (failing.has(`${s.line}:${s.column}:${s.text}`) ? ' fail' : '') + (i === cur ? ' cur' : '') + (s.skipped ? ' skipped' : '')} style=${'margin-left:' + s.depth * 14 + 'px'} onClick=${() => setCur(i)}>
      ${s.text} <span class="muted">${s.skipped ? '(skipped)' : s.error ? '→ error: ' + s.error : '→ ' + s.value}</span> <span class="muted">L${s.line}:${s.column}</span></div>`)}</div></div>
    <div class="card"><h2>Every evaluated rule</h2><table><tbody>${(d.evaluated || []).map(r => html`<tr><td class="mono">L${r.line}:${r.column}</td><td>${(r.operations || []).join(', ')}</td><td class="mono">${r.condition}</td><td>${r.verdict}</td></tr>`)}</tbody></table></div>
    <div class="card"><h2>request / resource / auth</h2><pre>${JSON.stringify({ auth: e.identity, data: e.seen && e.seen.data, resource: e.seen && e.seen.resource, query: e.seen && e.seen.query }, null, 2)}</pre></div></div></div>
  ${e.kind === 'request' && e.verdict !== 'bypassed' && !rerunnable.includes(e.service) ? html`<div class="card" data-rerun-unavailable><h2>Re-run</h2><p class="muted">Re-run is for requests Security Rules decide (Firestore, Storage, the Realtime Database).</p></div>` : null}
  ${rerunnable.includes(e.service) && e.kind === 'request' && e.verdict !== 'bypassed' ? html`<div class="card"><h2>Re-run (state untouched)</h2>
    <div class="row"><label>As <select aria-label="rerun as" value=${as.mode} onChange=${x => setAs({ ...as, mode: x.target.value })}><option value="same">the same identity</option><option value="user">another user</option><option value="anon">unauthenticated</option></select></label>
      ${as.mode === 'user' ? html`<input aria-label="rerun uid" placeholder="uid" value=${as.uid} onInput=${x => setAs({ ...as, uid: x.target.value })} /><input aria-label="rerun claims" placeholder="claims JSON" value=${as.claims} onInput=${x => setAs({ ...as, claims: x.target.value })} />` : null}
      <button onClick=${() => doRerun(false)}>Re-run with live rules</button><button class="primary" onClick=${() => doRerun(true)}>Re-run against edited rules</button></div>
    ${source ? html`<${Editor} label="edited rules" value=${src !== null ? src : source} onChange=${setSrc} />` : null}
    <${Err} error=${err} />
    ${rerun ? html`<div class="card" data-rerun=${rerun.verdict || 'error'}><b>Re-run:</b> <${Verdict} v=${rerun.verdict} /> <span class="mono">${rerun.reason}</span>
      ${(rerun.explanation || []).map(l => html`<div class="step fail">${l}</div>`)}
      ${rerun.verdict ? (rerun.notes || []).length ? html`<div data-rerun-notes><p>Not exact:</p>${rerun.notes.map(n => html`<p class="muted">${n}</p>`)}</div>` : html`<p class="ok" data-rerun-exact>Exact: the rules saw what the request's rules saw.</p>` : null}
      ${rerun.rules && !rerun.rules.compiles ? rerun.rules.diagnostics.filter(x => x.severity === 'error').map(x => html`<div class="error mono">${x.where}: ${x.message}</div>`) : null}</div>` : null}</div>` : null}`;
}

// ---- Rules ----
const ruleServices = ['firestore', 'storage', 'database'];
function Rules() {
  const [svc, setSvc] = useState(() => { const q = new URLSearchParams(location.search).get('service'); return ruleServices.includes(q) ? q : 'firestore'; });
  const [{ data, error }, reload] = useApi('/api/rules?service=' + svc);
  useEffect(() => { const t = setInterval(reload, 3000); return () => clearInterval(t); }, [reload]);
  const pick = x => { setSvc(x); window.history.replaceState(null, '', '/rules?service=' + x); };
  const tabs = html`<div class="row" role="tablist" aria-label="rules service">${ruleServices.map(x => html`<button role="tab" aria-selected=${x === svc ? 'true' : 'false'} class=${x === svc ? 'primary' : ''} data-rules-service=${x} onClick=${() => pick(x)}>${rulesLabel(x)}</button>`)}</div>`;
  if (error) return html`<h1>Rules</h1>${tabs}<${Err} error=${error} />`;
  if (!data || data.service !== svc) return html`<h1>Rules</h1>${tabs}<p class="muted">Loading…</p>`;
  const r = data.rules, st = data.status || {};
  return html`<h1>${rulesLabel(svc)} rules <span class="muted mono">${st.file || r.file}</span></h1>${tabs}
  ${!data.loaded ? html`<p class="error">No rules loaded: every client request is denied.</p>` : null}
  ${st.state === 'error' ? html`<div class="card error"><p>The rules file on disk does not compile; ${data.loaded ? 'the last good rules stay live' : 'no rules are live'}.</p>${(st.errors || []).map(d => html`<div class="mono" data-rules-error>${d.where}: ${d.message}<pre>${d.sourceLine}</pre></div>`)}</div>` : null}
  <div class="grid cols2"><div class="card"><h2>Source with coverage <span class="muted">(✓ true ✗ false ! error, since the rules were loaded)</span></h2><${Source} text=${r.source} cov=${data.coverage} lint=${r.lint} /></div>
  <div class="card"><h2>Lint findings</h2>${r.lint.length ? html`<table aria-label="lint"><tbody>${r.lint.map(d => html`<tr data-lint=${d.code}><td class="mono">${d.where}</td><td>${d.severity}</td><td><b>${d.code}</b> ${d.message}${d.fix ? html`<div class="muted">${d.fix}</div>` : null}</td></tr>`)}</tbody></table>` : html`<p class="ok">No findings.</p>`}
    ${r.diagnostics.length ? html`<h2>Compiler</h2>${r.diagnostics.map(d => html`<div class="mono">${d.where} ${d.severity}: ${d.message}</div>`)}` : null}
    <h2>Expression counts</h2><table aria-label="expression counts"><thead><tr><th>where</th><th>expression</th><th>true</th><th>false</th><th>error</th></tr></thead><tbody>${(data.coverage || []).map(c => html`<tr data-expr=${c.text}><td class="mono">L${c.line}:${c.column}</td><td class="mono">${c.text}</td><td>${c.true}</td><td>${c.false}</td><td>${c.error}</td></tr>`)}</tbody></table></div></div>
  ${svc === 'firestore' ? html`<${SessionTools} source=${data.loaded ? r.source : undefined} />` : null}`;
}

// servicePages are the pages of services a sandbox may hold: service
// name, route, label (nav and Home).
const servicePages = [['database', '/database', 'Database'], ['storage', '/storage', 'Storage'], ['messaging', '/messaging', 'Messaging'], ['ai', '/ai', 'AI Logic'], ['functions', '/functions', 'Functions']];
const pageOf = svc => ({ firestore: '/firestore', auth: '/auth', ...Object.fromEntries(servicePages.map(([s, to]) => [s, to])) })[svc];

// ---- shell ----
// Boundary shows a page that failed to render as an error, instead of a
// page that silently stops updating.
function Boundary({ children }) {
  const [error, reset] = useErrorBoundary(e => console.error('pyric studio: a page failed to render:', e));
  if (error) return html`<div class="card error" role="alert" data-page-error>This page failed to render: ${String((error && error.message) || error)}
    <div class="row"><button onClick=${reset}>Try again</button></div></div>`;
  return children;
}

function App() {
  const path = usePath();
  const [svc] = useApi('/api/services');
  const names = (svc.data && svc.data.services) || [];
  useEffect(() => {
    let g = false;
    const on = e => {
      if (e.target.closest && e.target.closest('input, textarea, select, .cm-editor')) return;
      if (e.key === 'g') { g = true; setTimeout(() => { g = false; }, 800); return; }
      if (g) { const to = { h: '/', f: '/firestore', a: '/auth', d: '/database', s: '/storage', m: '/messaging', i: '/ai', n: '/functions', t: '/traffic', r: '/rules' }[e.key]; if (to) go(to); g = false; }
    };
    addEventListener('keydown', on); return () => removeEventListener('keydown', on);
  }, []);
  const tabs = [['/', 'Home'], ['/firestore', 'Firestore'], ['/auth', 'Auth']];
  for (const [svc, to, label] of servicePages) if (names.includes(svc)) tabs.push([to, label]);
  // Hosting is no sandbox service: its tab shows when the Studio serves
  // its sites' API (pyric serve with a firebase.json "hosting" section).
  const [hosting] = useApi('/__pyric/hosting');
  if (hosting.data) tabs.push(['/hosting', 'Hosting']);
  tabs.push(['/traffic', 'Traffic'], ['/rules', 'Rules']);
  let page;
  if (path === '/') page = html`<${Home} />`;
  else if (path === '/firestore') page = html`<${Firestore} />`;
  else if (path === '/auth') page = html`<${Auth} />`;
  else if (path === '/traffic') page = html`<${Traffic} />`;
  else if (path.startsWith('/traffic/')) page = html`<${Inspector} key=${path} id=${decodeURIComponent(path.slice(9))} />`;
  else if (path === '/rules') page = html`<${Rules} />`;
  else if (path === '/database') page = html`<${Database} />`;
  else if (path === '/storage') page = html`<${Storage} />`;
  else if (path === '/messaging') page = html`<${Messaging} />`;
  else if (path === '/ai') page = html`<${AI} />`;
  else if (path === '/functions') page = html`<${Functions} />`;
  else if (path === '/hosting') page = html`<${Hosting} />`;
  else if (path === '/conformance') page = html`<${Conformance} />`;
  else page = html`<h1>Not found</h1><p><${Link} to="/">Home</${Link}></p>`;
  const active = to => (to === '/' ? path === '/' : path === to || path.startsWith(to + '/')) ? 'page' : undefined;
  return html`<header><span class="brand"><span style="color:var(--accent)">◆</span> Pyric Studio</span><nav aria-label="pages">${tabs.map(([to, label]) => html`<${Link} to=${to} aria-current=${active(to)}>${label}</${Link}>`)}</nav><span class="spacer"></span><span class="muted" title="keyboard: g then h (home), f (Firestore), a (Auth), d (Database), s (Storage), m (Messaging), i (AI), n (Functions), t (Traffic), r (Rules)">⌨ g h·f·a·d·s·m·i·n·t·r</span><${ThemeToggle} /></header><main><${Boundary} key=${path}>${page}</${Boundary}></main>`;
}

render(html`<${App} />`, document.getElementById('app'));
