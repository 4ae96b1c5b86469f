// browser.cjs runs the browser build of firebase@12.19.0 Firestore in
// headless Chromium (playwright-core, the Debian chromium package) against
// FS=host:port, so the SDK talks WebChannel (Listen, Write) and XHR REST
// (transactions) to the server. Each step prints one JSON line
// {"step", "ok", "got"|"error"}; the Go test driver checks them.
//
// Env: FS (host:port), PROJECT, CHROMIUM (default /usr/bin/chromium),
// LONG_POLLING=1 to force long-polling, DEBUG=1 for SDK debug logs.
'use strict';
const path = require('node:path');
const { run } = require('../js/browser-harness.cjs');

const [fsHost, fsPort] = (process.env.FS || '127.0.0.1:8080').split(':');
const project = process.env.PROJECT || 'demo-browser';

run({ app: path.join(__dirname, 'browser_app.js') }, async ({ page, report }) => {
  report(await page.evaluate(scenario, { host: fsHost, port: Number(fsPort), project,
    longPolling: process.env.LONG_POLLING === '1', debug: process.env.DEBUG === '1' }));
});


// scenario runs in the page. It returns the step results.
async function scenario({ host, port, project, longPolling, debug }) {
  const fb = window.fb;
  const { out, step } = window.pyricSteps(10000);
  if (debug) fb.setLogLevel('debug');
  const mk = (name, token) => {
    const app = fb.initializeApp({ projectId: project, apiKey: 'fake-api-key' }, name);
    const db = longPolling ? fb.initializeFirestore(app, { experimentalForceLongPolling: true }) : fb.getFirestore(app);
    fb.connectFirestoreEmulator(db, host, port, token ? { mockUserToken: token } : {});
    return db;
  };
  const alice = mk('alice', { sub: 'alice' });
  const bob = mk('bob', { sub: 'bob' });
  const anon = mk('anon');
  const waitFor = (q, pred, db) => new Promise((res, rej) => {
    const u = fb.onSnapshot(q, s => { if (pred(s)) { u(); res(s); } }, e => { rej(e); });
  });

  await step('write own profile', () => fb.setDoc(fb.doc(alice, 'users/alice'), { name: 'Alice', n: 1 }));
  await step('read own profile', async () => (await fb.getDoc(fb.doc(alice, 'users/alice'))).data());
  await step('update with serverTimestamp and increment', async () => {
    await fb.updateDoc(fb.doc(alice, 'users/alice'), { n: fb.increment(2), at: fb.serverTimestamp() });
    const d = (await fb.getDoc(fb.doc(alice, 'users/alice'))).data();
    return { n: d.n, hasTime: d.at instanceof fb.Timestamp };
  });

  // Live updates: two targets on one Listen channel (a query and a document).
  const events = [];
  const docEvents = [];
  let unsubQ, unsubD;
  await step('onSnapshot query and document', () => new Promise((res, rej) => {
    unsubQ = fb.onSnapshot(fb.query(fb.collection(alice, 'rooms/r1/msgs'), fb.orderBy('n')), s => {
      events.push(s.docs.map(d => d.id + ':' + d.data().n).join(','));
      if (events.length === 1) res(events[0]);
    }, rej);
    unsubD = fb.onSnapshot(fb.doc(alice, 'users/alice'), s => { docEvents.push(s.exists() ? s.data().name : null); }, rej);
  }));
  await step('live add', async () => {
    await fb.setDoc(fb.doc(bob, 'rooms/r1/msgs/m1'), { n: 1, by: 'bob' });
    await fb.addDoc(fb.collection(bob, 'rooms/r1/msgs'), { n: 2, by: 'bob' });
    await new Promise(r => { const t = setInterval(() => { if (events.some(e => e.split(',').length === 2)) { clearInterval(t); r(); } }, 20); });
    return events[events.length - 1].split(',').map(x => x.split(':')[1]).join(',');
  });
  await step('live modify and delete', async () => {
    await fb.updateDoc(fb.doc(bob, 'rooms/r1/msgs/m1'), { n: 3 });
    await fb.deleteDoc(fb.doc(alice, 'rooms/r1/msgs/m1'));
    await new Promise(r => { const t = setInterval(() => { if (events[events.length - 1].split(',').length === 1) { clearInterval(t); r(); } }, 20); });
    return events[events.length - 1].split(':')[1];
  });
  await step('document listener', async () => {
    await fb.updateDoc(fb.doc(alice, 'users/alice'), { name: 'Alice B' });
    await new Promise(r => { const t = setInterval(() => { if (docEvents.includes('Alice B')) { clearInterval(t); r(); } }, 20); });
    return docEvents;
  });
  unsubQ && unsubQ(); unsubD && unsubD();

  await step('batch', async () => {
    const b = fb.writeBatch(alice);
    b.set(fb.doc(alice, 'rooms/r2/msgs/a'), { n: 10 });
    b.set(fb.doc(alice, 'rooms/r2/msgs/b'), { n: 20 });
    await b.commit();
    return (await fb.getDocs(fb.collection(alice, 'rooms/r2/msgs'))).size;
  });
  await step('transaction', async () => {
    await fb.setDoc(fb.doc(alice, 'counters/c'), { v: 1 });
    const r = await fb.runTransaction(alice, async tx => {
      const s = await tx.get(fb.doc(alice, 'counters/c'));
      tx.update(fb.doc(alice, 'counters/c'), { v: s.data().v + 1 });
      return s.data().v + 1;
    });
    return { returned: r, stored: (await fb.getDoc(fb.doc(alice, 'counters/c'))).data().v };
  });
  await step('contended transactions', async () => {
    await Promise.all([0, 1, 2].map(() => fb.runTransaction(alice, async tx => {
      const s = await tx.get(fb.doc(alice, 'counters/c'));
      tx.update(fb.doc(alice, 'counters/c'), { v: s.data().v + 1 });
    })));
    return (await fb.getDoc(fb.doc(alice, 'counters/c'))).data().v;
  });
  await step('count aggregation', async () => (await fb.getCountFromServer(fb.collection(alice, 'rooms/r2/msgs'))).data().count);
  await step('denied write', async () => {
    try { await fb.setDoc(fb.doc(bob, 'users/alice'), { name: 'Mallory' }); return 'allowed'; } catch (e) { return e.code; }
  });
  await step('denied read', async () => {
    try { await fb.getDoc(fb.doc(anon, 'users/alice')); return 'allowed'; } catch (e) { return e.code; }
  });
  await step('denied message explains', async () => {
    // Over WebChannel: the status message the app's FirestoreError carries.
    try { await fb.setDoc(fb.doc(bob, 'users/alice'), { name: 'Mallory' }); return 'allowed'; } catch (e) { return [e.code, e.message]; }
  });
  await step('denied listen', () => new Promise(res => {
    fb.onSnapshot(fb.doc(anon, 'users/alice'), () => res('allowed'), e => res(e.code));
  }));
  await step('still readable after denials', async () => (await fb.getDoc(fb.doc(alice, 'users/alice'))).data().name);
  for (const db of [alice, bob, anon]) await fb.terminate(db);
  return out;
}
