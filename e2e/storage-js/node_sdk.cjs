'use strict';
// node_sdk.cjs drives firebase/storage (firebase@12.19.0) in Node against
// STORAGE=host:port. Each step prints one JSON line {"step","ok","got"|"error"};
// the Go test checks them.
const { initializeApp } = require('firebase/app');
const st = require('firebase/storage');
const { steps } = require('../js/steps.cjs');

const [host, port] = (process.env.STORAGE || '127.0.0.1:9199').split(':');
const bucket = process.env.BUCKET || 'demo-pyric.appspot.com';

async function main() {
  const { step, failed } = steps(15000);
  const mk = (name, token) => {
    const s = st.getStorage(initializeApp({ projectId: 'demo-pyric', apiKey: 'fake', storageBucket: bucket }, name));
    st.connectStorageEmulator(s, host, Number(port), token ? { mockUserToken: token } : {});
    s.maxOperationRetryTime = 2000;
    s.maxUploadRetryTime = 2000;
    return s;
  };
  const alice = mk('alice', { sub: 'alice' });
  const bob = mk('bob', { sub: 'bob' });
  const anon = mk('anon');
  const garbled = mk('garbled', 'not-a-jwt');
  const code = async p => { try { await p; return 'ok'; } catch (e) { return e.code; } };
  const enc = s => new TextEncoder().encode(s);
  const dec = b => new TextDecoder().decode(b);
  const pick = (m, keys) => Object.fromEntries(keys.map(k => [k, m[k]]));

  const r = st.ref(alice, 'users/alice/dir/hello world.txt');
  await step('uploadBytes', async () => {
    const res = await st.uploadBytes(r, enc('hello'), { contentType: 'text/plain', customMetadata: { a: 'b' } });
    return pick(res.metadata, ['fullPath', 'name', 'bucket', 'size', 'contentType', 'generation', 'metageneration', 'customMetadata']);
  });
  await step('uploadBytes content type from Blob', async () =>
    (await st.uploadBytes(st.ref(alice, 'users/alice/dir/blob.json'), new Blob(['{}'], { type: 'application/json' }))).metadata.contentType);
  await step('uploadBytes default content type', async () =>
    (await st.uploadBytes(st.ref(alice, 'users/alice/dir/raw.bin'), new Uint8Array([1, 2, 3]))).metadata.contentType);
  await step('uploadString raw', async () => {
    const res = await st.uploadString(st.ref(alice, 'users/alice/dir/s.txt'), 'abc');
    return [res.metadata.size, dec(await st.getBytes(res.ref))];
  });
  await step('uploadString data_url', async () => {
    const res = await st.uploadString(st.ref(alice, 'users/alice/dir/d.txt'), 'data:text/csv;base64,YSxi', 'data_url');
    return [res.metadata.contentType, dec(await st.getBytes(res.ref))];
  });
  // The base64 forms are decoded by the SDK before upload: the stored
  // bytes must be the decoded ones, '+/' and '-_' alike, padding or not.
  const odd = Buffer.from([0xfb, 0xef, 0xff, 0x00, 0x41, 0x3e, 0x3f]);
  for (const [form, text] of [['base64', odd.toString('base64')], ['base64url', odd.toString('base64url')],
    ['data_url', 'data:application/x-odd;base64,' + odd.toString('base64')]]) {
    await step('uploadString ' + form + ' bytes', async () => {
      const res = await st.uploadString(st.ref(alice, 'users/alice/forms/' + form), text, form);
      return [text, res.metadata.size, Buffer.from(await st.getBytes(res.ref)).toString('hex')];
    });
  }
  await step('uploadString data_url percent-encoded', async () => {
    const res = await st.uploadString(st.ref(alice, 'users/alice/forms/pct'), 'data:text/plain,h%C3%A9llo%20w', 'data_url');
    return [res.metadata.contentType, dec(await st.getBytes(res.ref))];
  });
  // getStream gives a web ReadableStream in this build (a Node stream in
  // others): read it whole, or say how it failed.
  const readStream = async stream => {
    const chunks = [];
    if (stream.getReader) {
      const reader = stream.getReader();
      for (let r = await reader.read(); !r.done; r = await reader.read()) chunks.push(Buffer.from(r.value));
    } else {
      for await (const c of stream) chunks.push(Buffer.from(c));
    }
    return Buffer.concat(chunks).toString('hex');
  };
  await step('getStream', () => readStream(st.getStream(st.ref(alice, 'users/alice/forms/base64'))));
  await step('getStream missing object', async () => {
    try { return await readStream(st.getStream(st.ref(alice, 'users/alice/forms/none'))); } catch (e) { return e.code || String(e); }
  });
  await step('uploadBytesResumable', () => new Promise((resolve, reject) => {
    const data = new Uint8Array(600 * 1024).map((_, i) => i % 251);
    const task = st.uploadBytesResumable(st.ref(alice, 'users/alice/dir/big.bin'), data, { customMetadata: { kind: 'big' } });
    let progress = 0;
    task.on('state_changed', s => { progress = Math.max(progress, s.bytesTransferred); }, reject, async () => {
      const got = await st.getBytes(task.snapshot.ref);
      const same = got.byteLength === data.length && new Uint8Array(got).every((b, i) => b === data[i]);
      resolve({ size: task.snapshot.metadata.size, progress, same, kind: task.snapshot.metadata.customMetadata.kind });
    });
  }));
  await step('uploadBytesResumable pause and resume', () => new Promise((resolve, reject) => {
    const task = st.uploadBytesResumable(st.ref(alice, 'users/alice/dir/paused.bin'), new Uint8Array(700 * 1024));
    let paused = false, states = [];
    task.on('state_changed', s => {
      if (states[states.length - 1] !== s.state) states.push(s.state);
      if (!paused && s.bytesTransferred > 0) { paused = true; task.pause(); setTimeout(() => task.resume(), 50); }
    }, reject, () => resolve({ size: task.snapshot.metadata.size, sawPause: states.includes('paused') }));
  }));
  await step('uploadBytesResumable cancel', async () => {
    const task = st.uploadBytesResumable(st.ref(alice, 'users/alice/dir/cancelled.bin'), new Uint8Array(900 * 1024));
    task.on('state_changed', s => { if (s.bytesTransferred > 0) task.cancel(); });
    const c = await code(task);
    return [c, await code(st.getMetadata(st.ref(alice, 'users/alice/dir/cancelled.bin')))];
  });
  await step('getMetadata', async () => {
    const m = await st.getMetadata(r);
    return { ...pick(m, ['size', 'contentType', 'customMetadata', 'contentEncoding']), md5: !!m.md5Hash };
  });
  let url;
  await step('getDownloadURL then fetch', async () => {
    url = await st.getDownloadURL(r);
    const res = await fetch(url);
    return [url.startsWith(`http://${host}:${port}/v0/b/${bucket}/o/users%2Falice%2Fdir%2Fhello%20world.txt?alt=media&token=`), res.status, await res.text()];
  });
  await step('download URL ignores rules', async () => {
    const res = await fetch(url.replace('users%2Falice', 'users%2Falice'));
    const bad = await fetch(url.replace(/token=.*/, 'token=wrong'));
    return [res.status, bad.status];
  });
  await step('getBytes', async () => dec(await st.getBytes(r)));
  await step('getBytes maxDownloadSize', async () => dec(await st.getBytes(r, 3)));
  await step('updateMetadata', async () => {
    const m = await st.updateMetadata(r, { cacheControl: 'public, max-age=60', customMetadata: { c: 'd' } });
    const m2 = await st.updateMetadata(r, { cacheControl: null, customMetadata: { a: null } });
    return [m.cacheControl, m.metageneration, m2.cacheControl ?? null, m2.customMetadata, m2.metageneration, m2.generation === m.generation];
  });
  await step('listAll', async () => {
    const res = await st.listAll(st.ref(alice, 'users/alice/dir'));
    return [res.items.map(i => i.name), res.prefixes.map(p => p.fullPath)];
  });
  await step('list with pages', async () => {
    for (const n of ['p/1', 'p/2', 'p/q/3', 'p/r/4', 'p/5']) await st.uploadString(st.ref(alice, 'users/alice/' + n), n);
    const pages = [];
    let pageToken;
    do {
      const res = await st.list(st.ref(alice, 'users/alice/p'), { maxResults: 2, pageToken });
      pages.push([...res.items.map(i => i.name), ...res.prefixes.map(p => p.name + '/')]);
      pageToken = res.nextPageToken;
    } while (pageToken);
    return pages;
  });
  await step('deleteObject', async () => {
    await st.deleteObject(r);
    return [await code(st.getMetadata(r)), await code(st.getBytes(r)), await code(st.deleteObject(r)), await code(st.getDownloadURL(r))];
  });
  await step('download URL after delete', async () => (await fetch(url)).status);
  await step('denied upload anonymous', () => code(st.uploadBytes(st.ref(anon, 'users/alice/x'), enc('x'))));
  await step('denied read other user', () => code(st.getMetadata(st.ref(bob, 'users/alice/dir/s.txt'))));
  await step('denied list other user', () => code(st.listAll(st.ref(bob, 'users/alice'))));
  await step('denied delete other user', () => code(st.deleteObject(st.ref(bob, 'users/alice/dir/s.txt'))));
  await step('denied by size', () => code(st.uploadBytes(st.ref(alice, 'users/alice/huge'), new Uint8Array(2 * 1024 * 1024))));
  await step('denied resumable', () => code(st.uploadBytesResumable(st.ref(bob, 'users/alice/r.bin'), new Uint8Array(300 * 1024))));
  await step('firestore.get rule', async () => [
    await code(st.uploadString(st.ref(alice, 'teams/red/plan.txt'), 'plan')),
    await code(st.uploadString(st.ref(bob, 'teams/red/plan.txt'), 'plan')),
  ]);
  await step('unreadable token', () => code(st.getMetadata(st.ref(garbled, 'users/alice/dir/s.txt'))));
  await step('root operation', async () => code((async () => st.uploadBytes(st.ref(alice), enc('x')))()));
  process.exit(failed() ? 1 : 0);
}
main().catch(e => { console.error(e); process.exit(1); });
