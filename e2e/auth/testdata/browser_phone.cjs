// browser_phone.cjs runs phone sign-in and SMS second factors through the
// browser build of firebase@12.19.0 Auth in headless Chromium, where the
// SDK itself sends every code: RecaptchaVerifier (the emulator's mock
// reCAPTCHA under connectAuthEmulator), signInWithPhoneNumber,
// linkWithPhoneNumber, PhoneAuthProvider.verifyPhoneNumber for an update,
// for an enrollment (with a MultiFactorSession) and for a sign-in (with a
// hint and the resolver's session). The codes are read where a developer
// reads them, GET /emulator/v1/projects/{p}/verificationCodes.
'use strict';
const { run } = require('./browser_harness.cjs');

run(async ({ page: p, step, admin, project, authURL }) => {
  await p.evaluate(({ project, authURL }) => {
    const { A, auth } = window.app;
    window.smsCode = async (verificationId) => {
      const r = await fetch(`${authURL}/emulator/v1/projects/${project}/verificationCodes`);
      const c = (await r.json()).verificationCodes.find((v) => v.sessionInfo === verificationId);
      if (!c) throw new Error(`no code for ${verificationId}`);
      return c.code;
    };
    window.errCode = async (f) => { try { await f(); return 'no error'; } catch (e) { return e.code || String(e); } };
    // A verifier answers once (its token is spent), so each send gets a
    // fresh one, as apps recreate it after a sign-in.
    let n = 0, last = null;
    Object.defineProperty(window, 'verifier', { get() {
      if (last) last.clear();
      const el = document.createElement('div');
      el.id = `recaptcha-${++n}`;
      document.body.append(el);
      last = new A.RecaptchaVerifier(auth, el.id, { size: 'invisible' });
      return last;
    } });
    window.providers = (u) => u.providerData.map((d) => d.providerId).sort();
  }, { project, authURL });

  await step('phone sign-in', () => p.evaluate(async () => {
    const { A, auth } = window.app;
    const cr = await A.signInWithPhoneNumber(auth, '+15555550100', window.verifier);
    const c = await cr.confirm(await window.smsCode(cr.verificationId));
    return { number: c.user.phoneNumber, isNew: A.getAdditionalUserInfo(c).isNewUser,
      provider: (await c.user.getIdTokenResult()).signInProvider, providers: window.providers(c.user) };
  }));
  await step('phone sign-in, wrong code', () => p.evaluate(async () => {
    const { A, auth } = window.app;
    await A.signOut(auth);
    const cr = await A.signInWithPhoneNumber(auth, '+15555550100', window.verifier);
    return window.errCode(() => cr.confirm('000000x'));
  }));
  await step('link a number', () => p.evaluate(async () => {
    const { A, auth } = window.app;
    const u = (await A.createUserWithEmailAndPassword(auth, 'link@example.com', 'secret123')).user;
    const cr = await A.linkWithPhoneNumber(u, '+15555550111', window.verifier);
    const c = await cr.confirm(await window.smsCode(cr.verificationId));
    return { number: c.user.phoneNumber, providers: window.providers(c.user) };
  }));
  await step('update the number', () => p.evaluate(async () => {
    const { A, auth } = window.app;
    const vid = await new A.PhoneAuthProvider(auth).verifyPhoneNumber('+15555550122', window.verifier);
    await A.updatePhoneNumber(auth.currentUser, A.PhoneAuthProvider.credential(vid, await window.smsCode(vid)));
    await A.reload(auth.currentUser);
    return auth.currentUser.phoneNumber;
  }));
  await step('unlink, then link a taken number', () => p.evaluate(async () => {
    const { A, auth } = window.app;
    await A.unlink(auth.currentUser, 'phone');
    await A.reload(auth.currentUser);
    const unlinked = { number: auth.currentUser.phoneNumber, providers: window.providers(auth.currentUser) };
    const cr = await A.linkWithPhoneNumber(auth.currentUser, '+15555550100', window.verifier);
    return { unlinked, taken: await window.errCode(async () => cr.confirm(await window.smsCode(cr.verificationId))) };
  }));
  await step('SMS enrollment', async () => {
    await admin('POST', `/identitytoolkit.googleapis.com/v1/projects/${project}/accounts`,
      { localId: 'mfa1', email: 'mfa@example.com', password: 'secret123', emailVerified: true });
    return p.evaluate(async () => {
      const { A, auth } = window.app;
      await A.signOut(auth);
      const u = (await A.signInWithEmailAndPassword(auth, 'mfa@example.com', 'secret123')).user;
      const session = await A.multiFactor(u).getSession();
      const vid = await new A.PhoneAuthProvider(auth).verifyPhoneNumber({ phoneNumber: '+15555550199', session }, window.verifier);
      await A.multiFactor(u).enroll(A.PhoneMultiFactorGenerator.assertion(A.PhoneAuthProvider.credential(vid, await window.smsCode(vid))), 'my phone');
      return { factors: A.multiFactor(auth.currentUser).enrolledFactors.map((f) => ({ factorId: f.factorId, name: f.displayName, phone: f.phoneNumber })),
        secondFactor: (await auth.currentUser.getIdTokenResult()).signInSecondFactor };
    });
  });
  await step('SMS sign-in', () => p.evaluate(async () => {
    const { A, auth } = window.app;
    await A.signOut(auth);
    let err;
    try { await A.signInWithEmailAndPassword(auth, 'mfa@example.com', 'secret123'); } catch (e) { err = e; }
    const afterFirstFactor = auth.currentUser;
    const resolver = A.getMultiFactorResolver(auth, err);
    const hint = resolver.hints[0];
    const pa = new A.PhoneAuthProvider(auth);
    const wrongVid = await pa.verifyPhoneNumber({ multiFactorHint: hint, session: resolver.session }, window.verifier);
    const wrong = await window.errCode(() => resolver.resolveSignIn(A.PhoneMultiFactorGenerator.assertion(A.PhoneAuthProvider.credential(wrongVid, '999999x'))));
    const vid = await pa.verifyPhoneNumber({ multiFactorHint: hint, session: resolver.session }, window.verifier);
    const c = await resolver.resolveSignIn(A.PhoneMultiFactorGenerator.assertion(A.PhoneAuthProvider.credential(vid, await window.smsCode(vid))));
    const tok = await c.user.getIdTokenResult();
    return { required: err && err.code, signedInAfterFirstFactor: afterFirstFactor !== null, hint: { factorId: hint.factorId, name: hint.displayName, phone: hint.phoneNumber },
      wrongCode: wrong, uid: c.user.uid, provider: tok.signInProvider, secondFactor: tok.signInSecondFactor };
  }));
});
