// The Storage page: buckets, a folder at a time (prefixes first, then
// objects with size, type and update time, in a virtual list), upload by
// picker or drop, new folders (pending until something is uploaded into
// them), and an inspector with a preview of images and text, download,
// metadata and custom metadata editing, and delete.
import { useState, useEffect } from 'preact/hooks';
import { html, api, Err, Lens, lensQuery } from './kit.js';
import { useVirtual, usePaged, useLive, LiveDot, fmtBytes } from './lib.js';

const enc = encodeURIComponent;
const TOKEN_KEY = 'firebaseStorageDownloadTokens';
const PREVIEW_BYTES = 64 << 10;

const isText = t => /^text\/|[/+](json|xml|javascript|csv|yaml)\b/.test(t || '');

export function Storage() {
  const [lens, setLens] = useState({ mode: 'admin', uid: '', claims: '' });
  const [bk, setBk] = useState({ buckets: [], bucket: '' });
  const [prefix, setPrefix] = useState('');
  const [pending, setPending] = useState([]); // new folders with nothing in them yet
  const [sel, setSel] = useState(null);
  const [tick, setTick] = useState(0);
  const [err, setErr] = useState(null);
  const [drag, setDrag] = useState(false);
  const [busy, setBusy] = useState('');
  useEffect(() => { api('/api/storage/buckets').then(d => setBk({ buckets: d.buckets, bucket: d.default }), setErr); }, []);
  // Only changes under the folder shown read it again.
  const live = useLive('service=storage&kind=mutation&studio=true', evs => { if (evs.some(e => !e.path || e.path.startsWith(prefix))) setTick(t => t + 1); });
  const lq = lensQuery(lens);
  const [list, more] = usePaged(bk.bucket ? `/api/storage/objects?bucket=${enc(bk.bucket)}&prefix=${enc(prefix)}&limit=500${lq}` : null, 'items', [tick], 'prefixes');
  const folders = [...new Set([...list.extra, ...pending.filter(p => p.startsWith(prefix) && p !== prefix && !p.slice(prefix.length, -1).includes('/'))])].sort();
  const rows = folders.map(p => ({ folder: p })).concat(list.items.filter(o => o.name !== prefix).map(o => ({ obj: o })));
  const v = useVirtual(rows.length, 30, { onEnd: more });
  const open = p => { setPrefix(p); setSel(null); };
  const crumbs = prefix ? prefix.slice(0, -1).split('/') : [];
  const upload = async files => {
    setErr(null);
    for (const f of files) {
      setBusy('Uploading ' + f.name + '…');
      try {
        const r = await fetch(`/api/storage/object?bucket=${enc(bk.bucket)}&name=${enc(prefix + f.name)}${lq}`, { method: 'POST', body: f, headers: { 'Content-Type': f.type || 'application/octet-stream' } });
        const d = await r.json();
        if (!r.ok) { const e = new Error(d.error || r.statusText); e.data = d; throw e; }
        setSel(d.name);
      } catch (e) { setErr(e); break; }
    }
    setBusy('');
    setPending(p => p.filter(x => !(prefix + 'x').startsWith(x)));
    setTick(t => t + 1);
  };
  const [folderName, setFolderName] = useState(null);
  const newFolder = () => {
    const n = (folderName || '').replace(/^\/+|\/+$/g, '');
    if (n) setPending(p => p.concat(prefix + n + '/'));
    setFolderName(null);
  };
  return html`<h1>Storage <${LiveDot} live=${live} /></h1>
  <div class="row"><${Lens} lens=${lens} setLens=${setLens} />
    <label>Bucket <select aria-label="bucket" value=${bk.bucket} onChange=${e => { setBk({ ...bk, bucket: e.target.value }); open(''); }}>${bk.buckets.map(b => html`<option>${b}</option>`)}</select></label></div>
  <div class="row mono" aria-label="breadcrumbs"><button onClick=${() => open('')}>${bk.bucket || '…'}</button>${crumbs.map((c, i) => html`<span>/</span><button onClick=${() => open(crumbs.slice(0, i + 1).join('/') + '/')}>${c}</button>`)}<span>/</span></div>
  <${Err} error=${err} />
  <div class="grid cols2">
    <div class=${'card dropzone' + (drag ? ' over' : '')} onDragOver=${e => { e.preventDefault(); setDrag(true); }} onDragLeave=${() => setDrag(false)}
      onDrop=${e => { e.preventDefault(); setDrag(false); upload([...e.dataTransfer.files]); }}>
      <div class="row"><label class="btn">Upload files<input type="file" multiple aria-label="upload files" style="display:none" onChange=${e => { upload([...e.target.files]); e.target.value = ''; }} /></label>
        ${folderName === null ? html`<button onClick=${() => setFolderName('')}>New folder</button>`
          : html`<input aria-label="new folder name" placeholder="folder name" value=${folderName} autoFocus onInput=${e => setFolderName(e.target.value)} onKeyDown=${e => { if (e.key === 'Enter') newFolder(); if (e.key === 'Escape') setFolderName(null); }} /><button onClick=${newFolder}>Create</button>`}<span class="muted">${busy || 'or drop files here'}</span></div>
      <${Err} error=${list.error} />
      <div class="vscroll" ref=${v.ref} onScroll=${v.onScroll} onKeyDown=${v.onKeyDown}>
      <table aria-label="objects" class="vtable"><thead><tr><th style="width:42%">name</th><th style="width:14%">size</th><th style="width:18%">type</th><th>updated</th></tr></thead><tbody>
        <tr class="vpad"><td colspan="4" style=${'height:' + v.padTop + 'px'}></td></tr>
        ${rows.slice(v.start, v.end).map((r, j) => {
          const i = v.start + j;
          if (r.folder) { const n = r.folder.slice(prefix.length); return html`<tr class="click vrow" tabindex="0" data-vi=${i} data-folder=${r.folder} onClick=${() => open(r.folder)} onKeyDown=${e => e.key === 'Enter' && open(r.folder)}><td class="mono">📁 ${n}</td><td></td><td class="muted">folder</td><td></td></tr>`; }
          const o = r.obj;
          return html`<tr class=${'click vrow' + (sel === o.name ? ' sel' : '')} tabindex="0" data-vi=${i} data-object=${o.name} onClick=${() => setSel(o.name)} onKeyDown=${e => e.key === 'Enter' && setSel(o.name)}>
            <td class="mono">${o.name.slice(prefix.length)}</td><td>${fmtBytes(o.size)}</td><td class="muted">${o.contentType || ''}</td><td class="muted" title=${o.updated}>${new Date(o.updated).toLocaleString([], { dateStyle: 'short', timeStyle: 'short' })}</td></tr>`;
        })}
        <tr class="vpad"><td colspan="4" style=${'height:' + v.padBottom + 'px'}></td></tr></tbody></table></div>
      <p class="muted">${folders.length} folders · ${list.items.length}${list.done ? '' : '+'} objects${list.loading ? ' · loading…' : ''}</p>
    </div>
    <div>${sel ? html`<${Inspector} key=${sel} tick=${tick} bucket=${bk.bucket} name=${sel} lq=${lq} onChanged=${() => setTick(t => t + 1)} onGone=${() => { setSel(null); setTick(t => t + 1); }} />` : html`<div class="card muted">Select an object to see its preview and metadata.</div>`}</div>
  </div>`;
}

