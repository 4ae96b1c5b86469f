'use strict';
// exec_rut.cjs runs under `pyric exec`: it forgets every *_EMULATOR_HOST
// variable and lets @firebase/rules-unit-testing discover Firestore
// through FIREBASE_EMULATOR_HUB alone, loads rules, asserts a success and
// a denial, and exits with $EXIT_WITH so the test sees exec pass the status.
// The Realtime Database and Storage are discovered the same way.
const { initializeTestEnvironment, assertFails, assertSucceeds } = require('@firebase/rules-unit-testing');
const { doc, setDoc } = require('firebase/firestore');
const { ref, set } = require('firebase/database');
const { ref: sref, uploadString } = require('firebase/storage');

for (const k of ['FIRESTORE_EMULATOR_HOST', 'FIREBASE_AUTH_EMULATOR_HOST', 'FIREBASE_DATABASE_EMULATOR_HOST', 'FIREBASE_STORAGE_EMULATOR_HOST', 'STORAGE_EMULATOR_HOST']) {
  delete process.env[k];
}
const rules = `rules_version = '2';
service cloud.firestore {
  match /databases/{database}/documents {
    match /users/{uid} {
      allow write: if request.auth != null && request.auth.uid == uid;
    }
  }
}`;
const dbRules = JSON.stringify({ rules: { users: { $uid: { '.write': 'auth != null && auth.uid === $uid' } } } });
const storageRules = `rules_version = '2';
service firebase.storage {
  match /b/{bucket}/o {
    match /users/{uid}/{file} {
      allow write: if request.auth != null && request.auth.uid == uid;
    }
  }
}`;

async function main() {
  const env = await initializeTestEnvironment({ projectId: process.env.GCLOUD_PROJECT, firestore: { rules },
    database: { rules: dbRules }, storage: { rules: storageRules } });
  const ctx = env.authenticatedContext('alice');
  const alice = ctx.firestore();
  await assertSucceeds(setDoc(doc(alice, 'users/alice'), { n: 1 }));
  const err = await assertFails(setDoc(doc(alice, 'users/bob'), { n: 1 }));
  await assertSucceeds(set(ref(ctx.database(), 'users/alice'), 1));
  const dbErr = await assertFails(set(ref(ctx.database(), 'users/bob'), 1));
  await assertSucceeds(uploadString(sref(ctx.storage(), 'users/alice/a.txt'), 'a'));
  const stErr = await assertFails(uploadString(sref(ctx.storage(), 'users/bob/a.txt'), 'a'));
  const { firestore: fs, database: db, storage: st } = env.emulators;
  await env.cleanup();
  console.log(JSON.stringify({ hub: process.env.FIREBASE_EMULATOR_HUB, project: process.env.GCLOUD_PROJECT,
    firestore: `${fs.host}:${fs.port}`, code: err.code, message: err.message,
    database: `${db.host}:${db.port}`, dbCode: dbErr.code, dbMessage: dbErr.message,
    storage: `${st.host}:${st.port}`, storageCode: stErr.code }));
  process.exit(Number(process.env.EXIT_WITH || 0));
}
main().catch(e => { console.error(e && e.stack || e); process.exit(3); });
