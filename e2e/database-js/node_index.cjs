'use strict';
// node_index.cjs: queries on a child or value the rules do not index,
// through firebase@12.19.0's Realtime Database in Node (websocket) against
// DB=host:port. A get() of such a query with a limit is rejected with
// production's "Index not defined" text; a listener on it is served with
// the SDK's "Using an unspecified index" warning and the right window;
// orderByKey needs no index. Each step prints one JSON line.
const { initializeApp } = require('firebase/app');
const rtdb = require('firebase/database');
const { steps } = require('../js/steps.cjs');

const [host, port] = (process.env.DB || '127.0.0.1:9000').split(':');
const ns = process.env.NS || 'demo-rtdb-default-rtdb';
const sleep = ms => new Promise(r => setTimeout(r, ms));

// The SDK warns through console.warn (its logger's default handler).
const warnings = [];
const warn = console.warn;
console.warn = (...a) => { warnings.push(a.join(' ')); warn(...a); };

async function main() {
  const { step, failed } = steps(15000);
  const app = initializeApp({ projectId: 'demo-rtdb', apiKey: 'fake', databaseURL: `http://${host}:${port}?ns=${ns}` });
  const db = rtdb.getDatabase(app);
  rtdb.connectDatabaseEmulator(db, host, Number(port), { mockUserToken: { sub: 'alice' } });
  const { ref, set, get, query, orderByChild, orderByValue, orderByKey, limitToFirst, startAt, onValue } = rtdb;
  const err = async p => { try { await p; return 'resolved'; } catch (e) { return e.message; } };

  await step('seed', () => set(ref(db, 'public/raw'), { a: { score: 3 }, b: { score: 1 }, c: { score: 2 } }).then(() =>
    set(ref(db, 'public/vals'), { x: 30, y: 10, z: 20 })));
  await step('get orderByChild limit unindexed', () => err(get(query(ref(db, 'public/raw'), orderByChild('score'), limitToFirst(2)))));
  await step('get orderByValue limit unindexed', () => err(get(query(ref(db, 'public/vals'), orderByValue(), limitToFirst(2)))));
  await step('get orderByChild range unindexed', () => err(get(query(ref(db, 'public/raw'), orderByChild('score'), startAt(2)))));
  await step('get orderByChild without limit', async () => Object.keys((await get(query(ref(db, 'public/raw'), orderByChild('score')))).val()).sort());
  await step('get orderByKey limit', async () => (await get(query(ref(db, 'public/raw'), orderByKey(), limitToFirst(2)))).val());
  await step('get indexed orderByChild limit', async () => {
    await set(ref(db, 'public/scores'), { a: { score: 3 }, b: { score: 1 }, c: { score: 2 } });
    const s = await get(query(ref(db, 'public/scores'), orderByChild('score'), limitToFirst(2)));
    const ids = []; s.forEach(c => { ids.push(c.key); });
    return ids;
  });
  await step('listener on unindexed query', async () => {
    const seen = [];
    const unsub = onValue(query(ref(db, 'public/raw'), orderByChild('score'), limitToFirst(2)), s => {
      const ids = []; s.forEach(c => { ids.push(c.key); }); seen.push(ids);
    });
    const end = Date.now() + 8000;
    while (seen.length === 0 && Date.now() < end) await sleep(10);
    await set(ref(db, 'public/raw/a/score'), 0);
    while (JSON.stringify(seen[seen.length - 1]) !== '["a","b"]' && Date.now() < end) await sleep(10);
    unsub();
    return { first: seen[0], last: seen[seen.length - 1], warned: warnings.some(w => w.includes('Using an unspecified index') && w.includes('".indexOn": "score"') && w.includes('/public/raw')) };
  });
  process.exit(failed() ? 1 : 0);
}

main().catch(e => { console.error(e); process.exit(1); });
