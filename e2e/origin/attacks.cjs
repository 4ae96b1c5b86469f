// attacks.cjs opens one page in headless Chromium (playwright-core, the
// Debian chromium package) from a foreign origin — http://evil.test:PORT,
// a name --host-resolver-rules maps to 127.0.0.1 — and has it try what any
// web site could do to a developer's running pyric: read the data, replace
// the rules, wipe every service. Then the same page served from
// http://localhost:PORT does the reads a dev server's app does. Each try
// is a step line {"step", "ok", "got"}; got is "blocked" when the browser
// kept the response from the page, "sent" for a no-cors request whose
// effect the Go test checks, else {status, body}.
//
// Env: FS, AUTH, DB, STORAGE, MESSAGING, AI, STUDIO, HUB (host:port),
// PROJECT, CHROMIUM.
'use strict';
const { chromium } = require('playwright-core');
const http = require('node:http');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const env = process.env;
const P = env.PROJECT;
const u = (svc, p) => `http://${env[svc]}${p}`;
const owner = { Authorization: 'Bearer owner' };
const openRules = JSON.stringify({ rules: { '.read': true, '.write': true } });

// tries are [name, kind, url, init]: kind "read" fetches in cors mode and
// reports what the page could read; "fire" sends a no-cors request (a
// simple request: no preflight guards it) and reports only that it went.
const attacks = [
  ['rtdb read everything', 'read', u('DB', `/.json?ns=${P}`)],
  ['rtdb read as owner', 'read', u('DB', `/.json?ns=${P}`), { headers: owner }],
  ['rtdb replace rules', 'read', u('DB', `/.settings/rules.json?ns=${P}`), { method: 'PUT', headers: owner, body: openRules }],
  ['rtdb replace rules without preflight', 'fire', u('DB', `/.settings/rules.json?ns=${P}&x-http-method-override=PUT`), { method: 'POST', body: openRules }],
  ['rtdb wipe without preflight', 'fire', u('DB', `/.json?ns=${P}&x-http-method-override=DELETE`), { method: 'POST', body: '' }],
  ['rtdb write without preflight', 'fire', u('DB', `/planted.json?ns=${P}`), { method: 'POST', body: '"evil"' }],
  ['storage open the rules', 'fire', u('STORAGE', '/internal/setRules'), { method: 'POST',
    body: JSON.stringify({ rules: { files: [{ name: 'storage.rules', content: "rules_version = '2'; service firebase.storage { match /b/{b}/o { match /{all=**} { allow read, write; } } }" }] } }) }],
  ['storage wipe', 'fire', u('STORAGE', '/internal/reset'), { method: 'POST' }],
  ['storage download', 'read', u('STORAGE', `/v0/b/${P}.appspot.com/o/secret.txt?alt=media`)],
  ['storage download as owner', 'read', u('STORAGE', `/v0/b/${P}.appspot.com/o/secret.txt?alt=media`), { headers: owner }],
  ['firestore read', 'read', u('FS', `/v1/projects/${P}/databases/(default)/documents/secrets/s1`), { headers: owner }],
  ['firestore read without preflight', 'read', u('FS', `/v1/projects/${P}/databases/(default)/documents:runQuery`), { method: 'POST', headers: { 'Content-Type': 'text/plain' },
    body: JSON.stringify({ structuredQuery: { from: [{ collectionId: 'secrets' }] } }) }],
  ['firestore wipe', 'read', u('FS', `/emulator/v1/projects/${P}/databases/(default)/documents`), { method: 'DELETE' }],
  ['auth list users', 'read', u('AUTH', `/identitytoolkit.googleapis.com/v1/projects/${P}/accounts:batchGet`), { headers: owner }],
  ['auth wipe', 'read', u('AUTH', `/emulator/v1/projects/${P}/accounts`), { method: 'DELETE' }],
  ['messaging inbox', 'read', u('MESSAGING', `/emulator/v1/projects/${P}/messages`)],
  ['ai replace the script', 'fire', u('AI', `/emulator/v1/projects/${P}/ai/script`), { method: 'POST', body: JSON.stringify([{ text: 'EVIL' }]) }],
  ['ai read the calls', 'read', u('AI', `/emulator/v1/projects/${P}/ai/calls`)],
  ['studio event API', 'read', u('STUDIO', '/api/events')],
  ['studio export', 'read', u('STUDIO', '/__pyric/export')],
  ['hub', 'read', u('HUB', '/emulators')],
  ['mcp', 'read', u('STUDIO', '/mcp'), { method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'evil', version: '1' } } }) }],
];

