package service

import "github.com/pyric/pyric/event"

// Outbox keeps, atomically with the commit that emits them, the events one
// consumer must take even if the process is killed between the commit
// becoming durable and the events reaching it: the Cloud Functions trigger
// dispatcher, since production delivers every committed change's events
// at least once. An engine builds a commit's events before making it
// durable, passes them to Hold, appends the changes Hold returns in the
// same Log.Append as the commit, and then emits the events as usual; each
// held event carries its key (event.Event.Held). The consumer takes a held
// event by appending LogChange{Key: key, Outbox: true} (a deletion) to its
// own Log, in the same append as what it made of the event; at its next
// start Left returns the events held and never taken. An engine that
// commits through its Bucket instead calls HoldIn inside the Update of
// its commit.
//
// A held event is kept as its JSON, with a Mutation's Current in its
// event.OutboxForm when it has one, so the consumer reads a resumed
// event's payload as decoded JSON (maps), not the engine's types.
type Outbox interface {
	// Holding reports whether a consumer wants any event held, so that
	// an engine builds a commit's events early only when one does.
	Holding() bool
	// Hold sets the Held key of each event of evs the consumer wants and
	// returns the changes that keep them (LogChange.Outbox set); nil when
	// it wants none of them, or there is no consumer.
	Hold(evs []event.Event) []LogChange
	// HoldIn is Hold for an engine that commits through its Bucket: it
	// writes the changes that keep the wanted events of evs in tx, a
	// transaction of the engine's own Bucket, so that they are durable
	// exactly when the transaction's writes are. It fails when tx is
	// not a transaction of the sandbox's store (and then holds nothing).
	HoldIn(tx Tx, evs []event.Event) error
	// Want sets the consumer's choice of the events held; nil holds none.
	// The choice (fn) is called inside Hold, on the committing goroutine,
	// so it must be cheap and never block.
	Want(fn func(*event.Event) bool)
	// Left returns the events an earlier run held and its consumer never
	// took, in the order they were held, with their Held keys.
	Left() ([]event.Event, error)
}
