// browser.cjs runs the browser build of firebase@12.19.0's Realtime
// Database in headless Chromium (playwright-core, the Debian chromium
// package) against DB=host:port over the browser's own WebSocket. Each
// step prints one JSON line {"step", "ok", "got"|"error"}; the Go test
// checks them.
//
// Env: DB (host:port), NS, CHROMIUM (default /usr/bin/chromium),
// LONG_POLLING=1 to force the /.lp transport, DEBUG=1 for SDK debug logs.
'use strict';
const { build } = require('esbuild');
const { chromium } = require('playwright-core');
const http = require('node:http');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const here = __dirname;
const nodeModules = process.env.NODE_MODULES || path.join(here, '..', 'js', 'node_modules');
const [fsHost, fsPort] = (process.env.DB || '127.0.0.1:9000').split(':');
const ns = process.env.NS || 'demo-browser-default-rtdb';

async function main() {
  const bundle = await build({
    entryPoints: [path.join(here, 'browser_app.js')],
    bundle: true, write: false, format: 'iife', platform: 'browser',
    nodePaths: [nodeModules], logLevel: 'error',
    define: { 'process.env.NODE_ENV': '"production"' },
  });
  const js = bundle.outputFiles[0].text;
  const page = `<!doctype html><html><head><meta charset="utf-8"><script src="/app.js"></script></head><body>pyric</body></html>`;
  const web = http.createServer((req, res) => {
    if (req.url === '/app.js') { res.writeHead(200, { 'Content-Type': 'text/javascript' }); res.end(js); return; }
    res.writeHead(200, { 'Content-Type': 'text/html' }); res.end(page);
  });
  await new Promise(r => web.listen(0, '127.0.0.1', r));
  const pageURL = `http://127.0.0.1:${web.address().port}/`;

  const userDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pyric-chromium-'));
  // A new empty profile per run (playwright passes it as --user-data-dir).
  const ctx = await chromium.launchPersistentContext(userDir, {
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium', headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  let failed = false;
  try {
    const p = await ctx.newPage();
    p.on('console', m => { if (process.env.DEBUG) console.error('[page]', m.text()); });
    p.on('pageerror', e => console.error('[pageerror]', e.message));
    await p.goto(pageURL);
    await p.waitForFunction(() => window.fb !== undefined);
    const steps = await p.evaluate(scenario, { host: fsHost, port: Number(fsPort), ns, debug: process.env.DEBUG === '1', longPolling: process.env.LONG_POLLING === '1' });
    for (const s of steps) { console.log(JSON.stringify(s)); if (!s.ok) failed = true; }
  } catch (e) {
    console.log(JSON.stringify({ step: 'driver', ok: false, error: String(e && e.stack || e) }));
    failed = true;
  } finally {
    await ctx.close();
    web.close();
    fs.rmSync(userDir, { recursive: true, force: true });
  }
  process.exit(failed ? 1 : 0);
}
main();


// scenario runs in the page. It returns the step results.
async function scenario({ host, port, ns, debug, longPolling }) {
  const fb = window.fb;
  const out = [];
  const withTimeout = (p, ms = 10000) => Promise.race([p, new Promise((_, rej) => setTimeout(() => rej(new Error(`timeout ${ms}ms`)), ms))]);
  const step = async (name, f) => {
    try { out.push({ step: name, ok: true, got: (await withTimeout(f())) ?? null }); }
    catch (e) { out.push({ step: name, ok: false, error: `${e.code || ''} ${e.message}` }); }
  };
  if (debug) fb.enableLogging(true);
  if (longPolling) fb.forceLongPolling();
  const sleep = ms => new Promise(r => setTimeout(r, ms));
  const until = async (pred, ms = 8000) => { const end = Date.now() + ms; while (!pred()) { if (Date.now() > end) throw new Error('condition not reached'); await sleep(5); } };
  const mk = (name, token) => {
    const app = fb.initializeApp({ projectId: 'demo-browser', apiKey: 'fake', databaseURL: `http://${host}:${port}?ns=${ns}` }, name);
    const db = fb.getDatabase(app);
    fb.connectDatabaseEmulator(db, host, port, token ? { mockUserToken: token } : {});
    return db;
  };
  const alice = mk('alice', { sub: 'alice' });
  const bob = mk('bob', { sub: 'bob' });
  const { ref, set, get, update, onValue, onChildAdded, query, orderByChild, limitToFirst, runTransaction, onDisconnect, goOffline, serverTimestamp } = fb;
  await step('set and get', async () => { await set(ref(alice, 'users/alice'), { name: 'Alice', at: serverTimestamp() }); const v = (await get(ref(alice, 'users/alice'))).val(); return [v.name, typeof v.at]; });
  await step('onValue sees another client', async () => {
    const seen = []; const u = onValue(ref(alice, 'public/room'), s => seen.push(s.val()));
    await until(() => seen.length === 1); await set(ref(bob, 'public/room'), 'hi'); await until(() => seen.length === 2); u(); return seen;
  });
  await step('query window', async () => {
    await set(ref(alice, 'public/scores'), { a: { score: 3 }, b: { score: 1 }, c: { score: 2 } });
    const keys = []; const u = onChildAdded(query(ref(alice, 'public/scores'), orderByChild('score'), limitToFirst(2)), s => keys.push(s.key));
    await until(() => keys.length === 2); u(); return keys;
  });
  await step('contended transactions', async () => {
    await set(ref(alice, 'counter'), 0);
    const inc = db => (async () => { for (let i = 0; i < 10; i++) await runTransaction(ref(db, 'counter'), v => (v || 0) + 1); })();
    await Promise.all([inc(alice), inc(bob)]);
    return (await get(ref(alice, 'counter'))).val();
  });
  await step('denied write', async () => { try { await set(ref(alice, 'users/bob'), 1); return 'allowed'; } catch (e) { return e.code; } });
  await step('onDisconnect when the socket closes', async () => {
    const seen = []; const u = onValue(ref(alice, 'presence/bob'), s => seen.push(s.val()));
    await set(ref(bob, 'presence/bob'), 'online');
    await onDisconnect(ref(bob, 'presence/bob')).set('offline');
    goOffline(bob);
    await until(() => seen.includes('offline')); u(); return seen[seen.length - 1];
  });
  await step('a listen the rules stop allowing is cancelled', async () => {
    await set(ref(alice, 'acl/d1/alice'), true);
    const ev = { values: [], error: null };
    const u = onValue(ref(alice, 'docs/d1'), s => ev.values.push(s.val()), e => { ev.error = e.message; });
    await until(() => ev.values.length === 1);
    const carol = mk('carol', { sub: 'carol' }); // bob is offline by now
    await set(ref(carol, 'acl/d1/alice'), null); // the grant alice's read rule reads
    await until(() => ev.error !== null);
    u();
    return [ev.values, ev.error.split(':')[0]];
  });
  return out;
}