// The reads an app on a localhost dev server does, which must work.
const reads = [
  ['rtdb read everything', 'read', u('DB', `/.json?ns=${P}`)],
  ['rtdb rules as owner', 'read', u('DB', `/.settings/rules.json?ns=${P}`), { headers: owner }],
  ['storage download', 'read', u('STORAGE', `/v0/b/${P}.appspot.com/o/secret.txt?alt=media`)],
  ['firestore read', 'read', u('FS', `/v1/projects/${P}/databases/(default)/documents/secrets/s1`), { headers: owner }],
  ['auth list users', 'read', u('AUTH', `/identitytoolkit.googleapis.com/v1/projects/${P}/accounts:batchGet`), { headers: owner }],
  ['messaging inbox', 'read', u('MESSAGING', `/emulator/v1/projects/${P}/messages`)],
  ['hub', 'read', u('HUB', '/emulators')],
];

async function inPage(tries) {
  const out = [];
  for (const [name, kind, url, init] of tries) {
    let got;
    try {
      if (kind === 'fire') {
        await fetch(url, { ...(init || {}), mode: 'no-cors' });
        got = 'sent';
      } else {
        const r = await fetch(url, init || {});
        got = { status: r.status, body: (await r.text()).slice(0, 300) };
      }
    } catch (e) {
      got = 'blocked';
    }
    out.push({ step: name, ok: true, got });
  }
  return out;
}

async function main() {
  const web = http.createServer((req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/html' });
    res.end('<!doctype html><html><head><meta charset="utf-8"></head><body>a web page</body></html>');
  });
  await new Promise((r) => web.listen(0, '127.0.0.1', r));
  const port = web.address().port;
  const userDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pyric-chromium-'));
  const ctx = await chromium.launchPersistentContext(userDir, {
    executablePath: env.CHROMIUM || '/usr/bin/chromium', headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
      '--host-resolver-rules=MAP evil.test 127.0.0.1'],
  });
  try {
    const page = await ctx.newPage();
    for (const [origin, tries, prefix] of [[`http://evil.test:${port}`, attacks, 'foreign: '], [`http://localhost:${port}`, reads, 'localhost: ']]) {
      await page.goto(origin + '/');
      const lines = await page.evaluate(inPage, tries.map(([n, k, url, init]) => [n, k, url, init]).map((t) => t)).catch((e) => [{ step: 'driver', ok: false, error: String(e) }]);
      for (const l of lines) console.log(JSON.stringify({ ...l, step: prefix + l.step }));
    }
    // DNS rebinding: the page's own name resolves to the Realtime
    // Database's port, so its requests there are same-origin.
    await page.goto(`http://evil.test:${port}/`);
    const rebound = `http://evil.test:${env.DB.split(':').pop()}`;
    await page.goto(rebound + `/.json?ns=${P}`);
    const body = await page.evaluate(() => document.body.innerText);
    console.log(JSON.stringify({ step: 'rebinding: rtdb page', ok: true, got: body.slice(0, 300) }));
  } finally {
    await ctx.close();
    web.close();
    fs.rmSync(userDir, { recursive: true, force: true });
  }
}

main().catch((e) => { console.log(JSON.stringify({ step: 'driver', ok: false, error: String((e && e.stack) || e) })); process.exit(1); });
