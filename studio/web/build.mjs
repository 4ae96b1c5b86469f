// build.mjs bundles the Studio UI into ../dist (committed; embedded by
// go:embed) and records a hash of every input, so a Go test can tell
// when the committed bundle is stale without Node. OUT=dir builds
// elsewhere (the freshness test compares such a build with ../dist).
import { build } from 'esbuild';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, readdirSync, writeFileSync, copyFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const out = process.env.OUT || join(here, '..', 'dist');
mkdirSync(out, { recursive: true });

await build({
  entryPoints: [join(here, 'src', 'main.js')],
  bundle: true,
  minify: true,
  format: 'esm',
  target: 'es2020',
  outfile: join(out, 'app.js'),
  legalComments: 'eof',
  logLevel: 'warning',
});
copyFileSync(join(here, 'src', 'index.html'), join(out, 'index.html'));
copyFileSync(join(here, 'src', 'style.css'), join(out, 'style.css'));
writeFileSync(join(out, 'sources.sha256'), sourcesHash() + '\n');

// sourcesHash must match studio's Go test (bundle_test.go): sha256 over
// "name\0content\0" of build.mjs, package-lock.json and src/* sorted by name.
function sourcesHash() {
  const files = ['build.mjs', 'package-lock.json', ...readdirSync(join(here, 'src')).sort().map(f => 'src/' + f)];
  const h = createHash('sha256');
  for (const f of files) {
    h.update(f + '\0');
    h.update(readFileSync(join(here, f)));
    h.update('\0');
  }
  return h.digest('hex');
}
