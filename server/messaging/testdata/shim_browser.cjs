// Runs the served messaging shim in a page of headless Chromium
// (playwright-core, the Debian chromium package): the page, on its own
// origin, imports pyric's /emulator/v1/messaging.js, gets a token twice,
// receives a send through onMessage, deletes the token and sees the send
// plane answer UNREGISTERED. Prints one JSON line.
//
// Env: PYRIC_MESSAGING_URL (http://host:port), CHROMIUM (default /usr/bin/chromium).
'use strict';
const { chromium } = require('playwright-core');
const http = require('node:http');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const base = process.env.PYRIC_MESSAGING_URL;

async function main() {
  const web = http.createServer((req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/html' });
    res.end('<!doctype html><html><head><meta charset="utf-8"></head><body>pyric messaging</body></html>');
  });
  await new Promise((r) => web.listen(0, '127.0.0.1', r));
  const userDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pyric-chromium-'));
  const ctx = await chromium.launchPersistentContext(userDir, {
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium', headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  try {
    const p = await ctx.newPage();
    p.on('pageerror', (e) => console.error('[pageerror]', e.message));
    await p.goto(`http://127.0.0.1:${web.address().port}/`);
    const got = await p.evaluate(scenario, { base });
    console.log(JSON.stringify(got));
  } finally {
    await ctx.close();
    web.close();
    fs.rmSync(userDir, { recursive: true, force: true });
  }
  process.exit(0);
}

async function scenario({ base }) {
  const shim = await import(base + '/emulator/v1/messaging.js');
  const projectId = 'demo-project';
  const m = shim.getMessaging({ projectId });
  const token = await shim.getToken(m);
  const again = await shim.getToken(shim.getMessaging({ projectId })); // same instance key in localStorage
  const send = (message) => fetch(`${base}/v1/projects/${projectId}/messages:send`, {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ message }),
  }).then(async (r) => ({ status: r.status, body: await r.json() }));
  let resolve;
  const received = new Promise((r) => (resolve = r));
  const stop = shim.onMessage(m, (payload) => resolve(payload));
  let payload = null;
  for (let i = 0; !payload && i < 100; i++) {
    await send({ token, notification: { title: 'Hello', body: 'browser' }, data: { attempt: String(i) } });
    payload = await Promise.race([received, new Promise((r) => setTimeout(() => r(null), 100))]);
  }
  stop();
  const deleted = await shim.deleteToken(m);
  const after = await send({ token });
  return { token, again, payload, deleted, after, supported: await shim.isSupported(), visibility: document.visibilityState };
}

main().catch((e) => { console.error(e); process.exit(1); });
