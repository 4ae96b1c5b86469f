'use strict';
// drive.cjs runs the Realtime Database workload of the RTDB benchmark
// through firebase@12.19.0's JS SDK (WebSocket, protocol v5) against
// DB=host:port, namespace NS, and prints one JSON line of figures:
// operations per second for set, update, get, transaction and an indexed
// query, and the listener fan-out's delivery latency (FANOUT clients
// listening to one path, one write, ROUNDS times).
//
// The fan-out's listeners are spread over FANOUT_PROCS child Node
// processes (default: one per 250 listeners, at most 4): in one process
// the thousandth client's snapshot waits for the JavaScript of the 999
// before it, which measures the client, not the server. Each child
// stamps its deliveries with process.hrtime (CLOCK_MONOTONIC, one clock
// for every process of the machine) and the parent subtracts the time it
// sent the write.
const { initializeApp, deleteApp } = require('firebase/app');
const rtdb = require('firebase/database');
const { ref, set, get, update, runTransaction, onValue, query, orderByChild, limitToFirst } = rtdb;

const [host, port] = (process.env.DB || '127.0.0.1:9000').split(':');
const ns = process.env.NS || 'demo-rtdbbench-default-rtdb';
const N = Number(process.env.N || 100);
const FANOUT = Number(process.env.FANOUT || 100);
const ROUNDS = Number(process.env.ROUNDS || 5);
const PROCS = Number(process.env.FANOUT_PROCS || Math.max(1, Math.min(4, Math.ceil(FANOUT / 250))));

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

  // Fan-out: FANOUT clients, in PROCS child processes, listen to one
  // path; one client writes.
  const { fork } = require('child_process');
  const kids = [];
  for (let k = 0; k < PROCS; k++) {
    const count = Math.floor(FANOUT / PROCS) + (k < FANOUT % PROCS ? 1 : 0);
    const child = fork(__filename, [], { env: { ...process.env, FANOUT_CHILD: String(count) } });
    const kid = { child, count, ready: false, replies: [] };
    child.on('message', m => {
      if (m.ready) kid.ready = true;
      if (m.times) kid.replies.push(m);
    });
    child.on('exit', code => { if (code) { console.error('fan-out child exited', code); process.exit(1); } });
    kids.push(kid);
  }
  const until = async (pred, ms) => {
    const end = Date.now() + ms;
    while (!pred()) {
      if (Date.now() > end) throw new Error('fan-out: condition not reached');
      await new Promise(r => setTimeout(r, 1));
    }
  };
  await until(() => kids.every(k => k.ready), 300000);
  const lat = [];
  for (let r = 1; r <= ROUNDS; r++) {
    const sentAt = Number(process.hrtime.bigint());
    await set(ref(db, 'fan/x'), r);
    for (const k of kids) k.child.send({ collect: r });
    await until(() => kids.every(k => k.replies.some(m => m.round === r)), 60000);
    for (const k of kids) {
      const m = k.replies.find(m => m.round === r);
      if (m.times.length !== k.count) throw new Error(`fan-out: ${m.times.length} of ${k.count} listeners got round ${r}`);
      lat.push(...m.times.map(t => (t - sentAt) / 1e6));
    }
  }
  for (const k of kids) k.child.send({ exit: true });
  out['fan-out p50 ms'] = pct(lat, 0.5);
  out['fan-out p99 ms'] = pct(lat, 0.99);
  await deleteApp(app);
  console.log(JSON.stringify(out));
  process.exit(0);
}

// listen is a fan-out child: FANOUT_CHILD clients listen to fan/x and
// stamp each value they get; asked to collect a round, it answers with
// the stamps of that round's value once every client has it.
async function listen(count) {
  const stamps = new Map(); // value -> delivery times (ns)
  let ready = 0;
  const apps = [];
  for (let i = 0; i < count; i++) {
    const c = mk();
    apps.push(c.app);
    let first = true;
    onValue(ref(c.db, 'fan/x'), snap => {
      const at = Number(process.hrtime.bigint());
      if (first) { first = false; ready++; return; }
      const v = snap.val();
      if (!stamps.has(v)) stamps.set(v, []);
      stamps.get(v).push(at);
    });
  }
  process.on('disconnect', () => process.exit(0)); // the parent is gone
  while (ready < count) await new Promise(r => setTimeout(r, 1));
  process.send({ ready: true });
  process.on('message', async m => {
    if (m.exit) {
      await Promise.all(apps.map(a => deleteApp(a)));
      process.exit(0);
    }
    const end = Date.now() + 60000;
    while ((stamps.get(m.collect) || []).length < count && Date.now() < end) await new Promise(r => setTimeout(r, 1));
    process.send({ round: m.collect, times: stamps.get(m.collect) || [] });
  });
}

if (process.env.FANOUT_CHILD) {
  listen(Number(process.env.FANOUT_CHILD)).catch(err => { console.error(err); process.exit(1); });
} else {
  main().catch(err => { console.error(err); process.exit(1); });
}
