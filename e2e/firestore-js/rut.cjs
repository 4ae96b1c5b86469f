'use strict';
// rut.cjs drives @firebase/rules-unit-testing@5.0.2 against FS=host:port:
// rules loaded over PUT /emulator/v1/projects/{p}:securityRules,
// assertSucceeds/assertFails in authenticated and unauthenticated contexts
// (the v9 modular API and the compat API it hands out), security rules
// disabled, and clearFirestore over the emulator's DELETE endpoint. Each
// step prints one JSON line {"step", "ok", "got"|"error"}.
const { initializeTestEnvironment, assertFails, assertSucceeds } = require('@firebase/rules-unit-testing');
const { doc, getDoc, setDoc, updateDoc, deleteDoc, collection, getDocs, query, where, serverTimestamp } = require('firebase/firestore');
const { steps } = require('../js/steps.cjs');

const [host, port] = (process.env.FS || '127.0.0.1:8080').split(':');
const project = process.env.PROJECT || 'demo-rut';

const rules = `rules_version = '2';
service cloud.firestore {
  match /databases/{database}/documents {
    function signedIn() { return request.auth != null; }
    match /users/{uid} {
      allow read: if signedIn() && request.auth.uid == uid;
      allow create: if signedIn() && request.auth.uid == uid && request.resource.data.keys().hasOnly(['name', 'age']);
      allow update: if signedIn() && request.auth.uid == uid && request.resource.data.age > resource.data.age;
      allow delete: if request.auth.token.admin == true;
    }
    match /posts/{post} {
      allow read: if resource.data.published == true || (signedIn() && resource.data.author == request.auth.uid);
      allow create: if signedIn() && request.resource.data.author == request.auth.uid
                    && request.resource.data.createdAt == request.time;
    }
  }
}`;

async function main() {
  const { step, failed } = steps(10000);
  const env = await initializeTestEnvironment({ projectId: project, firestore: { host, port: Number(port), rules } });
  const alice = env.authenticatedContext('alice').firestore();
  const bob = env.authenticatedContext('bob').firestore();
  const admin = env.authenticatedContext('root', { admin: true }).firestore();
  const anon = env.unauthenticatedContext().firestore();
  const denied = async p => { const e = await assertFails(p); return e.code; };

  await step('clearFirestore on an empty database', () => env.clearFirestore());
  await step('create own profile', () => assertSucceeds(setDoc(doc(alice, 'users/alice'), { name: 'Alice', age: 30 })));
  await step('create with an extra field is denied', () => denied(setDoc(doc(bob, 'users/bob'), { name: 'Bob', role: 'admin' })));
  await step('read own profile', async () => (await assertSucceeds(getDoc(doc(alice, 'users/alice')))).data());
  await step('read someone else is denied', () => denied(getDoc(doc(bob, 'users/alice'))));
  await step('unauthenticated read is denied', () => denied(getDoc(doc(anon, 'users/alice'))));
  await step('update must grow age', async () => {
    await assertFails(updateDoc(doc(alice, 'users/alice'), { age: 29 }));
    await assertSucceeds(updateDoc(doc(alice, 'users/alice'), { age: 31 }));
    return 'ok';
  });
  await step('delete needs the admin claim', async () => {
    await assertFails(deleteDoc(doc(alice, 'users/alice')));
    await assertSucceeds(deleteDoc(doc(admin, 'users/alice')));
    return 'ok';
  });
  await step('compat API', async () => {
    await assertSucceeds(alice.collection('users').doc('alice').set({ name: 'A', age: 1 }));
    await assertFails(bob.collection('users').doc('alice').get());
    return 'ok';
  });
  // withSecurityRulesDisabled resolves to undefined: results go through a variable.
  const asOwner = async f => { let out; await env.withSecurityRulesDisabled(async ctx => { out = await f(ctx.firestore()); }); return out; };
  await step('withSecurityRulesDisabled seeds data', () => asOwner(async db => {
    await setDoc(doc(db, 'posts/p1'), { published: true, author: 'bob' });
    await setDoc(doc(db, 'posts/p2'), { published: false, author: 'bob' });
    await setDoc(doc(db, 'users/carol'), { name: 'Carol', age: 5, extra: true });
    return (await getDoc(doc(db, 'users/carol'))).data().name;
  }));
  await step('published post is public', async () => (await assertSucceeds(getDoc(doc(anon, 'posts/p1')))).data().author);
  await step('draft is the author\'s', async () => {
    await assertFails(getDoc(doc(alice, 'posts/p2')));
    return (await assertSucceeds(getDoc(doc(bob, 'posts/p2')))).data().published;
  });
  await step('rules are not filters', async () => {
    await assertFails(getDocs(collection(anon, 'posts')));
    return (await assertSucceeds(getDocs(query(collection(anon, 'posts'), where('published', '==', true))))).size;
  });
  await step('request.time and serverTimestamp', async () => {
    await assertSucceeds(setDoc(doc(alice, 'posts/p3'), { author: 'alice', createdAt: serverTimestamp() }));
    await assertFails(setDoc(doc(alice, 'posts/p4'), { author: 'alice', createdAt: new Date(0) }));
    return 'ok';
  });
  await step('clearFirestore', async () => {
    await env.clearFirestore();
    return asOwner(async db => (await getDocs(collection(db, 'posts'))).size);
  });
  await step('bad rules are rejected', async () => {
    const resp = await fetch(`http://${host}:${port}/emulator/v1/projects/${project}:securityRules`, {
      method: 'PUT', body: JSON.stringify({ rules: { files: [{ content: "service cloud.firestore { match /a { allow read: if ; } }" }] } }) });
    const msg = (await resp.json()).error.message;
    return { status: resp.status, message: msg.split('\n')[0] + ' ' + msg.split('\n')[1].split(':')[0] };
  });
  await step('the last good rules stay live', () => denied(getDoc(doc(bob, 'users/alice'))));
  await env.cleanup();
  process.exit(failed() ? 1 : 0);
}
main().catch(e => { console.log(JSON.stringify({ step: 'driver', ok: false, error: String(e && e.stack || e) })); process.exit(1); });
