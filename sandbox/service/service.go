// Package service is the contract between the sandbox and the engines it
// owns. A service (Firestore, Auth, the Realtime Database, Cloud Storage,
// Messaging, AI Logic, Pub/Sub, Functions) implements Service and joins a
// sandbox through a Registration; the sandbox gives it an Env when it is
// created — the project, the clock, the id and random sources, the event
// stream and, when the sandbox is durable, its own Bucket and Log in the
// one embedded store and its directory for files — and from then on
// resets, snapshots and restores it by name.
//
// Durability belongs to the engine: inside a mutation, before the mutation
// is acknowledged, the engine writes what changed to its Bucket with
// Update, or appends it to its Log. A nil Env.Bucket means the sandbox is
// in memory.
//
// Beyond Service, a service implements the optional capabilities of
// capability.go (typed state, state checks, capture state and records,
// export and import, a description) and the tools above the sandbox — snapshot and
// export, capture, the MCP server — loop over the services that have
// them. So a new service is its package, its wire adapter and one row in
// the backend's table: no tool changes for it. The servicetest package
// holds the contract suite every registration runs.
//
// This package imports nothing of pyric but the leaves event, identity
// and rules/source, so every engine can implement it and the sandbox can
// own them all without import cycles. A service with rules replays and
// re-runs its own recorded requests (Replayer, Rerunner in rules.go, with
// the event readings every one shares in replay.go): verify and the
// Studio call those, and decide nothing themselves.
package service

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/pyric/pyric/event"
)

// DefaultProject is the project id a backend serves when none is
// configured (a demo- project, as the Emulator Suite recommends: it can
// never reach production).
const DefaultProject = "demo-pyric"

// Service is an engine owned by a sandbox.
type Service interface {
	// Name is the service's stable key: the snapshot's
	// {"services": {name: ...}} key and its bucket's name ("firestore",
	// "auth", "database", "storage", "messaging", "ai").
	Name() string
	// Reset wipes the service's state in memory. The sandbox clears the
	// service's bucket itself, before calling Reset.
	Reset() error
	// Snapshot returns the service's whole state as JSON.
	Snapshot() (json.RawMessage, error)
	// Restore replaces the service's state with a Snapshot's output,
	// persisting it to the service's bucket when it has one. On error the
	// previous state is kept.
	Restore(state json.RawMessage) error
}

// Closer is implemented by services holding resources (listeners,
// goroutines, files) that must be released when the sandbox closes.
type Closer interface {
	Close() error
}

// Env is what the sandbox hands a service when it creates it.
type Env struct {
	// Project is the sandbox's default project id.
	Project string
	// Now is the sandbox clock (deterministic when the sandbox is).
	Now func() time.Time
	// NewID mints 20-character ids from the sandbox's id source.
	NewID func() string
	// Events is the one event stream; Emit never blocks.
	Events event.Emitter
	// Rand is the service's own random source (secrets, salts, codes,
	// ids that are not NewID's): seeded from the sandbox's seed and the
	// service's name when the sandbox is deterministic, crypto/rand
	// otherwise. It is safe for concurrent use.
	Rand io.Reader
	// Bucket is the service's own durable bucket; nil when in memory.
	Bucket Bucket
	// SyncEach is the sandbox's sync mode for a service's own files
	// under DataDir: true (--sync always) when an acknowledged write must
	// be forced to disk before the acknowledgement; false (the default,
	// batch) when it only has to reach the operating system first — which
	// kill -9 cannot lose — and the service forces its files to disk at
	// most a second later, as the store does its own.
	SyncEach bool
	// Log is the service's own key space written through the store's
	// write-ahead log, for a service that group-commits (Firestore); nil
	// when in memory. A service uses Bucket, Log or both.
	Log Log
	// DataDir is the sandbox's data directory, for state that does not
	// belong in the store (object bytes); empty when in memory. A service
	// keeps its files under DataDir/<Name()>.
	DataDir string
	// Outbox keeps the events of commits that a consumer must see even
	// when the process dies right after the commit is durable; nil when
	// in memory. An engine whose commits can fire Cloud Functions holds
	// its commit events in it (see Outbox).
	Outbox Outbox
	// Warn reports a one-line notice about the service's stored data (a
	// damaged file found at start); nil drops it.
	Warn func(string)
}

// Factory creates a service from its environment, restoring what its
// Bucket holds.
type Factory func(Env) (Service, error)

