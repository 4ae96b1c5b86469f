// The Firestore page: collections and documents (a virtual list paged as
// it scrolls), a document's typed fields with edit and delete, and a
// query form — in the admin lens or as an app user, whose denials link
// to the request's inspector.
import { useState } from 'preact/hooks';
import { html, api, useApi, Err, Lens, lensQuery, showValue, typeOf } from './kit.js';
import { useVirtual, usePaged } from './lib.js';

export function Firestore() {
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
