// Account changes through the official firebase JS SDK (Node build):
// changing the email (at once and after verification), re-authenticating,
// the password policy. Run against pyric and against firebase-tools' Auth
// emulator; prints one JSON object of observations that must be the same
// on both (account_test.go), uids replaced by their order of appearance.
const { recorder, outboxOf } = require('./sdk_kit.cjs');
const { initializeApp } = require('firebase/app');
const A = require('firebase/auth');

const base = process.env.AUTH_URL;
const project = process.env.PROJECT;
const app = initializeApp({ projectId: project, apiKey: 'fake-api-key' });
const auth = A.getAuth(app);
A.connectAuthEmulator(auth, base, { disableWarnings: true });

const out = { errors: {} };
const code = recorder(out.errors);
const outbox = outboxOf(base, project);
const uids = new Map();
const uid = (u) => { if (!uids.has(u)) uids.set(u, `uid${uids.size + 1}`); return uids.get(u); };
async function claims(user) {
  const r = await user.getIdTokenResult();
  return { email: r.claims.email, verified: r.claims.email_verified, provider: r.signInProvider };
}

(async () => {
  // updateEmail: the new address takes effect at once, unverified; the
  // old one no longer signs in, the new one does.
  const first = await A.createUserWithEmailAndPassword(auth, 'first@example.com', 'secret123');
  const firstUid = uid(first.user.uid);
  await A.updateEmail(first.user, 'second@example.com');
  out.updated = { email: auth.currentUser.email, verified: auth.currentUser.emailVerified, token: await claims(auth.currentUser) };
  await A.signOut(auth);
  await code('oldEmailSignIn', () => A.signInWithEmailAndPassword(auth, 'first@example.com', 'secret123'));
  const second = await A.signInWithEmailAndPassword(auth, 'second@example.com', 'secret123');
  out.newEmailSignIn = uid(second.user.uid) === firstUid;
  // The old address is told, with a code that would restore it.
  const recover = await outbox('RECOVER_EMAIL', 'first@example.com');
  out.recoverMail = { found: !!recover, mode: recover && new URL(recover.oobLink).searchParams.get('mode') };
  await code('takenEmail', async () => {
    await A.createUserWithEmailAndPassword(auth, 'other@example.com', 'secret123');
    await A.updateEmail(auth.currentUser, 'second@example.com');
  });
  await code('invalidEmail', () => A.updateEmail(auth.currentUser, 'not-an-email'));

  // verifyBeforeUpdateEmail: nothing changes until the code is applied.
  await A.signOut(auth);
  const v = await A.signInWithEmailAndPassword(auth, 'second@example.com', 'secret123');
  await A.verifyBeforeUpdateEmail(v.user, 'third@example.com');
  const change = await outbox('VERIFY_AND_CHANGE_EMAIL', 'second@example.com');
  out.change = { found: !!change, newEmail: change && change.newEmail, mode: change && new URL(change.oobLink).searchParams.get('mode') };
  await A.reload(v.user);
  out.beforeApply = { email: v.user.email, verified: v.user.emailVerified };
  const info = await A.checkActionCode(auth, change.oobCode);
  out.actionInfo = { operation: info.operation, email: info.data.email, previous: info.data.previousEmail };
  await A.applyActionCode(auth, change.oobCode);
  await code('reapply', () => A.applyActionCode(auth, change.oobCode));
  await A.signOut(auth);
  await code('beforeChangeSignIn', () => A.signInWithEmailAndPassword(auth, 'second@example.com', 'secret123'));
  const third = await A.signInWithEmailAndPassword(auth, 'third@example.com', 'secret123');
  out.afterApply = { same: uid(third.user.uid) === firstUid, email: third.user.email, verified: third.user.emailVerified,
    token: await claims(third.user) };

  // reauthenticateWithCredential: the right password refreshes the
  // session as the same user; a wrong one, or another user's, fails.
  const re = await A.reauthenticateWithCredential(third.user, A.EmailAuthProvider.credential('third@example.com', 'secret123'));
  out.reauth = { op: re.operationType, same: uid(re.user.uid) === firstUid, current: uid(auth.currentUser.uid) === firstUid };
  await code('reauthWrongPassword', () => A.reauthenticateWithCredential(auth.currentUser,
    A.EmailAuthProvider.credential('third@example.com', 'wrong-password')));
  await code('reauthOtherUser', () => A.reauthenticateWithCredential(auth.currentUser,
    A.EmailAuthProvider.credential('other@example.com', 'secret123')));
  await code('reauthUnknownUser', () => A.reauthenticateWithCredential(auth.currentUser,
    A.EmailAuthProvider.credential('nobody@example.com', 'secret123')));
  out.afterFailedReauth = auth.currentUser && uid(auth.currentUser.uid);

  // The password policy the project serves (none is configured here).
  await code('validatePassword', async () => {
    const s = await A.validatePassword(auth, 'abc');
    out.policy = { isValid: s.isValid, minLength: s.meetsMinPasswordLength, ...s.passwordPolicy && { min: s.passwordPolicy.customStrengthOptions.minPasswordLength } };
  });

  // A password change: the old password no longer signs in.
  await A.updatePassword(auth.currentUser, 'changed123');
  await A.signOut(auth);
  await code('oldPassword', () => A.signInWithEmailAndPassword(auth, 'third@example.com', 'secret123'));
  out.newPassword = uid((await A.signInWithEmailAndPassword(auth, 'third@example.com', 'changed123')).user.uid);

  // Recovering the first address with that code: it is the account's
  // email again (verified), and signs in with the current password.
  const rinfo = await A.checkActionCode(auth, recover.oobCode);
  out.recoverInfo = { operation: rinfo.operation, email: rinfo.data.email, previous: rinfo.data.previousEmail };
  await A.applyActionCode(auth, recover.oobCode);
  await A.signOut(auth);
  await code('afterRecoverThird', () => A.signInWithEmailAndPassword(auth, 'third@example.com', 'changed123'));
  const back = await A.signInWithEmailAndPassword(auth, 'first@example.com', 'changed123');
  out.recovered = { same: uid(back.user.uid) === firstUid, email: back.user.email, verified: back.user.emailVerified };

  console.log(JSON.stringify(out));
  process.exit(0);
})().catch((e) => { console.error('FAILED', e.code, e.message, e.stack); process.exit(1); });
