// browser_harness.cjs is what the browser tests of this directory add to
// e2e/js/browser-harness.cjs (the app page, headless Chromium, the step
// printer): the app (browser_app.js) opened for PROJECT against AUTH_URL,
// the offline gapi stand-in, every other request leaving 127.0.0.1
// refused, and an admin client of the emulator.
//
// Env: AUTH_URL (http://host:port of pyric's Auth), PROJECT, and those of
// e2e/js/browser-harness.cjs (CHROMIUM, DEBUG=1).
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const harness = require('../../js/browser-harness.cjs');

// run serves the app, launches the browser and calls scenario({ ctx, page,
// appURL, step, admin, authURL, project }); it exits 1 if a step failed.
async function run(scenario) {
  const authURL = process.env.AUTH_URL;
  const project = process.env.PROJECT || 'demo-browser-auth';
  const gapi = fs.readFileSync(path.join(__dirname, 'gapi_iframes.js'), 'utf8');
  const admin = async (method, p, body) => {
    const r = await fetch(authURL + p, { method, headers: { authorization: 'Bearer owner', 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body) });
    const j = await r.json();
    if (!r.ok) throw new Error(`${method} ${p}: ${r.status} ${JSON.stringify(j)}`);
    return j;
  };
  // The app and the emulator share the host 127.0.0.1 (one site), as a
  // redirect sign-in needs: the helper frame reads the event the chooser
  // stored under the emulator's origin.
  await harness.run({
    app: path.join(__dirname, 'browser_app.js'),
    body: '<p>pyric app</p><div id="recaptcha"></div>',
    query: `?project=${project}&auth=${encodeURIComponent(authURL)}`,
    ready: 'app',
    setup: async (ctx) => {
      // Routes match newest first: the gapi stand-in, then refuse the rest.
      await ctx.route((u) => u.hostname !== '127.0.0.1', (r) => r.abort());
      await ctx.route('https://apis.google.com/js/api.js**', (r) => r.fulfill({ status: 200, contentType: 'text/javascript', body: gapi }));
    },
  }, (h) => scenario({ ...h, admin, authURL, project }));
}

module.exports = { run };
