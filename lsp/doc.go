// Package lsp is pyric's language server for Security Rules: `pyric lsp`
// speaks the Language Server Protocol over stdio for firestore.rules,
// storage.rules and database.rules.json. Its diagnostics are the ones `pyric
// <service> rules lint` prints (the same lint and compile functions, so
// editor and CLI never disagree), and its hover, completion, navigation and
// formatting read the one parser, AST and stdlib table of package rules.
//
// JSON-RPC and the Content-Length framing come from
// github.com/sourcegraph/jsonrpc2; the few LSP structures the server uses
// are declared in protocol.go.
package lsp