// Registration is how a service joins a sandbox: its name (which its
// Name() must return, and which names its bucket and DataDir/<Name>) and
// its factory. The backend's list of registrations is the one line a new
// service adds outside its own package.
type Registration struct {
	Name string
	New  Factory
}

// Bucket is a service's durable key/value space in the sandbox's store.
// Keys sort bytewise. An Update that returned nil survives kill -9 of the
// process.
type Bucket interface {
	// Update runs fn in one atomic, durable write transaction.
	Update(fn func(Tx) error) error
	// View runs fn in a read-only transaction with a consistent view.
	View(fn func(Tx) error) error
}

// Tx is a transaction on a Bucket. Values returned by Get and passed to
// ForEach are valid only inside the transaction; copy them to keep them.
// Nested buckets are named by a key prefix convention of the service's
// choosing; Tx offers a flat, ordered key space.
type Tx interface {
	Get(key []byte) []byte
	Put(key, value []byte) error
	Delete(key []byte) error
	// ForEach visits every key with the prefix, in order; an error stops
	// the walk and is returned.
	ForEach(prefix []byte, fn func(key, value []byte) error) error
	// DeletePrefix deletes every key with the prefix.
	DeletePrefix(prefix []byte) error
}

// Log is a service's key space in the store, written through the
// store's write-ahead log: an Append is one record appended to the log
// with one write (and one fdatasync when the store syncs every commit),
// not a bbolt transaction, so a service that batches concurrent writes
// (Firestore's group commit) acknowledges the batch at the cost of one
// write. The store checkpoints the records into its file in bulk and, at
// the next start, replays what a crash left before the service reads.
// Keys live in named spaces (Firestore: one per database, the Realtime
// Database: one per namespace); values are whole states of their key and
// a prefix deletion deletes whatever the prefix covers, so replaying a
// record twice changes nothing.
type Log interface {
	// Append durably records changes in space, in order: a change with a
	// nil Value deletes its Key (an empty, non-nil Value is a value), or,
	// with Prefix, every key that begins with Key. It
	// keeps nothing of changes after it returns. An Append that returned
	// nil survives kill -9; after one fails, every later Append fails.
	Append(space string, changes []LogChange) error
	// Load calls fn once per space holding keys, with every key and value
	// in key order, what was appended included. The keys are the
	// service's to keep; the values are not: they may be the store
	// file's own bytes, read-only and valid only until fn returns, so a
	// service copies (or decodes) what it keeps, once, in the form it
	// keeps it. fn must not write to the store (Append, a Bucket's
	// Update) meanwhile.
	Load(fn func(space string, entries []LogChange) error) error
}

// QueuedLog is a Log (the store's) whose appends take their place in the
// log apart from waiting for it. Concurrent appends share one write
// (group commit), but an engine that appends while holding its own lock
// makes them one at a time; it can instead Queue the record under its
// lock, in the order of its state, and Wait outside it, so that the
// appends of concurrent requests share a write.
type QueuedLog interface {
	Log
	// Queue puts the record of changes in space in the log's order, as
	// an Append of them would, and keeps nothing of changes after it
	// returns. The record is durable (as after an Append that returned
	// nil) once the LogWait's Wait returns nil; the caller acknowledges
	// nothing of it before. Every Queue must be followed by its Wait,
	// before the caller queues another record or waits for anything
	// another append holds up: the Wait of a group's first record is what
	// writes the group.
	Queue(space string, changes []LogChange) (LogWait, error)
}

// LogWait is a queued record's wait (QueuedLog).
type LogWait interface {
	// Wait returns once the record is durable (nil) or could not be made
	// so; it is called once.
	Wait() error
}

// LogChange is one key's new state in a Log, or the deletion of every
// key beginning with Key (Prefix, with a nil Value).
type LogChange struct {
	Key    string
	Value  []byte // nil: deleted
	Prefix bool   // with a nil Value: every key beginning with Key is deleted
	// Outbox puts the change in the sandbox's Outbox instead of the
	// service's space, in the same durable append: an Outbox's Hold
	// returns such changes (an engine appends them with its commit), and
	// a consumer takes a held event by appending its deletion.
	Outbox bool
}

// DamagedError is a factory's report that what its Bucket or Log holds
// cannot be read back (a stored record damaged): the sandbox reports the
// store's file as damaged, naming Problem, and opens nothing.
type DamagedError struct {
	Problem string
}

func (e *DamagedError) Error() string { return fmt.Sprintf("stored data is damaged: %s", e.Problem) }
