'use strict';
// drive.cjs runs the Realtime Database workload of the RTDB benchmark
// through firebase@12.19.0's JS SDK (WebSocket, protocol v5) against
// DB=host:port, namespace NS, and prints one JSON line of figures:
// operations per second for set, update, get, transaction and an indexed
// query, and the listener fan-out's delivery latency (FANOUT clients
// listening to one path, one write, ROUNDS times).
const { initializeApp, deleteApp } = require('firebase/app');
const rtdb = require('firebase/database');
const { ref, set, get, update, runTransaction, onValue, query, orderByChild, limitToFirst } = rtdb;

const [host, port] = (process.env.DB || '127.0.0.1:9000').split(':');
const ns = process.env.NS || 'demo-rtdbbench-default-rtdb';
const N = Number(process.env.N || 100);
const FANOUT = Number(process.env.FANOUT || 100);
const ROUNDS = Number(process.env.ROUNDS || 5);

let apps = 0;
const mk = () => {
  const app = initializeApp({ projectId: 'demo-rtdbbench', apiKey: 'fake', databaseURL: `http://${host}:${port}?ns=${ns}` }, 'a' + apps++);
  const db = rtdb.getDatabase(app);
  rtdb.connectDatabaseEmulator(db, host, Number(port));
  return { app, db };
};

async function rate(n, fn) {
  const start = process.hrtime.bigint();
  for (let i = 0; i < n; i++) await fn(i);
  return n / (Number(process.hrtime.bigint() - start) / 1e9);
}

const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))];
};

async function main() {
  const out = {};
  const { app, db } = mk();
  // Warm the connection.
  await set(ref(db, 'warm'), 1);
  out['set /s'] = await rate(N, i => set(ref(db, `items/i${i}`), { n: i, name: 'item ' + i }));
  out['update /s'] = await rate(N, i => update(ref(db, `items/i${i}`), { n: i + 1 }));
  out['get /s'] = await rate(N, i => get(ref(db, `items/i${i}`)));
  out['transaction /s'] = await rate(N, () => runTransaction(ref(db, 'counter'), v => (v || 0) + 1));
  for (let i = 0; i < 200; i++) await set(ref(db, `scores/p${i}`), { score: (i * 37) % 200 });
  out['indexed query /s'] = await rate(N, () => get(query(ref(db, 'scores'), orderByChild('score'), limitToFirst(10))));

  // Fan-out: FANOUT clients listen to one path; one client writes.
  const listeners = [];
  let expect = 0;
  const got = [];
  let sentAt = 0;
  let ready = 0;
  for (let i = 0; i < FANOUT; i++) {
    const c = mk();
    listeners.push(c);
    let first = true;
    onValue(ref(c.db, 'fan/x'), snap => {
      if (first) { first = false; ready++; return; }
      if (snap.val() === expect) got.push(Number(process.hrtime.bigint() - BigInt(sentAt)) / 1e6);
    });
  }
  const until = async (pred, ms) => {
    const end = Date.now() + ms;
    while (!pred()) {
      if (Date.now() > end) throw new Error('fan-out: condition not reached');
      await new Promise(r => setTimeout(r, 1));
    }
  };
  await until(() => ready === FANOUT, 120000);
  const lat = [];
  for (let r = 1; r <= ROUNDS; r++) {
    got.length = 0;
    expect = r;
    sentAt = process.hrtime.bigint();
    await set(ref(db, 'fan/x'), r);
    await until(() => got.length === FANOUT, 60000);
    lat.push(...got);
  }
  out['fan-out p50 ms'] = pct(lat, 0.5);
  out['fan-out p99 ms'] = pct(lat, 0.99);
  await Promise.all([app, ...listeners.map(l => l.app)].map(a => deleteApp(a)));
  console.log(JSON.stringify(out));
  process.exit(0);
}

main().catch(err => { console.error(err); process.exit(1); });
