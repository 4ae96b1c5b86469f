// The Realtime Database page: an expandable tree read one level at a time
// (50 children per step, paged by key), live over the event stream (every
// commit refreshes the open nodes and flashes changed values), with inline
// edit of a leaf, add child and delete — in the admin lens or as a user.
import { useState, useEffect, useRef } from 'preact/hooks';
import { html, api, Err, Lens, lensQuery } from './kit.js';
import { useLive, LiveDot } from './lib.js';

const enc = encodeURIComponent;
const join = (p, k) => (p ? p + '/' + k : k);
const STEP = 50, MAX = 500;

// parseInput reads what a person typed as a value: JSON when it parses,
// else the text as a string ("hello" and hello both store "hello").
export function parseInput(text) {
  const t = text.trim();
  if (t === '') return '';
  try { return JSON.parse(t); } catch { return text; }
}

// commitPath is the tree path of a commit event in the namespace shown
// (events name other namespaces "ns:/path"), or null for another one.
function commitPath(p, ns) {
  const m = /^([^/:]+):(.*)$/.exec(p || '');
  if (m ? m[1] !== ns.name : !ns.isDefault) return null;
  return (m ? m[2] : p || '').replace(/^\/+|\/+$/g, '');
}

// affects reports whether a change at one of paths (null: any) can
// change what the node at n shows: its own location, an ancestor, or
// anything below it.
function affects(paths, n) {
  return paths === null || n === '' || paths.some(p => p === n || p === '' || p.startsWith(n + '/') || n.startsWith(p + '/'));
}

// withReason makes a denial read with its reason (which rule, which
// location); the failing sub-expressions and the inspector link follow.
function withReason(e) {
  if (e && e.data && e.data.details && e.data.details.reason && !e.message.includes(e.data.details.reason)) e.message += ': ' + e.data.details.reason;
  return e;
}

export function Database() {
  const [lens, setLens] = useState({ mode: 'admin', uid: '', claims: '' });
  const [ns, setNs] = useState('');
  const [nsList, setNsList] = useState([]);
  const [root, setRoot] = useState('');
  const [pathInput, setPathInput] = useState('');
  const [open, setOpen] = useState(() => new Set(['']));
  // changed: which locations the last commits touched (null: refresh
  // everything); only the open nodes they affect read again.
  const [changed, setChanged] = useState({ tick: 0, paths: null });
  const [nsInfo, setNsInfo] = useState({ name: '', isDefault: true });
  const [err, setErr] = useState(null);
  const live = useLive('service=database&kind=commit&studio=true', evs =>
    setChanged(c => ({ tick: c.tick + 1, paths: evs.map(e => commitPath(e.path, nsInfo)).filter(p => p !== null) })));
  const say = e => setErr(withReason(e));
  const ctx = {
    lens, changed, open, setErr: say,
    q: path => `ns=${enc(ns)}&path=${enc(path)}${lensQuery(lens)}`,
    toggle: (path, on) => setOpen(o => { const n = new Set(o); if (on === undefined ? !n.has(path) : on) n.add(path); else n.delete(path); return n; }),
    refresh: () => setChanged(c => ({ tick: c.tick + 1, paths: null })),
    onNamespaces: d => { setNsList(d.namespaces || []); setNsInfo({ name: d.namespace, isDefault: d.namespace === d.defaultNamespace }); },
  };
  const goTo = p => { const c = p.replace(/^\/+|\/+$/g, ''); setRoot(c); setPathInput(c); setOpen(o => new Set(o).add(c)); };
  const crumbs = root ? root.split('/') : [];
  return html`<h1>Realtime Database <${LiveDot} live=${live} /></h1>
  <div class="row"><${Lens} lens=${lens} setLens=${setLens} />
    ${nsList.length > 1 ? html`<label>Namespace <select aria-label="namespace" value=${ns} onChange=${e => { setNs(e.target.value); goTo(''); }}>${nsList.map(n => html`<option>${n}</option>`)}</select></label>` : null}
    <form class="row" onSubmit=${e => { e.preventDefault(); goTo(pathInput); }}>
      <input class="mono" aria-label="database path" placeholder="/path/to/node" value=${pathInput} onInput=${e => setPathInput(e.target.value)} /><button>Go</button></form></div>
  <div class="row mono" aria-label="breadcrumbs"><button onClick=${() => goTo('')}>/</button>${crumbs.map((c, i) => html`<span>/</span><button onClick=${() => goTo(crumbs.slice(0, i + 1).join('/'))}>${c}</button>`)}</div>
  <${Err} error=${err} />
  <div class="card"><div role="tree" aria-label="database tree" class="tree" onKeyDown=${treeKeys}>
    <${Node} key=${ns + '|' + root + '|' + lens.mode + lens.uid} ctx=${ctx} path=${root} name=${root ? root.split('/').pop() : '/'} depth=${0} info=${{ node: true }} isRoot=${true} />
  </div><p class="muted">Click a value to edit it (JSON, or plain text for a string). Keys: ↑↓ move, → open, ← close, Enter edit, Delete remove.</p></div>`;
}

