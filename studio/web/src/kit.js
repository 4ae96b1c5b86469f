// The Studio's kit: what every page shares — the JSON API (api, useApi),
// in-app links (go, Link), the route table the Go side sends (useRoutes,
// labelOf, pathOf), small widgets (Verdict, Err, Explanation, Lens,
// Source, Editor) and value formatting. It imports no page, so pages,
// lib.js's hooks and the shell (main.js) all import it without a circle.
import { h, createContext } from 'preact';
import { useState, useEffect, useRef, useCallback, useContext } from 'preact/hooks';
import htm from 'htm';
import { EditorState } from '@codemirror/state';
import { EditorView, keymap, lineNumbers, highlightActiveLine } from '@codemirror/view';
import { defaultKeymap, history as cmHistory, historyKeymap } from '@codemirror/commands';

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
export function usePath() {
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

// Routes is the route table of /api/services ({path, label, service,
// page, key} rows, built in Go from the running services' Studio pages);
// the shell provides it to every page.
export const Routes = createContext([]);
export const useRoutes = () => useContext(Routes);
// labelOf is a service's name as its page's route says it (the service's
// key when it has no page).
export const labelOf = (routes, svc) => (routes.find(r => r.service === svc) || {}).label || svc;
// pathOf is the route of a service's page, or undefined.
export const pathOf = (routes, svc) => (routes.find(r => r.service === svc) || {}).path;

// RuleServices are the served services whose requests Security Rules
// decide (the Go side's LiveRules services, from /api/services' rules
// statuses): the Rules page's tabs, and the requests the inspector can
// re-run. The shell provides them to every page.
export const RuleServices = createContext([]);
export const useRuleServices = () => useContext(RuleServices);

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

// Explanation shows the lines package explain rendered in Go for a
// decision (the same lines the client's error and the log print).
export const Explanation = ({ lines, ...rest }) => (lines || []).map(l => html`<div class="step fail" ...${rest}>${l}</div>`);

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
export function Source({ text, mark, cov, lint }) {
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

// Lens picks who the page's reads and writes run as: admin, a user
// with claims, or unauthenticated (lensQuery makes its query).
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

