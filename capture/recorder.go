package capture

import (
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
	"github.com/pyric/pyric/storage"
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
	// MaxBytes bounds the Go heap the kept events take (by
	// event.HeapSize; default 32 MiB, about 30,000 commit events of small
	// documents): past it the oldest go as past MaxEvents.
	MaxBytes int
	// Buffer is the subscription's buffer (default 4096); events missed
	// when it overflows are recovered from the bus's history when still
	// kept there.
	Buffer int
}

// Recorder writes the running session to a fixture file.
type Recorder struct {
	b    *backend.Backend
	path string
	opts Options
	sub  *event.Subscription

	flushMu sync.Mutex // one flush at a time, so files land in order
	mu      sync.Mutex
	events  []event.Event
	lastSeq uint64
	lost    uint64
	bytes   int           // the events' event.HeapSize
	trimmed uint64        // oldest events dropped past MaxEvents or MaxBytes
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
// is called. The file is written once before Start returns. A fixture
// already at path — the previous session, perhaps of a killed server — is
// kept as PreviousPath(path) rather than overwritten, and temporary files
// a killed rewrite left are removed.
func Start(ctx context.Context, b *backend.Backend, path string, opts Options) (*Recorder, error) {
	if opts.Debounce <= 0 {
		opts.Debounce = 100 * time.Millisecond
	}
	if opts.Buffer <= 0 {
		opts.Buffer = 4096
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
	if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() {
		if err := os.Rename(path, PreviousPath(path)); err != nil {
			return nil, fmt.Errorf("capture: keeping the previous session: %w", err)
		}
	}
	bus := b.Sandbox.Events()
	r := &Recorder{b: b, path: path, opts: opts, sub: bus.Subscribe(opts.Buffer),
		created: b.Sandbox.Now().UTC().Format(time.RFC3339Nano), done: make(chan struct{}), stop: make(chan struct{})}
	for _, e := range bus.History() {
		r.add(e)
	}
	if err := r.Flush(); err != nil {
		r.sub.Close()
		return nil, err
	}
	go r.run(ctx)
	return r, nil
}

// PreviousPath is where Start keeps the fixture it found at path:
// last-session.json → last-session.previous.json.
func PreviousPath(path string) string {
	ext := filepath.Ext(path)
	return strings.TrimSuffix(path, ext) + ".previous" + ext
}

func (r *Recorder) add(e event.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if e.Kind == event.KindGap {
		// Recover what the bus still keeps; count the rest as lost.
		got := r.b.Sandbox.Events().Since(r.lastSeq, 0)
		for _, g := range got {
			if g.Seq >= e.Seq {
				break
			}
			r.keep(normalize(g))
		}
		if r.lastSeq+1 < e.Seq {
			r.lost += e.Seq - 1 - r.lastSeq
		}
		r.trim()
		return
	}
	if e.Seq <= r.lastSeq {
		return
	}
	r.keep(normalize(e))
	r.trim()
}

// keep appends a normalized event; callers hold r.mu.
func (r *Recorder) keep(e event.Event) {
	r.events = append(r.events, e)
	r.bytes += event.HeapSize(&e)
	r.lastSeq = e.Seq
}

// trim drops the oldest events once past MaxEvents or MaxBytes, down to
// nine tenths of both (so that it does not copy the rest on every event);
// callers hold r.mu.
func (r *Recorder) trim() {
	if len(r.events) <= r.opts.MaxEvents && r.bytes <= r.opts.MaxBytes {
		return
	}
	cut := max(len(r.events)-r.opts.MaxEvents+r.opts.MaxEvents/10, 0)
	for i := range cut {
		r.bytes -= event.HeapSize(&r.events[i])
	}
	for cut < len(r.events)-1 && r.bytes > r.opts.MaxBytes-r.opts.MaxBytes/10 {
		r.bytes -= event.HeapSize(&r.events[cut])
		cut++
	}
	r.trimmed += uint64(cut)
	r.events = append([]event.Event(nil), r.events[cut:]...)
}

func (r *Recorder) run(ctx context.Context) {
	defer close(r.done)
	var timer *time.Timer
	var fire <-chan time.Time
	for {
		select {
		case e, ok := <-r.sub.Events():
			if !ok {
				r.Flush()
				return
			}
			r.add(e)
			if timer == nil {
				// Rewriting costs in proportion to the session: leave at
				// least four times the last rewrite between rewrites, so
				// capture never takes more than a fifth of the time. The
				// first change after a quiet spell is written at once (a
				// kill then loses nothing of a sparse session); later
				// ones wait for the rest of the interval, coalesced.
				wait := r.opts.Debounce
				r.mu.Lock()
				if w := 4 * r.took; w > wait {
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
			}
		case <-fire:
			timer, fire = nil, nil
			r.Flush()
		case <-ctx.Done():
			r.drain()
			r.Flush()
			return
		case <-r.stop:
			r.drain()
			r.Flush()
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

// Fixture builds the fixture of the session so far.
func (r *Recorder) Fixture() (*Fixture, error) {
	r.mu.Lock()
	evs := append([]event.Event(nil), r.events...)
	lost, trimmed := r.lost, r.trimmed
	r.mu.Unlock()
	f, err := FromBackend(r.b, evs)
	if err != nil {
		return nil, err
	}
	f.CreatedAt, f.CapturedBy, f.Description = r.created, r.opts.CapturedBy, r.opts.Description
	if lost > 0 {
		f.Description = fmt.Sprintf("%s (capture lost %d events)", f.Description, lost)
	}
	if trimmed > 0 {
		f.Description = fmt.Sprintf("%s (the oldest %d events were dropped to stay within %d events and %d MiB)", f.Description, trimmed, r.opts.MaxEvents, r.opts.MaxBytes>>20)
	}
	return f, nil
}

// Flush writes the fixture now (atomically).
func (r *Recorder) Flush() error {
	r.flushMu.Lock()
	defer r.flushMu.Unlock()
	start := time.Now()
	defer func() {
		r.mu.Lock()
		r.took, r.flushed = time.Since(start), time.Now()
		r.mu.Unlock()
	}()
	f, err := r.Fixture()
	if err == nil {
		var data []byte
		if data, err = Encode(f); err == nil {
			err = WriteFileAtomic(r.path, data)
		}
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
		if e, ok := svc.(*storage.Engine); ok {
			// What the rules see of each object, not its bytes: a fixture
			// is rewritten on every flush, and uploads must not make each
			// rewrite cost their size.
			objs := e.Objects()
			if objs == nil {
				objs = []*storage.Object{}
			}
			st, err = json.Marshal(map[string]any{"objects": objs})
		} else {
			st, err = svc.Snapshot()
		}
		if err != nil {
			return nil, fmt.Errorf("capture: snapshot %s: %w", svc.Name(), err)
		}
		f.Services[svc.Name()] = &ServiceData{State: st}
	}
	formats := map[string]string{backend.Firestore: FormatFirestore, backend.Storage: FormatStorage, "database": FormatDatabase}
	for svc, format := range formats {
		rl := b.Rules(svc)
		if rl == nil {
			continue
		}
		name, text, ok := rl.Base()
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
	return f, nil
}

// WriteFileAtomic writes data to path through a temporary file in the
// same directory, synced, then renamed over path: readers see the old
// file or the new one, never a torn one.
func WriteFileAtomic(path string, data []byte) error {
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
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		os.Remove(name)
		return err
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
