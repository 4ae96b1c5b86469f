'use strict';
// rut.cjs drives @firebase/rules-unit-testing@5.0.2 with database rules
// against DB=host:port: rules loaded through /.settings/rules.json,
// assertSucceeds/assertFails per identity, withSecurityRulesDisabled and
// clearDatabase. One JSON line per step.
const { initializeTestEnvironment, assertSucceeds, assertFails } = require('@firebase/rules-unit-testing');
const { ref, set, get } = require('firebase/database');
const { steps } = require('../js/steps.cjs');

const [host, port] = process.env.DB.split(':');
const rules = JSON.stringify({ rules: {
  users: { $uid: { '.read': 'auth != null && auth.uid === $uid', '.write': 'auth != null && auth.uid === $uid',
    age: { '.validate': 'newData.isNumber() && newData.val() >= 0' } } },
  public: { '.read': true, '.write': false },
} });

async function main() {
  const { step, failed } = steps(10000);
  const env = await initializeTestEnvironment({ projectId: 'demo-rut', database: { host, port: Number(port), rules } });
  const alice = env.authenticatedContext('alice').database();
  const anon = env.unauthenticatedContext().database();
  await step('own write succeeds', async () => { await assertSucceeds(set(ref(alice, 'users/alice'), { age: 3 })); return true; });
  await step('other write fails', async () => { await assertFails(set(ref(alice, 'users/bob'), { age: 3 })); return true; });
  await step('validate fails', async () => { await assertFails(set(ref(alice, 'users/alice/age'), -1)); return true; });
  await step('anonymous read fails', async () => { await assertFails(get(ref(anon, 'users/alice'))); return true; });
  await step('public write fails', async () => { await assertFails(set(ref(anon, 'public/x'), 1)); return true; });
  await step('withSecurityRulesDisabled seeds', async () => {
    await env.withSecurityRulesDisabled(async ctx => { await set(ref(ctx.database(), 'public/x'), 'seeded'); });
    return (await assertSucceeds(get(ref(anon, 'public/x')))).val();
  });
  await step('clearDatabase', async () => {
    await env.clearDatabase();
    return [(await get(ref(anon, 'public/x'))).val(), (await get(ref(alice, 'users/alice'))).val()];
  });
  await env.cleanup();
  process.exit(failed() ? 1 : 0);
}
main().catch(e => { console.error(e); process.exit(2); });
