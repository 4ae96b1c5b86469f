// client.cjs drives `pyric lsp` ($PYRIC) with the protocol library VS
// Code's language clients are built on (vscode-languageserver-protocol),
// over stdio, in the multi-root workspace $WORKSPACE_A + $WORKSPACE_B
// that lsp_e2e_test.go writes. Each step prints one JSON line
// (e2e/js/steps.cjs); the Go test checks the values.
'use strict';
const path = require('path');
const fs = require('fs');
const { spawn } = require('child_process');
const rpc = require('vscode-languageserver-protocol/node');
const { steps } = require(path.join(__dirname, '..', 'js', 'steps.cjs'));

const { step, failed } = steps(20000);
const A = process.env.WORKSPACE_A;
const B = process.env.WORKSPACE_B;
const uri = (p) => 'file://' + p;

async function main() {
  const proc = spawn(process.env.PYRIC, ['lsp', '--debounce', '50ms'], { stdio: ['pipe', 'pipe', 'inherit'] });
  const conn = rpc.createProtocolConnection(new rpc.StreamMessageReader(proc.stdout), new rpc.StreamMessageWriter(proc.stdin));
  const published = new Map(); // uri -> [{version, diagnostics}]
  const waiters = [];
  conn.onNotification(rpc.PublishDiagnosticsNotification.type, (p) => {
    if (!published.has(p.uri)) published.set(p.uri, []);
    published.get(p.uri).push(p);
    for (const w of waiters.splice(0)) w();
  });
  conn.listen();
  const diagsOf = async (u, version) => {
    for (;;) {
      const got = (published.get(u) || []).find((p) => p.version === version);
      if (got) return got.diagnostics;
      await new Promise((res) => waiters.push(res));
    }
  };
  const short = (ds) => ds.map((d) => ({ code: d.code, severity: d.severity, line: d.range.start.line, character: d.range.start.character }));
  const posOf = (text, needle, delta = 0) => {
    const off = text.indexOf(needle) + delta;
    const before = text.slice(0, off);
    const line = before.split('\n').length - 1;
    return { line, character: off - (before.lastIndexOf('\n') + 1) };
  };

  await step('initialize', async () => {
    const r = await conn.sendRequest(rpc.InitializeRequest.type, {
      processId: process.pid, rootUri: null, capabilities: {},
      workspaceFolders: [{ uri: uri(A), name: 'a' }, { uri: uri(B), name: 'b' }],
    });
    conn.sendNotification(rpc.InitializedNotification.type, {});
    return { sync: r.capabilities.textDocumentSync.change, hover: r.capabilities.hoverProvider, rename: !!r.capabilities.renameProvider };
  });

  // Firestore and Storage: the same journey for each.
  for (const [lang, file, languageId] of [['firestore', path.join(A, 'app.rules'), 'firestore-rules'], ['storage', path.join(B, 'storage.rules'), 'storage-rules']]) {
    const text = fs.readFileSync(file, 'utf8');
    const u = uri(file);
    await step(`${lang} open`, async () => {
      conn.sendNotification(rpc.DidOpenTextDocumentNotification.type, { textDocument: { uri: u, languageId, version: 1, text } });
      return short(await diagsOf(u, 1));
    });
    await step(`${lang} edit`, async () => {
      // Insert `== ` after `uid ` in the owner check: a syntax error.
      const p = posOf(text, 'uid == uid', 4);
      conn.sendNotification(rpc.DidChangeTextDocumentNotification.type, {
        textDocument: { uri: u, version: 2 },
        contentChanges: [{ range: { start: p, end: p }, text: '== ' }],
      });
      const broken = await diagsOf(u, 2);
      conn.sendNotification(rpc.DidChangeTextDocumentNotification.type, {
        textDocument: { uri: u, version: 3 },
        contentChanges: [{ range: { start: p, end: { line: p.line, character: p.character + 3 } }, text: '' }],
      });
      const fixed = await diagsOf(u, 3);
      return { broken: short(broken).slice(0, 1), fixed: short(fixed) };
    });
    await step(`${lang} hover`, async () => {
      const h = await conn.sendRequest(rpc.HoverRequest.type, { textDocument: { uri: u }, position: posOf(text, 'lower()', 1) });
      return h.contents.value;
    });
    await step(`${lang} completion`, async () => {
      const edited = text.replace('.lower()', '.');
      const u2 = uri(path.join(path.dirname(file), 'scratch-' + path.basename(file)));
      conn.sendNotification(rpc.DidOpenTextDocumentNotification.type, { textDocument: { uri: u2, languageId, version: 1, text: edited } });
      const l = await conn.sendRequest(rpc.CompletionRequest.type, { textDocument: { uri: u2 }, position: posOf(edited, 'uid.', 4) });
      const labels = l.items.map((i) => i.label);
      return { lower: labels.includes('lower'), matches: labels.includes('matches'), keys: labels.includes('keys') };
    });
    await step(`${lang} definition`, async () => {
      const locs = await conn.sendRequest(rpc.DefinitionRequest.type, { textDocument: { uri: u }, position: posOf(text, 'isOwner(uid) &&', 1) });
      return locs.map((l) => l.range.start);
    });
    await step(`${lang} rename`, async () => {
      const e = await conn.sendRequest(rpc.RenameRequest.type, { textDocument: { uri: u }, position: posOf(text, 'isOwner(uid) &&', 1), newName: 'owns' });
      return e.changes[u].map((x) => x.range.start.line);
    });
    await step(`${lang} code action`, async () => {
      // `.length` on a path variable (a string): lint's fix, size(), is
      // offered as a quick fix; applying it leaves no finding.
      const p = posOf(text, 'uid.lower() == uid', 18);
      const ins = ' && uid.length > 0';
      conn.sendNotification(rpc.DidChangeTextDocumentNotification.type, {
        textDocument: { uri: u, version: 4 },
        contentChanges: [{ range: { start: p, end: p }, text: ins }],
      });
      const ds = await diagsOf(u, 4);
      const d = ds.find((x) => x.code === 'LENGTH_PROPERTY');
      const actions = await conn.sendRequest(rpc.CodeActionRequest.type, { textDocument: { uri: u }, range: d.range, context: { diagnostics: [d] } });
      const edits = actions.map((a) => a.edit.changes[u]).flat();
      const e = edits[0];
      conn.sendNotification(rpc.DidChangeTextDocumentNotification.type, {
        textDocument: { uri: u, version: 5 },
        contentChanges: [{ range: e.range, text: e.newText }],
      });
      const after = await diagsOf(u, 5);
      const end = { line: p.line, character: p.character + ins.length }; // size() is as long as length
      conn.sendNotification(rpc.DidChangeTextDocumentNotification.type, {
        textDocument: { uri: u, version: 6 },
        contentChanges: [{ range: { start: p, end }, text: '' }],
      });
      await diagsOf(u, 6);
      return { actions: actions.map((a) => [a.kind, a.title, a.diagnostics.map((x) => x.code)]), edit: [e.range.start.line, e.range.start.character, e.range.end.character, e.newText], after: short(after) };
    });
    await step(`${lang} formatting`, async () => {
      const edits = await conn.sendRequest(rpc.DocumentFormattingRequest.type, { textDocument: { uri: u }, options: { tabSize: 2, insertSpaces: true } });
      return edits.length === 1 ? edits[0].newText : null;
    });
    await step(`${lang} symbols`, async () => {
      const syms = await conn.sendRequest(rpc.DocumentSymbolRequest.type, { textDocument: { uri: u } });
      const names = [];
      const walk = (s) => { names.push(s.name); (s.children || []).forEach(walk); };
      syms.forEach(walk);
      return names;
    });
  }

  // The Realtime Database: db.json is database rules only because A's
  // firebase.json says so.
  const dbFile = path.join(A, 'db.json');
  const dbText = fs.readFileSync(dbFile, 'utf8');
  const dbu = uri(dbFile);
  await step('database open', async () => {
    conn.sendNotification(rpc.DidOpenTextDocumentNotification.type, { textDocument: { uri: dbu, languageId: 'json', version: 1, text: dbText } });
    return short(await diagsOf(dbu, 1));
  });
  await step('database hover', async () => {
    const h = await conn.sendRequest(rpc.HoverRequest.type, { textDocument: { uri: dbu }, position: posOf(dbText, 'auth != null', 1) });
    const v = await conn.sendRequest(rpc.HoverRequest.type, { textDocument: { uri: dbu }, position: posOf(dbText, '=== $uid', 5) });
    return [h.contents.value, v.contents.value];
  });
  await step('database completion', async () => {
    const after = await conn.sendRequest(rpc.CompletionRequest.type, { textDocument: { uri: dbu }, position: posOf(dbText, 'auth.uid', 5) });
    const vars = await conn.sendRequest(rpc.CompletionRequest.type, { textDocument: { uri: dbu }, position: posOf(dbText, '$uid",', 0) });
    return { auth: after.items.map((i) => i.label).sort(), hasUid: vars.items.some((i) => i.label === '$uid'), hasNewData: vars.items.some((i) => i.label === 'newData') };
  });
  await step('database definition', async () => {
    const locs = await conn.sendRequest(rpc.DefinitionRequest.type, { textDocument: { uri: dbu }, position: posOf(dbText, '=== $uid', 5) });
    return locs.map((l) => l.range.start);
  });
  await step('database rename', async () => {
    const e = await conn.sendRequest(rpc.RenameRequest.type, { textDocument: { uri: dbu }, position: posOf(dbText, '=== $uid', 5), newName: '$user' });
    return e.changes[dbu].map((x) => [x.range.start.line, x.range.start.character, x.newText]);
  });
  await step('database edit', async () => {
    const p = posOf(dbText, 'auth.uid', 0);
    conn.sendNotification(rpc.DidChangeTextDocumentNotification.type, {
      textDocument: { uri: dbu, version: 2 },
      contentChanges: [{ range: { start: p, end: { line: p.line, character: p.character + 4 } }, text: 'auht' }],
    });
    const unknown = await diagsOf(dbu, 2);
    // A second comma after the .read rule: a JSON syntax error.
    const q = posOf(dbText, '",\n', 2);
    conn.sendNotification(rpc.DidChangeTextDocumentNotification.type, {
      textDocument: { uri: dbu, version: 3 },
      contentChanges: [{ range: { start: q, end: q }, text: ',' }],
    });
    const badJSON = await diagsOf(dbu, 3);
    return { unknown: short(unknown), badJSON: short(badJSON).slice(0, 1) };
  });
  await step('database formatting', async () => {
    return await conn.sendRequest(rpc.DocumentFormattingRequest.type, { textDocument: { uri: dbu }, options: { tabSize: 2, insertSpaces: true } });
  });

  await step('shutdown', async () => {
    await conn.sendRequest(rpc.ShutdownRequest.type);
    conn.sendNotification(rpc.ExitNotification.type);
    const code = await new Promise((res) => proc.on('exit', (c) => res(c)));
    return code;
  });
  conn.dispose();
  process.exit(failed() ? 1 : 0);
}

main().catch((e) => { console.error(e); process.exit(2); });
