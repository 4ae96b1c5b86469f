package servicetest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/rules/source"
	"github.com/pyric/pyric/sandbox/service"
)

// Options configure Run.
type Options struct {
	// Sample is a state the service's Restore accepts, holding data
	// (required): the suite restores it, then checks what the service
	// keeps of it through reset, snapshots, exports and reopening.
	Sample json.RawMessage
	// Project is the environment's project (default
	// service.DefaultProject).
	Project string
	// Stateless says the service holds no data (Functions: its functions
	// are code, loaded from source): its Sample is its one state, and
	// the suite checks that this state is all Snapshot ever gives rather
	// than that a restored sample is kept.
	Stateless bool
}

// Run is the contract every service registration keeps, whatever
// service it is:
//
//   - the service is named as registered;
//   - Restore of a Snapshot gives the same Snapshot (in a new service
//     too), and a state that does not decode is refused with the state
//     kept;
//   - Reset (after its bucket and log are cleared, as the sandbox does)
//     gives the empty state, also after reopening;
//   - what a Restore wrote is there when the service is created again on
//     the same bucket, log and data directory without being closed (as
//     after kill -9);
//   - a TypedState's snapshot decodes into its state type with no field
//     left over and restores from that type's encoding;
//   - an Exporter's export, read back by its Importer into a new service,
//     keeps data, and a second round keeps exactly what the first did;
//   - a Capturer's capture state and a Describer's description are
//     there;
//   - a StateChecker accepts the sample and refuses what Restore
//     refuses, changing nothing;
//   - a LiveRules service names its rules file, refuses rules that do not
//     compile with diagnostics and keeps the last good rules in force;
//   - a Replayer replays a session of the sample state with no requests
//     as passing, and refuses candidate rules that do not compile with a
//     *service.RulesError;
//   - a Studio service's pages each have a route and a label, no two the
//     same route.
func Run(t *testing.T, reg service.Registration, opts Options) {
	t.Helper()
	if len(opts.Sample) == 0 {
		t.Fatalf("servicetest: no sample state for %s", reg.Name)
	}
	h := &harness{t: t, reg: reg, opts: opts}

	t.Run("name", func(t *testing.T) {
		s := h.open(t, h.newStore(t))
		if s.Name() != reg.Name {
			t.Errorf("registered as %q, names itself %q", reg.Name, s.Name())
		}
	})

	t.Run("snapshot-restore", func(t *testing.T) {
		s := h.open(t, h.newStore(t))
		empty := h.snapshot(t, s)
		restore(t, s, opts.Sample)
		full := h.snapshot(t, s)
		if opts.Stateless {
			if !equalJSON(empty, full) || !equalJSON(full, opts.Sample) {
				t.Fatalf("a stateless service's state changed: %s, then %s after restoring %s", empty, full, opts.Sample)
			}
		} else if equalJSON(empty, full) {
			t.Fatalf("restoring the sample left the state empty: %s", full)
		}
		restore(t, s, full)
		if again := h.snapshot(t, s); !equalJSON(full, again) {
			t.Errorf("Restore(Snapshot()) changed the state:\nbefore %s\nafter  %s", full, again)
		}
		other := h.open(t, h.newStore(t))
		restore(t, other, full)
		if got := h.snapshot(t, other); !equalJSON(full, got) {
			t.Errorf("a new service restored from the snapshot differs:\nwant %s\ngot  %s", full, got)
		}
		for _, bad := range badStates {
			if err := s.Restore(json.RawMessage(bad)); err == nil {
				t.Errorf("Restore(%s) succeeded", bad)
			}
			if got := h.snapshot(t, s); !equalJSON(full, got) {
				t.Errorf("a refused Restore(%s) changed the state:\n%s", bad, got)
			}
		}
	})

	t.Run("reset", func(t *testing.T) {
		st := h.newStore(t)
		s := h.open(t, st)
		empty := h.snapshot(t, s)
		restore(t, s, opts.Sample)
		st.clear(t)
		if err := s.Reset(); err != nil {
			t.Fatal(err)
		}
		if got := h.snapshot(t, s); !equalJSON(empty, got) {
			t.Errorf("state after Reset: %s, want %s", got, empty)
		}
		if got := h.snapshot(t, h.open(t, st)); !equalJSON(empty, got) {
			t.Errorf("state reopened after Reset: %s, want %s", got, empty)
		}
	})

	t.Run("reopen-without-close", func(t *testing.T) {
		st := h.newStore(t)
		s := h.open(t, st)
		restore(t, s, opts.Sample)
		want := h.snapshot(t, s)
		// Not closed: what survives is what the service wrote to its
		// bucket, log and files before Restore returned.
		again := h.open(t, st)
		if got := h.snapshot(t, again); !equalJSON(want, got) {
			t.Errorf("reopened state differs:\nwant %s\ngot  %s", want, got)
		}
	})

	t.Run("typed-state", func(t *testing.T) {
		s := h.open(t, h.newStore(t))
		ts, ok := s.(service.TypedState)
		if !ok {
			t.Skipf("%s declares no state type", reg.Name)
		}
		restore(t, s, opts.Sample)
		full := h.snapshot(t, s)
		v := ts.NewState()
		if reflect.TypeOf(v).Kind() != reflect.Pointer {
			t.Fatalf("NewState returned %T, not a pointer", v)
		}
		dec := json.NewDecoder(bytes.NewReader(full))
		dec.DisallowUnknownFields()
		dec.UseNumber()
		if err := dec.Decode(v); err != nil {
			t.Fatalf("the snapshot does not decode into %T: %v", v, err)
		}
		enc, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		other := h.open(t, h.newStore(t))
		restore(t, other, enc)
		if got := h.snapshot(t, other); !equalJSON(full, got) {
			t.Errorf("restored from %T's encoding:\nwant %s\ngot  %s", v, full, got)
		}
	})

	t.Run("export-import", func(t *testing.T) {
		s := h.open(t, h.newStore(t))
		if _, ok := s.(service.Exporter); !ok {
			t.Skipf("%s has no part in an export", reg.Name)
		}
		if _, ok := s.(service.Importer); !ok {
			t.Fatalf("%s exports but does not import", reg.Name)
		}
		empty := h.snapshot(t, s)
		restore(t, s, opts.Sample)
		// An export holds what the Emulator Suite's format holds (one
		// Firestore database, Auth's accounts without every field), so
		// the first round may lose what the format has no room for; what
		// it kept, a second round keeps exactly.
		once := h.exportImport(t, s)
		if equalJSON(empty, once) {
			t.Fatalf("exported then imported: the state is empty: %s", once)
		}
		other := h.open(t, h.newStore(t))
		restore(t, other, once)
		if twice := h.exportImport(t, other); !equalJSON(once, twice) {
			t.Errorf("a second export and import changed the state:\nwant %s\ngot  %s", once, twice)
		}
	})

	t.Run("capture-describe", func(t *testing.T) {
		s := h.open(t, h.newStore(t))
		restore(t, s, opts.Sample)
		if c, ok := s.(service.Capturer); ok {
			st, err := c.CaptureState()
			if err != nil || !json.Valid(st) {
				t.Errorf("CaptureState: %s, %v", st, err)
			}
		}
		if d, ok := s.(service.Describer); ok && d.Describe() == "" {
			t.Error("Describe is empty")
		}
	})

	t.Run("check-state", func(t *testing.T) {
		s := h.open(t, h.newStore(t))
		c, ok := s.(service.StateChecker)
		if !ok {
			t.Skipf("%s cannot check a state without loading it", reg.Name)
		}
		before := h.snapshot(t, s)
		if err := c.CheckState(opts.Sample); err != nil {
			t.Errorf("CheckState(sample): %v", err)
		}
		for _, bad := range badStates {
			if err := c.CheckState(json.RawMessage(bad)); err == nil {
				t.Errorf("CheckState(%s) accepted a state Restore refuses", bad)
			}
		}
		if after := h.snapshot(t, s); !equalJSON(before, after) {
			t.Errorf("CheckState changed the state:\nbefore %s\nafter  %s", before, after)
		}
	})

	t.Run("live-rules", func(t *testing.T) {
		s := h.open(t, h.newStore(t))
		lr, ok := s.(service.LiveRules)
		if !ok {
			t.Skipf("%s has no rules", reg.Name)
		}
		if lr.RulesFileName() == "" {
			t.Error("RulesFileName is empty")
		}
		name, text, loaded := lr.RulesFile()
		const broken = "this is not a rules file {{"
		if compiles, diags, _ := lr.CheckRules(lr.RulesFileName(), broken); compiles || len(diags) == 0 {
			t.Errorf("CheckRules(%q): compiles=%v, %d diagnostics", broken, compiles, len(diags))
		}
		if diags, err := lr.SetRulesFile(lr.RulesFileName(), broken); err == nil || len(diags) == 0 {
			t.Errorf("SetRulesFile(%q) loaded it: %v, %d diagnostics", broken, err, len(diags))
		}
		if n, tx, l := lr.RulesFile(); n != name || tx != text || l != loaded {
			t.Errorf("rules that do not compile replaced the rules in force: (%q, %d bytes, %v), were (%q, %d bytes, %v)",
				n, len(tx), l, name, len(text), loaded)
		}
	})

	t.Run("replay", func(t *testing.T) {
		s := h.open(t, h.newStore(t))
		r, ok := s.(service.Replayer)
		if !ok {
			t.Skipf("%s does not replay", reg.Name)
		}
		if r.Name() != reg.Name {
			t.Errorf("replays as %q, registered as %q", r.Name(), reg.Name)
		}
		session := &service.Session{States: map[string]json.RawMessage{reg.Name: opts.Sample}}
		rep, err := r.Replay(session, nil)
		if err != nil {
			t.Fatalf("replaying a session with no requests: %v", err)
		}
		if !rep.OK || rep.CheckedEvents != 0 || len(rep.Divergences) != 0 {
			t.Errorf("a session with no requests replays as %+v, want a passing report that checked nothing", rep)
		}
		name := "candidate.rules"
		if lr, ok := s.(service.LiveRules); ok {
			name = lr.RulesFileName()
		}
		_, err = r.Replay(session, source.NewFile(name, "this is not a rules file {{"))
		var re *service.RulesError
		if !errors.As(err, &re) || len(re.Diags) == 0 {
			t.Errorf("replaying under rules that do not compile: %v, want a *service.RulesError with diagnostics", err)
		}
	})

	t.Run("studio-pages", func(t *testing.T) {
		s := h.open(t, h.newStore(t))
		st, ok := s.(service.Studio)
		if !ok {
			t.Skipf("%s has no Studio page", reg.Name)
		}
		pages := st.StudioPages()
		if len(pages) == 0 {
			t.Fatal("a Studio service with no page")
		}
		seen := map[string]bool{}
		for _, p := range pages {
			if !strings.HasPrefix(p.Path, "/") || p.Label == "" || seen[p.Path] {
				t.Errorf("page %+v: want a route of its own starting with / and a label", p)
			}
			seen[p.Path] = true
		}
	})
}

