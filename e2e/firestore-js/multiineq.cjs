'use strict';
// multiineq.cjs runs queries with inequality filters on several fields
// and on the document id, through the Node build of firebase@12.19.0
// Firestore (gRPC) against FS=host:port: limit, limitToLast and cursors
// built from document snapshots. Each step returns the ids in order; the
// Go test compares them with the official emulator's.
const { initializeApp } = require('firebase/app');
const fs = require('firebase/firestore');
const { steps } = require('../js/steps.cjs');

const [host, port] = (process.env.FS || '127.0.0.1:8080').split(':');
const project = process.env.PROJECT || 'demo-ineq';

async function main() {
  const { step, failed } = steps(15000);
  const db = fs.getFirestore(initializeApp({ projectId: project, apiKey: 'fake-api-key' }));
  fs.connectFirestoreEmulator(db, host, Number(port), { mockUserToken: { sub: 'alice' } });
  const col = fs.collection(db, 'ineq');
  const docs = {
    A: { a: 1, b: 3, m: { x: 2 } }, B: { a: 2, b: 1, m: { x: 1 } }, _c: { a: 2, b: 2, m: { x: 3 } }, d: { a: 3, b: 1, m: { x: 1 } },
    e: { a: 1, b: 1, m: { x: 2 } }, f: { a: 3, b: 3 }, g: { a: 2, b: 3, m: { x: 2 } }, h: { a: 1, b: 2, m: { x: 1 } }, Z: { a: 2, b: 2, m: { x: 2 } },
  };
  await step('seed', async () => {
    const b = fs.writeBatch(db);
    for (const [id, d] of Object.entries(docs)) b.set(fs.doc(col, id), d);
    await b.commit();
    return Object.keys(docs).length;
  });
  const id = fs.documentId();
  const ids = async q => (await fs.getDocs(q)).docs.map(d => d.id);
  const snap = i => fs.getDoc(fs.doc(col, i));
  const W = fs.where;
  const cases = {
    'a>0 b>0 id>B limit 4': () => fs.query(col, W('a', '>', 0), W('b', '>', 0), W(id, '>', 'B'), fs.limit(4)),
    'b>1 a<3 id!=e': () => fs.query(col, W('b', '>', 1), W('a', '<', 3), W(id, '!=', 'e')),
    'm.x>0 a>1 id<h orderBy b desc limit 3': () => fs.query(col, W('m.x', '>', 0), W('a', '>', 1), W(id, '<', 'h'), fs.orderBy('b', 'desc'), fs.limit(3)),
    'a>0 b>0 orderBy a limitToLast 3': () => fs.query(col, W('a', '>', 0), W('b', '>', 0), fs.orderBy('a'), fs.limitToLast(3)),
    'a>0 id>A orderBy b desc limitToLast 2': () => fs.query(col, W('a', '>', 0), W(id, '>', 'A'), fs.orderBy('b', 'desc'), fs.limitToLast(2)),
    'a>0 b>0 id>A startAfter(_c) limit 3': async () => fs.query(col, W('a', '>', 0), W('b', '>', 0), W(id, '>', 'A'), fs.startAfter(await snap('_c')), fs.limit(3)),
    'a>0 b>0 orderBy b desc startAt(g) limit 3': async () => fs.query(col, W('a', '>', 0), W('b', '>', 0), fs.orderBy('b', 'desc'), fs.startAt(await snap('g')), fs.limit(3)),
    'm.x>0 b<3 orderBy a endBefore(d) limitToLast 2': async () => fs.query(col, W('m.x', '>', 0), W('b', '<', 3), fs.orderBy('a'), fs.endBefore(await snap('d')), fs.limitToLast(2)),
    'a>=1 id>=B startAfter(Z) endAt(h)': async () => fs.query(col, W('a', '>=', 1), W(id, '>=', 'B'), fs.startAfter(await snap('Z')), fs.endAt(await snap('h'))),
  };
  for (const [name, q] of Object.entries(cases)) await step(name, async () => ids(await q()));
  process.exit(failed() ? 1 : 0);
}

main().catch(e => { console.error(e); process.exit(1); });
