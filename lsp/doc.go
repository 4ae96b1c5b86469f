// Package lsp is pyric's language server for Security Rules: `pyric lsp`
// speaks the Language Server Protocol over stdio for firestore.rules,
// storage.rules and database.rules.json. Its diagnostics are the ones `pyric
// <service> rules lint` prints (the same lint and compile functions, so
// editor and CLI never disagree), and its hover, completion, navigation and
// formatting read the one parser, AST and stdlib table of package rules.
// An edit inside one top-level match block re-lints only that block and
// keeps the others' findings when nothing they share changed
// (incremental.go), so a 1 MB file re-diagnoses in milliseconds with the
// CLI's exact diagnostics. Findings whose fix is mechanical (lint's
// source.Diagnostic.Edit) are offered as quick-fix code actions.
//
// With the developer's session — a running `pyric serve` found through
// the Emulator Suite hub (LiveSessions), else the captured
// .pyric/last-session.json — each allow gets a lens and an
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
