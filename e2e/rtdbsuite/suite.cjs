// Runs one of the JS SDK's own Realtime Database test suites (vendored
// in third_party/firebase-js-sdk) against a running `pyric serve`, in
// Node or in headless Chromium, and prints one JSON line per test:
// {"step": "<full title>", "ok": true|false, "error": "..."} — the step
// lines e2etest.RunSteps reads.
//
//   RTDB_SUITE_WHERE=<node|chromium|chromium-longpoll> RTDB_SUITE=<database|compat> node suite.cjs
//
// chromium-longpoll sets the SDK's localStorage flag of a failed
// WebSocket before every test, as a browser has it after a socket closed
// early: every connection a test opens starts on long polling and moves
// its session onto a WebSocket (/.ws?s=<session>) once that is open.
//
// RTDB_EMULATOR_PORT and RTDB_EMULATOR_NAMESPACE say where the server is,
// as in the SDK's own emulator runner; CHROMIUM names the browser.
//
// The suites are bundled from their TypeScript sources with esbuild, as
// the SDK's mocha (ts-node) and karma (webpack) configurations compile
// them; `@firebase/database` resolves to the vendored sources (in the
// SDK's monorepo it is the workspace package), so one copy of the SDK
// runs. Mocha's settings are the SDK's own: in Node 5 s per test and 5
// retries (config/mocharc.node.js), in the browser 20 s and 3 retries
// (config/mocha.browser.opts, which karma.base.js hands to mocha). Each
// line's "got" says how many retries a test needed, so that a flaky
// difference shows.
'use strict';

const fs = require('fs');
const os = require('os');
const path = require('path');
const http = require('http');
const { build } = require('esbuild');

const where = process.env.RTDB_SUITE_WHERE;
const suite = process.env.RTDB_SUITE;
const sdk = path.join(__dirname, 'third_party', 'firebase-js-sdk', 'packages');
const nodeModules = path.join(__dirname, 'node_modules');
const port = process.env.RTDB_EMULATOR_PORT;
const namespace = process.env.RTDB_EMULATOR_NAMESPACE;
const browser = where !== 'node';
const timeout = browser ? 20000 : 5000;
// MOCHA_RETRIES overrides the retries (0 finds flaky differences).
const retries = process.env.MOCHA_RETRIES ? Number(process.env.MOCHA_RETRIES) : browser ? 3 : 5;
// MOCHA_GREP runs only the tests whose full title contains it (debugging).
const grep = process.env.MOCHA_GREP || '';

// The test files of each suite and the entry file mocha's --file loads
// first (the SDK's test:node scripts); in the browser the package's
// browser entry is the one the tests import.
const suites = {
  database: {
    dir: path.join(sdk, 'database'),
    node: 'src/index.node.ts',
    tests: ['test/connection.test.ts', 'test/exp/integration.test.ts'],
  },
  compat: {
    dir: path.join(sdk, 'database-compat'),
    node: 'src/index.node.ts',
    tests: ['database', 'datasnapshot', 'info', 'order', 'order_by', 'promise', 'query', 'servervalues', 'transaction']
      .map((n) => `test/${n}.test.ts`),
    browserTests: ['test/browser/crawler_support.test.ts'],
  },
};

function fail(msg) {
  console.log(JSON.stringify({ step: 'driver', ok: false, error: msg }));
  process.exit(1);
}

if (!suites[suite] || !['node', 'chromium', 'chromium-longpoll'].includes(where)) fail(`RTDB_SUITE_WHERE must be node, chromium or chromium-longpoll and RTDB_SUITE database or compat, got ${where} ${suite}`);
if (!port || !namespace) fail('RTDB_EMULATOR_PORT and RTDB_EMULATOR_NAMESPACE must be set');

// bundle compiles the suite into one script; @firebase/database is the
// vendored package (node or browser entry).
async function bundle(browser) {
  const s = suites[suite];
  const files = browser ? [...s.tests, ...(s.browserTests || [])] : [s.node, ...s.tests];
  const entry = files.map((f) => `require(${JSON.stringify(path.join(s.dir, f))});`).join('\n');
  const dbEntry = path.join(sdk, 'database', 'src', browser ? 'index.ts' : 'index.node.ts');
  const out = await build({
    stdin: { contents: entry, resolveDir: s.dir, loader: 'js' },
    bundle: true, write: false, platform: browser ? 'browser' : 'node', format: browser ? 'iife' : 'cjs',
    target: browser ? 'es2020' : 'node18', sourcemap: 'inline', logLevel: 'error',
    nodePaths: [nodeModules],
    // In Node the dependencies load from node_modules as the SDK's tests
    // load them; in the browser everything is in the bundle.
    external: browser ? [] : ['mocha', 'chai', 'chai-as-promised', 'sinon', 'sinon-chai', 'lodash', 'faye-websocket', '@firebase/app', '@firebase/app-compat', '@firebase/util', '@firebase/logger', '@firebase/component'],
    define: browser ? { 'process.env.NODE_ENV': '"test"', global: 'globalThis' } : {},
    plugins: [{
      name: 'vendored-database',
      setup(b) { b.onResolve({ filter: /^@firebase\/database$/ }, () => ({ path: dbEntry })); },
    }, {
      // @firebase/component declares ComponentType and InstantiationMode
      // as const enums, which TypeScript inlines and esbuild cannot (they
      // are only in its .d.ts): the module the sources import adds them.
      name: 'const-enums',
      setup(b) {
        b.onResolve({ filter: /^@firebase\/component$/ }, (a) => (a.namespace === 'const-enums' ? undefined : { path: 'component', namespace: 'const-enums' }));
        b.onLoad({ filter: /.*/, namespace: 'const-enums' }, () => ({
          resolveDir: nodeModules, loader: 'js',
          contents: `export * from '@firebase/component';
export const ComponentType = { PUBLIC: 'PUBLIC', PRIVATE: 'PRIVATE', VERSION: 'VERSION' };
export const InstantiationMode = { LAZY: 'LAZY', EAGER: 'EAGER', EXPLICIT: 'EXPLICIT' };`,
        }));
      },
    }],
  });
  return out.outputFiles[0].text;
}

