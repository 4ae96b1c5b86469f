'use strict';
// node_revoke.cjs drives firebase@12.19.0's Realtime Database in Node
// against DB=host:port (namespace NS) and, for sign-in and sign-out, the
// Auth endpoint AUTH_URL: listens revoked when the rules stop allowing
// them (auth change, data the rule reads), query.* rules, the listen hash
// on a reconnect, and the "ac" push of a token that expires in use. A tap
// on faye-websocket (the SDK's Node transport) records every frame, so a
// step can check what crossed the wire. One JSON line per step.
const faye = require('faye-websocket');
const frames = []; // [dir, text]
const origSend = faye.Client.prototype.send;
faye.Client.prototype.send = function (d) { frames.push(['>', String(d)]); return origSend.call(this, d); };
const origDispatch = faye.Client.prototype.dispatchEvent;
faye.Client.prototype.dispatchEvent = function (ev) {
  if (ev && ev.type === 'message') frames.push(['<', String(ev.data)]);
  return origDispatch.call(this, ev);
};

const { initializeApp } = require('firebase/app');
const A = require('firebase/auth');
const rtdb = require('firebase/database');
const { steps } = require('../js/steps.cjs');
const { ref, set, get, remove, onValue, query, orderByKey, limitToFirst, goOffline, goOnline } = rtdb;

const [host, port] = process.env.DB.split(':');
const ns = process.env.NS;
const sleep = ms => new Promise(r => setTimeout(r, ms));
const until = async (pred, ms = 10000) => {
  const end = Date.now() + ms;
  while (!pred()) { if (Date.now() > end) throw new Error('condition not reached'); await sleep(10); }
};
let apps = 0;
const mk = (token) => {
  const app = initializeApp({ projectId: 'demo-revoke', apiKey: 'fake', databaseURL: `http://${host}:${port}?ns=${ns}` }, 'a' + (apps++));
  const db = rtdb.getDatabase(app);
  rtdb.connectDatabaseEmulator(db, host, Number(port), token ? { mockUserToken: token } : {});
  return { app, db };
};
// cancelled resolves with the error message of a listen's cancel callback.
const listen = (q) => {
  const out = { values: [], error: null };
  out.unsub = onValue(q, s => out.values.push(s.val()), e => { out.error = e.message; });
  return out;
};
// data messages of the frames from index i on (reassembling split ones is
// not needed: these are small).
const dataFrom = i => frames.slice(i).map(([dir, f]) => {
  try { const m = JSON.parse(f); return m.t === 'd' ? [dir, m.d] : null; } catch (e) { return null; }
}).filter(Boolean);

