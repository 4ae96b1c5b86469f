package capture

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/pyric/pyric/backend"
	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/sandbox/service"
)

// Options configure a Recorder.
type Options struct {
	// Debounce is the least time between two rewrites of the fixture
	// (default 100ms; more when a rewrite is slow): a change after a
	// quiet spell is written at once, a burst of them costs one write per
	// interval.
	Debounce time.Duration
	// Description and CapturedBy go into the fixture's header.
	Description string
	CapturedBy  string
	// MaxEvents bounds the events kept (default 100,000): past it the
	// oldest tenth is dropped, which leaves a valid, shorter session (the
	// replay starts from the state the remaining events found).
	MaxEvents int
	// MaxBytes bounds the memory the kept events take, as their encoded
	// JSON (default 32 MiB); past it the oldest tenth is dropped, as past
	// MaxEvents.
	MaxBytes int
	// Buffer is the subscription's buffer (default 16384); events missed
	// when it overflows are recovered from the bus's history when still
	// kept there.
	Buffer int
	// Warn receives one-line notices (a damaged fixture kept aside); nil
	// writes them to standard error.
	Warn func(string)
}

// Recorder writes the running session to a fixture file.
type Recorder struct {
	b    *backend.Backend
	path string
	opts Options
	sub  *event.Subscription

	flushMu sync.Mutex // one flush at a time, so files land in order
	mu      sync.Mutex
	// events are the session's events as the file holds them: each
	// normalized and encoded (compact JSON) once, when it arrives, so a
	// rewrite copies them instead of encoding every event so far again,
	// and what they keep in memory is their size in the file.
	events []json.RawMessage
	size   int // the events' total size
	// states is each service's state as the last rewrite encoded it,
	// reused while no commit or mutation event has arrived since (reads
	// change nothing): a big store is then not encoded again for every
	// rewrite a stream of reads causes. stale says one has arrived.
	states  map[string]json.RawMessage
	stale   bool
	lastSeq uint64
	lost    uint64
	trimmed uint64        // oldest events dropped past MaxEvents
	took    time.Duration // how long the last flush took
	flushed time.Time     // when the last flush ended
	err     error
	created string

	done chan struct{}
	stop chan struct{}
	once sync.Once
}

// Start subscribes to b's events and keeps path a valid fixture of the
// session (events from the bus's history onwards) until ctx ends or Close
// is called. Before Start returns the file holds a session with no events
// and no state (cheap, so a big store does not delay the start, and an
// unwritable path is reported at once); the first event, or one already
// in the history, has the whole session written. A fixture
// already at path — the previous session, perhaps of a killed server — is
// kept as PreviousPath(path) rather than overwritten, and temporary files
// a killed rewrite left are removed.
func Start(ctx context.Context, b *backend.Backend, path string, opts Options) (*Recorder, error) {
	if opts.Debounce <= 0 {
		opts.Debounce = 100 * time.Millisecond
	}
	if opts.Buffer <= 0 {
		opts.Buffer = 16384
	}
	if opts.MaxEvents <= 0 {
		opts.MaxEvents = 100000
	}
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = 32 << 20
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("capture: %w", err)
	}
	if stale, _ := filepath.Glob(filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")); len(stale) > 0 {
		for _, s := range stale {
			os.Remove(s)
		}
	}
	if opts.Warn == nil {
		opts.Warn = func(msg string) { fmt.Fprintln(os.Stderr, "pyric: "+msg) }
	}
	if err := keepPrevious(path, opts.Warn); err != nil {
		return nil, err
	}
	bus := b.Sandbox.Events()
	r := &Recorder{b: b, path: path, opts: opts, sub: bus.Subscribe(opts.Buffer),
		created: b.Sandbox.Now().UTC().Format(time.RFC3339Nano), done: make(chan struct{}), stop: make(chan struct{})}
	for _, e := range bus.History() {
		r.add(e)
	}
	if err := r.writeEmpty(); err != nil {
		r.sub.Close()
		return nil, err
	}
	go r.run(ctx)
	return r, nil
}

