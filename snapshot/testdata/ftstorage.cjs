'use strict';
// ftstorage.cjs runs firebase-tools' own Storage emulator layer (the code
// behind `firebase emulators:start --import` and `--export-on-exit` for
// Storage) without its Java rules runtime: it imports the storage_export
// directory IN, prints every object it then holds as one JSON line, adds
// an object of its own, and exports everything to OUT/storage_export.
const path = require('path');
const { StorageLayer, StoredFile } = require('firebase-tools/lib/emulator/storage/files');
const { Persistence } = require('firebase-tools/lib/emulator/storage/persistence');
const { StoredFileMetadata } = require('firebase-tools/lib/emulator/storage/metadata');
const { EmulatorRegistry } = require('firebase-tools/lib/emulator/registry');

async function main() {
  // Bucket metadata asks the registry where the emulator listens.
  EmulatorRegistry.set('storage', { getInfo: () => ({ name: 'storage', host: '127.0.0.1', port: 9199 }) });
  const cf = { dispatch() {} };
  const persistence = new Persistence(path.join(process.env.WORK, 'disk'));
  const files = new Map();
  const buckets = new Map();
  const layer = new StorageLayer('demo-x', files, buckets, {}, {}, persistence, cf);
  layer.import(process.env.IN, { initiatedBy: 'test' });
  const out = [];
  for (const [, f] of files) {
    const m = f.metadata;
    const data = layer.getBytes(m.bucket, m.name);
    out.push({ bucket: m.bucket, name: m.name, size: m.size, contentType: m.contentType, cacheControl: m.cacheControl || null,
      md5Hash: m.md5Hash, crc32c: m.crc32c, customMetadata: m.customMetadata || {}, downloadTokens: m.downloadTokens,
      data: Buffer.from(data).toString('base64') });
  }
  out.sort((a, b) => (a.bucket + '/' + a.name).localeCompare(b.bucket + '/' + b.name));
  console.log(JSON.stringify({ objects: out, buckets: [...buckets.keys()].sort() }));

  // An object firebase-tools itself creates, as an upload would.
  const bytes = Buffer.from('made by firebase-tools');
  const md = new StoredFileMetadata({ name: 'from/firebase tools.txt', bucket: 'demo-x.appspot.com', contentType: 'text/plain',
    customMetadata: { origin: 'firebase-tools' }, downloadTokens: ['tok-1'] }, cf, bytes);
  const key = layer.path(md.bucket, md.name);
  persistence.appendBytes(key, bytes);
  files.set(key, new StoredFile(md));
  // The hub creates the directory before asking for the export.
  require('fs').mkdirSync(path.join(process.env.OUT, 'storage_export'), { recursive: true });
  await layer.export(path.join(process.env.OUT, 'storage_export'), { initiatedBy: 'test' });
}
main().then(() => process.exit(0), e => { console.error(e); process.exit(1); });
