// The Messaging page: the token registry (mint, delete, each token's
// topics), topics and their subscribers (subscribe, unsubscribe), every
// accepted message and where it went, one token's inbox (what its app
// received), and a test send validated exactly as messages:send — live
// over the event stream.
import { useState, useEffect } from 'preact/hooks';
import { html, api, Err, fmtTime } from './kit.js';
import { useLive, LiveDot } from './lib.js';

const short = t => (t && t.length > 28 ? t.slice(0, 14) + '…' + t.slice(-10) : t);
const targetOf = m => (m.token ? 'token ' + short(m.token) : m.topic ? 'topic ' + m.topic : m.condition ? 'condition ' + m.condition : '');

export function Messaging() {
  const [tick, setTick] = useState(0);
  const [st, setSt] = useState(null);
  const [err, setErr] = useState(null);
  const [sel, setSel] = useState(null);
  const [platform, setPlatform] = useState('web');
  const [sub, setSub] = useState({ topic: '', token: '' });
  const live = useLive('service=messaging&studio=true', () => setTick(t => t + 1));
  useEffect(() => { api('/api/messaging').then(d => { setSt(d); setErr(null); }, setErr); }, [tick]);
  const act = async (path, opts) => { setErr(null); try { const d = await api(path, opts); setTick(t => t + 1); return d; } catch (e) { setErr(e); return null; } };
  if (!st) return html`<h1>Cloud Messaging</h1>${err ? html`<${Err} error=${err} />` : html`<p class="muted">Loading…</p>`}`;
  const live_ = st.tokens.filter(t => !t.deleted);
  const subscribe = async unsubscribe => {
    const token = sub.token || (live_[0] && live_[0].token);
    if (!sub.topic || !token) { setErr(new Error('Pick a topic name and a token')); return; }
    const d = await act('/api/messaging/topics', { method: 'POST', body: { topic: sub.topic, tokens: [token], unsubscribe } });
    if (d && d.results[0].error) setErr(new Error(`${unsubscribe ? 'Unsubscribe' : 'Subscribe'}: ${d.results[0].error}`));
  };
  return html`<h1>Cloud Messaging <${LiveDot} live=${live} /> <span class="muted mono" style="font-size:13px">${st.project}</span></h1>
  <${Err} error=${err} />
  <div class="grid cols2">
    <div class="card"><h2>Registration tokens <span class="muted">(${st.tokenCount})</span></h2>
      <div class="row"><select aria-label="platform" value=${platform} onChange=${e => setPlatform(e.target.value)}>${['web', 'android', 'ios'].map(p => html`<option>${p}</option>`)}</select>
        <button class="primary" onClick=${async () => { const t = await act('/api/messaging/tokens', { method: 'POST', body: { platform } }); if (t) setSel(t.token); }}>Mint a token</button></div>
      ${st.tokens.length ? html`<table aria-label="tokens"><thead><tr><th>token</th><th>platform</th><th>topics</th><th>created</th><th></th></tr></thead><tbody>
        ${st.tokens.map(t => html`<tr class=${'click' + (sel === t.token ? ' sel' : '') + (t.deleted ? ' muted' : '')} tabindex="0" data-token=${t.token} onClick=${() => setSel(t.token)} onKeyDown=${e => e.key === 'Enter' && setSel(t.token)}>
          <td class="mono" title=${t.token}>${short(t.token)}</td><td>${t.platform}</td><td>${(t.topics || []).join(', ')}</td><td>${fmtTime(t.createdAt)}</td>
          <td>${t.deleted ? html`<span class="v-deny">deleted</span>` : html`<button class="danger" aria-label="delete token" onClick=${e => { e.stopPropagation(); act('/api/messaging/tokens/' + encodeURIComponent(t.token), { method: 'DELETE' }); }}>Delete</button>`}</td></tr>`)}</tbody></table>`
        : html`<p class="muted">No tokens yet. Mint one here, or call getToken through the browser shim / POST /emulator/v1/projects/${st.project}/tokens.</p>`}
    </div>
    <div class="card"><h2>Topics</h2>
      ${st.topics.length ? html`<table aria-label="topics"><thead><tr><th>topic</th><th>subscribers</th></tr></thead><tbody>${st.topics.map(t => html`<tr data-topic=${t.topic}><td class="mono">${t.topic}</td><td>${t.count} <span class="muted mono">${t.tokens.map(short).join(', ')}${t.count > t.tokens.length ? ', …' : ''}</span></td></tr>`)}</tbody></table>` : html`<p class="muted">No topic has subscribers.</p>`}
      <div class="row"><input aria-label="topic name" placeholder="topic" value=${sub.topic} onInput=${e => setSub({ ...sub, topic: e.target.value })} />
        <select aria-label="topic token" value=${sub.token || (live_[0] && live_[0].token) || ''} onChange=${e => setSub({ ...sub, token: e.target.value })}>${live_.map(t => html`<option value=${t.token}>${short(t.token)}</option>`)}</select>
        <button onClick=${() => subscribe(false)}>Subscribe</button><button onClick=${() => subscribe(true)}>Unsubscribe</button></div>
    </div>
  </div>
  <${Send} tokens=${live_} topics=${st.topics} sel=${sel} onSent=${() => setTick(t => t + 1)} />
  <div class="grid cols2">
    <div class="card"><h2>Messages <span class="muted">(${st.messageCount})</span></h2>
      ${st.messages.length ? html`<table aria-label="messages"><thead><tr><th>sent</th><th>target</th><th>notification</th><th>delivered to</th></tr></thead><tbody>
        ${st.messages.slice().reverse().map(m => html`<tr data-message=${m.id}><td>${fmtTime(m.sentAt)}</td><td class="mono">${targetOf(m.message)}</td>
          <td>${m.message.notification ? html`<b>${m.message.notification.title || ''}</b> ${m.message.notification.body || ''}` : html`<span class="muted">data only</span>`}</td><td>${m.tokens.length} token${m.tokens.length === 1 ? '' : 's'}</td></tr>`)}</tbody></table>
        <button class="danger" onClick=${() => act('/api/messaging/messages', { method: 'DELETE' })}>Clear messages and inboxes</button>` : html`<p class="muted">No messages sent.</p>`}
    </div>
    <div>${sel ? html`<${Inbox} key=${sel + tick} token=${sel} />` : html`<div class="card muted">Select a token to see its inbox.</div>`}</div>
  </div>`;
}