// badStates are states every Restore refuses: not JSON, not a state.
var badStates = []string{`{"`, `[1, 2`, `"not a state"`}

// exportImport exports s and imports the export into a new service,
// returning that service's state.
func (h *harness) exportImport(t *testing.T, s service.Service) json.RawMessage {
	t.Helper()
	root := t.TempDir()
	e, err := s.(service.Exporter).Export(root)
	if err != nil {
		t.Fatal(err)
	}
	if e.Path == "" || filepath.IsAbs(e.Path) {
		t.Fatalf("export entry path %q: want a relative directory", e.Path)
	}
	if _, err := os.Stat(filepath.Join(root, e.Path)); err != nil {
		t.Fatalf("the export's part is missing: %v", err)
	}
	other := h.open(t, h.newStore(t))
	state, finish, err := other.(service.Importer).ImportState(filepath.Join(root, e.Path))
	if err != nil {
		t.Fatal(err)
	}
	if state != nil {
		restore(t, other, state)
	}
	if finish != nil {
		if err := finish(); err != nil {
			t.Fatal(err)
		}
	}
	return h.snapshot(t, other)
}

// harness creates the service under test on stores of its own.
type harness struct {
	t    *testing.T
	reg  service.Registration
	opts Options
}

// store is what a service keeps across a reopen.
type store struct {
	bucket *Bucket
	log    *Log
	dir    string
}

