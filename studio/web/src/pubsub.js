// The Pub/Sub page: every topic with its subscriptions — backlog
// (unacknowledged messages), how many are leased, the oldest one's age —
// publishing a message to a topic, and a subscription's messages peeked
// without leasing or acking them (the app still receives every one).
// Live over the event stream.
import { useState, useEffect } from 'preact/hooks';
import { html, api, Err, fmtTime } from './kit.js';
import { useLive, LiveDot } from './lib.js';

const short = n => (n || '').replace(/^projects\/[^/]+\/(topics|subscriptions)\//, '');
const age = s => s === undefined ? '' : s < 60 ? s.toFixed(1) + ' s' : s < 3600 ? (s / 60).toFixed(1) + ' min' : (s / 3600).toFixed(1) + ' h';

export function PubSub() {
  const [tick, setTick] = useState(0);
  const [st, setSt] = useState(null);
  const [err, setErr] = useState(null);
  const [sel, setSel] = useState(null);
  const live = useLive('service=pubsub&studio=true', () => setTick(t => t + 1));
  useEffect(() => { api('/api/pubsub').then(d => { setSt(d); setErr(null); }, setErr); }, [tick]);
  // The oldest message's age grows without events: reload every 5 s.
  useEffect(() => { const t = setInterval(() => setTick(n => n + 1), 5000); return () => clearInterval(t); }, []);
  if (!st) return html`<h1>Pub/Sub</h1>${err ? html`<${Err} error=${err} />` : html`<p class="muted">Loading…</p>`}`;
  const subs = st.topics.flatMap(t => t.subscriptions);
  return html`<h1>Pub/Sub <${LiveDot} live=${live} /> <span class="muted mono" style="font-size:13px">${st.project}</span></h1>
  <${Err} error=${err} />
  <div class="card"><h2>Topics and subscriptions <span class="muted">(${st.topics.length} topics, ${subs.length} subscriptions)</span></h2>
    ${st.topics.length ? html`<table aria-label="topics"><thead><tr><th>topic</th><th>subscription</th><th>type</th><th>backlog</th><th>leased</th><th>oldest unacked</th></tr></thead><tbody>
      ${st.topics.map(t => t.subscriptions.length ? t.subscriptions.map((s, i) => html`<tr class=${'click' + (sel === s.subscription.name ? ' sel' : '')} tabindex="0" data-subscription=${s.subscription.name}
          onClick=${() => setSel(s.subscription.name)} onKeyDown=${e => e.key === 'Enter' && setSel(s.subscription.name)}>
        <td class="mono" data-topic=${t.topic.name}>${i === 0 ? (t.topic.name ? short(t.topic.name) : html`<i class="muted">deleted topic</i>`) : ''}</td><td class="mono">${short(s.subscription.name)}</td>
        <td>${s.subscription.push ? 'push' : 'pull'}${s.subscription.filter ? html` <span class="muted mono">${s.subscription.filter}</span>` : null}</td>
        <td data-backlog>${s.stats.backlog}</td><td>${s.stats.outstanding}</td><td data-oldest>${age(s.oldestUnackedAgeSeconds)}</td></tr>`)
        : html`<tr><td class="mono" data-topic=${t.topic.name}>${short(t.topic.name)}</td><td class="muted" colspan="5">no subscription</td></tr>`)}</tbody></table>`
      : html`<p class="muted">No topics yet: an app creates them with the Pub/Sub client (PUBSUB_EMULATOR_HOST).</p>`}</div>
  <div class="grid cols2">
    <${Publish} topics=${st.topics.filter(t => t.topic.name).map(t => t.topic.name)} onDone=${() => setTick(t => t + 1)} />
    <div>${sel ? html`<${Peek} key=${sel} sub=${sel} tick=${tick} />` : html`<div class="card muted">Select a subscription to peek at its messages.</div>`}</div>
  </div>`;
}

// Publish sends one message to a topic: data as text, attributes as a
// JSON object of strings, an optional ordering key.
function Publish({ topics, onDone }) {
  const [f, setF] = useState({ topic: '', data: '', attributes: '', orderingKey: '' });
  const [err, setErr] = useState(null);
  const [sent, setSent] = useState(null);
  const topic = f.topic || topics[0] || '';
  const send = async () => {
    setErr(null); setSent(null);
    const body = { topic, data: f.data, orderingKey: f.orderingKey || undefined };
    if (f.attributes.trim()) { try { body.attributes = JSON.parse(f.attributes); } catch (e) { setErr(new Error('Attributes are not valid JSON: ' + e.message)); return; } }
    try { const r = await api('/api/pubsub/publish', { method: 'POST', body }); setSent(r.messageIds[0]); onDone(); } catch (e) { setErr(e); }
  };
  return html`<div class="card"><h2>Publish a message</h2>
    <div class="row"><select aria-label="publish topic" value=${topic} onChange=${e => setF({ ...f, topic: e.target.value })}>${topics.map(t => html`<option value=${t}>${short(t)}</option>`)}</select>
      <input aria-label="ordering key" placeholder="ordering key (optional)" value=${f.orderingKey} onInput=${e => setF({ ...f, orderingKey: e.target.value })} /></div>
    <textarea aria-label="message data" placeholder="data" value=${f.data} onInput=${e => setF({ ...f, data: e.target.value })}></textarea>
    <input aria-label="attributes" placeholder='attributes {"kind":"test"}' value=${f.attributes} onInput=${e => setF({ ...f, attributes: e.target.value })} />
    <div class="row"><button class="primary" disabled=${!topic} onClick=${send}>Publish</button>${sent ? html`<span class="ok" data-published=${sent}>Published message ${sent}</span>` : null}</div>
    <${Err} error=${err} /></div>`;
}

// Peek lists a subscription's unacknowledged messages, oldest first,
// without leasing them, again at each tick of the page.
function Peek({ sub, tick }) {
  const [st, setSt] = useState(null);
  const [err, setErr] = useState(null);
  useEffect(() => { api('/api/pubsub/messages?max=100&subscription=' + encodeURIComponent(sub)).then(d => { setSt(d); setErr(null); }, setErr); }, [sub, tick]);
  return html`<div class="card" data-peek=${sub}><h2>Messages of <span class="mono">${short(sub)}</span> <span class="muted">(peeked: not leased, not acked)</span></h2>
    <${Err} error=${err} />
    ${!st ? (err ? null : html`<p class="muted">Loading…</p>`) : st.messages.length ? html`<table aria-label="messages"><thead><tr><th>id</th><th>published</th><th>data</th><th>attributes</th><th>key</th></tr></thead><tbody>
      ${st.messages.map(m => html`<tr data-message=${m.id}><td class="mono">${m.id}</td><td>${fmtTime(m.publishTime)}</td>
        <td class="mono">${m.text !== undefined ? m.text : html`<span class="muted">${m.size} bytes (base64 ${m.dataBase64.slice(0, 40)}${m.dataBase64.length > 40 ? '…' : ''})</span>`}</td>
        <td class="mono">${Object.entries(m.attributes || {}).map(([k, v]) => html`<div>${k}=${v}</div>`)}</td><td class="mono">${m.orderingKey || ''}</td></tr>`)}</tbody></table>
      ${st.messages.length < st.stats.backlog ? html`<p class="muted">The first ${st.messages.length} of ${st.stats.backlog}.</p>` : null}`
      : html`<p class="muted">No unacknowledged message.</p>`}</div>`;
}