function Inspector({ bucket, name, lq, tick, onChanged, onGone }) {
  const ref = `bucket=${enc(bucket)}&name=${enc(name)}${lq}`;
  const [o, setO] = useState(null);
  const [err, setErr] = useState(null);
  const [text, setText] = useState(null);
  const [form, setForm] = useState(null);
  const [confirm, setConfirm] = useState(false);
  const [saved, setSaved] = useState(false);
  useEffect(() => {
    api('/api/storage/object?' + ref).then(d => {
      setO(d);
      const custom = Object.entries(d.metadata || {}).filter(([k]) => k !== TOKEN_KEY);
      setForm({ contentType: d.contentType || '', cacheControl: d.cacheControl || '', contentDisposition: d.contentDisposition || '', custom: custom.map(([k, v]) => ({ k, v, was: k })) });
      if (isText(d.contentType)) {
        fetch('/api/storage/media?' + ref + '&limit=' + PREVIEW_BYTES).then(r => r.text()).then(t => setText(t.slice(0, PREVIEW_BYTES)));
      }
    }, setErr);
  }, [ref, tick]);
  if (err && !o) return html`<div class="card"><${Err} error=${err} /></div>`;
  if (!o || !form) return html`<div class="card muted">Loading…</div>`;
  const save = async () => {
    setErr(null); setSaved(false);
    const metadata = {};
    for (const c of form.custom) { if (c.was && c.was !== c.k) metadata[c.was] = null; if (c.k) metadata[c.k] = c.del ? null : c.v; }
    try {
      await api('/api/storage/object?' + ref, { method: 'PATCH', body: { contentType: form.contentType, cacheControl: form.cacheControl, contentDisposition: form.contentDisposition, metadata } });
      setSaved(true); onChanged();
    } catch (e) { setErr(e); }
  };
  const del = async () => {
    if (!confirm) { setConfirm(true); setTimeout(() => setConfirm(false), 4000); return; }
    try { await api('/api/storage/object?' + ref, { method: 'DELETE' }); onGone(); } catch (e) { setErr(e); }
  };
  const setC = (i, patch) => setForm({ ...form, custom: form.custom.map((c, j) => (j === i ? { ...c, ...patch } : c)) });
  const media = '/api/storage/media?' + ref;
  return html`<div class="card" data-inspecting=${name}><h2 class="mono">${name}</h2>
    <div class="preview" aria-label="preview">${/^image\//.test(o.contentType || '') ? html`<img alt=${'preview of ' + name} src=${media} />`
      : isText(o.contentType) ? html`<pre data-preview>${text === null ? 'Loading…' : text}${o.size > PREVIEW_BYTES ? '\n…' : ''}</pre>`
      : html`<p class="muted">No preview for ${o.contentType || 'this type'}.</p>`}</div>
    <div class="row"><a class="btn" href=${media + '&download=1'} download=${name.split('/').pop()}>Download</a>
      <button class="danger" onClick=${del}>${confirm ? 'Really delete?' : 'Delete'}</button></div>
    <table aria-label="object metadata"><tbody>
      <tr><th>size</th><td>${fmtBytes(o.size)} <span class="muted">(${o.size} bytes)</span></td></tr>
      <tr><th>updated</th><td>${new Date(o.updated).toLocaleString()}</td></tr>
      <tr><th>created</th><td>${new Date(o.timeCreated).toLocaleString()}</td></tr>
      <tr><th>generation</th><td class="mono">${o.generation} · metageneration ${o.metageneration}</td></tr>
      <tr><th>md5</th><td class="mono">${o.md5Hash}</td></tr>
      <tr><th>download tokens</th><td class="mono">${((o.metadata || {})[TOKEN_KEY] || '').split(',').filter(Boolean).length}</td></tr></tbody></table>
    <h2>Metadata</h2>
    <div class="form">
      <label>Content type <input aria-label="content type" value=${form.contentType} onInput=${e => setForm({ ...form, contentType: e.target.value })} /></label>
      <label>Cache control <input aria-label="cache control" value=${form.cacheControl} onInput=${e => setForm({ ...form, cacheControl: e.target.value })} /></label>
      <label>Content disposition <input aria-label="content disposition" value=${form.contentDisposition} onInput=${e => setForm({ ...form, contentDisposition: e.target.value })} /></label></div>
    <h2>Custom metadata</h2>
    <table aria-label="custom metadata"><tbody>${form.custom.map((c, i) => html`<tr class=${c.del ? 'muted struck' : ''}>
      <td><input aria-label=${'custom key ' + i} value=${c.k} onInput=${e => setC(i, { k: e.target.value })} /></td>
      <td><input aria-label=${'custom value ' + i} value=${c.v} onInput=${e => setC(i, { v: e.target.value })} /></td>
      <td><button aria-label=${'remove custom key ' + i} onClick=${() => setC(i, { del: !c.del })}>${c.del ? 'keep' : '✕'}</button></td></tr>`)}</tbody></table>
    <div class="row"><button onClick=${() => setForm({ ...form, custom: form.custom.concat([{ k: '', v: '' }]) })}>Add a key</button>
      <button class="primary" onClick=${save}>Save metadata</button>${saved ? html`<span class="ok">Saved</span>` : null}</div>
    <${Err} error=${err} /></div>`;
}
