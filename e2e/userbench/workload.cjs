'use strict';
// workload.cjs is the client side of an app's test suite, through
// firebase@12.19.0 in Node, run under `pyric exec` or `firebase
// emulators:exec` (e2e/userbench): many small test-like steps that sign
// up and sign in, write and query Firestore, listen for changes, call
// callables and wait for triggers' effects (the e2e/functions codebases
// js and triggers), and — where the environment has them — write and
// listen to the Realtime Database and upload and download Storage
// objects. ROUNDS repeats the suite with fresh names (a test suite's
// cases). It prints {"started": ms} first, one step line
// {"step", "ok", "got"|"error", "ms"} per step (e2e/js/steps.cjs),
// {"skipped": service, "reason"} for a service the environment lacks,
// and {"finished": ms} last; the wall-clock stamps let the harness split
// startup from workload.
const started = Date.now();
console.log(JSON.stringify({ started }));

const { initializeApp } = require('firebase/app');
const au = require('firebase/auth');
const fs = require('firebase/firestore');
const fn = require('firebase/functions');
const rtdb = require('firebase/database');
const st = require('firebase/storage');
const { steps } = require('../js/steps.cjs');

const env = process.env;
const project = env.GCLOUD_PROJECT;
const rounds = Number(env.ROUNDS || 1);
const sleep = ms => new Promise(r => setTimeout(r, ms));
const hostPort = hp => { const i = hp.lastIndexOf(':'); return [hp.slice(0, i), Number(hp.slice(i + 1))]; };

// until resolves when a listener callback reports done(value).
const until = (subscribe) => new Promise((resolve, reject) => {
  let unsub = () => {};
  let finished = false;
  const done = v => { if (!finished) { finished = true; Promise.resolve().then(() => unsub()); resolve(v); } };
  unsub = subscribe(done, e => { if (!finished) { finished = true; reject(e); } });
  if (finished) unsub();
});

