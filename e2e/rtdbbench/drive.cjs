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
const SERVER_PID = Number(process.env.SERVER_PID || 0);

// serverCPU is the server process's CPU time so far in ms (its threads'
// run time from /proc; 0 where unknown): a server's CPU per operation
// compares servers better than rates, which the machine's load moves.
const fs = require('fs');
function serverCPU() {
  if (!SERVER_PID) return 0;
  try {
    let ns = 0;
    for (const t of fs.readdirSync(`/proc/${SERVER_PID}/task`)) {
      ns += Number(fs.readFileSync(`/proc/${SERVER_PID}/task/${t}/schedstat`, 'utf8').split(' ')[0]);
    }
    return ns / 1e6;
  } catch (e) {
    return 0;
  }
}

let apps = 0;
const mk = () => {
  const app = initializeApp({ projectId: 'demo-rtdbbench', apiKey: 'fake', databaseURL: `http://${host}:${port}?ns=${ns}` }, 'a' + apps++);
  const db = rtdb.getDatabase(app);
  rtdb.connectDatabaseEmulator(db, host, Number(port));
  return { app, db };
};

// rate runs fn n times in sequence, sets out[key] to the rate and, when
// the server's CPU is known, out[key's name + ' CPU µs/op'] (the server's).
async function rate(out, key, n, fn) {
  const cpu0 = serverCPU();
  const start = process.hrtime.bigint();
  for (let i = 0; i < n; i++) await fn(i);
  out[key] = n / (Number(process.hrtime.bigint() - start) / 1e9);
  const cpu = serverCPU() - cpu0;
  if (cpu > 0) out[key.replace(/ \/s$/, '') + ' CPU µs/op'] = cpu * 1000 / n;
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
  await rate(out, 'set /s', N, i => set(ref(db, `items/i${i}`), { n: i, name: 'item ' + i }));
  await rate(out, 'update /s', N, i => update(ref(db, `items/i${i}`), { n: i + 1 }));
  await rate(out, 'get /s', N, i => get(ref(db, `items/i${i}`)));
  await rate(out, 'transaction /s', N, () => runTransaction(ref(db, 'counter'), v => (v || 0) + 1));
  for (let i = 0; i < 200; i++) await set(ref(db, `scores/p${i}`), { score: (i * 37) % 200 });
  await rate(out, 'indexed query /s', N, () => get(query(ref(db, 'scores'), orderByChild('score'), limitToFirst(10))));

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
  // Beside the delivery latency, the CPU each side spends per write from
  // the first round's end to the last's: the server's, and the listening
  // clients' (their processes' CPU, stamped in each reply). With the
  // clients' CPU per write past the latency asked of the server, the
  // latency measures the clients.
  const lat = [];
  let cpuFrom = 0;
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
    if (r === 1) cpuFrom = serverCPU();
  }
  if (ROUNDS > 1) {
    const clients = kids.reduce((sum, k) => {
      const first = k.replies.find(m => m.round === 1), last = k.replies.find(m => m.round === ROUNDS);
      return sum + (last.cpu - first.cpu) / 1000;
    }, 0);
    out['fan-out clients CPU ms'] = clients / (ROUNDS - 1);
    const server = serverCPU() - cpuFrom;
    if (server > 0) out['fan-out server CPU ms'] = server / (ROUNDS - 1);
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
    const u = process.cpuUsage();
    process.send({ round: m.collect, times: stamps.get(m.collect) || [], cpu: u.user + u.system });
  });
}

if (process.env.FANOUT_CHILD) {
  listen(Number(process.env.FANOUT_CHILD)).catch(err => { console.error(err); process.exit(1); });
} else {
  main().catch(err => { console.error(err); process.exit(1); });
}
