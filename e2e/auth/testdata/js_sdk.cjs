// Drives pyric's Auth endpoints with the official firebase JS SDK (Node
// build). Prints one JSON object of observations for js_test.go to check.
const { recorder, outboxOf } = require('./sdk_kit.cjs');
const { initializeApp } = require('firebase/app');
const A = require('firebase/auth');

const base = process.env.AUTH_URL;
const project = process.env.PROJECT;
const app = initializeApp({ projectId: project, apiKey: 'fake-api-key' });
const auth = A.getAuth(app);
A.connectAuthEmulator(auth, base, { disableWarnings: true });

const out = { states: [], errors: {} };
A.onAuthStateChanged(auth, (u) => out.states.push(u ? (u.isAnonymous ? 'anon' : u.email || u.uid) : null));

const code = recorder(out.errors);
const outbox = outboxOf(base, project);
const tick = () => new Promise((r) => setTimeout(r, 50));

(async () => {
  const email = 'js@example.com';
  const cred = await A.createUserWithEmailAndPassword(auth, email, 'secret123');
  out.signUp = { uid: cred.user.uid, op: cred.operationType, isNew: A.getAdditionalUserInfo(cred).isNewUser };
  const r1 = await cred.user.getIdTokenResult();
  out.signUpToken = { provider: r1.signInProvider, email: r1.claims.email, verified: r1.claims.email_verified, iss: r1.claims.iss, aud: r1.claims.aud };
  await code('duplicate', () => A.createUserWithEmailAndPassword(auth, email, 'secret123'));
  await code('weak', () => A.createUserWithEmailAndPassword(auth, 'weak@example.com', '123'));
  await code('invalidEmail', () => A.createUserWithEmailAndPassword(auth, 'not-an-email', 'secret123'));

  await A.updateProfile(auth.currentUser, { displayName: 'JS User', photoURL: 'http://x/p.png' });
  await A.reload(auth.currentUser);
  out.profile = { name: auth.currentUser.displayName, photo: auth.currentUser.photoURL };
  const before = await auth.currentUser.getIdToken();
  const after = await auth.currentUser.getIdToken(true);
  out.refreshed = before !== after && after.split('.').length === 3;
  out.refreshedName = (await auth.currentUser.getIdTokenResult()).claims.name;

  await A.sendEmailVerification(auth.currentUser);
  const verify = await outbox('VERIFY_EMAIL', email);
  out.verifyLinkMode = new URL(verify.oobLink).searchParams.get('mode');
  await A.applyActionCode(auth, verify.oobCode);
  await A.reload(auth.currentUser);
  out.emailVerified = auth.currentUser.emailVerified;
  await code('reuseActionCode', () => A.applyActionCode(auth, verify.oobCode));

  await A.updatePassword(auth.currentUser, 'changed123');
  await A.signOut(auth);
  out.afterSignOut = auth.currentUser;
  await code('wrongPassword', () => A.signInWithEmailAndPassword(auth, email, 'secret123'));
  await code('unknownUser', () => A.signInWithEmailAndPassword(auth, 'nobody@example.com', 'secret123'));
  const si = await A.signInWithEmailAndPassword(auth, email, 'changed123');
  out.signIn = { uid: si.user.uid, verified: si.user.emailVerified, isNew: A.getAdditionalUserInfo(si).isNewUser };

  await A.sendPasswordResetEmail(auth, email);
  const reset = await outbox('PASSWORD_RESET', email);
  out.resetEmail = await A.verifyPasswordResetCode(auth, reset.oobCode);
  await code('weakReset', () => A.confirmPasswordReset(auth, reset.oobCode, 'x'));
  await A.confirmPasswordReset(auth, reset.oobCode, 'reset1234');
  await A.signOut(auth);
  out.afterReset = (await A.signInWithEmailAndPassword(auth, email, 'reset1234')).user.uid;

  await A.signOut(auth);
  const anon = await A.signInAnonymously(auth);
  out.anon = { isAnonymous: anon.user.isAnonymous, provider: (await anon.user.getIdTokenResult()).signInProvider };
  const linked = await A.linkWithCredential(anon.user, A.EmailAuthProvider.credential('linked@example.com', 'secret123'));
  out.linked = { sameUid: linked.user.uid === anon.user.uid, isAnonymous: linked.user.isAnonymous, email: linked.user.email,
    providers: linked.user.providerData.map((p) => p.providerId) };

  await A.signOut(auth);
  const enc = (o) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const ct = enc({ alg: 'none', typ: 'JWT' }) + '.' + enc({ uid: 'js-custom', claims: { role: 'admin', level: 3 }, iat: Math.floor(Date.now() / 1000),
    aud: 'https://identitytoolkit.googleapis.com/google.identity.identitytoolkit.v1.IdentityToolkit' }) + '.';
  const custom = await A.signInWithCustomToken(auth, ct);
  const cr = await custom.user.getIdTokenResult();
  out.custom = { uid: custom.user.uid, role: cr.claims.role, level: cr.claims.level, provider: cr.signInProvider };
  await code('badCustomToken', () => A.signInWithCustomToken(auth, 'not-a-token'));

  await A.signOut(auth);
  const google = await A.signInWithCredential(auth, A.GoogleAuthProvider.credential(
    JSON.stringify({ sub: 'google-js-1', email: 'gjs@example.com', email_verified: true, name: 'G JS' })));
  const gr = await google.user.getIdTokenResult();
  out.google = { name: google.user.displayName, email: google.user.email, provider: gr.signInProvider,
    providers: google.user.providerData.map((p) => p.providerId), isNew: A.getAdditionalUserInfo(google).isNewUser,
    identities: gr.claims.firebase.identities };
  const google2 = await A.signInWithCredential(auth, A.GoogleAuthProvider.credential(JSON.stringify({ sub: 'google-js-1', email: 'gjs@example.com', email_verified: true })));
  out.googleAgain = { sameUid: google2.user.uid === google.user.uid, isNew: A.getAdditionalUserInfo(google2).isNewUser };
  await A.signOut(auth);
  const gh = await A.signInWithCredential(auth, A.GithubAuthProvider.credential(JSON.stringify({ sub: 'gh-js', screen_name: 'octo' })));
  out.github = (await gh.user.getIdTokenResult()).signInProvider;

  await A.signOut(auth);
  const linkEmail = 'link@example.com';
  await A.sendSignInLinkToEmail(auth, linkEmail, { url: 'http://localhost/finish', handleCodeInApp: true });
  const signin = await outbox('EMAIL_SIGNIN', linkEmail);
  out.isEmailLink = A.isSignInWithEmailLink(auth, signin.oobLink);
  const el = await A.signInWithEmailLink(auth, linkEmail, signin.oobLink);
  out.emailLink = { email: el.user.email, verified: el.user.emailVerified, isNew: A.getAdditionalUserInfo(el).isNewUser };

  await A.deleteUser(auth.currentUser);
  out.afterDelete = auth.currentUser;
  await code('deletedSignIn', () => A.signInWithEmailAndPassword(auth, email, 'nope-nope'));
  await tick();
  console.log(JSON.stringify(out));
  process.exit(0);
})().catch((e) => { console.error('FAILED', e.code, e.message, e.stack); process.exit(1); });
