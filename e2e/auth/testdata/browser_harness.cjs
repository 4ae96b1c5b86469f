// browser_harness.cjs is what the browser tests of this directory share:
// the app page (browser_app.js bundled with esbuild, served from
// 127.0.0.1), headless Chromium (playwright-core, the Debian chromium
// package) with the offline gapi stand-in and every other request leaving
// 127.0.0.1 refused, and the step printer ({"step", "ok", "got"|"error"} per
// line, which the Go tests check).
//
// Env: AUTH_URL (http://host:port of pyric's Auth), PROJECT, CHROMIUM,
// DEBUG=1 to echo the pages' console.
'use strict';
const { build } = require('esbuild');
const { chromium } = require('playwright-core');
const http = require('node:http');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const here = __dirname;
const nodeModules = process.env.NODE_MODULES || path.join(here, '..', '..', 'js', 'node_modules');

// run serves the app, launches the browser and calls scenario({ ctx, page,
// appURL, step, admin, authURL, project }); it exits 1 if a step failed.
async function run(scenario) {
  const authURL = process.env.AUTH_URL;
  const project = process.env.PROJECT || 'demo-browser-auth';
  const bundle = await build({
    entryPoints: [path.join(here, 'browser_app.js')],
    bundle: true, write: false, format: 'iife', platform: 'browser',
    nodePaths: [nodeModules], logLevel: 'error',
    define: { 'process.env.NODE_ENV': '"production"' },
  });
  const js = bundle.outputFiles[0].text;
  const html = '<!doctype html><html><head><meta charset="utf-8"><script src="/app.js"></script></head>' +
    '<body><p>pyric app</p><div id="recaptcha"></div></body></html>';
  const web = http.createServer((req, res) => {
    if (req.url === '/app.js') { res.writeHead(200, { 'Content-Type': 'text/javascript' }); res.end(js); return; }
    res.writeHead(200, { 'Content-Type': 'text/html' }); res.end(html);
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
  const log = (tag) => (m) => { if (process.env.DEBUG) console.error(`[${tag}]`, m.text ? m.text() : m.message); };
  ctx.on('page', (pp) => { pp.on('console', log('page')); pp.on('pageerror', log('page error')); });

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
  const admin = async (method, p, body) => {
    const r = await fetch(authURL + p, { method, headers: { authorization: 'Bearer owner', 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body) });
    const j = await r.json();
    if (!r.ok) throw new Error(`${method} ${p}: ${r.status} ${JSON.stringify(j)}`);
    return j;
  };
  try {
    const page = await ctx.newPage();
    await page.goto(appURL);
    await page.waitForFunction(() => window.app !== undefined);
    await scenario({ ctx, page, appURL, step, admin, authURL, project });
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

module.exports = { run };