func (h *harness) newStore(t *testing.T) *store {
	return &store{bucket: NewBucket(), log: NewLog(), dir: t.TempDir()}
}

// clear empties the bucket and the log, as the sandbox does before a
// service's Reset.
func (st *store) clear(t *testing.T) {
	t.Helper()
	if err := st.bucket.Update(func(tx service.Tx) error { return tx.DeletePrefix(nil) }); err != nil {
		t.Fatal(err)
	}
	st.log.Clear()
}

// open creates the service on st, closing it when the test ends.
func (h *harness) open(t *testing.T, st *store) service.Service {
	t.Helper()
	project := h.opts.Project
	if project == "" {
		project = service.DefaultProject
	}
	env := service.Env{Project: project, Now: stepClock(), NewID: counterIDs(), Events: event.Discard,
		Rand: &lockedRand{r: rand.NewChaCha8([32]byte{1})}, Bucket: st.bucket, Log: st.log, DataDir: st.dir,
		Warn: func(s string) { t.Logf("%s warns: %s", h.reg.Name, s) }}
	s, err := h.reg.New(env)
	if err != nil {
		t.Fatalf("create %s: %v", h.reg.Name, err)
	}
	t.Cleanup(func() {
		if c, ok := s.(service.Closer); ok {
			c.Close()
		}
	})
	return s
}

func (h *harness) snapshot(t *testing.T, s service.Service) json.RawMessage {
	t.Helper()
	st, err := s.Snapshot()
	if err != nil {
		t.Fatalf("Snapshot: %v", err)
	}
	if !json.Valid(st) {
		t.Fatalf("Snapshot is not JSON: %s", st)
	}
	return st
}

func restore(t *testing.T, s service.Service, state json.RawMessage) {
	t.Helper()
	if err := s.Restore(state); err != nil {
		t.Fatalf("Restore(%s): %v", state, err)
	}
}

// equalJSON compares two JSON documents by value.
func equalJSON(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return bytes.Equal(a, b)
	}
	return reflect.DeepEqual(x, y)
}

// stepClock is a clock that advances 1 ms per reading.
func stepClock() func() time.Time {
	var mu sync.Mutex
	t := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		t = t.Add(time.Millisecond)
		return t
	}
}

// counterIDs mints distinct 20-character ids.
func counterIDs() func() string {
	var mu sync.Mutex
	n := 0
	return func() string {
		mu.Lock()
		defer mu.Unlock()
		n++
		return fmt.Sprintf("id%018d", n)
	}
}

// lockedRand makes a ChaCha8 safe for concurrent use, as Env.Rand is.
type lockedRand struct {
	mu sync.Mutex
	r  *rand.ChaCha8
}

func (l *lockedRand) Read(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.r.Read(p)
}
