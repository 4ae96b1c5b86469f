'use strict';
// node_sdk.cjs drives firebase@12.19.0's Realtime Database in Node (the
// websocket protocol v5) against DB=host:port, namespace NS. Each step
// prints one JSON line {"step", "ok", "got"|"error"}; the Go test checks
// them.
const { initializeApp, deleteApp } = require('firebase/app');
const rtdb = require('firebase/database');
const { spawn } = require('child_process');
const { steps } = require('../js/steps.cjs');

const [host, port] = (process.env.DB || '127.0.0.1:9000').split(':');
const ns = process.env.NS || 'demo-rtdb-default-rtdb';
const sleep = ms => new Promise(r => setTimeout(r, ms));
const until = async (pred, ms = 8000) => {
  const end = Date.now() + ms;
  while (!pred()) { if (Date.now() > end) throw new Error('condition not reached'); await sleep(5); }
};

const mk = (name, token) => {
  const app = initializeApp({ projectId: 'demo-rtdb', apiKey: 'fake', databaseURL: `http://${host}:${port}?ns=${ns}` }, name);
  const db = rtdb.getDatabase(app);
  rtdb.connectDatabaseEmulator(db, host, Number(port), token ? { mockUserToken: token } : {});
  return { app, db };
};

async function main() {
  const { step, failed } = steps(15000);
  const { db: alice } = mk('alice', { sub: 'alice' });
  const { db: bob } = mk('bob', { sub: 'bob' });
  const { db: anon } = mk('anon');
  const { ref, set, get, update, push, remove, onValue, onChildAdded, onChildChanged, onChildRemoved, onChildMoved,
    query, orderByChild, orderByKey, orderByValue, orderByPriority, limitToFirst, limitToLast, startAt, startAfter,
    endAt, endBefore, equalTo, runTransaction, onDisconnect, serverTimestamp, increment, setWithPriority, off, child } = rtdb;

  await step('set and get', async () => {
    await set(ref(alice, 'users/alice'), { name: 'Alice', n: 1 });
    return (await get(ref(alice, 'users/alice'))).val();
  });
  await step('get absent', async () => {
    const s = await get(ref(alice, 'public/absent'));
    return [s.exists(), s.val()];
  });
  await step('arrays round-trip', async () => {
    await set(ref(alice, 'public/arr'), [1, 2, 3]);
    const s = await get(ref(alice, 'public/arr'));
    return [s.val(), (await get(ref(alice, 'public/arr/1'))).val()];
  });
  await step('server timestamp and increment', async () => {
    await set(ref(alice, 'public/sv'), { at: serverTimestamp(), n: increment(2) });
    await update(ref(alice, 'public/sv'), { n: increment(3) });
    const v = (await get(ref(alice, 'public/sv'))).val();
    return [typeof v.at, v.at > 1.6e12, v.n];
  });
  await step('multi-path update', async () => {
    await update(ref(alice), { 'public/m/a': 1, 'public/m/b': { c: 2 } });
    return (await get(ref(alice, 'public/m'))).val();
  });
  await step('push', async () => {
    const r = await push(ref(alice, 'public/pushed'), { v: 1 });
    const s = await get(ref(alice, 'public/pushed'));
    return [r.key.length, r.key[0], Object.keys(s.val()).length];
  });
  await step('nulls and empty objects pruned', async () => {
    await set(ref(alice, 'public/prune'), { a: { b: null }, c: {}, d: 1 });
    return (await get(ref(alice, 'public/prune'))).val();
  });
  await step('onValue: initial, changes only', async () => {
    const seen = [];
    const unsub = onValue(ref(alice, 'public/watch'), s => seen.push(s.val()));
    await until(() => seen.length === 1);
    await set(ref(bob, 'public/watch'), { x: 1 });
    await until(() => seen.length === 2);
    await set(ref(bob, 'public/watch'), { x: 1 }); // no change: no event
    await set(ref(bob, 'public/other'), 1); // sibling: no event
    await set(ref(bob, 'public/watch/x'), 2);
    await until(() => seen.length === 3);
    unsub();
    return seen;
  });
  await step('child events with previousChildName', async () => {
    await set(ref(alice, 'public/list'), { a: 1, b: 2, c: 3 });
    const ev = [];
    const r = ref(alice, 'public/list');
    const u1 = onChildAdded(r, (s, prev) => ev.push(['added', s.key, s.val(), prev]));
    const u2 = onChildChanged(r, (s, prev) => ev.push(['changed', s.key, s.val(), prev]));
    const u3 = onChildRemoved(r, s => ev.push(['removed', s.key, s.val()]));
    await until(() => ev.length === 3);
    await set(ref(bob, 'public/list/d'), 4);
    await until(() => ev.length === 4);
    await set(ref(bob, 'public/list/b'), 20);
    await until(() => ev.length === 5);
    await remove(ref(bob, 'public/list/a'));
    await until(() => ev.length === 6);
    u1(); u2(); u3();
    return ev;
  });
  await step('query orderByChild limitToFirst', async () => {
    await set(ref(alice, 'public/scores'), { a: { score: 30 }, b: { score: 10 }, c: { score: 20 }, d: { score: 40 } });
    const s = await get(query(ref(alice, 'public/scores'), orderByChild('score'), limitToFirst(2)));
    const keys = []; s.forEach(c => { keys.push(c.key); });
    return keys;
  });
  await step('query cursors', async () => {
    const keys = async q => { const s = await get(q); const k = []; s.forEach(c => { k.push(c.key); }); return k; };
    const r = ref(alice, 'public/scores');
    return {
      startAt: await keys(query(r, orderByChild('score'), startAt(20))),
      startAfter: await keys(query(r, orderByChild('score'), startAfter(20))),
      endAt: await keys(query(r, orderByChild('score'), endAt(20))),
      endBefore: await keys(query(r, orderByChild('score'), endBefore(20))),
      equalTo: await keys(query(r, orderByChild('score'), equalTo(30))),
      limitToLast: await keys(query(r, orderByChild('score'), limitToLast(2))),
      byKey: await keys(query(r, orderByKey(), startAfter('a'), endBefore('d'))),
    };
  });
  await step('orderByKey integer keys first', async () => {
    await set(ref(alice, 'public/keys'), { b: 1, 10: 1, 2: 1, a: 1, 1: 1 });
    const s = await get(query(ref(alice, 'public/keys'), orderByKey()));
    const k = []; s.forEach(c => { k.push(c.key); }); return k;
  });
  await step('orderByValue without an index is rejected as production does', async () => {
    await set(ref(alice, 'public/vals'), { x: 3, y: 1, z: 'a', w: false });
    try { await get(query(ref(alice, 'public/vals'), orderByValue(), limitToFirst(3))); return 'resolved'; } catch (e) { return e.message; }
  });
  await step('orderByValue without an index, listened to', async () => {
    const s = await new Promise(res => { const u = onValue(query(ref(alice, 'public/vals'), orderByValue(), limitToFirst(3)), s => { u(); res(s); }); });
    const k = []; s.forEach(c => { k.push(c.key); }); return k;
  });
  await step('live query window moves', async () => {
    const ev = [];
    const q = query(ref(alice, 'public/scores'), orderByChild('score'), limitToFirst(2));
    const u1 = onChildAdded(q, (s, prev) => ev.push(['added', s.key, prev]));
    const u2 = onChildRemoved(q, s => ev.push(['removed', s.key]));
    await until(() => ev.length === 2);
    await set(ref(bob, 'public/scores/e'), { score: 5 }); // displaces c
    await until(() => ev.length === 4);
    await set(ref(bob, 'public/scores/d/score'), 41); // outside the window: nothing
    await set(ref(bob, 'public/scores/e/score'), 25); // leaves, c comes back
    await until(() => ev.length === 6);
    u1(); u2();
    return ev;
  });
  await step('child_moved under an ordered query', async () => {
    const ev = [];
    const q = query(ref(alice, 'public/scores'), orderByChild('score'));
    const u = onChildMoved(q, (s, prev) => ev.push([s.key, prev]));
    const u2 = onChildAdded(q, () => {});
    await sleep(50);
    await set(ref(bob, 'public/scores/b/score'), 35);
    await until(() => ev.length === 1);
    u(); u2();
    return ev;
  });
  await step('priorities', async () => {
    await setWithPriority(ref(alice, 'public/prio/a'), 'A', 3);
    await setWithPriority(ref(alice, 'public/prio/b'), 'B', 1);
    await setWithPriority(ref(alice, 'public/prio/c'), 'C', 2);
    const s = await get(query(ref(alice, 'public/prio'), orderByPriority()));
    const k = []; s.forEach(c => { k.push([c.key, c.priority]); });
    return [k, s.exportVal().a];
  });
  await step('onChildMoved on a plain ref follows priority', async () => {
    await set(ref(alice, 'public/pm'), { a: 1, b: 2, c: 3 });
    const ev = [];
    const r = ref(alice, 'public/pm');
    const u = onChildMoved(r, (s, prev) => ev.push([s.key, prev]));
    const u2 = onChildAdded(r, () => {});
    await sleep(50);
    await rtdb.setPriority(ref(bob, 'public/pm/a'), 10);
    await until(() => ev.length === 1);
    u(); u2();
    return ev;
  });
  await step('query onValue fires only when the window changes', async () => {
    const seen = [];
    const q = query(ref(alice, 'public/win'), orderByKey(), limitToFirst(2));
    await set(ref(alice, 'public/win'), { a: 1, b: 2, c: 3 });
    const u = onValue(q, s => seen.push(Object.keys(s.val() || {}).join(',')));
    await until(() => seen.length === 1);
    await set(ref(bob, 'public/win/c'), 30); // outside the window
    await set(ref(bob, 'public/win/0'), 0); // displaces b
    await until(() => seen.length === 2);
    u();
    return seen;
  });
  await step('onlyOnce', async () => {
    let n = 0;
    onValue(ref(alice, 'public/once'), () => { n++; }, { onlyOnce: true });
    await sleep(100);
    await set(ref(bob, 'public/once'), 1);
    await sleep(100);
    return n;
  });
  await step('validate through a transaction', async () => {
    try { await runTransaction(ref(alice, 'counter'), () => 'not a number'); return 'allowed'; } catch (e) { return e.message; }
  });
  await step('transaction', async () => {
    const r = await runTransaction(ref(alice, 'public/tx'), v => (v || 0) + 1);
    return [r.committed, r.snapshot.val()];
  });
  await step('transaction abort', async () => {
    // A cold client first runs fn(null); the stale hash gets datastale
    // and the SDK retries with the server value, which aborts.
    const r = await runTransaction(ref(anon, 'public/tx'), v => (v === null ? 0 : undefined));
    return [r.committed, r.snapshot.val()];
  });
  await step('contended transactions from two clients', async () => {
    await set(ref(alice, 'counter'), 0);
    let calls = 0;
    const inc = db => async () => { for (let i = 0; i < 20; i++) await runTransaction(ref(db, 'counter'), v => { calls++; return (v || 0) + 1; }); };
    await Promise.all([inc(alice)(), inc(bob)()]);
    const v = (await get(ref(alice, 'counter'))).val();
    return [v, calls >= 40];
  });
  await step('denied write', async () => {
    try { await set(ref(alice, 'users/bob'), { name: 'x' }); return 'allowed'; } catch (e) { return [e.code, e.message]; }
  });
  await step('denied read', async () => {
    try { await get(ref(anon, 'users/alice')); return 'allowed'; } catch (e) { return e.message; }
  });
  await step('denied listen cancels', async () => {
    return await new Promise(res => onValue(ref(anon, 'users/alice'), () => res('fired'), e => res(e.message.split(':')[0])));
  });
  await step('denied transaction', async () => {
    try { await runTransaction(ref(alice, 'users/bob/n'), v => (v || 0) + 1); return 'allowed'; } catch (e) { return e.message; }
  });
  await step('denied update writes nothing', async () => {
    try { await update(ref(alice), { 'users/alice/x': 1, 'users/bob/x': 1 }); return 'allowed'; } catch (e) {
      return [e.code, (await get(ref(alice, 'users/alice/x'))).val()];
    }
  });
  await step('onDisconnect on abrupt disconnect', async () => {
    const seen = [];
    const u = onValue(ref(alice, 'presence/carol'), s => seen.push(s.val()));
    const child = spawn(process.execPath, ['-e', `
      const { initializeApp } = require('firebase/app');
      const d = require('firebase/database');
      const db = d.getDatabase(initializeApp({ projectId: 'demo-rtdb', apiKey: 'fake', databaseURL: 'http://${host}:${port}?ns=${ns}' }));
      d.connectDatabaseEmulator(db, '${host}', ${port}, { mockUserToken: { sub: 'carol' } });
      (async () => {
        await d.set(d.ref(db, 'presence/carol'), 'online');
        await d.onDisconnect(d.ref(db, 'presence/carol')).set('offline');
        console.log('ready');
      })();
    `], { env: process.env, stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise((res, rej) => { child.stdout.on('data', d => { if (String(d).includes('ready')) res(); }); child.on('exit', () => rej(new Error('child exited early'))); });
    await until(() => seen.includes('online'));
    child.kill('SIGKILL');
    await until(() => seen.includes('offline'));
    u();
    return seen.slice(-2);
  });
  await step('onDisconnect cancel', async () => {
    const { app, db } = mk('dave', { sub: 'dave' });
    await set(ref(db, 'presence/dave'), 'online');
    const od = onDisconnect(ref(db, 'presence/dave'));
    await od.set('offline');
    await od.cancel();
    await deleteApp(app);
    await sleep(200);
    return (await get(ref(alice, 'presence/dave'))).val();
  });
  await step('writes still flow after denials', async () => {
    await set(ref(alice, 'users/alice/name'), 'Al');
    return (await get(ref(bob, 'public/list'))).val();
  });
  process.exit(failed() ? 1 : 0);
}
main().catch(e => { console.error(e); process.exit(2); });
