// Package lsp is pyric's language server for Security Rules: `pyric lsp`
// speaks the Language Server Protocol over stdio for firestore.rules,
// storage.rules and database.rules.json. Its diagnostics are the ones `pyric
// <service> rules lint` prints (the same lint and compile functions, so
// editor and CLI never disagree), and its hover, completion, navigation and
// formatting read the one parser, AST and stdlib table of package rules.
//
// With the developer's captured session (.pyric/last-session.json, which
// a running `pyric serve` keeps current), each allow gets a lens and an
// inlay hint counting the requests it allowed and denied, denials appear
// as information diagnostics on the failing sub-expression, and a lens
// names the requests whose verdict the unsaved buffer would flip (the
// session replayed against the buffer by package verify).
//
// JSON-RPC comes from github.com/sourcegraph/jsonrpc2; the framing
// (stream.go: Content-Length headers, bounded bodies, a JSON-RPC error for
// an unreadable body, a write queue so reading never waits on the client)
// and the few LSP structures used (protocol.go) are the package's own.
package lsp
