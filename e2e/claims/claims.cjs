// Phase "signup": creates two users through the JS SDK and prints their uids.
// Phase "check": signs each in again, refreshes the ID token (to pick up
// custom claims set by the admin SDK) and tries a write that Firestore
// rules allow only for role == 'admin'. Prints one JSON line.
const { initializeApp } = require('firebase/app');
const { getAuth, connectAuthEmulator, createUserWithEmailAndPassword, signInWithEmailAndPassword, signOut } = require('firebase/auth');
const { getFirestore, connectFirestoreEmulator, doc, setDoc, getDoc, terminate } = require('firebase/firestore');

const [authHost, fsHost, project, phase] = [process.env.AUTH_HOST, process.env.FIRESTORE_HOST, process.env.PROJECT, process.argv[2] || process.env.PHASE];
const app = initializeApp({ projectId: project, apiKey: 'fake-api-key', authDomain: project + '.firebaseapp.com' });
const auth = getAuth(app);
connectAuthEmulator(auth, 'http://' + authHost, { disableWarnings: true });
const db = getFirestore(app);
const [h, p] = fsHost.split(':');
connectFirestoreEmulator(db, h, Number(p));

const users = { alice: 'alice@example.com', bob: 'bob@example.com' };

async function attempt(fn) {
  try { await fn(); return 'ok'; } catch (e) { return e.code || String(e); }
}

async function main() {
  const out = {};
  if (phase === 'signup') {
    for (const [name, email] of Object.entries(users)) {
      const cred = await createUserWithEmailAndPassword(auth, email, 'secret-' + name);
      out[name] = cred.user.uid;
      await signOut(auth);
    }
  } else {
    for (const [name, email] of Object.entries(users)) {
      const cred = await signInWithEmailAndPassword(auth, email, 'secret-' + name);
      const token = await cred.user.getIdTokenResult(true);
      out[name] = {
        role: token.claims.role || null,
        adminWrite: await attempt(() => setDoc(doc(db, 'admin', 'settings'), { by: name })),
        adminRead: await attempt(() => getDoc(doc(db, 'admin', 'settings'))),
        ownProfile: await attempt(() => setDoc(doc(db, 'profiles', cred.user.uid), { name })),
        otherProfile: await attempt(() => setDoc(doc(db, 'profiles', 'someone-else'), { name })),
      };
      await signOut(auth);
    }
  }
  await terminate(db);
  console.log(JSON.stringify(out));
  process.exit(0);
}
main().catch((e) => { console.error(e); process.exit(1); });
