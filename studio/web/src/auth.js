// The Auth page: the users (a virtual list paged as it scrolls), adding
// one, editing a user's name, custom claims and disabled state, and the
// email/OOB outbox.
import { useState } from 'preact/hooks';
import { html, api, useApi, Err } from './kit.js';
import { useVirtual, usePaged } from './lib.js';

export function Auth() {
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
