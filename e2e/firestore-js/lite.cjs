'use strict';
// lite.cjs drives firebase/firestore/lite (firebase@12.19.0), the SDK that
// speaks REST through fetch, against FS=host:port. Each step prints one
// JSON line {"step", "ok", "got"|"error"}; the Go test checks them.
const { initializeApp } = require('firebase/app');
const fs = require('firebase/firestore/lite');
const { steps } = require('../js/steps.cjs');

const [host, port] = (process.env.FS || '127.0.0.1:8080').split(':');
const project = process.env.PROJECT || 'demo-lite';

async function main() {
  const { step, failed } = steps(10000);
  const mk = (name, token) => {
    const db = fs.getFirestore(initializeApp({ projectId: project, apiKey: 'fake-api-key' }, name));
    fs.connectFirestoreEmulator(db, host, Number(port), token ? { mockUserToken: token } : {});
    return db;
  };
  const alice = mk('alice', { sub: 'alice', email: 'alice@example.com' });
  const bob = mk('bob', { sub: 'bob' });
  const anon = mk('anon');
  const owner = mk('owner', 'owner');
  const code = async p => { try { await p; return 'ok'; } catch (e) { return e.code; } };

  await step('setDoc', () => fs.setDoc(fs.doc(alice, 'users/alice'), { name: 'Alice', n: 1, tags: ['a'], nested: { x: 1.5 } }));
  await step('updateDoc with transforms', async () => {
    await fs.updateDoc(fs.doc(alice, 'users/alice'), { n: fs.increment(2), tags: fs.arrayUnion('b'), at: fs.serverTimestamp() });
    const d = (await fs.getDoc(fs.doc(alice, 'users/alice'))).data();
    return { n: d.n, tags: d.tags, nested: d.nested, hasTime: d.at instanceof fs.Timestamp };
  });
  await step('getDoc missing', async () => (await fs.getDoc(fs.doc(alice, 'users/alice/notes/none'))).exists());
  await step('unicode round trip', async () => {
    await fs.setDoc(fs.doc(alice, 'users/alice/notes/u'), { s: 'héllo ☃ 𝄞', b: fs.Bytes.fromUint8Array(new Uint8Array([0, 255])) });
    const d = (await fs.getDoc(fs.doc(alice, 'users/alice/notes/u'))).data();
    return { s: d.s, b: Array.from(d.b.toUint8Array()) };
  });
  await step('addDoc and query', async () => {
    for (const n of [3, 1, 2]) await fs.addDoc(fs.collection(owner, 'posts'), { n, open: n !== 2 });
    const s = await fs.getDocs(fs.query(fs.collection(anon, 'posts'), fs.where('open', '==', true), fs.orderBy('n', 'desc')));
    return s.docs.map(d => d.data().n);
  });
  await step('query with limit and cursor', async () => {
    const s = await fs.getDocs(fs.query(fs.collection(anon, 'posts'), fs.orderBy('n'), fs.startAfter(1), fs.limit(1)));
    return s.docs.map(d => d.data().n);
  });
  await step('collection group', async () => {
    await fs.setDoc(fs.doc(owner, 'a/1/posts/x'), { n: 10, open: true });
    const s = await fs.getDocs(fs.query(fs.collectionGroup(anon, 'posts'), fs.where('n', '>=', 3)));
    return s.docs.map(d => d.data().n).sort((a, b) => a - b);
  });
  await step('aggregations', async () => {
    const s = await fs.getAggregate(fs.collection(anon, 'posts'), { c: fs.count(), total: fs.sum('n'), avg: fs.average('n') });
    return s.data();
  });
  await step('getCount', async () => (await fs.getCount(fs.collection(anon, 'posts'))).data().count);
  await step('batch', async () => {
    const b = fs.writeBatch(owner);
    b.set(fs.doc(owner, 'batch/a'), { v: 1 });
    b.set(fs.doc(owner, 'batch/b'), { v: 2 });
    b.delete(fs.doc(owner, 'batch/a'));
    await b.commit();
    return (await fs.getDocs(fs.collection(owner, 'batch'))).docs.map(d => d.id);
  });
  await step('transaction', async () => {
    await fs.setDoc(fs.doc(owner, 'counters/c'), { v: 1 });
    return fs.runTransaction(alice, async tx => {
      const s = await tx.get(fs.doc(alice, 'counters/c'));
      tx.update(fs.doc(alice, 'counters/c'), { v: s.data().v + 1 });
      return s.data().v + 1;
    });
  });
  await step('contended transactions', async () => {
    await Promise.all([0, 1, 2, 3].map(() => fs.runTransaction(alice, async tx => {
      const s = await tx.get(fs.doc(alice, 'counters/c'));
      tx.update(fs.doc(alice, 'counters/c'), { v: s.data().v + 1 });
    })));
    return (await fs.getDoc(fs.doc(alice, 'counters/c'))).data().v;
  });
  // A document read but not written is sent as {"verify": name} with a
  // precondition (the published protos lack verify).
  await step('transaction reading one document and writing another', async () => {
    await fs.setDoc(fs.doc(owner, 'counters/src'), { v: 7 });
    await fs.runTransaction(alice, async tx => {
      const s = await tx.get(fs.doc(alice, 'counters/src'));
      tx.set(fs.doc(alice, 'counters/dst'), { v: s.data().v });
    });
    return (await fs.getDoc(fs.doc(alice, 'counters/dst'))).data().v;
  });
  await step('deleteDoc', async () => {
    await fs.deleteDoc(fs.doc(alice, 'users/alice/notes/u'));
    return (await fs.getDoc(fs.doc(alice, 'users/alice/notes/u'))).exists();
  });
  await step('denied read', () => code(fs.getDoc(fs.doc(bob, 'users/alice'))));
  await step('denied write', () => code(fs.setDoc(fs.doc(anon, 'users/alice'), { name: 'x' })));
  await step('denied query', () => code(fs.getDocs(fs.collection(bob, 'users'))));
  await step('denied message names the rule', async () => {
    // The emulator's wording is the first two lines; Pyric explains after it.
    try { await fs.getDoc(fs.doc(bob, 'users/alice')); return 'allowed'; } catch (e) { return e.message.split('\n').slice(0, 2).join('\n'); }
  });
  await step('denied message explains', async () => {
    try { await fs.getDoc(fs.doc(bob, 'users/alice')); return 'allowed'; } catch (e) { return e.message.split('\n').slice(2); }
  });
  await step('owner bypasses rules', async () => (await fs.getDoc(fs.doc(owner, 'users/alice'))).data().name);
  await step('update missing document', () => code(fs.updateDoc(fs.doc(owner, 'nothing/here'), { a: 1 })));
  process.exit(failed() ? 1 : 0);
}
main().catch(e => { console.log(JSON.stringify({ step: 'driver', ok: false, error: String(e && e.stack || e) })); process.exit(1); });