function Inbox({ token }) {
  const [d, setD] = useState(null);
  const [err, setErr] = useState(null);
  useEffect(() => { api('/api/messaging/tokens/' + encodeURIComponent(token) + '/inbox').then(setD, setErr); }, [token]);
  return html`<div class="card" data-inbox=${token}><h2>Inbox of <span class="mono" title=${token}>${short(token)}</span></h2><${Err} error=${err} />
    ${d && !d.deliveries.length ? html`<p class="muted">Nothing delivered to this token.</p>` : null}
    ${d ? d.deliveries.slice().reverse().map(x => html`<div class="delivery" data-delivery=${x.name}>
      <div class="row"><b>${(x.payload.notification && x.payload.notification.title) || html`<span class="muted">(no title)</span>`}</b><span>${x.payload.notification && x.payload.notification.body}</span>
        <span class="muted">${fmtTime(x.sentAt)} · via ${Object.entries(x.via || {}).map(([k, v]) => k + ' ' + (k === 'token' ? short(String(v)) : v)).join(', ')}</span></div>
      ${x.payload.data ? html`<pre>${JSON.stringify(x.payload.data, null, 2)}</pre>` : null}</div>`) : null}</div>`;
}

function Send({ tokens, topics, sel, onSent }) {
  const [f, setF] = useState({ kind: 'token', target: '', title: 'Hello', body: 'A test message from the Studio', data: '', validateOnly: false });
  const [res, setRes] = useState(null);
  const [err, setErr] = useState(null);
  const target = f.target || (f.kind === 'token' ? sel || (tokens[0] && tokens[0].token) || '' : f.kind === 'topic' ? (topics[0] && topics[0].topic) || '' : '');
  const send = async () => {
    setErr(null); setRes(null);
    const message = { [f.kind]: target };
    if (f.title || f.body) message.notification = { title: f.title || undefined, body: f.body || undefined };
    if (f.data.trim()) { try { message.data = JSON.parse(f.data); } catch (e) { setErr(new Error('Data is not valid JSON: ' + e.message)); return; } }
    try { setRes(await api('/api/messaging/send', { method: 'POST', body: { message, validateOnly: f.validateOnly } })); onSent(); } catch (e) { setErr(e); }
  };
  const viol = err && err.data && err.data.details && err.data.details.fieldViolations;
  return html`<div class="card"><h2>Send a test message</h2>
    <div class="row"><select aria-label="target kind" value=${f.kind} onChange=${e => setF({ ...f, kind: e.target.value, target: '' })}><option>token</option><option>topic</option><option>condition</option></select>
      <input class="mono" aria-label="target" style="min-width:280px" placeholder=${f.kind === 'condition' ? "'news' in topics && 'sports' in topics" : f.kind} value=${target} onInput=${e => setF({ ...f, target: e.target.value })} />
      <input aria-label="title" placeholder="title" value=${f.title} onInput=${e => setF({ ...f, title: e.target.value })} />
      <input aria-label="body" placeholder="body" value=${f.body} onInput=${e => setF({ ...f, body: e.target.value })} />
      <input class="mono" aria-label="data" placeholder='data {"k": "v"}' value=${f.data} onInput=${e => setF({ ...f, data: e.target.value })} />
      <label><input type="checkbox" checked=${f.validateOnly} onChange=${e => setF({ ...f, validateOnly: e.target.checked })} /> validate only</label>
      <button class="primary" onClick=${send}>Send</button></div>
    ${res ? html`<p class="ok" data-sent>Accepted: <span class="mono">${res.name}</span></p>` : null}
    ${err ? html`<div class="error" role="alert" data-send-error>${err.data && err.data.code ? html`<b>${err.data.code}</b> ` : null}${err.message}
      ${viol ? viol.map(v => html`<div class="mono">${v.field}: ${v.description}</div>`) : null}</div>` : null}</div>`;
}
