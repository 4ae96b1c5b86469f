// browser_idp.cjs signs in through OIDC and SAML provider configs with the
// browser build of firebase@12.19.0 Auth in headless Chromium, the way a
// user does: the app's button opens the emulator's account chooser
// (/emulator/auth/handler) in a popup, or redirects the tab to it; the test
// picks or adds an account there; the SDK finishes the sign-in through the
// emulator's helper frame (/emulator/auth/iframe). The harness
// (browser_harness.cjs) answers apis.google.com's gapi loader with an
// offline stand-in and refuses every other request leaving 127.0.0.1.
'use strict';
const { run } = require('./browser_harness.cjs');

run(async ({ ctx, page: p, appURL, step, admin, project }) => {
  const lastResult = async (before) => {
    await p.waitForFunction((n) => window.results.length > n, before, { timeout: 30000 });
    return p.evaluate(() => window.results[window.results.length - 1]);
  };
  const signOut = () => p.evaluate(() => window.app.auth.signOut());

  // The chooser, driven as a user: add a new account, or pick one.
  // The chooser, driven as a user: add a new account, or pick one. The
  // selectors are those of firebase-tools' page, which pyric's keeps.
  const addAccount = (email, name) => async (w) => {
    await w.waitForSelector('#add-account-button');
    const seen = { title: (await w.textContent('#title')).trim().replace(/\s+/g, ' '),
      help: (await w.textContent('.js-accounts-help-text')).trim() };
    await w.click('#add-account-button');
    await w.fill('#email-input', email);
    if (name) await w.fill('#display-name-input', name);
    await w.click('#sign-in', { noWaitAfter: true }).catch(() => {}); // the popup may close under the click
    return seen;
  };
  const pickAccount = (email) => async (w) => {
    await w.waitForSelector('.js-reuse-account');
    const listed = await w.$$eval('.js-reuse-account', (els) => els.map((e) => JSON.parse(decodeURIComponent(e.dataset.idToken)).email));
    await w.locator('.js-reuse-account').nth(listed.indexOf(email)).click({ noWaitAfter: true }).catch(() => {});
    return { listed: listed.sort() };
  };
  const viaPopup = async (button, choose) => {
    const before = await p.evaluate(() => window.results.length);
    const [popup] = await Promise.all([ctx.waitForEvent('page'), p.click(`#${button}`)]);
    await popup.waitForLoadState('domcontentloaded');
    const seen = await choose(popup);
    const res = await lastResult(before);
    if (!popup.isClosed()) await popup.waitForEvent('close', { timeout: 10000 }).catch(() => {});
    return { ...res, ...seen, popupClosed: popup.isClosed() };
  };
  const viaRedirect = async (button, choose) => {
    await p.click(`#${button}`, { noWaitAfter: true });
    await p.waitForURL(/\/emulator\/auth\/handler\?/);
    const seen = await choose(p);
    await p.waitForURL((u) => u.href.startsWith(appURL.split('?')[0]));
    await p.waitForFunction(() => window.app !== undefined);
    const res = await p.evaluate(() => window.app.A.getRedirectResult(window.app.auth).then(window.app.summary));
    const current = await p.evaluate(() => window.app.auth.currentUser && window.app.auth.currentUser.uid);
    return { ...res, ...seen, currentUserSet: current === res.uid };
  };
  const uids = {};
  const keepUid = (key, r) => { const { uid, ...rest } = r; if (uids[key]) rest.sameUid = uids[key] === uid; else uids[key] = uid; return rest; };

  // REFERENCE=1 runs against firebase-tools' emulator, which has no
  // provider configs (any oidc.*/saml.* id signs in there).
  const reference = process.env.REFERENCE === '1';
  if (!reference) await step('provider configs', async () => {
    await admin('POST', `/identitytoolkit.googleapis.com/v2/projects/${project}/oauthIdpConfigs?oauthIdpConfigId=oidc.acme`,
      { displayName: 'Acme', enabled: true, clientId: 'acme-client', issuer: 'https://acme.example.com' });
    await admin('POST', `/identitytoolkit.googleapis.com/v2/projects/${project}/inboundSamlConfigs?inboundSamlConfigId=saml.corp`,
      { displayName: 'Corp', enabled: true, idpConfig: { idpEntityId: 'https://idp.corp.example', ssoUrl: 'https://idp.corp.example/sso' },
        spConfig: { spEntityId: 'pyric-sp', callbackUri: `https://${project}.firebaseapp.com/__/auth/handler` } });
    return 'created';
  });
  await step('oidc popup: new account', async () =>
    keepUid('ada', await viaPopup('popup-oidc-acme', addAccount('ada@example.com', 'Ada Lovelace'))));
  await step('oidc popup: existing account', async () => {
    await signOut();
    return keepUid('ada', await viaPopup('popup-oidc-acme', pickAccount('ada@example.com')));
  });
  await step('saml popup: new account', async () => {
    await signOut();
    return keepUid('grace', await viaPopup('popup-saml-corp', addAccount('grace@example.com', 'Grace Hopper')));
  });
  await step('popup closed by the user', async () => {
    await signOut();
    const before = await p.evaluate(() => window.results.length);
    const [popup] = await Promise.all([ctx.waitForEvent('page'), p.click('#popup-oidc-acme')]);
    await popup.waitForSelector('.js-reuse-account');
    await popup.close();
    return lastResult(before);
  });
  await step('oidc redirect: existing account', async () =>
    keepUid('ada', await viaRedirect('redirect-oidc-acme', pickAccount('ada@example.com'))));
  await step('saml redirect: new account', async () => {
    await signOut();
    return keepUid('linus', await viaRedirect('redirect-saml-corp', addAccount('linus@example.com', 'Linus')));
  });
  await step('saml popup: chooser lists both accounts', async () => {
    await signOut();
    return keepUid('grace', await viaPopup('popup-saml-corp', pickAccount('grace@example.com')));
  });
  await step('tenant popup: new account', async () => {
    const t = await admin('POST', `/identitytoolkit.googleapis.com/v2/projects/${project}/tenants`, { displayName: 'T1', allowPasswordSignup: true });
    if (!reference) {
      await admin('POST', `/identitytoolkit.googleapis.com/v2/projects/${project}/tenants/${t.tenantId}/oauthIdpConfigs?oauthIdpConfigId=oidc.acme`,
        { displayName: 'Acme in T1', enabled: true, clientId: 'acme-t1', issuer: 'https://acme.example.com' });
    }
    await signOut();
    await p.evaluate((tid) => { window.app.auth.tenantId = tid; }, t.tenantId);
    try {
      const r = keepUid('ada-t1', await viaPopup('popup-oidc-acme', addAccount('ada@example.com', 'Ada in T1')));
      const tenant = await p.evaluate(() => window.app.auth.currentUser.tenantId);
      r.sameUidAsProjectAda = uids['ada-t1'] === uids.ada;
      return { ...r, tenantMatches: tenant === t.tenantId };
    } finally {
      await signOut();
      await p.evaluate(() => { window.app.auth.tenantId = null; });
    }
  });
  if (!reference) await step('disabled provider', async () => {
    await admin('PATCH', `/identitytoolkit.googleapis.com/v2/projects/${project}/oauthIdpConfigs/oidc.acme?updateMask=enabled`, { enabled: false });
    await signOut();
    const { error, listed } = await viaPopup('popup-oidc-acme', pickAccount('ada@example.com'));
    return { error, listed };
  });
});
