// browser.cjs runs the browser build of firebase@12.19.0's Realtime
// Database in headless Chromium (playwright-core, the Debian chromium
// package) against DB=host:port over the browser's own WebSocket. Each
// step prints one JSON line {"step", "ok", "got"|"error"}; the Go test
// checks them.
//
// Env: DB (host:port), NS, CHROMIUM (default /usr/bin/chromium),
// LONG_POLLING=1 to force the /.lp transport, UPGRADE=1 to start on long
// polling as after an earlier websocket failure (then switch to the
// websocket), DEBUG=1 for SDK debug logs.
'use strict';
const path = require('node:path');
const { run } = require('../js/browser-harness.cjs');

const [fsHost, fsPort] = (process.env.DB || '127.0.0.1:9000').split(':');
const ns = process.env.NS || 'demo-browser-default-rtdb';

run({ app: path.join(__dirname, 'browser_app.js') }, async ({ page, report }) => {
  report(await page.evaluate(scenario, { host: fsHost, port: Number(fsPort), ns, debug: process.env.DEBUG === '1', longPolling: process.env.LONG_POLLING === '1', upgrade: process.env.UPGRADE === '1' }));
});


// scenario runs in the page. It returns the step results.
async function scenario({ host, port, ns, debug, longPolling, upgrade }) {
  const fb = window.fb;
  const { out, step } = window.pyricSteps(10000);
  if (debug) fb.enableLogging(true);
  if (longPolling) fb.forceLongPolling();
  // The flag an earlier websocket that closed early leaves: the SDK
  // starts on long polling, then moves the session onto a websocket.
  if (upgrade) localStorage.setItem('firebase:previous_websocket_failure', 'true');
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
  if (upgrade) {
    await step('the session moved to the websocket', async () => {
      // markConnectionHealthy on the second socket clears the flag.
      await until(() => localStorage.getItem('firebase:previous_websocket_failure') === null);
      const t0 = Date.now(); await set(ref(alice, 'public/after'), 1);
      return { flag: localStorage.getItem('firebase:previous_websocket_failure'), writeUnderASecond: Date.now() - t0 < 1000 };
    });
  }
  return out;
}
