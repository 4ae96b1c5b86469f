// browser.cjs runs the browser build of firebase@12.19.0 Storage in headless
// Chromium (playwright-core, the Debian chromium package) against
// STORAGE=host:port from a page on another origin, so every request is a
// cross-origin XHR (CORS preflights, exposed X-Goog-Upload-* headers). Each
// step prints one JSON line {"step","ok","got"|"error"}; the Go test checks
// them.
'use strict';
const { build } = require('esbuild');
const { chromium } = require('playwright-core');
const http = require('node:http');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const here = __dirname;
const nodeModules = process.env.NODE_MODULES || path.join(here, '..', 'js', 'node_modules');
const [host, port] = (process.env.STORAGE || '127.0.0.1:9199').split(':');

async function main() {
  const bundle = await build({
    entryPoints: [path.join(here, 'browser_app.js')],
    bundle: true, write: false, format: 'iife', platform: 'browser',
    nodePaths: [nodeModules], logLevel: 'error',
    define: { 'process.env.NODE_ENV': '"production"' },
  });
  const js = bundle.outputFiles[0].text;
  const page = `<!doctype html><html><head><meta charset="utf-8"><script src="/app.js"></script></head><body>pyric</body></html>`;
  const web = http.createServer((req, res) => {
    if (req.url === '/app.js') { res.writeHead(200, { 'Content-Type': 'text/javascript' }); res.end(js); return; }
    res.writeHead(200, { 'Content-Type': 'text/html' }); res.end(page);
  });
  await new Promise(r => web.listen(0, '127.0.0.1', r));
  const userDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pyric-chromium-'));
  const ctx = await chromium.launchPersistentContext(userDir, {
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium', headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  let failed = false;
  try {
    const p = await ctx.newPage();
    p.on('pageerror', e => console.error('[pageerror]', e.message));
    await p.goto(`http://127.0.0.1:${web.address().port}/`);
    await p.waitForFunction(() => window.fb !== undefined);
    const steps = await p.evaluate(scenario, { host, port: Number(port) });
    for (const s of steps) { console.log(JSON.stringify(s)); if (!s.ok) failed = true; }
  } catch (e) {
    console.log(JSON.stringify({ step: 'driver', ok: false, error: String(e && e.stack || e) }));
    failed = true;
  } finally {
    await ctx.close();
    web.close();
    fs.rmSync(userDir, { recursive: true, force: true });
  }
  process.exit(failed ? 1 : 0);
}
main();

// scenario runs in the page and returns the step results.
async function scenario({ host, port }) {
  const fb = window.fb;
  const out = [];
  const step = async (name, f) => {
    try {
      const got = await Promise.race([f(), new Promise((_, rej) => setTimeout(() => rej(new Error('timeout 15s')), 15000))]);
      out.push({ step: name, ok: true, got: got ?? null });
    } catch (e) { out.push({ step: name, ok: false, error: `${e.code || ''} ${e.message}` }); }
  };
  const mk = (name, token) => {
    const s = fb.getStorage(fb.initializeApp({ projectId: 'demo-pyric', apiKey: 'fake', storageBucket: 'demo-pyric.appspot.com' }, name));
    fb.connectStorageEmulator(s, host, port, token ? { mockUserToken: token } : {});
    s.maxOperationRetryTime = 2000;
    s.maxUploadRetryTime = 2000;
    return s;
  };
  const alice = mk('alice', { sub: 'alice' });
  const bob = mk('bob', { sub: 'bob' });
  const code = async p => { try { await p; return 'ok'; } catch (e) { return e.code; } };
  const r = fb.ref(alice, 'users/alice/photo.png');

  await step('uploadBytes Blob', async () => {
    const res = await fb.uploadBytes(r, new Blob([new Uint8Array([137, 80, 78, 71])], { type: 'image/png' }), { customMetadata: { by: 'browser' } });
    return [res.metadata.size, res.metadata.contentType, res.metadata.customMetadata.by];
  });
  await step('getBlob', async () => { const b = await fb.getBlob(r); return [b.size, b.type]; });
  await step('getBlob maxDownloadSize', async () => (await fb.getBlob(r, 2)).size);
  await step('getDownloadURL then fetch', async () => {
    const url = await fb.getDownloadURL(r);
    const res = await fetch(url);
    return [res.status, (await res.arrayBuffer()).byteLength];
  });
  await step('uploadBytesResumable with pause and resume', () => new Promise((resolve, reject) => {
    const data = new Uint8Array(800 * 1024).map((_, i) => i % 253);
    const task = fb.uploadBytesResumable(fb.ref(alice, 'users/alice/big.bin'), data);
    let paused = false;
    const states = [];
    task.on('state_changed', s => {
      if (states[states.length - 1] !== s.state) states.push(s.state);
      if (!paused && s.bytesTransferred > 0) { paused = true; task.pause(); setTimeout(() => task.resume(), 50); }
    }, reject, async () => {
      const got = new Uint8Array(await fb.getBytes(task.snapshot.ref));
      resolve({ size: task.snapshot.metadata.size, sawPause: states.includes('paused'), same: got.length === data.length && got.every((b, i) => b === data[i]) });
    });
  }));
  await step('uploadBytesResumable cancel', async () => {
    const task = fb.uploadBytesResumable(fb.ref(alice, 'users/alice/cancel.bin'), new Uint8Array(900 * 1024));
    task.on('state_changed', s => { if (s.bytesTransferred > 0) task.cancel(); });
    return [await code(task), await code(fb.getMetadata(fb.ref(alice, 'users/alice/cancel.bin')))];
  });
  await step('updateMetadata', async () => (await fb.updateMetadata(r, { contentDisposition: 'attachment', customMetadata: { by: null } })).customMetadata);
  await step('list', async () => {
    const res = await fb.list(fb.ref(alice, 'users/alice'), { maxResults: 1 });
    const rest = await fb.list(fb.ref(alice, 'users/alice'), { maxResults: 10, pageToken: res.nextPageToken });
    return [res.items.map(i => i.name), rest.items.map(i => i.name)];
  });
  await step('denied read', () => code(fb.getBlob(fb.ref(bob, 'users/alice/photo.png'))));
  await step('denied upload', () => code(fb.uploadBytes(fb.ref(bob, 'users/alice/x'), new Blob(['x']))));
  await step('deleteObject', async () => { await fb.deleteObject(r); return code(fb.getBlob(r)); });
  return out;
}
