package sandbox

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/sandbox/service"
)

// outboxService and outboxSpace name the store's record space of the
// Outbox: the sandbox's own, beside the services' spaces.
const (
	outboxService = "sandbox"
	outboxSpace   = "outbox"
)

// changeSpace is the record space a Log change goes to: its service's
// (""), or the outbox's.
func changeSpace(c service.LogChange) string {
	if c.Outbox {
		return logSpace(outboxService, outboxSpace)
	}
	return ""
}

// outbox is the store's service.Outbox: a held event is its JSON under a
// key that sorts in the order events were held across runs (the run's
// start in nanoseconds, then a counter).
type outbox struct {
	store *Store
	// now is the sandbox clock: a held event is stamped with it (the
	// bus would stamp it only when emitted, after the encoding).
	now  func() time.Time
	want atomic.Pointer[func(*event.Event) bool]
	run0 int64
	n    atomic.Uint64
}

func newOutbox(s *Store, now func() time.Time) *outbox {
	return &outbox{store: s, now: now, run0: time.Now().UnixNano()}
}

func (o *outbox) Want(fn func(*event.Event) bool) {
	if fn == nil {
		o.want.Store(nil)
		return
	}
	o.want.Store(&fn)
}

func (o *outbox) Holding() bool { return o.want.Load() != nil }

func (o *outbox) Hold(evs []event.Event) []service.LogChange {
	want := o.want.Load()
	if want == nil {
		return nil
	}
	var out []service.LogChange
	for i := range evs {
		if !(*want)(&evs[i]) {
			continue
		}
		if evs[i].At.IsZero() {
			evs[i].At = o.now()
		}
		b, err := encodeHeld(evs[i])
		if err != nil {
			continue // an event that does not encode cannot be kept; it is still emitted
		}
		key := fmt.Sprintf("%020d-%010d", o.run0, o.n.Add(1))
		evs[i].Held = key
		out = append(out, service.LogChange{Key: key, Value: b, Outbox: true})
	}
	return out
}

// encodeHeld is a held event's JSON: a Mutation's Current in its
// event.OutboxForm when it has one.
func encodeHeld(ev event.Event) ([]byte, error) {
	if m := ev.Mutation; m != nil {
		if f, ok := m.Current.(event.OutboxForm); ok {
			cp := *m
			cp.Current = f.OutboxForm()
			ev.Mutation = &cp
		}
	}
	return json.Marshal(ev)
}

// outboxTx is a transaction of a Bucket of the store that can write the
// outbox's changes beside its own (boltTx).
type outboxTx interface {
	putOutbox(changes []service.LogChange) error
}

func (o *outbox) HoldIn(tx service.Tx, evs []event.Event) error {
	if o.want.Load() == nil {
		return nil
	}
	ot, ok := tx.(outboxTx)
	if !ok {
		return fmt.Errorf("sandbox: a %T is not a transaction of the store's buckets: it cannot hold events in the outbox", tx)
	}
	held := o.Hold(evs)
	if len(held) == 0 {
		return nil
	}
	if err := ot.putOutbox(held); err != nil {
		for i := range evs {
			evs[i].Held = "" // not kept: the consumer has nothing to take
		}
		return err
	}
	return nil
}

func (o *outbox) Left() ([]event.Event, error) {
	var out []event.Event
	err := o.store.Log(outboxService).Load(func(space string, entries []service.LogChange) error {
		if space != outboxSpace {
			return nil
		}
		for _, c := range entries {
			var ev event.Event
			if err := json.Unmarshal(c.Value, &ev); err != nil {
				return &DamagedStoreError{Path: o.store.db.Path(), Problem: fmt.Sprintf("the held event %s does not decode: %v", c.Key, err)}
			}
			ev.Held = c.Key
			out = append(out, ev)
		}
		return nil
	})
	return out, err
}

// killAfterCommitEnv names the test-only variable that makes the process
// kill itself (SIGKILL, as kill -9) right after the first Log append or
// Bucket update writing a key that contains its value, or holding an
// event whose JSON contains it (an Eventarc publish holds its event and
// writes nothing else), is durable: the moment between a commit and its
// events that a crash test needs. It is read once, when the process
// starts; unset (always, outside tests) it costs one string comparison
// per append or update.
const killAfterCommitEnv = "PYRIC_TEST_KILL_AFTER_COMMIT"

// killAfterCommit is the variable's value ("" when unset).
var killAfterCommit = os.Getenv(killAfterCommitEnv)

// maybeKillAfterCommit is the test hook of killAfterCommitEnv for a Log
// append.
func maybeKillAfterCommit(changes []service.LogChange) {
	for _, c := range changes {
		switch {
		case !c.Outbox && strings.Contains(c.Key, killAfterCommit):
			killAfter(c.Key)
		case c.Outbox && c.Value != nil && strings.Contains(string(c.Value), killAfterCommit):
			killAfter("the held event " + c.Key)
		}
	}
}

// killAfter kills the process (the hook of killAfterCommitEnv) once key
// is durable.
func killAfter(key string) {
	fmt.Fprintf(os.Stderr, "%s: killed after committing %s\n", killAfterCommitEnv, key)
	if p, err := os.FindProcess(os.Getpid()); err == nil {
		_ = p.Kill()
	}
	select {} // the signal arrives
}
