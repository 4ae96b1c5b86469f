'use strict';
// session.cjs is a session of allowed and denied requests by alice and
// bob through the official Firebase JS SDK (firebase@12.19.0 in Node):
// Realtime Database (websocket protocol) against DB=host:port and Cloud
// Storage (v0 REST) against STORAGE=host:port, project PROJECT. Each step
// prints one JSON line {"step","ok","got"|"error"}; a step expected to be
// denied returns the error code.
const { initializeApp } = require('firebase/app');
const rtdb = require('firebase/database');
const st = require('firebase/storage');

const project = process.env.PROJECT;
const ns = `${project}-default-rtdb`;
const [dbHost, dbPort] = process.env.DB.split(':');
const [stHost, stPort] = process.env.STORAGE.split(':');
const bucket = `${project}.appspot.com`;

async function main() {
  const step = async (name, f) => {
    try {
      const got = await Promise.race([f(), new Promise((_, rej) => setTimeout(() => rej(new Error('timeout 15s')), 15000))]);
      console.log(JSON.stringify({ step: name, ok: true, got: got ?? null }));
    } catch (e) {
      console.log(JSON.stringify({ step: name, ok: false, error: `${e.code || ''} ${e.message}` }));
    }
  };
  const mk = (name, uid) => {
    const app = initializeApp({ projectId: project, apiKey: 'fake', databaseURL: `http://${dbHost}:${dbPort}?ns=${ns}`, storageBucket: bucket }, name);
    const db = rtdb.getDatabase(app);
    rtdb.connectDatabaseEmulator(db, dbHost, Number(dbPort), { mockUserToken: { sub: uid } });
    const s = st.getStorage(app);
    st.connectStorageEmulator(s, stHost, Number(stPort), { mockUserToken: { sub: uid } });
    s.maxOperationRetryTime = 2000;
    s.maxUploadRetryTime = 2000;
    return { db, s };
  };
  const alice = mk('alice', 'alice');
  const bob = mk('bob', 'bob');
  const { ref, set, get, update, push, remove, onValue, serverTimestamp } = rtdb;
  // The code, or the message's first line (the rest explains the denial).
  const code = async p => { try { await p; return 'ok'; } catch (e) { return e.code || e.message.split('\n')[0]; } };
  const enc = s => new TextEncoder().encode(s);

  // Realtime Database.
  await step('rtdb alice set', () => code(set(ref(alice.db, 'users/alice'), { name: 'Alice', at: serverTimestamp() })));
  await step('rtdb bob set', () => code(set(ref(bob.db, 'users/bob'), { name: 'Bob', n: 1 })));
  await step('rtdb bob set alice denied', () => code(set(ref(bob.db, 'users/alice/name'), 'hacked')));
  await step('rtdb alice get', async () => (await get(ref(alice.db, 'users/alice/name'))).val());
  await step('rtdb bob get alice denied', () => code(get(ref(bob.db, 'users/alice'))));
  await step('rtdb bob update', () => code(update(ref(bob.db, 'users/bob'), { name: 'Bobby', 'tags/x': true })));
  await step('rtdb bob push', async () => {
    const r = push(ref(bob.db, 'posts'));
    await set(r, { by: 'bob', text: 'hi' });
    return 'ok';
  });
  await step('rtdb alice push as bob denied', () => code(set(push(ref(alice.db, 'posts')), { by: 'bob', text: 'forged' })));
  await step('rtdb bob remove', () => code(remove(ref(bob.db, 'users/bob/n'))));
  await step('rtdb alice listen', () => new Promise((resolve, reject) => {
    const off = onValue(ref(alice.db, 'users/alice'), s => { off(); resolve(s.val().name); }, reject);
  }));
  await step('rtdb bob listen alice denied', () => new Promise(resolve => {
    onValue(ref(bob.db, 'users/alice'), () => resolve('delivered'), e => resolve(e.code || e.message));
  }));

  // Cloud Storage.
  await step('storage alice upload', () => code(st.uploadBytes(st.ref(alice.s, 'users/alice/a.txt'), enc('alice'), { contentType: 'text/plain' })));
  await step('storage bob upload', () => code(st.uploadBytes(st.ref(bob.s, 'users/bob/b.txt'), enc('bob!'), { customMetadata: { k: 'v' } })));
  await step('storage bob upload c', () => code(st.uploadBytes(st.ref(bob.s, 'users/bob/c.txt'), enc('c'))));
  await step('storage bob upload alice denied', () => code(st.uploadBytes(st.ref(bob.s, 'users/alice/x.txt'), enc('x'))));
  await step('storage alice download', async () => new TextDecoder().decode(await st.getBytes(st.ref(alice.s, 'users/alice/a.txt'))));
  await step('storage bob download alice denied', () => code(st.getBytes(st.ref(bob.s, 'users/alice/a.txt'))));
  await step('storage bob list', async () => (await st.list(st.ref(bob.s, 'users/bob'))).items.map(i => i.name));
  await step('storage bob update metadata', () => code(st.updateMetadata(st.ref(bob.s, 'users/bob/b.txt'), { customMetadata: { k: 'w' } })));
  await step('storage bob delete', () => code(st.deleteObject(st.ref(bob.s, 'users/bob/c.txt'))));
  process.exit(0);
}
main().catch(e => { console.error(e); process.exit(1); });
