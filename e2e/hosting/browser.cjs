// browser.cjs opens an app served by pyric's Hosting in headless Chromium
// and lets its own code (public/app.js) sign in and write Firestore.
// Env: HOSTING_URL (the site), CHROMIUM. Prints one JSON line per step.
'use strict';
const { chromium } = require('playwright-core');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

(async () => {
  let failed = false;
  const print = (line) => { console.log(JSON.stringify(line)); if (!line.ok) failed = true; };
  const step = async (name, f) => {
    try {
      print({ step: name, ok: true, got: (await f()) ?? null });
    } catch (e) {
      print({ step: name, ok: false, error: String((e && e.stack) || e) });
    }
  };
  const userDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pyric-chromium-'));
  const ctx = await chromium.launchPersistentContext(userDir, {
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium', headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
  });
  const errors = [];
  try {
    const page = await ctx.newPage();
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (m) => { if (process.env.DEBUG) console.error('[page]', m.text()); });
    await step('open a deep link (rewritten to index.html)', async () => {
      const res = await page.goto(process.env.HOSTING_URL + '/notes/today', { waitUntil: 'load' });
      await page.waitForFunction(() => typeof window.saveNote === 'function' && typeof firebase !== 'undefined', null, { timeout: 30000 });
      return { status: res.status(), title: await page.title(), errors };
    });
    await step('sign in and write through the app', async () =>
      page.evaluate(() => window.saveNote('hello from hosting')));
  } finally {
    await ctx.close();
    fs.rmSync(userDir, { recursive: true, force: true });
  }
  process.exit(failed ? 1 : 0);
})().catch((e) => { console.log(JSON.stringify({ step: 'driver', ok: false, error: String(e.stack || e) })); process.exit(1); });
