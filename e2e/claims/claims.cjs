// Phase "signup": creates two users through the JS SDK and prints their uids.
// Phase "check": signs each in again, refreshes the ID token (to pick up
// custom claims set by the admin SDK) and tries a write that Firestore
// rules allow only for role == 'admin'. Phase "serverapp": a
// FirebaseServerApp made from each user's ID token reads Firestore as that
// user. Each phase prints one JSON line.
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
  } else if (phase === 'serverapp') {
    // Server-side rendering: a FirebaseServerApp made from the ID token a
    // browser would send reaches Auth and Firestore as that user.
    const { initializeServerApp, deleteApp } = require('firebase/app');
    for (const [name, email] of Object.entries(users)) {
      const cred = await signInWithEmailAndPassword(auth, email, 'secret-' + name);
      const idToken = await cred.user.getIdToken(true);
      const server = initializeServerApp({ projectId: project, apiKey: 'fake-api-key' }, { authIdToken: idToken });
      const sauth = getAuth(server);
      connectAuthEmulator(sauth, 'http://' + authHost, { disableWarnings: true });
      await sauth.authStateReady();
      const sdb = getFirestore(server);
      connectFirestoreEmulator(sdb, h, Number(p));
      out[name] = {
        sameUser: !!sauth.currentUser && sauth.currentUser.uid === cred.user.uid,
        email: sauth.currentUser && sauth.currentUser.email,
        ownProfile: await attempt(async () => { const s = await getDoc(doc(sdb, 'profiles', cred.user.uid)); if (s.data().name !== name) throw new Error('wrong profile'); }),
        otherProfile: await attempt(() => getDoc(doc(sdb, 'profiles', 'someone-else'))),
        adminRead: await attempt(() => getDoc(doc(sdb, 'admin', 'settings'))),
      };
      await terminate(sdb);
      await deleteApp(server);
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
