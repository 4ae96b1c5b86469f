'use strict';
// exec_rut.cjs runs under `pyric exec`: it forgets every *_EMULATOR_HOST
// variable and lets @firebase/rules-unit-testing discover Firestore
// through FIREBASE_EMULATOR_HUB alone, loads rules, asserts a success and
// a denial, and exits with $EXIT_WITH so the test sees exec pass the status.
const { initializeTestEnvironment, assertFails, assertSucceeds } = require('@firebase/rules-unit-testing');
const { doc, setDoc } = require('firebase/firestore');

for (const k of ['FIRESTORE_EMULATOR_HOST', 'FIREBASE_AUTH_EMULATOR_HOST', 'FIREBASE_DATABASE_EMULATOR_HOST', 'FIREBASE_STORAGE_EMULATOR_HOST']) {
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

async function main() {
  const env = await initializeTestEnvironment({ projectId: process.env.GCLOUD_PROJECT, firestore: { rules } });
  const alice = env.authenticatedContext('alice').firestore();
  await assertSucceeds(setDoc(doc(alice, 'users/alice'), { n: 1 }));
  const err = await assertFails(setDoc(doc(alice, 'users/bob'), { n: 1 }));
  const fs = env.emulators.firestore;
  await env.cleanup();
  console.log(JSON.stringify({ hub: process.env.FIREBASE_EMULATOR_HUB, project: process.env.GCLOUD_PROJECT, firestore: `${fs.host}:${fs.port}`, code: err.code, message: err.message }));
  process.exit(Number(process.env.EXIT_WITH || 0));
}
main().catch(e => { console.error(e && e.stack || e); process.exit(3); });