// treeKeys moves the focus between visible rows.
function treeKeys(e) {
  if (e.target.closest('input, textarea, select')) return;
  if (e.key !== 'ArrowDown' && e.key !== 'ArrowUp') return;
  const rows = [...e.currentTarget.querySelectorAll('[data-tree-row]')];
  const i = rows.indexOf(e.target.closest('[data-tree-row]'));
  const n = rows[i + (e.key === 'ArrowDown' ? 1 : -1)];
  if (n) { e.preventDefault(); n.focus(); }
}

function Node({ ctx, path, name, depth, info, isRoot, onGone }) {
  const expanded = ctx.open.has(path);
  const [page, setPage] = useState({ after: '', shown: STEP });
  const [kids, setKids] = useState(null); // the listing answer
  const [err, setErr] = useState(null);
  const [edit, setEdit] = useState(null); // text being edited
  const [adding, setAdding] = useState(null); // {key, value}
  const [confirm, setConfirm] = useState(false);
  const [flash, setFlash] = useState(false);
  const row = useRef(null);
  const seen = useRef(-1), version = useRef(0);
  if (ctx.changed.tick !== seen.current) { seen.current = ctx.changed.tick; if (affects(ctx.changed.paths, path)) version.current++; }
  // A root shows what the server says it is; others what the parent listed.
  const leaf = isRoot ? kids && kids.children === undefined : !info.node;
  const value = isRoot && kids ? kids.value : info.value;
  const prev = useRef(JSON.stringify(value));
  useEffect(() => {
    const now = JSON.stringify(value);
    if (now !== prev.current) { prev.current = now; setFlash(true); const t = setTimeout(() => setFlash(false), 1200); return () => clearTimeout(t); }
  }, [JSON.stringify(value)]);
  useEffect(() => {
    if (!expanded || (!isRoot && !info.node)) return;
    let stop = false;
    api(`/api/database/tree?${ctx.q(path)}&limit=${page.shown}${page.after ? '&after=' + enc(page.after) : ''}`).then(
      d => { if (stop) return; setKids(d); setErr(null); if (isRoot) ctx.onNamespaces(d); },
      e => { if (!stop) setErr(e); });
    return () => { stop = true; };
  }, [expanded, path, version.current, page.after, page.shown, info.node, info.children]);

  const write = async (p, v) => {
    ctx.setErr(null);
    try { await api(`/api/database/value?${ctx.q(p)}`, { method: 'PUT', body: v }); ctx.refresh(); return true; } catch (e) { ctx.setErr(e); return false; }
  };
  const del = async () => {
    if (!confirm) { setConfirm(true); setTimeout(() => setConfirm(false), 4000); return; }
    ctx.setErr(null);
    try { await api(`/api/database/value?${ctx.q(path)}`, { method: 'DELETE' }); setConfirm(false); ctx.refresh(); if (onGone) onGone(); } catch (e) { ctx.setErr(e); }
  };
  const saveEdit = async () => { if (await write(path, parseInput(edit))) setEdit(null); };
  const saveAdd = async () => {
    if (!adding.key) { ctx.setErr(new Error('The new child needs a key')); return; }
    if (await write(join(path, adding.key), parseInput(adding.value))) { setAdding(null); ctx.toggle(path, true); }
  };
  const keys = e => {
    if (e.target !== row.current) return;
    if (e.key === 'ArrowRight' && !leaf) { e.preventDefault(); ctx.toggle(path, true); }
    else if (e.key === 'ArrowLeft' && !leaf) { e.preventDefault(); ctx.toggle(path, false); }
    else if (e.key === 'Enter' && leaf && value !== undefined) { e.preventDefault(); setEdit(JSON.stringify(value)); }
    else if (e.key === 'Delete' && !isRoot) { e.preventDefault(); del(); }
  };
  const count = isRoot ? kids && kids.count : info.children;
  const children = (kids && kids.children) || [];
  return html`<div role="treeitem" aria-expanded=${leaf ? undefined : String(expanded)} aria-level=${depth + 1} data-path=${'/' + path}>
    <div ref=${row} class=${'trow' + (flash ? ' flash' : '')} tabindex="0" data-tree-row style=${'padding-left:' + (depth * 18 + 4) + 'px'} onKeyDown=${keys}>
      ${leaf ? html`<span class="twist"></span>` : html`<button class="twist" aria-label=${(expanded ? 'collapse ' : 'expand ') + (name || '/')} tabindex="-1" onClick=${() => ctx.toggle(path)}>${expanded ? '▾' : '▸'}</button>`}
      <span class="tkey mono">${name}</span>
      ${leaf && value !== undefined && edit === null ? html`<span class="tval mono" data-value title="click to edit" onClick=${() => setEdit(JSON.stringify(value))}>: <span class=${'t-' + typeof value}>${JSON.stringify(value)}</span></span>` : null}
      ${leaf && isRoot && kids && !kids.exists ? html`<span class="muted"> (no data here)</span>` : null}
      ${!leaf && count ? html`<span class="muted tcount">{${count}}</span>` : null}
      ${edit !== null ? html`<span class="row inline"><input class="mono" aria-label=${'value of /' + path} value=${edit} autoFocus onInput=${e => setEdit(e.target.value)}
          onKeyDown=${e => { if (e.key === 'Enter') saveEdit(); if (e.key === 'Escape') { setEdit(null); row.current && row.current.focus(); } }} />
        <button class="primary" onClick=${saveEdit}>Save</button><button onClick=${() => setEdit(null)}>Cancel</button></span>` : null}
      <span class="tact">
        <button title="add a child" aria-label=${'add child to /' + path} onClick=${() => setAdding({ key: '', value: '' })}>+</button>
        ${!isRoot ? html`<button class="danger" title="delete" aria-label=${'delete /' + path} onClick=${del}>${confirm ? 'delete?' : '✕'}</button>` : null}</span>
    </div>
    ${adding ? html`<div class="row tadd" style=${'padding-left:' + (depth * 18 + 26) + 'px'}>
      <input class="mono" aria-label="new child key" placeholder="key" value=${adding.key} autoFocus onInput=${e => setAdding({ ...adding, key: e.target.value })} />
      <input class="mono" aria-label="new child value" placeholder='value, e.g. "text", 42, {"a": 1}' value=${adding.value} onInput=${e => setAdding({ ...adding, value: e.target.value })} onKeyDown=${e => e.key === 'Enter' && saveAdd()} />
      <button class="primary" onClick=${saveAdd}>Add</button><button onClick=${() => setAdding(null)}>Cancel</button></div>` : null}
    ${err ? html`<div style=${'padding-left:' + (depth * 18 + 26) + 'px'}><${Err} error=${withReason(err)} /></div>` : null}
    ${expanded && !leaf && kids ? html`<div role="group">
      ${page.after ? html`<div class="row" style=${'padding-left:' + (depth * 18 + 26) + 'px'}><button onClick=${() => setPage({ after: '', shown: STEP })}>← first children</button><span class="muted mono">after ${page.after}</span></div>` : null}
      ${children.map(c => html`<${Node} key=${c.key} ctx=${ctx} path=${join(path, c.key)} name=${c.key} depth=${depth + 1} info=${c} />`)}
      ${kids.more ? html`<div class="row" style=${'padding-left:' + (depth * 18 + 26) + 'px'}>
        ${page.shown < MAX ? html`<button onClick=${() => setPage({ ...page, shown: Math.min(MAX, page.shown + STEP) })}>Show ${STEP} more</button>` : html`<button onClick=${() => setPage({ after: children[children.length - 1].key, shown: STEP })}>Next children →</button>`}
        <span class="muted">${children.length} of ${kids.count} shown</span></div>` : null}
    </div>` : null}
  </div>`;
}
