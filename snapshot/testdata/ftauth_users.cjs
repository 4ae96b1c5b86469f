'use strict';
// ftauth_users.cjs runs inside `firebase emulators:exec --only auth`: it
// creates accounts through the Auth emulator's REST API (a password
// account, one with custom claims and a phone number, a disabled one).
const host = process.env.FIREBASE_AUTH_EMULATOR_HOST;
const project = process.env.GCLOUD_PROJECT || 'demo-x';
const call = async (path, body, owner) => {
  const r = await fetch(`http://${host}/identitytoolkit.googleapis.com/v1/${path}`, {
    method: 'POST', headers: { 'content-type': 'application/json', ...(owner ? { authorization: 'Bearer owner' } : {}) },
    body: JSON.stringify(body) });
  const j = await r.json();
  if (r.status !== 200) throw new Error(`${path}: ${r.status} ${JSON.stringify(j)}`);
  return j;
};
(async () => {
  await call('accounts:signUp?key=fake', { email: 'alice@example.com', password: 'secret123', displayName: 'Alice' });
  const bob = await call(`projects/${project}/accounts`, { localId: 'bob', email: 'bob@example.com', phoneNumber: '+15555550100' }, true);
  await call(`projects/${project}/accounts:update`, { localId: bob.localId, customAttributes: JSON.stringify({ role: 'admin' }) }, true);
  await call(`projects/${project}/accounts`, { localId: 'carol', email: 'carol@example.com' }, true);
  await call(`projects/${project}/accounts:update`, { localId: 'carol', disableUser: true }, true);
  console.log('created');
})().catch(e => { console.error(e); process.exit(1); });
