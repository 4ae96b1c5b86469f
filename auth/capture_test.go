package auth_test

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pyric/pyric/auth"
	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/server/auth/authtest"
)

// eventList collects the events an engine emits.
type eventList struct {
	mu  sync.Mutex
	evs []event.Event
}

func (l *eventList) Emit(e event.Event) {
	l.mu.Lock()
	l.evs = append(l.evs, e)
	l.mu.Unlock()
}

// take returns the events emitted since the last take.
func (l *eventList) take() []event.Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	evs := l.evs
	l.evs = nil
	return evs
}

// recordTree is a state folded from records as a session capture folds
// them: a record sets (or, with no value, removes) the member at its key.
type recordTree map[string]any

func (r recordTree) set(key []string, v json.RawMessage) error {
	m := map[string]any(r)
	for _, k := range key[:len(key)-1] {
		next, _ := m[k].(map[string]any)
		if next == nil {
			next = map[string]any{}
			m[k] = next
		}
		m = next
	}
	if v == nil {
		delete(m, key[len(key)-1])
	} else {
		m[key[len(key)-1]] = v
	}
	return nil
}

// TestCaptureRecordsMatchMemory runs every kind of mutation and, after
// each that emits events, folds the records its events name
// (service.Records, what a session capture appends) into the state folded
// so far — every record again (EachRecord) when an event names none — and
// restores that state into a new engine: its state must equal the live
// engine's. Only the mutations that delete records by prefix (clearing
// accounts, deleting a tenant) may name none. A mutation without an event
// (a config change) is named by the next event. With a log and without.
func TestCaptureRecordsMatchMemory(t *testing.T) {
	whole := map[string]bool{"clear tenant accounts": true, "tenant delete": true, "clear accounts": true}
	// These steps end with a mutation that emits no event: the records
	// it wrote are named by the next step's events.
	unnamedAtEnd := map[string]bool{"config": true, "tenant create": true, "tenant patch": true, "totp start": true,
		"oidc config": true, "saml config patch": true, "oidc delete": true, "auto tenant": true}
	for _, durable := range []bool{true, false} {
		name := "memory"
		if durable {
			name = "log"
		}
		t.Run(name, func(t *testing.T) {
			clock := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
			evs := &eventList{}
			opts := auth.Options{IDs: rand.NewChaCha8([32]byte{7}), Clock: func() time.Time { return clock }, Events: evs}
			if durable {
				opts.Log = authtest.TempLog(t)
			}
			e, err := auth.Open(opts)
			if err != nil {
				t.Fatal(err)
			}
			folded := recordTree{}
			named, records := 0, 0
			for _, s := range everyMutation(e) {
				if err := s.run(); err != nil {
					t.Fatalf("%s: %v", s.name, err)
				}
				got := evs.take()
				if len(got) == 0 {
					continue
				}
				for _, ev := range got {
					tok, ok := e.RecordChange(ev)
					if !ok {
						if !whole[s.name] {
							t.Errorf("%s: its %s event names no records", s.name, ev.Method)
						}
						folded = recordTree{}
						if err := e.EachRecord(folded.set); err != nil {
							t.Fatal(err)
						}
						continue
					}
					named++
					if err := e.Records(tok, func(key []string, v json.RawMessage) error {
						records++
						return folded.set(key, v)
					}); err != nil {
						t.Fatalf("%s: %v", s.name, err)
					}
				}
				if unnamedAtEnd[s.name] {
					continue
				}
				st, err := json.Marshal(folded)
				if err != nil {
					t.Fatal(err)
				}
				f := auth.New(auth.Options{})
				if err := f.Restore(st); err != nil {
					t.Fatalf("%s: restore the folded records: %v\n%s", s.name, err, st)
				}
				if got, want := state(t, f), state(t, e); got != want {
					t.Fatalf("after %s the records fold to\n%s\nbut memory is\n%s\nrecords: %s", s.name, got, want, st)
				}
			}
			if named < 20 || records < named {
				t.Errorf("%d events named %d records", named, records)
			}
		})
	}
}

// TestRecordsOfASignUp: the records a sign-up's event names are its
// account's alone, at its key, whatever else the engine holds.
func TestRecordsOfASignUp(t *testing.T) {
	evs := &eventList{}
	e, err := auth.Open(auth.Options{Log: authtest.TempLog(t), Events: evs})
	if err != nil {
		t.Fatal(err)
	}
	for range 50 {
		if _, err := e.SignUp(dClient, auth.SignUpRequest{}); err != nil {
			t.Fatal(err)
		}
	}
	evs.take()
	r, err := e.SignUp(dClient, auth.SignUpRequest{Email: sp("new@example.com"), Password: "secret123"})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	toks := map[string]bool{} // a capture takes each token's records once
	for _, ev := range evs.take() {
		tok, ok := e.RecordChange(ev)
		if !ok {
			t.Fatalf("the sign-up's %s event names no records", ev.Method)
		}
		toks[tok] = true
	}
	for tok := range toks {
		if err := e.Records(tok, func(key []string, v json.RawMessage) error {
			keys = append(keys, strings.Join(key, "/"))
			if !strings.Contains(string(v), "new@example.com") {
				t.Errorf("record %v is %s", key, v)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	if want := "records/spaces/p//users/" + r.LocalID; len(keys) != 1 || keys[0] != want {
		t.Errorf("the sign-up named %q, want [%s]", keys, want)
	}
}