// keepPrevious moves the fixture at path, the previous session, to
// PreviousPath(path). A file there or at path that is not a fixture —
// damaged on disk, since the recorder only ever renames whole fixtures
// into place — is the user's data all the same: it is moved to
// DamagedPath instead, unchanged, with a warning, and not overwritten.
func keepPrevious(path string, warn func(string)) error {
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	prev := PreviousPath(path)
	for _, p := range []string{prev, path} {
		data, err := os.ReadFile(p)
		if err != nil {
			continue // none at prev
		}
		if derr := checkWhole(data); derr != nil {
			to, err := keepAside(p)
			if err != nil {
				return fmt.Errorf("capture: %s is not a session fixture (%v) and could not be kept aside: %w", p, derr, err)
			}
			warn(fmt.Sprintf("capture: %s is not a session fixture (%v): kept it as %s, unchanged", p, derr, to))
		}
	}
	if _, err := os.Stat(path); err != nil {
		return nil // kept aside
	}
	if err := os.Rename(path, prev); err != nil {
		return fmt.Errorf("capture: keeping the previous session: %w", err)
	}
	return nil
}

// checkWhole reports whether data is a whole fixture file: valid JSON
// with the fixture schema. It is cheaper than Decode (no event is
// validated) and enough to tell a damaged file from a session.
func checkWhole(data []byte) error {
	var head struct {
		Schema string `json:"schema"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return &Error{Msg: "is not valid JSON: " + jsonErr(err, data)}
	}
	if head.Schema != Schema {
		return &Error{Path: "fixture.schema", Msg: fmt.Sprintf("must be %q", Schema)}
	}
	return nil
}

// DamagedPath is where a damaged fixture at path is kept, the n-th of its
// name: last-session.json → last-session.damaged-1.json.
func DamagedPath(path string, n int) string {
	ext := filepath.Ext(path)
	return fmt.Sprintf("%s.damaged-%d%s", strings.TrimSuffix(path, ext), n, ext)
}

// keepAside renames path to the first DamagedPath not taken.
func keepAside(path string) (string, error) {
	for n := 1; n < 1000; n++ {
		to := DamagedPath(path, n)
		if _, err := os.Lstat(to); err == nil {
			continue
		}
		return to, os.Rename(path, to)
	}
	return "", fmt.Errorf("%s: 999 damaged copies are kept already", path)
}

// PreviousPath is where Start keeps the fixture it found at path:
// last-session.json → last-session.previous.json.
func PreviousPath(path string) string {
	ext := filepath.Ext(path)
	return strings.TrimSuffix(path, ext) + ".previous" + ext
}

// catchUp takes the events the bus holds past the last one kept: those
// still waiting in the subscription while a rewrite is scheduled. They
// arrive through the subscription later too, and are skipped then.
func (r *Recorder) catchUp() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.keepFromHistory(0)
	r.trim()
}

// keepFromHistory keeps the events the bus holds past the last one kept
// and before until (0: all of them); callers hold mu.
func (r *Recorder) keepFromHistory(until uint64) {
	for _, e := range r.b.Sandbox.Events().Since(r.lastSeq, 0) {
		if until != 0 && e.Seq >= until {
			break
		}
		r.keep(e)
	}
}

func (r *Recorder) add(e event.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if e.Kind == event.KindGap {
		// Recover what the bus still keeps; count the rest as lost.
		r.keepFromHistory(e.Seq)
		if r.lastSeq+1 < e.Seq {
			r.lost += e.Seq - 1 - r.lastSeq
		}
		r.trim()
		return
	}
	if e.Seq <= r.lastSeq {
		return
	}
	r.keep(e)
	r.trim()
}

// trim drops the oldest events once past MaxEvents or MaxBytes, down to
// nine tenths of both (so that it does not copy the rest on every event);
// callers hold mu.
func (r *Recorder) trim() {
	if len(r.events) <= r.opts.MaxEvents && r.size <= r.opts.MaxBytes {
		return
	}
	cut := max(len(r.events)-r.opts.MaxEvents+r.opts.MaxEvents/10, 0)
	for _, d := range r.events[:cut] {
		r.size -= len(d)
	}
	for cut < len(r.events)-1 && r.size > r.opts.MaxBytes-r.opts.MaxBytes/10 {
		r.size -= len(r.events[cut])
		cut++
	}
	r.trimmed += uint64(cut)
	r.events = append([]json.RawMessage(nil), r.events[cut:]...)
}

// keep appends e, normalized and encoded; callers hold mu.
func (r *Recorder) keep(e event.Event) {
	r.lastSeq = e.Seq
	if e.Kind != event.KindRequest && e.Kind != event.KindListener {
		r.stale = true
	}
	b, err := encodeEvent(normalize(e))
	if err != nil {
		r.lost++ // an event that does not encode cannot be in the file
		return
	}
	r.events = append(r.events, b)
	r.size += len(b)
}

// encodeEvent is e's compact JSON, as the fixture encoder writes it (no
// HTML escaping).
func encodeEvent(e event.Event) (json.RawMessage, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(e); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// writeEmpty writes the session before it has events: no events, no
// state, the rules in force.
func (r *Recorder) writeEmpty() error {
	f := &Fixture{Schema: Schema, CreatedAt: r.created, CapturedBy: r.opts.CapturedBy, Description: r.opts.Description, Services: map[string]*ServiceData{}}
	addRules(r.b, f)
	data, err := Encode(f)
	if err == nil {
		err = WriteFileAtomic(r.path, data)
	}
	if err != nil {
		return fmt.Errorf("capture: %w", err)
	}
	return nil
}

// flushIfAny writes the session when it has events (a session without
// any keeps the file Start wrote).
func (r *Recorder) flushIfAny() {
	r.mu.Lock()
	n := len(r.events) + int(r.trimmed)
	r.mu.Unlock()
	if n > 0 {
		r.Flush()
	}
}

func (r *Recorder) run(ctx context.Context) {
	defer close(r.done)
	var timer *time.Timer
	var fire <-chan time.Time
	r.flushIfAny() // the events the history held at Start
	for {
		// While a rewrite is scheduled the subscription is not read: events
		// wait in its buffer (or, past it, in the bus's history) and are
		// taken in one drain, so that a stream of requests does not wake
		// the recorder once per event (a thread wake-up costs more than
		// the event's encoding).
		in := r.sub.Events()
		if timer != nil {
			in = nil
		}
		select {
		case e, ok := <-in:
			if !ok {
				r.flushIfAny()
				return
			}
			r.add(e)
			// Rewriting costs in proportion to the session: leave at
			// least nine times the last rewrite between rewrites, so
			// capture never takes more than a tenth of the time. The
			// first change after a quiet spell is written at once (a
			// kill then loses nothing of a sparse session); later
			// ones wait for the rest of the interval, coalesced.
			wait := r.opts.Debounce
			r.mu.Lock()
			if w := 9 * r.took; w > wait {
				wait = w
			}
			wait -= time.Since(r.flushed)
			r.mu.Unlock()
			if wait <= 0 {
				r.drain()
				r.Flush()
				continue
			}
			timer = time.NewTimer(wait)
			fire = timer.C
		case <-fire:
			timer, fire = nil, nil
			r.drain()
			r.Flush()
		case <-ctx.Done():
			r.drain()
			r.flushIfAny()
			return
		case <-r.stop:
			r.drain()
			r.flushIfAny()
			return
		}
	}
}

// drain takes what the subscription already delivered.
func (r *Recorder) drain() {
	for {
		select {
		case e, ok := <-r.sub.Events():
			if !ok {
				return
			}
			r.add(e)
		default:
			return
		}
	}
}

// Close stops recording and writes the final fixture. Call it before the
// backend shuts down so the final state is captured.
func (r *Recorder) Close() error {
	r.once.Do(func() { close(r.stop) })
	<-r.done
	r.sub.Close()
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

// Lost is the number of events that overflowed the subscription and had
// already left the bus's history.
func (r *Recorder) Lost() uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lost
}

// Fixture builds the fixture of the session so far: the events as the
// file holds them, decoded, and the state now.
func (r *Recorder) Fixture() (*Fixture, error) {
	r.catchUp()
	r.mu.Lock()
	encoded := r.events[:len(r.events):len(r.events)]
	lost, trimmed := r.lost, r.trimmed
	r.mu.Unlock()
	evs := make([]event.Event, len(encoded))
	for i, b := range encoded {
		if err := json.Unmarshal(b, &evs[i]); err != nil {
			return nil, fmt.Errorf("capture: event %d does not decode: %w", i, err)
		}
	}
	f, err := FromBackend(r.b, evs)
	if err != nil {
		return nil, err
	}
	f.CreatedAt, f.CapturedBy, f.Description = r.created, r.opts.CapturedBy, r.describe(lost, trimmed)
	return f, nil
}

// describe is the fixture's description, with what the session lost.
func (r *Recorder) describe(lost, trimmed uint64) string {
	d := r.opts.Description
	if lost > 0 {
		d = fmt.Sprintf("%s (capture lost %d events)", d, lost)
	}
	if trimmed > 0 {
		d = fmt.Sprintf("%s (the oldest %d events were dropped to stay within %d)", d, trimmed, r.opts.MaxEvents)
	}
	return d
}

// encodeLive encodes the session for its file: the state now, and the
// events as they were encoded on arrival, copied in (not re-scanned).
// The file has Fixture's fields in Fixture's order, compact: it is
// rewritten many times a second (SaveNamed writes fixtures to keep,
// indented).
func (r *Recorder) encodeLive() ([]byte, error) {
	r.mu.Lock()
	evs := r.events[:len(r.events):len(r.events)] // appended to later, never changed
	lost, trimmed := r.lost, r.trimmed
	states, stale := r.states, r.stale || r.states == nil
	r.stale = false
	r.mu.Unlock()
	var f *Fixture
	var err error
	if stale {
		if f, err = FromBackend(r.b, nil); err != nil {
			r.mu.Lock()
			r.stale = true
			r.mu.Unlock()
			return nil, err
		}
		states = map[string]json.RawMessage{}
		for name, sd := range f.Services {
			states[name] = sd.State
		}
		r.mu.Lock()
		r.states = states
		r.mu.Unlock()
	} else {
		f = &Fixture{Schema: Schema, Services: map[string]*ServiceData{}}
		for name, st := range states {
			f.Services[name] = &ServiceData{State: st}
		}
		addRules(r.b, f)
	}
	size := 256
	for _, e := range evs {
		size += len(e) + 1
	}
	buf := bytes.NewBuffer(make([]byte, 0, size))
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	field := func(name, v string, omitEmpty bool) {
		if v == "" && omitEmpty {
			return
		}
		buf.WriteString(`"` + name + `":`)
		enc.Encode(v) // a string always encodes
		buf.Truncate(buf.Len() - 1)
		buf.WriteByte(',')
	}
	buf.WriteByte('{')
	field("schema", f.Schema, false)
	field("description", r.describe(lost, trimmed), true)
	field("createdAt", r.created, true)
	field("capturedBy", r.opts.CapturedBy, true)
	buf.WriteString(`"events":[`)
	for i, e := range evs {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.Write(e)
	}
	buf.WriteString(`],"services":`)
	if err := enc.Encode(f.Services); err != nil {
		return nil, err
	}
	buf.Truncate(buf.Len() - 1)
	buf.WriteString("}\n")
	return buf.Bytes(), nil
}

// Flush writes the fixture now (atomically).
func (r *Recorder) Flush() error {
	r.catchUp()
	r.flushMu.Lock()
	defer r.flushMu.Unlock()
	start := time.Now()
	defer func() {
		r.mu.Lock()
		r.took, r.flushed = time.Since(start), time.Now()
		r.mu.Unlock()
	}()
	data, err := r.encodeLive()
	if err == nil {
		err = writeFileAtomic(r.path, data, false)
	}
	r.mu.Lock()
	r.err = err
	r.mu.Unlock()
	return err
}

// FromBackend is the fixture of b's current state with the given events
// (in the fixture's JSON form):
// each service's snapshot state, and the rules of the services that have
// rules.
func FromBackend(b *backend.Backend, events []event.Event) (*Fixture, error) {
	// Events straight from the bus carry queries as protobuf messages;
	// a fixture keeps their protojson form (normalize does nothing to
	// events already normalized, such as a Recorder's).
	norm := make([]event.Event, len(events))
	for i, e := range events {
		norm[i] = normalize(e)
	}
	f := &Fixture{Schema: Schema, Events: norm, Services: map[string]*ServiceData{}}
	for _, svc := range b.Sandbox.Services() {
		var st json.RawMessage
		var err error
		if c, ok := svc.(service.Capturer); ok {
			// A fixture is rewritten on every flush: a service whose
			// snapshot is costly (Storage's object bytes) says what a
			// capture keeps.
			st, err = c.CaptureState()
		} else {
			st, err = svc.Snapshot()
		}
		if err != nil {
			return nil, fmt.Errorf("capture: snapshot %s: %w", svc.Name(), err)
		}
		f.Services[svc.Name()] = &ServiceData{State: st}
	}
	addRules(b, f)
	return f, nil
}

// addRules adds the rules in force of the services that have rules to f.
func addRules(b *backend.Backend, f *Fixture) {
	formats := map[string]string{backend.Firestore: FormatFirestore, backend.Storage: FormatStorage, "database": FormatDatabase}
	for svc, format := range formats {
		rl := b.Rules(svc)
		if rl == nil {
			continue
		}
		name, text, ok := rl.RulesFile()
		if !ok {
			continue
		}
		sd := f.Services[svc]
		if sd == nil {
			sd = &ServiceData{}
			f.Services[svc] = sd
		}
		sd.Rules = &Rules{Format: format, Name: name, Source: text}
		if format == FormatDatabase && json.Valid([]byte(text)) {
			sd.Rules.JSON = json.RawMessage(text)
		}
	}
}

// WriteFileAtomic writes data to path through a temporary file in the
// same directory, synced, then renamed over path: readers see the old
// file or the new one, never a torn one, and the new one survives a power
// loss once this returns.
func WriteFileAtomic(path string, data []byte) error { return writeFileAtomic(path, data, true) }

// writeFileAtomic is WriteFileAtomic, with the sync only when sync is set.
// Unsynced, the file still replaces the old one atomically and survives
// the process being killed (it is in the operating system's hands); the
// running session's file is written so, several times a second, because
// an fsync there stalls the store's own writes to the same disk.
func writeFileAtomic(path string, data []byte, sync bool) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	name := tmp.Name()
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(name)
		return err
	}
	if sync {
		if err := tmp.Sync(); err != nil {
			tmp.Close()
			os.Remove(name)
			return err
		}
	}
	if err := tmp.Close(); err != nil {
		os.Remove(name)
		return err
	}
	if err := os.Rename(name, path); err != nil {
		os.Remove(name)
		return err
	}
	return nil
}

// normalize gives queries carried as protobuf messages their protojson
// form, the standard JSON a fixture keeps. Payloads are copied, never
// changed in place: other subscribers share them.
func normalize(e event.Event) event.Event {
	if l := e.Listener; l != nil && l.Target != nil {
		if m, ok := l.Target.Query.(proto.Message); ok {
			if b, err := protojson.Marshal(m); err == nil {
				lc, tc := *l, *l.Target
				tc.Query = json.RawMessage(b)
				lc.Target = &tc
				e.Listener = &lc
			}
		}
	}
	if rq := e.Request; rq != nil && rq.Seen != nil {
		if m, ok := rq.Seen.Query.(proto.Message); ok {
			if b, err := protojson.Marshal(m); err == nil {
				rc, sc := *rq, *rq.Seen
				sc.Query = json.RawMessage(b)
				rc.Seen = &sc
				e.Request = &rc
			}
		}
	}
	return e
}

// Handler serves the session so far as a fixture (GET), for the Studio
// and `pyric capture save --url`. Mount it on the admin plane, e.g. at
// /__pyric/capture.
func (r *Recorder) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method != http.MethodGet {
			w.Header().Set("Allow", "GET")
			http.Error(w, "GET returns the captured session", http.StatusMethodNotAllowed)
			return
		}
		f, err := r.Fixture()
		var data []byte
		if err == nil {
			data, err = Encode(f)
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(data)
	})
}
