// Phone sign-in, SMS and TOTP second factors and OIDC sign-in through the
// official firebase JS SDK against pyric. Phone and MFA live only in the
// SDK's browser build (the Node build's PhoneAuthProvider is a stub), so
// this loads firebase@12's browser-cjs build of @firebase/auth in Node with
// in-memory persistence. There is no reCAPTCHA widget in Node, so the steps
// that send a code (sendVerificationCode, mfaEnrollment:start,
// mfaSignIn:start) are plain REST calls, as a RecaptchaVerifier would make
// them; every verification, link, enrollment and sign-in is the SDK's.
// Prints one JSON object.
const crypto = require('crypto');
const path = require('path');
const { recorder } = require('./sdk_kit.cjs');
const { initializeApp } = require('firebase/app');
const A = require(path.join(process.env.NODE_PATH, '@firebase/auth/dist/browser-cjs/index.js'));

const base = process.env.AUTH_URL;
const project = process.env.PROJECT;
const app = initializeApp({ projectId: project, apiKey: 'fake-api-key' });
const auth = A.initializeAuth(app, { persistence: A.inMemoryPersistence });
A.connectAuthEmulator(auth, base, { disableWarnings: true });

const out = { errors: {} };
const code = recorder(out.errors);
async function rest(path, body, owner) {
  const headers = { 'content-type': 'application/json' };
  if (owner) headers.authorization = 'Bearer owner';
  const r = await fetch(`${base}${path}${path.includes('?') ? '&' : '?'}key=fake-api-key`, { method: 'POST', headers, body: JSON.stringify(body) });
  const j = await r.json();
  if (!r.ok) throw new Error(`${path}: ${JSON.stringify(j)}`);
  return j;
}
async function smsCode(sessionInfo) {
  const r = await fetch(`${base}/emulator/v1/projects/${project}/verificationCodes`);
  const j = await r.json();
  return j.verificationCodes.find((c) => c.sessionInfo === sessionInfo).code;
}
async function sendCode(phone) {
  const { sessionInfo } = await rest('/identitytoolkit.googleapis.com/v1/accounts:sendVerificationCode', { phoneNumber: phone, recaptchaToken: 'fake' });
  return sessionInfo;
}
function totp(secretB32, t = Date.now()) {
  const alpha = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = '';
  for (const ch of secretB32.replace(/=+$/, '')) bits += alpha.indexOf(ch).toString(2).padStart(5, '0');
  const key = Buffer.from(bits.match(/.{8}/g).map((b) => parseInt(b, 2)));
  const msg = Buffer.alloc(8);
  msg.writeBigUInt64BE(BigInt(Math.floor(t / 1000 / 30)));
  const h = crypto.createHmac('sha1', key).update(msg).digest();
  const off = h[h.length - 1] & 0xf;
  return String((h.readUInt32BE(off) & 0x7fffffff) % 1000000).padStart(6, '0');
}
async function verifiedUser(email) {
  const cred = await A.createUserWithEmailAndPassword(auth, email, 'secret123');
  await A.sendEmailVerification(cred.user);
  const r = await fetch(`${base}/emulator/v1/projects/${project}/oobCodes`);
  const oob = (await r.json()).oobCodes.filter((c) => c.requestType === 'VERIFY_EMAIL' && c.email === email).pop();
  await A.applyActionCode(auth, oob.oobCode);
  await A.reload(cred.user);
  return cred.user;
}

