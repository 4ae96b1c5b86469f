'use strict';
// multiwrite.cjs drives the Node build of firebase@12.19.0 Firestore
// (gRPC) against FS=host:port with batches that write one document several
// times in one commit: each write applies its mask and transforms to the
// result of the one before it. For each batch the step returns what a
// listener with includeMetadataChanges saw once the server confirmed it
// (hasPendingWrites false) and checks that a later read from the server
// agrees with it. The same expectations hold on the official emulator.
const { initializeApp } = require('firebase/app');
const fs = require('firebase/firestore');
const { steps } = require('../js/steps.cjs');

const [host, port] = (process.env.FS || '127.0.0.1:8080').split(':');
const project = process.env.PROJECT || 'demo-multi';
const sleep = ms => new Promise(r => setTimeout(r, ms));

// plain makes a snapshot's data comparable: timestamps become "<ts>".
const plain = v => {
  if (v instanceof fs.Timestamp) return '<ts>';
  if (Array.isArray(v)) return v.map(plain);
  if (v && typeof v === 'object') {
    const o = {};
    for (const k of Object.keys(v).sort()) o[k] = plain(v[k]);
    return o;
  }
  return v;
};
const same = (a, b) => JSON.stringify(a, (k, v) => v instanceof fs.Timestamp ? `${v.seconds}.${v.nanoseconds}` : v) ===
  JSON.stringify(b, (k, v) => v instanceof fs.Timestamp ? `${v.seconds}.${v.nanoseconds}` : v);

async function main() {
  const { step, failed } = steps(15000);
  const db = fs.getFirestore(initializeApp({ projectId: project, apiKey: 'fake-api-key' }));
  fs.connectFirestoreEmulator(db, host, Number(port), { mockUserToken: { sub: 'alice' } });

  // watched runs fill (plain writes before), then the batch build() makes
  // while a listener with includeMetadataChanges watches path, and returns
  // the confirmed snapshot's data; a later getDocFromServer must agree.
  const watched = async (path, fill, build) => {
    const ref = fs.doc(db, path);
    await fill(ref);
    const seen = [];
    let wake = () => {};
    const unsub = fs.onSnapshot(ref, { includeMetadataChanges: true }, s => {
      seen.push({ exists: s.exists(), data: s.exists() ? s.data() : null, pending: s.metadata.hasPendingWrites, cache: s.metadata.fromCache });
      wake();
    });
    try {
      while (!seen.some(s => !s.pending && !s.cache)) await new Promise(r => { wake = r; setTimeout(r, 200); });
      const b = fs.writeBatch(db);
      build(b, ref);
      const mark = seen.length;
      let err = null;
      await b.commit().catch(e => { err = e; });
      const end = Date.now() + 10000;
      const settled = () => seen.slice(mark).filter(s => !s.pending && !s.cache);
      while ((err === null ? settled().length === 0 || seen[seen.length - 1].pending : seen[seen.length - 1].pending) && Date.now() < end) {
        await new Promise(r => { wake = r; setTimeout(r, 200); });
      }
      await sleep(300);
      const last = seen[seen.length - 1];
      const server = await fs.getDocFromServer(ref);
      const got = server.exists() ? server.data() : null;
      if (!same(got, last.data)) throw new Error(`listener ${JSON.stringify(last.data)} != get ${JSON.stringify(got)}`);
      return { error: err ? err.code : null, data: plain(last.data), pending: last.pending };
    } finally {
      unsub();
    }
  };

  await step('delete, set, update with serverTimestamp', () => watched('multi/d1',
    ref => fs.setDoc(ref, { a: 0, b: 0, old: true }),
    (b, ref) => { b.delete(ref); b.set(ref, { a: 1, b: 1, when: 'when' }); b.update(ref, { b: 2, when: fs.serverTimestamp() }); }));
  await step('set, then set-with-merge carrying transforms', () => watched('multi/d2',
    ref => fs.setDoc(ref, { n: 5, keep: 'k' }),
    (b, ref) => {
      b.set(ref, { n: 1, tags: ['x'], when: 'w' });
      b.set(ref, { n: fs.increment(2), tags: fs.arrayUnion('y', 'x'), when: fs.serverTimestamp(), m: { q: 1 } }, { merge: true });
    }));
  await step('set-with-merge mergeFields naming a transformed field', () => watched('multi/d3',
    ref => fs.setDoc(ref, { n: 1, other: 1 }),
    (b, ref) => {
      b.set(ref, { n: fs.increment(10), other: 2, extra: 3 }, { mergeFields: ['n', 'other'] });
      b.update(ref, { other: fs.increment(1) });
    }));
  await step('two transforms on one field in one commit', () => watched('multi/d4',
    ref => fs.setDoc(ref, { n: 1, arr: [1] }),
    (b, ref) => {
      b.update(ref, { n: fs.increment(2), arr: fs.arrayUnion(2) });
      b.update(ref, { n: fs.increment(3), arr: fs.arrayRemove(1) });
      b.update(ref, { n: fs.increment(0.5) });
    }));
  await step('increment then serverTimestamp on one field', () => watched('multi/d5',
    ref => fs.setDoc(ref, { n: 1 }),
    (b, ref) => { b.update(ref, { n: fs.increment(1) }); b.update(ref, { n: fs.serverTimestamp() }); }));
  await step('update, delete, update fails', () => watched('multi/d6',
    ref => fs.setDoc(ref, { a: 1 }),
    (b, ref) => { b.update(ref, { a: 2 }); b.delete(ref); b.update(ref, { a: 3 }); }));
  await step('update, delete, set, update', () => watched('multi/d7',
    ref => fs.setDoc(ref, { a: 1, z: 1 }),
    (b, ref) => { b.update(ref, { a: 2 }); b.delete(ref); b.set(ref, { a: 3 }); b.update(ref, { b: fs.increment(4), c: fs.serverTimestamp() }); }));
  await step('update deleting a field a transform then sets', () => watched('multi/d8',
    ref => fs.setDoc(ref, { a: 1, n: 7 }),
    (b, ref) => { b.update(ref, { n: fs.deleteField() }); b.update(ref, { n: fs.increment(1), a: fs.deleteField() }); }));

  process.exit(failed() ? 1 : 0);
}

main().catch(e => { console.error(e); process.exit(1); });