async function main() {
  const { step, failed } = steps(40000);
  const { db: admin } = mk({ sub: 'setup' });

  await step('sign-out revokes a listen', async () => {
    const { app, db } = mk();
    const auth = A.getAuth(app);
    A.connectAuthEmulator(auth, process.env.AUTH_URL, { disableWarnings: true });
    const cred = await A.signInAnonymously(auth);
    const uid = cred.user.uid;
    await set(ref(db, `users/${uid}`), { n: 1 });
    const l = listen(ref(db, `users/${uid}`));
    await until(() => l.values.length === 1);
    await A.signOut(auth);
    await until(() => l.error !== null);
    return [l.values, l.error.split(':')[0].replace(uid, 'UID')];
  });

  await step('a write to data the rule reads revokes a listen', async () => {
    const { db: alice } = mk({ sub: 'alice' });
    await set(ref(admin, 'acl/d1/alice'), true);
    await set(ref(admin, 'docs/d1'), { title: 'x' });
    const l = listen(ref(alice, 'docs/d1'));
    await until(() => l.values.length === 1);
    await set(ref(admin, 'acl/d2/alice'), true); // not read by d1's rule: nothing
    await set(ref(admin, 'docs/d1/title'), 'y');
    await until(() => l.values.length === 2);
    await remove(ref(admin, 'acl/d1/alice'));
    await until(() => l.error !== null);
    await set(ref(admin, 'docs/d1/title'), 'z');
    await sleep(100);
    return [l.values, l.error.split(':')[0]];
  });

  await step('a revoked query listen is cancelled by its query', async () => {
    const { db: alice } = mk({ sub: 'alice' });
    await set(ref(admin, 'acl/d3/alice'), true);
    await set(ref(admin, 'docs/d3'), { a: 1, b: 2 });
    const mark = frames.length;
    const l = listen(query(ref(alice, 'docs/d3'), orderByKey(), limitToFirst(1)));
    await until(() => l.values.length === 1);
    await remove(ref(admin, 'acl/d3/alice'));
    await until(() => l.error !== null);
    const c = dataFrom(mark).find(([dir, d]) => dir === '<' && d.a === 'c');
    return [l.values, l.error.split(':')[0], c[1].b];
  });

  await step('query rules', async () => {
    const { db } = mk();
    await set(ref(admin, 'capped'), { a: 1, b: 2, c: 3 });
    const ok = await get(query(ref(db, 'capped'), orderByKey(), limitToFirst(2)));
    let over;
    try { await get(query(ref(db, 'capped'), orderByKey(), limitToFirst(3))); over = 'allowed'; } catch (e) { over = e.message; }
    let plain;
    try { await get(ref(db, 'capped')); plain = 'allowed'; } catch (e) { plain = e.message; }
    const l = listen(query(ref(db, 'capped'), orderByKey(), limitToFirst(3)));
    await until(() => l.error !== null);
    return [Object.keys(ok.val()), over, plain, l.error.split(':')[0]];
  });

  await step('a reconnect re-listens with the hash and gets no data again', async () => {
    const { db } = mk({ sub: 'hash' });
    // Keys past the BMP sort by UTF-16 units in the hash (an emoji before
    // U+E000), as in orderByKey.
    const v = { a: { n: 1.5, s: 'x', b: true }, arr: [1, 'two', false], big: 12345678901234, neg: -0.25, k10: 1, k2: 2,
      '\u{1F600}': 1, '\uE000': 2, '-5': 3, '007': 4 };
    await set(ref(admin, 'public/h'), v);
    await rtdb.setWithPriority(ref(admin, 'public/h/p'), 'pv', 7);
    await rtdb.setWithPriority(ref(admin, 'public/h/q'), { z: 1 }, 'sp');
    const l = listen(ref(db, 'public/h'));
    await until(() => l.values.length === 1);
    goOffline(db);
    await sleep(100);
    const mark = frames.length;
    goOnline(db);
    const relisten = () => dataFrom(mark).find(([dir, d]) => dir === '>' && d.a === 'q' && d.b.p === '/public/h');
    await until(() => relisten() && dataFrom(mark).some(([dir, d]) => dir === '<' && d.r === relisten()[1].r));
    const q = relisten()[1];
    const pushes = dataFrom(mark).filter(([dir, d]) => dir === '<' && d.a === 'd' && d.b.p === 'public/h');
    await set(ref(admin, 'public/h/a/n'), 2); // still live
    await until(() => l.values.length === 2);
    return [q.b.h.length > 0, pushes.length, l.values.length, l.values[1].a.n];
  });

  await step('a token expiring in use gets the ac push and the SDK reconnects', async () => {
    // Far enough ahead that a loaded machine still presents the token
    // before it expires (an expired one is accepted without a timer).
    const exp = Math.floor(Date.now() / 1000) + 5;
    const { db } = mk({ sub: 'exp', iat: exp - 3600, exp });
    const mark = frames.length;
    const l = listen(ref(db, 'public/e'));
    await until(() => l.values.length === 1);
    const ac = () => dataFrom(mark).find(([dir, d]) => dir === '<' && d.a === 'ac');
    await until(() => ac(), 15000);
    // After the push the SDK closes, reconnects, authenticates again and
    // listens again: a change still arrives.
    const authAfter = () => dataFrom(frames.indexOf(frames.find(([dir, f]) => dir === '<' && f.includes('"a":"ac"'))))
      .filter(([dir, d]) => dir === '>' && d.a === 'auth').length;
    await until(() => authAfter() >= 1);
    await sleep(300);
    await set(ref(admin, 'public/e'), 'after');
    await until(() => l.values.includes('after'));
    return [ac()[1].b, l.error, l.values];
  });
  process.exit(failed() ? 1 : 0);
}
main().catch(e => { console.error(e); process.exit(2); });