(async () => {
  // ---- the password policy validatePassword reads ----
  const pv = await A.validatePassword(auth, 'abc');
  const pv2 = await A.validatePassword(auth, 'abcdef');
  out.policy = { short: pv.isValid, min: pv.passwordPolicy.customStrengthOptions.minPasswordLength,
    max: pv.passwordPolicy.customStrengthOptions.maxPasswordLength, ok: pv2.isValid };

  // ---- phone sign-in ----
  const phone = '+15555550100';
  let sid = await sendCode(phone);
  await code('wrongCode', () => A.signInWithCredential(auth, A.PhoneAuthProvider.credential(sid, '000000x')));
  sid = await sendCode(phone);
  const pc = await A.signInWithCredential(auth, A.PhoneAuthProvider.credential(sid, await smsCode(sid)));
  out.phone = { uid: pc.user.uid, number: pc.user.phoneNumber, isNew: A.getAdditionalUserInfo(pc).isNewUser,
    provider: (await pc.user.getIdTokenResult()).signInProvider, providers: pc.user.providerData.map((p) => p.providerId) };
  await A.signOut(auth);
  sid = await sendCode(phone);
  const again = await A.signInWithCredential(auth, A.PhoneAuthProvider.credential(sid, await smsCode(sid)));
  out.phoneAgain = { sameUid: again.user.uid === out.phone.uid, isNew: A.getAdditionalUserInfo(again).isNewUser };
  await code('reusedCode', () => A.signInWithCredential(auth, A.PhoneAuthProvider.credential(sid, '123456')));
  await A.signOut(auth);

  // ---- link, update and unlink a number ----
  const lu = await A.createUserWithEmailAndPassword(auth, 'link@example.com', 'secret123');
  sid = await sendCode('+15555550111');
  await A.linkWithCredential(lu.user, A.PhoneAuthProvider.credential(sid, await smsCode(sid)));
  out.linked = { number: auth.currentUser.phoneNumber, providers: auth.currentUser.providerData.map((p) => p.providerId).sort() };
  sid = await sendCode('+15555550122');
  await A.updatePhoneNumber(auth.currentUser, A.PhoneAuthProvider.credential(sid, await smsCode(sid)));
  await A.reload(auth.currentUser);
  out.updated = auth.currentUser.phoneNumber;
  await A.unlink(auth.currentUser, 'phone');
  await A.reload(auth.currentUser);
  out.unlinked = { number: auth.currentUser.phoneNumber, providers: auth.currentUser.providerData.map((p) => p.providerId) };
  sid = await sendCode(phone); // the first account's number
  await code('linkTaken', async () => A.linkWithCredential(auth.currentUser, A.PhoneAuthProvider.credential(sid, await smsCode(sid))));
  await A.signOut(auth);

  // ---- SMS second factor ----
  const mu = await verifiedUser('mfa@example.com');
  let idToken = await mu.getIdToken();
  const start = await rest('/identitytoolkit.googleapis.com/v2/accounts/mfaEnrollment:start', { idToken, phoneEnrollmentInfo: { phoneNumber: '+15555550199', recaptchaToken: 'fake' } });
  sid = start.phoneSessionInfo.sessionInfo;
  await A.multiFactor(mu).enroll(A.PhoneMultiFactorGenerator.assertion(A.PhoneAuthProvider.credential(sid, await smsCode(sid))), 'my phone');
  out.smsEnrolled = A.multiFactor(auth.currentUser).enrolledFactors.map((f) => ({ factorId: f.factorId, name: f.displayName, phone: f.phoneNumber }));
  out.smsEnrollToken = (await auth.currentUser.getIdTokenResult()).signInSecondFactor;
  await A.signOut(auth);
  let mfaErr;
  try { await A.signInWithEmailAndPassword(auth, 'mfa@example.com', 'secret123'); } catch (e) { mfaErr = e; }
  out.smsRequired = mfaErr && mfaErr.code;
  out.afterFirstFactor = auth.currentUser;
  let resolver = A.getMultiFactorResolver(auth, mfaErr);
  out.smsHints = resolver.hints.map((h) => ({ factorId: h.factorId, name: h.displayName, phone: h.phoneNumber }));
  const pending = mfaErr.customData._serverResponse.mfaPendingCredential;
  const ss = await rest('/identitytoolkit.googleapis.com/v2/accounts/mfaSignIn:start', { mfaPendingCredential: pending, mfaEnrollmentId: resolver.hints[0].uid, phoneSignInInfo: { recaptchaToken: 'fake' } });
  sid = ss.phoneResponseInfo.sessionInfo;
  await code('smsWrongCode', () => resolver.resolveSignIn(A.PhoneMultiFactorGenerator.assertion(A.PhoneAuthProvider.credential(sid, '999999x'))));
  const ss2 = await rest('/identitytoolkit.googleapis.com/v2/accounts/mfaSignIn:start', { mfaPendingCredential: pending, mfaEnrollmentId: resolver.hints[0].uid, phoneSignInInfo: { recaptchaToken: 'fake' } });
  const smsCred = await resolver.resolveSignIn(A.PhoneMultiFactorGenerator.assertion(A.PhoneAuthProvider.credential(ss2.phoneResponseInfo.sessionInfo, await smsCode(ss2.phoneResponseInfo.sessionInfo))));
  const smsTok = await smsCred.user.getIdTokenResult();
  out.smsSignIn = { uid: smsCred.user.uid === mu.uid, secondFactor: smsTok.signInSecondFactor, provider: smsTok.signInProvider };
  const refreshed = await smsCred.user.getIdTokenResult(true);
  out.smsRefreshKeepsFactor = refreshed.signInSecondFactor;

  // ---- TOTP second factor on the same account (enabled in the project
  // config first, as production requires) ----
  await code('totpDisabled', async () => A.TotpMultiFactorGenerator.generateSecret(await A.multiFactor(auth.currentUser).getSession()));
  const cfg = await fetch(`${base}/identitytoolkit.googleapis.com/v2/projects/${project}/config?updateMask=mfa`, { method: 'PATCH',
    headers: { 'content-type': 'application/json', authorization: 'Bearer owner' },
    body: JSON.stringify({ mfa: { providerConfigs: [{ state: 'ENABLED', totpProviderConfig: { adjacentIntervals: 2 } }] } }) });
  out.totpConfig = (await cfg.json()).mfa;
  const session = await A.multiFactor(auth.currentUser).getSession();
  const secret = await A.TotpMultiFactorGenerator.generateSecret(session);
  out.totpSecret = { len: secret.codeLength, period: secret.codeIntervalSeconds, alg: secret.hashingAlgorithm, url: secret.generateQrCodeUrl('me', 'pyric').startsWith('otpauth://totp/') };
  await code('totpWrongEnroll', () => A.multiFactor(auth.currentUser).enroll(A.TotpMultiFactorGenerator.assertionForEnrollment(secret, totp(secret.secretKey, Date.now() - 3600e3)), 'bad'));
  await A.multiFactor(auth.currentUser).enroll(A.TotpMultiFactorGenerator.assertionForEnrollment(secret, totp(secret.secretKey)), 'authenticator');
  out.totpEnrolled = A.multiFactor(auth.currentUser).enrolledFactors.map((f) => f.factorId).sort();
  await A.signOut(auth);
  try { await A.signInWithEmailAndPassword(auth, 'mfa@example.com', 'secret123'); } catch (e) { mfaErr = e; }
  resolver = A.getMultiFactorResolver(auth, mfaErr);
  const th = resolver.hints.find((h) => h.factorId === 'totp');
  await code('totpWrongSignIn', () => resolver.resolveSignIn(A.TotpMultiFactorGenerator.assertionForSignIn(th.uid, '000000')));
  const totpCred = await resolver.resolveSignIn(A.TotpMultiFactorGenerator.assertionForSignIn(th.uid, totp(secret.secretKey)));
  out.totpSignIn = (await totpCred.user.getIdTokenResult()).signInSecondFactor;

  // ---- withdraw both factors: sign-in needs one factor again ----
  for (const f of A.multiFactor(auth.currentUser).enrolledFactors) {
    await A.multiFactor(auth.currentUser).unenroll(f);
  }
  out.afterUnenroll = A.multiFactor(auth.currentUser).enrolledFactors.length;
  await A.signOut(auth);
  const plain = await A.signInWithEmailAndPassword(auth, 'mfa@example.com', 'secret123');
  out.plainSignIn = plain.user.uid === mu.uid;
  await A.signOut(auth);

  // ---- OIDC through the fake IdP with a provider config ----
  await rest(`/identitytoolkit.googleapis.com/v2/projects/${project}/oauthIdpConfigs?oauthIdpConfigId=oidc.acme`,
    { displayName: 'Acme', enabled: true, clientId: 'acme-client', issuer: 'https://acme.example.com' }, true);
  const oidc = new A.OAuthProvider('oidc.acme');
  const oc = await A.signInWithCredential(auth, oidc.credential({ idToken: JSON.stringify({ sub: 'acme-1', email: 'o@example.com', email_verified: true, name: 'Oidc User' }) }));
  out.oidc = { provider: oc.providerId, email: oc.user.email, name: oc.user.displayName, isNew: A.getAdditionalUserInfo(oc).isNewUser,
    signInProvider: (await oc.user.getIdTokenResult()).signInProvider, providers: oc.user.providerData.map((p) => p.providerId) };
  await A.signOut(auth);
  const r = await fetch(`${base}/identitytoolkit.googleapis.com/v2/projects/${project}/oauthIdpConfigs/oidc.acme?updateMask=enabled`,
    { method: 'PATCH', headers: { 'content-type': 'application/json', authorization: 'Bearer owner' }, body: JSON.stringify({ enabled: false }) });
  out.disabledConfig = (await r.json()).enabled;
  await code('oidcDisabled', () => A.signInWithCredential(auth, oidc.credential({ idToken: JSON.stringify({ sub: 'acme-1' }) })));

  console.log(JSON.stringify(out));
  process.exit(0);
})().catch((e) => { console.error(e); process.exit(1); });
