// The Pyric Studio's shell: Preact + htm pages over the Studio's JSON and
// event API. The pages come from the route table /api/services sends
// ({path, label, service, page, key}, built in Go from Home, the running
// services' Studio pages, Traffic, Rules and Conformance): the shell draws the
// navigation and the keyboard shortcuts from it and opens the view each
// route's page names (views below; a route without one gets the service's
// generic state page). Each page lives in its own module and imports the
// shared kit (kit.js) and hooks (lib.js), never this file.
import { render } from 'preact';
import { useState, useEffect, useErrorBoundary } from 'preact/hooks';
import { html, useApi, usePath, go, Link, Routes, RuleServices, Err } from './kit.js';
import { Home } from './home.js';
import { Firestore } from './firestore.js';
import { Auth } from './auth.js';
import { Database } from './database.js';
import { Storage } from './storage.js';
import { Messaging } from './messaging.js';
import { AI } from './ai.js';
import { Functions } from './functions.js';
import { Hosting } from './hosting.js';
import { PubSub } from './pubsub.js';
import { Traffic } from './traffic.js';
import { Rules } from './rules.js';
import { State } from './state.js';
import { Conformance } from './conformance.js';

// views are the pages this UI can draw, by the name a route's page says.
const views = { home: Home, firestore: Firestore, auth: Auth, database: Database, storage: Storage, messaging: Messaging, ai: AI, functions: Functions, hosting: Hosting, pubsub: PubSub, traffic: Traffic, rules: Rules, conformance: Conformance };

// ---- theme ----
function ThemeToggle() {
  const [t, set] = useState(localStorage.getItem('pyric-theme') || '');
  useEffect(() => { if (t) document.documentElement.dataset.theme = t; else delete document.documentElement.dataset.theme; localStorage.setItem('pyric-theme', t); }, [t]);
  const next = t === '' ? 'dark' : t === 'dark' ? 'light' : '';
  return html`<button title="Theme: ${t || 'system'}" aria-label="Switch theme" onClick=${() => set(next)}>${t === 'dark' ? '☾' : t === 'light' ? '☀' : '◐'} ${t || 'system'}</button>`;
}

// Boundary shows a page that failed to render as an error, instead of a
// page that silently stops updating.
function Boundary({ children }) {
  const [error, reset] = useErrorBoundary(e => console.error('pyric studio: a page failed to render:', e));
  if (error) return html`<div class="card error" role="alert" data-page-error>This page failed to render: ${String((error && error.message) || error)}
    <div class="row"><button onClick=${reset}>Try again</button></div></div>`;
  return children;
}

// match finds the route of a path: the route itself, else the longest
// route it is below (sub is the rest: /traffic/evt-12 → traffic,
// "evt-12").
function match(routes, path) {
  let best = null;
  for (const r of routes) {
    if (r.path === path) return { r, sub: '' };
    if (r.path !== '/' && path.startsWith(r.path + '/') && (!best || r.path.length > best.r.path.length)) best = { r, sub: path.slice(r.path.length + 1) };
  }
  return best;
}

function App() {
  const path = usePath();
  const [svc] = useApi('/api/services');
  const routes = (svc.data && svc.data.routes) || [];
  const ruleSvcs = ((svc.data && svc.data.rules) || []).filter(r => r.state !== 'not served').map(r => r.service);
  useEffect(() => {
    let g = false;
    const on = e => {
      if (e.target.closest && e.target.closest('input, textarea, select, .cm-editor')) return;
      if (e.key === 'g') { g = true; setTimeout(() => { g = false; }, 800); return; }
      if (g) { const r = routes.find(r => r.key && r.key === e.key); if (r) go(r.path); g = false; }
    };
    addEventListener('keydown', on); return () => removeEventListener('keydown', on);
  }, [routes]);
  let page;
  const m = match(routes, path);
  if (svc.error) page = html`<${Err} error=${svc.error} />`;
  else if (!svc.data) page = html`<p class="muted">Loading…</p>`;
  else if (!m) page = html`<h1>Not found</h1><p><${Link} to="/">Home</${Link}></p>`;
  else if (views[m.r.page]) { const V = views[m.r.page]; page = html`<${V} sub=${m.sub} service=${m.r.service} />`; }
  else page = html`<${State} service=${m.r.service} />`;
  const keys = routes.filter(r => r.key);
  return html`<${Routes.Provider} value=${routes}><${RuleServices.Provider} value=${ruleSvcs}><header><span class="brand"><span style="color:var(--accent)">◆</span> Pyric Studio</span>
    <nav aria-label="pages">${routes.map(r => html`<${Link} to=${r.path} aria-current=${m && m.r === r ? 'page' : undefined} data-route=${r.path}>${r.label}</${Link}>`)}</nav><span class="spacer"></span>
    <span class="muted keys" title=${'keyboard: g then ' + keys.map(r => `${r.key} (${r.label})`).join(', ')}>⌨ g ${keys.map(r => r.key).join('·')}</span><${ThemeToggle} /></header>
  <main><${Boundary} key=${path}>${page}</${Boundary}></main></${RuleServices.Provider}></${Routes.Provider}>`;
}

render(html`<${App} />`, document.getElementById('app'));
