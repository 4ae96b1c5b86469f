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
	want  atomic.Pointer[func(*event.Event) bool]
	run0  int64
	n     atomic.Uint64
}

func newOutbox(s *Store) *outbox { return &outbox{store: s, run0: time.Now().UnixNano()} }

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
		key := fmt.Sprintf("%020d-%010d", o.run0, o.n.Add(1))
		b, err := json.Marshal(evs[i])
		if err != nil {
			continue // an event that does not encode cannot be kept; it is still emitted
		}
		evs[i].Held = key
		out = append(out, service.LogChange{Key: key, Value: b, Outbox: true})
	}
	return out
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
// kill itself (SIGKILL, as kill -9) right after the first Log append
// holding a key that contains its value is durable: the moment between a
// commit and its events that a crash test needs. It is read once, when
// the process starts; unset (always, outside tests) it costs one string
// comparison per append.
const killAfterCommitEnv = "PYRIC_TEST_KILL_AFTER_COMMIT"

// killAfterCommit is the variable's value ("" when unset).
var killAfterCommit = os.Getenv(killAfterCommitEnv)

// maybeKillAfterCommit is the test hook of killAfterCommitEnv.
func maybeKillAfterCommit(changes []service.LogChange) {
	for _, c := range changes {
		if !c.Outbox && strings.Contains(c.Key, killAfterCommit) {
			fmt.Fprintf(os.Stderr, "%s: killed after committing %s\n", killAfterCommitEnv, c.Key)
			if p, err := os.FindProcess(os.Getpid()); err == nil {
				_ = p.Kill()
			}
			select {} // the signal arrives
		}
	}
}