// mochaReporter prints a line per finished test (the last attempt).
function report(r) {
  console.log(JSON.stringify(r));
}

async function runNode() {
  const js = await bundle(false);
  const dir = fs.mkdtempSync(path.join(__dirname, '.bundle-'));
  const file = path.join(dir, `${suite}.cjs`);
  // Inside this folder, so require() finds its node_modules.
  fs.writeFileSync(file, js);
  const Mocha = require('mocha');
  const mocha = new Mocha({ timeout, retries, reporter: function Quiet() {}, ...(grep ? { grep } : {}) });
  mocha.addFile(file);
  let failed = false;
  await new Promise((resolve) => {
    const runner = mocha.run(() => resolve());
    runner.on('pass', (t) => report({ step: t.fullTitle(), ok: true, got: { ms: t.duration, retries: t.currentRetry() } }));
    runner.on('fail', (t, err) => { failed = true; report({ step: t.fullTitle(), ok: false, error: String((err && err.message) || err) }); });
  });
  fs.rmSync(dir, { recursive: true, force: true });
  // Open connections of apps the tests never delete would keep Node up.
  process.exit(failed ? 1 : 0);
}

async function runChromium() {
  const { chromium } = require('playwright-core');
  const js = await bundle(true);
  const mochaJS = fs.readFileSync(path.join(nodeModules, 'mocha', 'mocha.js'), 'utf8');
  // process.env as the tests read and set it in the browser (karma's
  // webpack gives them the same).
  const env = `window.process = { env: ${JSON.stringify({ RTDB_EMULATOR_PORT: port, RTDB_EMULATOR_NAMESPACE: namespace })}, platform: 'browser' };`;
  const html = `<!doctype html><html><head><meta charset="utf-8"></head><body><div id="mocha"></div>
<script>${env}</script><script src="/mocha.js"></script>
<script>mocha.setup({ ui: 'bdd', timeout: ${timeout}, retries: ${retries}, reporter: function Quiet() {}${grep ? `, grep: ${JSON.stringify(grep)}` : ''} });</script>
${where === 'chromium-longpoll' ? "<script>beforeEach(() => localStorage.setItem('firebase:previous_websocket_failure', 'true'));</script>" : ''}
<script src="/suite.js"></script>
<script>
  window.results = [];
  const runner = mocha.run(() => { window.done = true; });
  runner.on('pass', (t) => window.results.push({ step: t.fullTitle(), ok: true, got: { ms: t.duration, retries: t.currentRetry() } }));
  runner.on('fail', (t, err) => window.results.push({ step: t.fullTitle(), ok: false, error: String((err && err.message) || err) }));
</script></body></html>`;
  const web = http.createServer((req, res) => {
    if (req.url === '/mocha.js') { res.writeHead(200, { 'Content-Type': 'text/javascript' }); res.end(mochaJS); return; }
    if (req.url === '/suite.js') { res.writeHead(200, { 'Content-Type': 'text/javascript' }); res.end(js); return; }
    res.writeHead(200, { 'Content-Type': 'text/html' }); res.end(html);
  });
  await new Promise((r) => web.listen(0, '127.0.0.1', r));
  const userDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pyric-rtdbsuite-'));
  const ctx = await chromium.launchPersistentContext(userDir, {
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium', headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  let failed = false;
  try {
    const page = await ctx.newPage();
    page.on('pageerror', (e) => console.error('[pageerror]', e.message));
    if (process.env.DEBUG) page.on('console', (m) => console.error('[page]', m.text()));
    await page.goto(`http://127.0.0.1:${web.address().port}/`);
    // Results are printed as they come so a hung suite still shows them.
    let seen = 0;
    for (;;) {
      const { results, done } = await page.evaluate((n) => ({ results: window.results.slice(n), done: !!window.done }), seen);
      for (const r of results) { report(r); failed = failed || !r.ok; }
      seen += results.length;
      if (done) break;
      await new Promise((r) => setTimeout(r, 200));
    }
  } catch (e) {
    report({ step: 'driver', ok: false, error: String((e && e.stack) || e) });
    failed = true;
  } finally {
    await ctx.close();
    web.close();
    fs.rmSync(userDir, { recursive: true, force: true });
  }
  process.exit(failed ? 1 : 0);
}

(where === 'node' ? runNode() : runChromium()).catch((e) => fail(String((e && e.stack) || e)));