async function main() {
  // Generous: on a loaded machine a worker's first call takes long.
  const { step, failed } = steps(120000);
  const hub = await (await fetch(`http://${env.FIREBASE_EMULATOR_HUB}/emulators`)).json();
  const cfg = JSON.parse(env.FIREBASE_CONFIG || '{}');
  const bucket = cfg.storageBucket || `${project}.appspot.com`;
  const app = initializeApp({
    projectId: project, apiKey: 'fake-api-key', storageBucket: bucket,
    databaseURL: `http://${env.FIREBASE_DATABASE_EMULATOR_HOST || '127.0.0.1:9000'}?ns=${project}-default-rtdb`,
  });
  const auth = au.getAuth(app);
  au.connectAuthEmulator(auth, `http://${env.FIREBASE_AUTH_EMULATOR_HOST}`, { disableWarnings: true });
  const db = fs.getFirestore(app);
  fs.connectFirestoreEmulator(db, ...hostPort(env.FIRESTORE_EMULATOR_HOST));
  const fns = fn.getFunctions(app);
  fn.connectFunctionsEmulator(fns, hub.functions.host, hub.functions.port);
  let rdb = null;
  if (env.FIREBASE_DATABASE_EMULATOR_HOST) {
    rdb = rtdb.getDatabase(app);
    rtdb.connectDatabaseEmulator(rdb, ...hostPort(env.FIREBASE_DATABASE_EMULATOR_HOST));
  } else {
    console.log(JSON.stringify({ skipped: 'database', reason: 'no Realtime Database emulator in this environment' }));
  }
  let storage = null;
  if (env.FIREBASE_STORAGE_EMULATOR_HOST) {
    storage = st.getStorage(app);
    st.connectStorageEmulator(storage, ...hostPort(env.FIREBASE_STORAGE_EMULATOR_HOST));
  } else {
    console.log(JSON.stringify({ skipped: 'storage', reason: 'no Cloud Storage emulator in this environment' }));
  }
  // seen waits for the triggers codebase's record of an event.
  const seen = id => until((done, fail) => fs.onSnapshot(fs.doc(db, 'seen', id), s => { if (s.exists()) done(s.data()); }, fail));

  for (let r = 0; r < rounds; r++) {
    const name = `user${r}`;
    const email = `${name}@example.com`;
    let uid;
    await step('auth: sign up (blocking function marks the user)', async () => {
      const cred = await au.createUserWithEmailAndPassword(auth, email, 'secret-123');
      uid = cred.user.uid;
      const tok = await cred.user.getIdTokenResult(true);
      return { displayName: cred.user.displayName, role: tok.claims.role || null, email: tok.claims.email };
    });
    await step('auth: sign out, sign in again', async () => {
      await au.signOut(auth);
      const cred = await au.signInWithEmailAndPassword(auth, email, 'secret-123');
      return { same: cred.user.uid === uid, current: auth.currentUser.uid === uid };
    });
    await step('auth: wrong password is refused', async () => {
      try {
        await au.signInWithEmailAndPassword(auth, email, 'not-the-password');
        return 'signed in';
      } catch (e) {
        return ['auth/wrong-password', 'auth/invalid-credential'].includes(e.code) ? 'refused' : e.code;
      } finally {
        if (auth.currentUser?.uid !== uid) await au.signInWithEmailAndPassword(auth, email, 'secret-123');
      }
    });
    await step('auth: the auth trigger saw the new user', async () => (await seen(`newUser-${uid}`)).email);

    await step('firestore: set and get a profile', async () => {
      await fs.setDoc(fs.doc(db, 'users', uid), { name, round: r, tags: ['a', 'b'] });
      const s = await fs.getDoc(fs.doc(db, 'users', uid));
      return s.data();
    });
    const todos = fs.collection(db, 'users', uid, 'todos');
    await step('firestore: add ten todos', async () => {
      for (let i = 0; i < 10; i++) await fs.setDoc(fs.doc(todos, `t${i}`), { n: i, done: false, title: `todo ${i}` });
      return (await fs.getDocs(todos)).size;
    });
    await step('firestore: query todos', async () => {
      const q = fs.query(todos, fs.where('n', '>=', 4), fs.orderBy('n', 'desc'), fs.limit(3));
      return (await fs.getDocs(q)).docs.map(d => d.data().n);
    });
    await step('firestore: a query listener sees an update', async () => {
      const q = fs.query(todos, fs.where('done', '==', true));
      let first = true;
      const ids = until((done, fail) => fs.onSnapshot(q, s => {
        if (first) { first = false; fs.updateDoc(fs.doc(todos, 't3'), { done: true }).catch(fail); return; }
        if (s.size > 0) done(s.docs.map(d => d.id));
      }, fail));
      return await ids;
    });
    await step('firestore: transaction increments a counter', async () => {
      const c = fs.doc(db, 'counters', uid);
      for (let i = 0; i < 3; i++) {
        await fs.runTransaction(db, async tx => {
          const s = await tx.get(c);
          tx.set(c, { n: (s.exists() ? s.data().n : 0) + 1 });
        });
      }
      return (await fs.getDoc(c)).data().n;
    });
    await step('firestore: batch delete', async () => {
      const b = fs.writeBatch(db);
      for (let i = 0; i < 5; i++) b.delete(fs.doc(todos, `t${i}`));
      await b.commit();
      return (await fs.getDocs(todos)).docs.map(d => d.id);
    });

    await step('functions: callable add', async () => {
      const res = await fn.httpsCallable(fns, 'add')({ a: 2, b: 40 + r });
      return { sum: res.data.sum, caller: res.data.uid === uid };
    });
    await step('functions: callable sees the signed-in user', async () => {
      const res = await fn.httpsCallable(fns, 'whoami')({ x: 1 });
      return { caller: res.data.uid === uid, email: res.data.email, data: res.data.data };
    });
    await step('functions: callable writes through the Admin SDK', async () => {
      const res = await fn.httpsCallable(fns, 'writeDoc')({ id: `w-${uid}`, value: r });
      const s = await fs.getDoc(fs.doc(db, 'fromFunctions', `w-${uid}`));
      return { returned: res.data.written, read: s.data() };
    });
    await step('functions: a Firestore trigger records a write', async () => {
      await fs.setDoc(fs.doc(db, 'audited', `a-${uid}-${r}`), { by: uid });
      const rec = await seen(`auditWrites-a-${uid}-${r}`);
      return rec.exists;
    });

    if (rdb) {
      // totalOrder writes its total to the Realtime Database, so it runs
      // only where one is served (under firebase-tools' emulators here,
      // its write would wait for production's credentials).
      await step('database: a Firestore trigger totals an order into the database', async () => {
        await fs.setDoc(fs.doc(db, 'orders', `o-${uid}`), { items: [{ price: 2, qty: 3 }, { price: 5, qty: 1 + r }] });
        const rec = await seen(`totalOrder-o-${uid}`);
        return rec.total;
      });
      await step('database: set and get', async () => {
        await rtdb.set(rtdb.ref(rdb, `rooms/${uid}`), { name, members: { [uid]: true } });
        return (await rtdb.get(rtdb.ref(rdb, `rooms/${uid}/name`))).val();
      });
      await step('database: a listener sees a write', async () => {
        const r0 = rtdb.ref(rdb, `rooms/${uid}/messages`);
        let first = true;
        const got = until((done) => rtdb.onValue(r0, s => {
          if (first) { first = false; rtdb.push(r0, { text: 'hi', by: uid }); return; }
          if (s.exists()) done(Object.values(s.val()).map(m => m.text));
        }));
        return await got;
      });
      await step('database: transaction', async () => {
        const c = rtdb.ref(rdb, `counters/${uid}`);
        for (let i = 0; i < 3; i++) await rtdb.runTransaction(c, v => (v || 0) + 1);
        return (await rtdb.get(c)).val();
      });
      await step('database: a trigger records a score', async () => {
        await rtdb.set(rtdb.ref(rdb, `scores/${name}`), 10 + r);
        return (await seen(`scoreCreated-${name}`)).value;
      });
    }

    if (storage) {
      const obj = st.ref(storage, `users/${uid}/avatar.png`);
      const bytes = new Uint8Array(4096).map((_, i) => i % 251);
      await step('storage: upload', async () => {
        const res = await st.uploadBytes(obj, bytes, { contentType: 'image/png', customMetadata: { by: name } });
        return { size: res.metadata.size, contentType: res.metadata.contentType, by: res.metadata.customMetadata.by };
      });
      await step('storage: download', async () => {
        const got = new Uint8Array(await st.getBytes(obj));
        return { size: got.length, same: got.every((b, i) => b === bytes[i]) };
      });
      await step('storage: list', async () => (await st.listAll(st.ref(storage, `users/${uid}`))).items.map(i => i.name));
      await step('storage: a trigger sees the upload', async () => {
        const rec = await seen(`uploaded-users_${uid}_avatar.png`);
        return { contentType: rec.contentType, size: rec.size };
      });
    }
    await au.signOut(auth);
  }
  console.log(JSON.stringify({ finished: Date.now() }));
  process.exit(failed() ? 1 : 0);
}

main().catch(e => { console.error(e); process.exit(2); });
