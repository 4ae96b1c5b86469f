// browser-harness.cjs is what the browser-build tests share (e2e/auth,
// e2e/database-js, e2e/firestore-js, e2e/storage-js): the app page (the
// test's browser_app.js bundled with esbuild, served from 127.0.0.1),
// headless Chromium (playwright-core, the Debian chromium package) with a
// new empty profile, and the step printer: one JSON line
// {"step", "ok", "got"|"error"} per step, which the Go tests check
// (internal/e2etest.RunSteps, CheckSteps). A script exits 1 when a step
// failed or the driver threw (then printed as the step "driver").
//
// Env: CHROMIUM (default /usr/bin/chromium), NODE_MODULES (default
// e2e/js/node_modules), DEBUG=1 to echo the pages' console on stderr.
'use strict';
const { build } = require('esbuild');
const { chromium } = require('playwright-core');
const http = require('node:http');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const nodeModules = process.env.NODE_MODULES || path.join(__dirname, 'node_modules');

// pageSteps runs in the page (as window.pyricSteps(ms)): step(name, f)
// runs f for at most ms and records its line in out, which a scenario
// evaluated in the page returns for report.
function pageSteps(ms) {
  const out = [];
  const step = async (name, f) => {
    try {
      const got = await Promise.race([f(), new Promise((_, rej) => setTimeout(() => rej(new Error(`timeout ${ms}ms`)), ms))]);
      out.push({ step: name, ok: true, got: got ?? null });
    } catch (e) { out.push({ step: name, ok: false, error: `${e.code || ''} ${e.message}` }); }
  };
  return { out, step };
}

// run serves app (an absolute path) bundled at a page whose <body> is body,
// opened at ?query, launches the browser, lets setup(ctx) route requests,
// opens the page and waits for window[ready], then calls
// scenario({ ctx, page, appURL, step, report }):
//   step(name, f) runs f in Node for at most stepTimeout ms and prints its
//   line; report(lines) prints the lines a scenario run in the page (with
//   window.pyricSteps) returned.
// It then closes everything and exits, 1 if a step failed.
async function run({ app, body = '<p>pyric</p>', query = '', ready = 'fb', setup, stepTimeout = 60000 }, scenario) {
  let failed = false;
  const print = (line) => { console.log(JSON.stringify(line)); if (!line.ok) failed = true; };
  const bundle = await build({
    entryPoints: [app],
    bundle: true, write: false, format: 'iife', platform: 'browser',
    nodePaths: [nodeModules], logLevel: 'error',
    define: { 'process.env.NODE_ENV': '"production"' },
  });
  const js = bundle.outputFiles[0].text;
  const html = `<!doctype html><html><head><meta charset="utf-8"><script src="/app.js"></script></head><body>${body}</body></html>`;
  const web = http.createServer((req, res) => {
    if (req.url === '/app.js') { res.writeHead(200, { 'Content-Type': 'text/javascript' }); res.end(js); return; }
    res.writeHead(200, { 'Content-Type': 'text/html' }); res.end(html);
  });
  await new Promise((r) => web.listen(0, '127.0.0.1', r));
  const appURL = `http://127.0.0.1:${web.address().port}/${query}`;

  // A new empty profile per run (playwright passes it as --user-data-dir).
  const userDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pyric-chromium-'));
  const ctx = await chromium.launchPersistentContext(userDir, {
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium', headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  await ctx.addInitScript({ content: `window.pyricSteps = ${pageSteps.toString()};` });
  ctx.on('page', (pp) => {
    pp.on('console', (m) => { if (process.env.DEBUG) console.error('[page]', m.text()); });
    pp.on('pageerror', (e) => console.error('[pageerror]', e.message));
  });
  const step = async (name, f) => {
    try {
      const got = await Promise.race([f(), new Promise((_, rej) => setTimeout(() => rej(new Error(`timeout ${stepTimeout}ms`)), stepTimeout))]);
      print({ step: name, ok: true, got: got ?? null });
    } catch (e) {
      print({ step: name, ok: false, error: String((e && e.stack) || e) });
    }
  };
  const report = (lines) => { for (const l of lines) print(l); };
  try {
    if (setup) await setup(ctx);
    const page = await ctx.newPage();
    await page.goto(appURL);
    await page.waitForFunction((g) => window[g] !== undefined, ready);
    await scenario({ ctx, page, appURL, step, report });
  } catch (e) {
    print({ step: 'driver', ok: false, error: String((e && e.stack) || e) });
  } finally {
    await ctx.close();
    web.close();
    fs.rmSync(userDir, { recursive: true, force: true });
  }
  process.exit(failed ? 1 : 0);
}

module.exports = { run };
