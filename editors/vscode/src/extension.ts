// The VS Code client of `pyric lsp`: it starts the language server over
// stdio for Firestore and Storage rules (the languages this extension
// declares) and for database.rules.json, and leaves everything else —
// diagnostics, hover, completion, navigation, formatting, session lenses —
// to the server.
import * as vscode from 'vscode';
import { LanguageClient, LanguageClientOptions, ServerOptions, TransportKind } from 'vscode-languageclient/node';

let client: LanguageClient | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const command = vscode.workspace.getConfiguration('pyric').get<string>('path') || 'pyric';
  const serverOptions: ServerOptions = { command, args: ['lsp'], transport: TransportKind.stdio };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [
      { scheme: 'file', language: 'firestore-rules' },
      { scheme: 'file', language: 'storage-rules' },
      { scheme: 'file', pattern: '**/*.rules.json' },
      { scheme: 'file', pattern: '**/database.rules.json' },
      { scheme: 'untitled', language: 'firestore-rules' },
    ],
    synchronize: { fileEvents: vscode.workspace.createFileSystemWatcher('**/{firebase.json,.pyric/last-session.json}') },
  };
  client = new LanguageClient('pyric', 'Pyric Security Rules', serverOptions, clientOptions);
  context.subscriptions.push(client);
  await client.start();
}

export async function deactivate(): Promise<void> {
  if (client) {
    await client.stop();
  }
}
