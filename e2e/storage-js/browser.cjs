// browser.cjs runs the browser build of firebase@12.19.0 Storage in headless
// Chromium (playwright-core, the Debian chromium package) against
// STORAGE=host:port from a page on another origin, so every request is a
// cross-origin XHR (CORS preflights, exposed X-Goog-Upload-* headers). Each
// step prints one JSON line {"step","ok","got"|"error"}; the Go test checks
// them.
'use strict';
const path = require('node:path');
const { run } = require('../js/browser-harness.cjs');

const [host, port] = (process.env.STORAGE || '127.0.0.1:9199').split(':');

run({ app: path.join(__dirname, 'browser_app.js') }, async ({ page, report }) => {
  report(await page.evaluate(scenario, { host, port: Number(port) }));
});

// scenario runs in the page and returns the step results.
async function scenario({ host, port }) {
  const fb = window.fb;
  const { out, step } = window.pyricSteps(15000);
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
