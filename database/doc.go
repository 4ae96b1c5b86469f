// Package database is the Realtime Database engine: one JSON tree per
// namespace with production's data model (arrays stored as integer-keyed
// objects, nulls and empty objects pruned, priorities, server values),
// writes (set, atomic multi-path update, compare-and-set by hash or ETag),
// indexed queries, listeners that receive only what changed, onDisconnect
// operations per connection, and every request judged by rules/rtdb.
//
// A namespace's live tree changes in place under its write lock, so a
// write costs about its own size; what leaves the lock is a copy (see
// tree.go). A standing listen is judged again when the identity of its
// connection changes, when rules change, and when a write touches data
// its read rules observed (rtdb.Decision.DataReads); one no longer
// allowed is revoked (Push.Revoked). A commit finds the listens it
// concerns, and those whose rules observed what it wrote, through a trie
// of locations (lindex.go), so its cost does not grow with the listens
// elsewhere in the namespace. A token that expires while a
// connection uses it is revoked too (Push.AuthRevoked). Rules that depend
// only on `now` are not re-judged as time passes.
//
// The engine owns the client protocol's semantics; server/database only
// decodes REST and websocket frames into calls on a Database or a Conn and
// encodes what comes back. It implements service.Service under the name
// "database" and persists each mutation before acknowledging it: its
// changed leaves as one record of its Log (the store's write-ahead log),
// a namespace's own rules in its Bucket (persist.go).
package database
