// browser_idp.cjs signs in through OIDC and SAML provider configs with the
// browser build of firebase@12.19.0 Auth in headless Chromium (playwright-core,
// the Debian chromium package), the way a user does: the app's button opens
// the emulator's account chooser (/emulator/auth/handler) in a popup, or
// redirects the tab to it; the test picks or adds an account there; the SDK
// finishes the sign-in through the emulator's helper frame
// (/emulator/auth/iframe). Each step prints one JSON line
// {"step", "ok", "got"|"error"}; the Go test checks them.
//
// The machine is offline, so https://apis.google.com/js/api.js (Google's
// gapi loader, which the SDK and the helper frame load) is answered with
// gapi_iframes.js, a stand-in for the part of gapi.iframes they use; every
// other request leaving 127.0.0.1 is refused.
//
// Env: AUTH_URL (http://host:port of pyric's Auth), PROJECT, CHROMIUM.
'use strict';
const { build } = require('esbuild');
const { chromium } = require('playwright-core');
const http = require('node:http');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const here = __dirname;
const nodeModules = process.env.NODE_MODULES || path.join(here, '..', '..', 'js', 'node_modules');
const authURL = process.env.AUTH_URL;
const project = process.env.PROJECT || 'demo-idp';

async function admin(method, p, body) {
  const r = await fetch(authURL + p, { method, headers: { authorization: 'Bearer owner', 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body) });
  const j = await r.json();
  if (!r.ok) throw new Error(`${method} ${p}: ${r.status} ${JSON.stringify(j)}`);
  return j;
}

async function main() {
  const bundle = await build({
    entryPoints: [path.join(here, 'browser_app.js')],
    bundle: true, write: false, format: 'iife', platform: 'browser',
    nodePaths: [nodeModules], logLevel: 'error',
    define: { 'process.env.NODE_ENV': '"production"' },
  });
  const js = bundle.outputFiles[0].text;
  const page = '<!doctype html><html><head><meta charset="utf-8"><script src="/app.js"></script></head><body><p>pyric app</p></body></html>';
  const web = http.createServer((req, res) => {
    if (req.url === '/app.js') { res.writeHead(200, { 'Content-Type': 'text/javascript' }); res.end(js); return; }
    res.writeHead(200, { 'Content-Type': 'text/html' }); res.end(page);
  });
  // The app and the emulator share the host 127.0.0.1 (one site), as a
  // redirect sign-in needs: the helper frame reads the event the chooser
  // stored under the emulator's origin.
  await new Promise((r) => web.listen(0, '127.0.0.1', r));
  const appURL = `http://127.0.0.1:${web.address().port}/?project=${project}&auth=${encodeURIComponent(authURL)}`;
  const gapi = fs.readFileSync(path.join(here, 'gapi_iframes.js'), 'utf8');

  const userDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pyric-chromium-'));
  const ctx = await chromium.launchPersistentContext(userDir, {
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium', headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  // Routes match newest first: the gapi stand-in, then refuse the rest.
  await ctx.route((u) => u.hostname !== '127.0.0.1', (r) => r.abort());
  await ctx.route('https://apis.google.com/js/api.js**', (r) => r.fulfill({ status: 200, contentType: 'text/javascript', body: gapi }));

  let failed = false;
  const step = async (name, f) => {
    let line;
    try {
      const got = await Promise.race([f(), new Promise((_, rej) => setTimeout(() => rej(new Error('timeout 60s')), 60000))]);
      line = { step: name, ok: true, got: got ?? null };
    } catch (e) {
      line = { step: name, ok: false, error: String((e && e.stack) || e) };
      failed = true;
    }
    console.log(JSON.stringify(line));
  };
  try {
    const p = await ctx.newPage();
    const pageLog = (tag) => (m) => { if (process.env.DEBUG) console.error(`[${tag}]`, m.text ? m.text() : m.message); };
    p.on('console', pageLog('app'));
    p.on('pageerror', pageLog('app error'));
    ctx.on('page', (pp) => { pp.on('console', pageLog('popup')); pp.on('pageerror', pageLog('popup error')); });
    const load = async () => { await p.goto(appURL); await p.waitForFunction(() => window.app !== undefined); };
    const lastResult = async (before) => {
      await p.waitForFunction((n) => window.results.length > n, before, { timeout: 30000 });
      return p.evaluate(() => window.results[window.results.length - 1]);
    };
    const signOut = () => p.evaluate(() => window.app.auth.signOut());

    // The chooser, driven as a user: add a new account, or pick one.
    const addAccount = (email, name) => async (w) => {
      await w.waitForSelector('#add-account');
      const seen = { title: (await w.textContent('h1')).trim(), help: (await w.textContent('#help')).trim() };
      await w.click('#add-account');
      await w.fill('#email', email);
      if (name) await w.fill('#display-name', name);
      await w.click('#sign-in', { noWaitAfter: true }).catch(() => {}); // the popup may close under the click
      return seen;
    };
    const pickAccount = (email) => async (w) => {
      await w.waitForSelector('.js-account');
      const listed = await w.$$eval('.js-account', (els) => els.map((e) => e.dataset.email));
      await w.click(`.js-account[data-email="${email}"]`, { noWaitAfter: true }).catch(() => {});
      return { listed };
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

    await step('provider configs', async () => {
      await admin('POST', `/identitytoolkit.googleapis.com/v2/projects/${project}/oauthIdpConfigs?oauthIdpConfigId=oidc.acme`,
        { displayName: 'Acme', enabled: true, clientId: 'acme-client', issuer: 'https://acme.example.com' });
      await admin('POST', `/identitytoolkit.googleapis.com/v2/projects/${project}/inboundSamlConfigs?inboundSamlConfigId=saml.corp`,
        { displayName: 'Corp', enabled: true, idpConfig: { idpEntityId: 'https://idp.corp.example', ssoUrl: 'https://idp.corp.example/sso' },
          spConfig: { spEntityId: 'pyric-sp', callbackUri: `https://${project}.firebaseapp.com/__/auth/handler` } });
      await load();
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
      await popup.waitForSelector('.js-account');
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
    await step('disabled provider', async () => {
      await admin('PATCH', `/identitytoolkit.googleapis.com/v2/projects/${project}/oauthIdpConfigs/oidc.acme?updateMask=enabled`, { enabled: false });
      await signOut();
      const { error, listed } = await viaPopup('popup-oidc-acme', pickAccount('ada@example.com'));
      return { error, listed };
    });
  } catch (e) {
    console.log(JSON.stringify({ step: 'driver', ok: false, error: String((e && e.stack) || e) }));
    failed = true;
  } finally {
    await ctx.close();
    web.close();
    fs.rmSync(userDir, { recursive: true, force: true });
  }
  process.exit(failed ? 1 : 0);
}
main();
