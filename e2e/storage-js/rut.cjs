'use strict';
// rut.cjs drives @firebase/rules-unit-testing@5.0.2 with storage rules
// against STORAGE=host:port: rules loaded through /internal/setRules,
// contexts, withSecurityRulesDisabled (the owner token) and clearStorage.
const fs = require('fs');
const { initializeTestEnvironment, assertFails, assertSucceeds } = require('@firebase/rules-unit-testing');
const { steps } = require('../js/steps.cjs');

const [host, port] = (process.env.STORAGE || '127.0.0.1:9199').split(':');
const rules = fs.readFileSync(process.env.RULES_FILE, 'utf8');

async function main() {
  const { step, failed } = steps(60000);
  const env = await initializeTestEnvironment({ projectId: 'demo-rut', storage: { host, port: Number(port), rules } });
  const alice = env.authenticatedContext('alice').storage();
  const bob = env.authenticatedContext('bob').storage();
  const anon = env.unauthenticatedContext().storage();
  const bytes = new Uint8Array([1, 2, 3]);
  await step('owner writes', () => assertSucceeds(alice.ref('users/alice/a.bin').put(bytes)).then(() => 'ok'));
  await step('other user denied', () => assertFails(bob.ref('users/alice/b.bin').put(bytes)).then(e => e.code));
  await step('anonymous read denied', () => assertFails(anon.ref('users/alice/a.bin').getMetadata()).then(e => e.code));
  await step('owner reads', () => assertSucceeds(alice.ref('users/alice/a.bin').getMetadata()).then(m => m.size));
  await step('rules disabled', async () => {
    let bucket;
    await env.withSecurityRulesDisabled(async ctx => {
      await ctx.storage().ref('top.txt').putString('x');
      bucket = (await ctx.storage().ref('users/alice/a.bin').getMetadata()).bucket;
    });
    return bucket;
  });
  await step('clearStorage', async () => {
    await env.clearStorage();
    let n;
    await env.withSecurityRulesDisabled(async ctx => { n = (await ctx.storage().ref().listAll()).items.length; });
    return n;
  });
  await env.cleanup();
  process.exit(failed() ? 1 : 0);
}
main().catch(e => { console.error(e); process.exit(1); });
