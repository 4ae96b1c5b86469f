// Drives `pyric mcp` with the TypeScript MCP SDK's client over stdio: an
// independent implementation of the protocol, to prove interoperability.
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js');

const rules = `rules_version = '2';
service cloud.firestore {
  match /databases/{database}/documents {
    match /accounts/{uid} {
      allow read, write: if request.auth != null && request.auth.uid == uid;
    }
  }
}
`;

(async () => {
  const transport = new StdioClientTransport({ command: process.env.PYRIC, args: ['mcp'], stderr: 'inherit' });
  const client = new Client({ name: 'ts-interop', version: '1.0.0' });
  await client.connect(transport);
  const call = async (name, args) => {
    const r = await client.callTool({ name, arguments: args });
    return { isError: !!r.isError, structured: r.structuredContent, text: JSON.parse(r.content[0].text) };
  };
  const tools = await client.listTools();
  const created = await call('firestore_simulator_create', { rules, documents: { 'accounts/alice': { balance: 100 } } });
  const denied = await call('firestore_simulator_execute', { method: 'update', path: 'accounts/alice', auth: { uid: 'mallory' }, data: { balance: 0 } });
  const tx = await call('firestore_simulator_transaction', {
    reads: { acct: 'accounts/alice' },
    writes: [{ method: 'update', path: 'accounts/alice', data: { balance: { $expr: '$acct.balance - 30' } } }],
    auth: { uid: 'alice' },
  });
  const doc = await call('firestore_get_document', { path: 'accounts/alice' });
  const invalid = await call('firestore_get_document', {});
  const resources = await client.listResources();
  const rulesText = (await client.readResource({ uri: 'pyric://rules/firestore' })).contents[0].text;
  console.log(JSON.stringify({
    tools: tools.tools.map((t) => t.name),
    schemasAreObjects: tools.tools.every((t) => t.inputSchema && t.inputSchema.type === 'object'),
    created, denied, tx, doc, invalid,
    resources: resources.resources.map((r) => r.uri),
    rulesText,
  }));
  await client.close();
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
