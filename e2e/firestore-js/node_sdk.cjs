'use strict';
// node_sdk.cjs drives the Node build of firebase@12.19.0 Firestore, which
// speaks gRPC (Write and Listen streams, BatchGetDocuments and Commit for
// transactions, RunAggregationQuery), against FS=host:port. Each step prints
// one JSON line {"step", "ok", "got"|"error"}; the Go test checks them.
const { initializeApp } = require('firebase/app');
const fs = require('firebase/firestore');
const { steps } = require('../js/steps.cjs');

const [host, port] = (process.env.FS || '127.0.0.1:8080').split(':');
const project = process.env.PROJECT || 'demo-node';
const sleep = ms => new Promise(r => setTimeout(r, ms));
const until = async (pred, ms = 8000) => {
  const end = Date.now() + ms;
  while (!pred()) { if (Date.now() > end) throw new Error('condition not reached'); await sleep(10); }
};

async function main() {
  const { step, failed } = steps(10000);
  const mk = (name, token) => {
    const db = fs.getFirestore(initializeApp({ projectId: project, apiKey: 'fake-api-key' }, name));
    fs.connectFirestoreEmulator(db, host, Number(port), token ? { mockUserToken: token } : {});
    return db;
  };
  const alice = mk('alice', { sub: 'alice' });
  const bob = mk('bob', { sub: 'bob' });
  const anon = mk('anon');
  const code = async p => { try { await p; return 'ok'; } catch (e) { return e.code; } };

  await step('setDoc over the Write stream', () => fs.setDoc(fs.doc(alice, 'users/alice'), { name: 'Alice', n: 1 }));
  await step('getDoc over Listen', async () => (await fs.getDoc(fs.doc(alice, 'users/alice'))).data());
  await step('getDocFromServer missing', async () => (await fs.getDocFromServer(fs.doc(alice, 'tasks/none'))).exists());

  // Several targets on one Listen stream: two queries and a document.
  const seen = { open: [], closed: [], doc: [] };
  const unsubs = [];
  await step('three listeners on one stream', async () => {
    unsubs.push(fs.onSnapshot(fs.query(fs.collection(alice, 'tasks'), fs.where('done', '==', false), fs.orderBy('n')),
      s => seen.open.push(s.docs.map(d => d.id).join(','))));
    unsubs.push(fs.onSnapshot(fs.query(fs.collection(alice, 'tasks'), fs.where('done', '==', true)),
      s => seen.closed.push(s.size)));
    unsubs.push(fs.onSnapshot(fs.doc(alice, 'tasks/t1'), s => seen.doc.push(s.exists() ? s.data().n : null)));
    await until(() => seen.open.length > 0 && seen.closed.length > 0 && seen.doc.length > 0);
    return [seen.open[0], seen.closed[0], seen.doc[0]];
  });
  await step('live updates reach the right targets', async () => {
    await fs.setDoc(fs.doc(bob, 'tasks/t1'), { n: 1, done: false });
    await fs.setDoc(fs.doc(bob, 'tasks/t2'), { n: 2, done: false });
    await until(() => seen.open[seen.open.length - 1] === 't1,t2' && seen.doc[seen.doc.length - 1] === 1);
    await fs.updateDoc(fs.doc(bob, 'tasks/t1'), { done: true, n: 5 });
    await until(() => seen.open[seen.open.length - 1] === 't2' && seen.closed[seen.closed.length - 1] === 1 && seen.doc[seen.doc.length - 1] === 5);
    await fs.deleteDoc(fs.doc(bob, 'tasks/t1'));
    await until(() => seen.closed[seen.closed.length - 1] === 0 && seen.doc[seen.doc.length - 1] === null);
    return { open: seen.open[seen.open.length - 1], closed: seen.closed[seen.closed.length - 1], doc: seen.doc[seen.doc.length - 1] };
  });
  await step('unsubscribe one target, others keep listening', async () => {
    unsubs.shift()();
    await fs.setDoc(fs.doc(bob, 'tasks/t3'), { n: 3, done: true });
    await until(() => seen.closed[seen.closed.length - 1] === 1);
    return seen.closed[seen.closed.length - 1];
  });
  unsubs.forEach(u => u());

  await step('getDocs', async () => (await fs.getDocs(fs.query(fs.collection(alice, 'tasks'), fs.orderBy('n')))).docs.map(d => d.id));
  await step('aggregation over gRPC', async () => (await fs.getAggregateFromServer(fs.collection(alice, 'tasks'), { c: fs.count(), s: fs.sum('n') })).data());
  await step('batch', async () => {
    const b = fs.writeBatch(alice);
    b.set(fs.doc(alice, 'tasks/b1'), { n: 10, done: false });
    b.update(fs.doc(alice, 'tasks/t2'), { n: fs.increment(1) });
    await b.commit();
    return (await fs.getDoc(fs.doc(alice, 'tasks/t2'))).data().n;
  });
  await step('transaction', async () => {
    await fs.setDoc(fs.doc(alice, 'counters/c'), { v: 1 });
    return fs.runTransaction(alice, async tx => {
      const s = await tx.get(fs.doc(alice, 'counters/c'));
      tx.set(fs.doc(alice, 'counters/c'), { v: s.data().v * 10 });
      return s.data().v * 10;
    });
  });
  await step('contended transactions retry', async () => {
    await Promise.all([0, 1, 2, 3, 4].map(() => fs.runTransaction(alice, async tx => {
      const s = await tx.get(fs.doc(alice, 'counters/c'));
      tx.update(fs.doc(alice, 'counters/c'), { v: s.data().v + 1 });
    })));
    return (await fs.getDoc(fs.doc(alice, 'counters/c'))).data().v;
  });
  await step('transaction creating a document', () => fs.runTransaction(alice, async tx => {
    const s = await tx.get(fs.doc(alice, 'counters/new'));
    tx.set(fs.doc(alice, 'counters/new'), { v: s.exists() ? -1 : 1 });
    return s.exists();
  }));
  await step('transaction reading one document and writing another', async () => {
    await fs.setDoc(fs.doc(alice, 'counters/src'), { v: 7 });
    await fs.runTransaction(alice, async tx => {
      const s = await tx.get(fs.doc(alice, 'counters/src'));
      tx.set(fs.doc(alice, 'counters/dst'), { v: s.data().v });
    });
    return (await fs.getDoc(fs.doc(alice, 'counters/dst'))).data().v;
  });
  // Offline and back: writes made with the network disabled stay pending
  // (nothing reaches the server), are sent when it is enabled again, and a
  // listener resumes, seeing what changed on the server meanwhile.
  await step('offline writes sync on enableNetwork', async () => {
    const ref = fs.doc(alice, 'offline/w1');
    const seen = [];
    const unsub = fs.onSnapshot(fs.doc(alice, 'offline/r1'), { includeMetadataChanges: false }, s => seen.push(s.exists() ? s.data().v : null));
    await until(() => seen.length > 0);
    await fs.disableNetwork(alice);
    const pending = fs.setDoc(ref, { v: 'from offline' });
    const local = await fs.getDocFromCache(ref);
    const local_ = [local.exists(), local.metadata.hasPendingWrites];
    await fs.setDoc(fs.doc(bob, 'offline/r1'), { v: 'changed while away' });
    const serverBefore = (await fs.getDocFromServer(fs.doc(bob, 'offline/w1'))).exists();
    await sleep(100);
    const seenOffline = seen.slice();
    await fs.enableNetwork(alice);
    await fs.waitForPendingWrites(alice);
    await pending;
    const serverAfter = (await fs.getDocFromServer(fs.doc(bob, 'offline/w1'))).data();
    await until(() => seen[seen.length - 1] === 'changed while away');
    unsub();
    return { local: local_, serverBefore, serverAfter, seenOffline, seen };
  });
  await step('denied write', () => code(fs.setDoc(fs.doc(bob, 'users/alice'), { name: 'Mallory' })));
  await step('denied read', () => code(fs.getDoc(fs.doc(anon, 'users/alice'))));
  await step('denied message explains', async () => {
    // Over gRPC: the status message the app's FirestoreError carries.
    try { await fs.setDoc(fs.doc(bob, 'users/alice'), { name: 'Mallory' }); return 'allowed'; } catch (e) { return [e.code, e.message]; }
  });
  await step('denied listen', () => new Promise(res => fs.onSnapshot(fs.doc(bob, 'users/alice'), () => res('allowed'), e => res(e.code))));
  await step('denied transaction', () => code(fs.runTransaction(bob, async tx => { await tx.get(fs.doc(bob, 'users/alice')); })));
  await step('writes still flow after denials', async () => {
    await fs.setDoc(fs.doc(bob, 'users/bob'), { name: 'Bob' });
    return (await fs.getDoc(fs.doc(bob, 'users/bob'))).data().name;
  });
  for (const db of [alice, bob, anon]) await fs.terminate(db);
  process.exit(failed() ? 1 : 0);
}
main().catch(e => { console.log(JSON.stringify({ step: 'driver', ok: false, error: String(e && e.stack || e) })); process.exit(1); });
