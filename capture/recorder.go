package capture

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/internal/jsonstr"
	"github.com/pyric/pyric/internal/prefault"
	"github.com/pyric/pyric/sandbox"
	"github.com/pyric/pyric/sandbox/service"
)

// Options configure a Recorder.
type Options struct {
	// Debounce is the least time between two flushes to the file
	// (default 100ms; more when a flush is slow): a change after a quiet
	// spell is written at once, a burst of them costs one write per
	// interval.
	Debounce time.Duration
	// FirstFlush is how long after Start the first flush, which writes
	// the whole state, waits (default 1s): the start of a big store is
	// not slowed by writing it while the ports open.
	FirstFlush time.Duration
	// Previous is the keeping of the previous session at the path,
	// started ahead by KeepPrevious; nil (or another path's): Start
	// keeps it itself.
	Previous *Previous
	// Description and CapturedBy go into the fixture's header.
	Description string
	CapturedBy  string
	// MaxEvents bounds the events a fixture of the session keeps (default
	// 100,000): past it the oldest are dropped, which leaves a valid,
	// shorter session (the replay starts from the state the remaining
	// events found). The file may hold up to twice as many while writes
	// flow; it is trimmed when it is rewritten (when its appended lines
	// outgrow it, and at Close).
	MaxEvents int
	// MaxBytes bounds the kept events' size, as their encoded JSON
	// (default 32 MiB), as MaxEvents bounds their number.
	MaxBytes int
	// Buffer bounds the events waiting for the recorder (default 1024);
	// events missed when it overflows are recovered from the bus's
	// history when still kept there (10,000 events by default). Each is
	// an event.Event of ~350 bytes, their room taken as they come.
	Buffer int
	// Warn receives one-line notices (a damaged fixture kept aside); nil
	// writes them to standard error.
	Warn func(string)
}

// Recorder writes the running session to a fixture file.
type Recorder struct {
	sb   *sandbox.Sandbox
	path string
	opts Options
	sub  *event.Queue
	// recs are the services whose state is appended record by record.
	recs map[string]service.Records

	mu sync.Mutex
	// batch is the last batch taken from sub, handed back (cleared) for
	// the next one.
	batch []event.Event
	// pending are the events not yet in the file, each normalized and
	// encoded as its line once, when it arrives.
	pending     [][]byte
	pendingSize int
	// dirty are the records changed since the last flush, by service
	// and token; stale the other services whose state changed since.
	dirty map[string]map[string]changed
	stale map[string]bool
	// sparePending and spareDirty are the last flush's pending and
	// dirty, emptied, for the next flush's changes: allocated anew at
	// every flush, they were a fifth of what capture allocated while a
	// store was loaded.
	sparePending [][]byte
	spareDirty   map[string]map[string]changed
	lines        lineEncoder // encodes pending's lines
	rewrite      bool        // the next flush rewrites the file whole
	lastSeq      uint64
	lost         uint64
	trimmed      uint64        // oldest events dropped past MaxEvents or MaxBytes
	took         time.Duration // how long the last flush took
	flushed      time.Time     // when the last flush ended
	err          error
	created      string
	// kept is the stamp of the previous session Start kept, which the
	// file's first line says.
	kept *fileStamp

	flushMu sync.Mutex        // one flush at a time; guards the file's fields below
	f       *os.File          // the file, open for appending; nil until the first rewrite
	out     bytes.Buffer      // appendLines' buffer
	size    int64             // its size
	base    int64             // its size after the last rewrite
	spans   spanList          // its event lines
	evBytes int64             // their total size
	rules   map[string]string // the rules the file says, by service (rulesKey)
	desc    string            // the description the file says
	closed  bool              // finished: the file is final

	done chan struct{}
	stop chan struct{}
	once sync.Once
}

// Start subscribes to sb's events and keeps path a valid fixture of the
// session (events from the bus's history onwards) until ctx ends or Close
// is called. Before Start returns the file holds a session with no events
// and no state (cheap, so a big store does not delay the start, and an
// unwritable path is reported at once); the state is written in the
// background by the first flush (FirstFlush after Start), and from then
// on only what changes is appended. A fixture already at path — the previous session, perhaps of
// a killed server — is kept as PreviousPath(path) rather than
// overwritten, and temporary files a killed rewrite left are removed.
func Start(ctx context.Context, sb *sandbox.Sandbox, path string, opts Options) (*Recorder, error) {
	if opts.Debounce <= 0 {
		opts.Debounce = 100 * time.Millisecond
	}
	if opts.Buffer <= 0 {
		opts.Buffer = 1024
	}
	if opts.FirstFlush <= 0 {
		opts.FirstFlush = time.Second
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
	var kept *fileStamp
	var err error
	if p := opts.Previous; p != nil && p.path == path {
		<-p.done
		kept, err = p.check.keep(path, opts.Warn)
	} else {
		kept, err = keepPrevious(path, opts.Warn)
	}
	if err != nil {
		return nil, err
	}
	bus := sb.Events()
	r := &Recorder{sb: sb, path: path, opts: opts, sub: bus.NewQueue(opts.Buffer, nil), recs: map[string]service.Records{},
		dirty: map[string]map[string]changed{}, stale: map[string]bool{}, rewrite: true, kept: kept,
		created: sb.Now().UTC().Format(time.RFC3339Nano), done: make(chan struct{}), stop: make(chan struct{})}
	for _, svc := range sb.Services() {
		if rs, ok := svc.(service.Records); ok {
			r.recs[svc.Name()] = rs
		}
	}
	r.mu.Lock()
	hist := bus.History()
	for i := range hist {
		r.add(&hist[i])
	}
	r.trimPending()
	r.mu.Unlock()
	if err := r.writeEmpty(); err != nil {
		r.sub.Close()
		return nil, err
	}
	go r.run(ctx)
	return r, nil
}

// Previous is the check of a previous session (keepPrevious) that
// KeepPrevious started ahead of Start.
type Previous struct {
	path  string
	done  chan struct{}
	check previousCheck
}

// KeepPrevious starts, in the background, the check of what Start keeps
// first: the session file at path, the previous session (megabytes of
// JSON for a big store). It changes nothing: Start moves the files as
// the check found them. A caller that starts the recorder only once its
// store is loaded starts this before loading it, so that the check runs
// beside the load, and passes it to Start as Options.Previous; nothing
// else may write at path meanwhile.
func KeepPrevious(path string) *Previous {
	p := &Previous{path: path, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		p.check = checkPrevious(path)
	}()
	return p
}

// keepPrevious moves the fixture at path, the previous session, to
// PreviousPath(path), and returns the stamp of the file it moved there
// (nil: none). A file at path that is not a fixture — damaged on disk,
// since the recorder only ever renames whole fixtures into place — is
// the user's data all the same: it is moved to DamagedPath instead,
// unchanged, with a warning, and not overwritten; so is a damaged file
// at PreviousPath that the move would overwrite. That file was checked
// by the start that moved it there, which wrote its stamp into the
// session at path: unchanged since (same size and modification time,
// which a rename keeps), it is not read again — a big store's sessions
// are megabytes of JSON, read before any port serves. A session that
// never got past its start (a kill before its first flush: no events,
// no state) holds nothing to keep: it is overwritten, and the previous
// session stays where it is.
func keepPrevious(path string, warn func(string)) (*fileStamp, error) {
	return checkPrevious(path).keep(path, warn)
}

// previousCheck is what keepPrevious found, before it moves anything.
type previousCheck struct {
	fi      os.FileInfo // the file at path; nil: none
	head    *headFields // its first line's fields
	damage  error       // why the file at path is not a fixture
	prevBad error       // why the file at PreviousPath is not a fixture
}

// checkPrevious checks the files keepPrevious moves, changing nothing.
func checkPrevious(path string) previousCheck {
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return previousCheck{}
	}
	c := previousCheck{fi: fi}
	c.head, c.damage = checkFile(path)
	if c.damage != nil || c.head.empty() {
		return c
	}
	if pfi, err := os.Stat(PreviousPath(path)); err == nil && pfi.Mode().IsRegular() && !c.head.KeptPrevious.matches(pfi) {
		_, c.prevBad = checkFile(PreviousPath(path))
	}
	return c
}

// keep moves the files as c found them (keepPrevious).
func (c previousCheck) keep(path string, warn func(string)) (*fileStamp, error) {
	if c.fi == nil {
		return nil, nil
	}
	prev := PreviousPath(path)
	for _, f := range []struct {
		path string
		bad  error
	}{{path, c.damage}, {prev, c.prevBad}} {
		if f.bad == nil {
			continue
		}
		to, err := keepAside(f.path)
		if err != nil {
			return nil, fmt.Errorf("capture: %s is not a session fixture (%v) and could not be kept aside: %w", f.path, f.bad, err)
		}
		warn(fmt.Sprintf("capture: %s is not a session fixture (%v): kept it as %s, unchanged", f.path, f.bad, to))
	}
	switch {
	case c.damage != nil:
		return nil, nil
	case c.head.empty():
		return c.head.KeptPrevious, nil
	}
	if err := os.Rename(path, prev); err != nil {
		return nil, fmt.Errorf("capture: keeping the previous session: %w", err)
	}
	return stampOf(c.fi), nil
}

// fileStamp identifies a file a start checked: its size and modification
// time, which renaming it keeps and writing to it changes.
type fileStamp struct {
	Size    int64 `json:"size"`
	ModTime int64 `json:"modTime"` // Unix nanoseconds
}

func stampOf(fi os.FileInfo) *fileStamp {
	return &fileStamp{Size: fi.Size(), ModTime: fi.ModTime().UnixNano()}
}

// matches says fi is the file s was taken of, unchanged.
func (s *fileStamp) matches(fi os.FileInfo) bool {
	return s != nil && *s == *stampOf(fi)
}

// sessionHead is the first line of the file a Recorder writes: the
// fixture, the stamp of the previous session its start checked and kept
// (keepPrevious), and whether it is the file Start writes before the
// first flush; a decoder of the fixture ignores both.
type sessionHead struct {
	*Fixture
	KeptPrevious *fileStamp `json:"keptPrevious,omitempty"`
	Unflushed    bool       `json:"unflushed,omitempty"`
}

// headFields are the fields of a session file's first line keepPrevious
// reads.
type headFields struct {
	KeptPrevious *fileStamp `json:"keptPrevious"`
	Unflushed    bool       `json:"unflushed"`
	read         bool       // the first line was read
	tail         bool       // lines follow it
}

// empty says the file is a session that never flushed: Start's first
// file, nothing appended.
func (h *headFields) empty() bool { return h.read && h.Unflushed && !h.tail }

// checkFile checks the fixture file at path (checkMapped) and reads its
// first line's fields. A file that cannot be read is not damaged: it
// returns empty fields.
func checkFile(path string) (*headFields, error) {
	data, release, err := prefault.MapFile(path)
	if err != nil {
		return &headFields{}, nil
	}
	defer release()
	if err := checkMapped(data); err != nil {
		return nil, err
	}
	h := &headFields{}
	readHead(data, h)
	return h, nil
}

// readHead reads the fields of data's first JSON value into h, as
// checkMapped reads a mapping (a file cut short meanwhile reads as no
// fields).
func readHead(data []byte, h *headFields) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			if _, fault := r.(interface{ Addr() uintptr }); !fault {
				panic(r)
			}
			*h = headFields{}
		}
	}()
	base, ok := compactBase(data)
	if !ok {
		if base, _, ok = splitLog(data); !ok {
			return
		}
	}
	if json.Unmarshal(base, h) != nil {
		*h = headFields{}
		return
	}
	h.read, h.tail = true, len(bytes.TrimSpace(data[len(base):])) > 0
}

// checkMapped is checkWhole on a file's mapping. Another process cutting
// the file short meanwhile makes reading past its new end a fault, which
// is taken as the file being unreadable, as a failed read is (nil: it is
// not damaged, only changing).
func checkMapped(data []byte) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			if _, fault := r.(interface{ Addr() uintptr }); !fault {
				panic(r)
			}
			err = nil
		}
	}()
	return checkWhole(data)
}

// checkWhole reports whether data is a whole fixture file: valid JSON
// with the fixture schema, each appended line valid JSON too. It is
// cheaper than Decode (no event is validated) and enough to tell a
// damaged file from a session.
func checkWhole(data []byte) error {
	if base, ok := compactBase(data); ok {
		return checkLines(data[len(base):])
	}
	return checkWholeDecoded(data)
}

// checkWholeDecoded is checkWhole for a fixture in any form: it reads
// the schema through a decoder, and says where the JSON is broken.
func checkWholeDecoded(data []byte) error {
	var head struct {
		Schema string `json:"schema"`
	}
	base, _, ok := splitLog(data)
	if !ok {
		base = data // for the error's position
	}
	if err := json.Unmarshal(base, &head); err != nil {
		return &Error{Msg: "is not valid JSON: " + jsonErr(err, data)}
	}
	if head.Schema != Schema {
		return &Error{Path: "fixture.schema", Msg: fmt.Sprintf("must be %q", Schema)}
	}
	return checkLines(data[len(base):])
}

// checkLines checks the lines appended after a fixture: every one is
// whole JSON, but for a torn last one (a kill in the middle of its
// write), which Decode ignores too.
func checkLines(tail []byte) error {
	line := 1
	for rest := bytes.TrimLeft(tail, "\n"); len(rest) > 0; line++ {
		l, after, whole := bytes.Cut(rest, []byte("\n"))
		if !whole {
			break
		}
		if len(bytes.TrimSpace(l)) > 0 && !jsonstr.Valid(l) {
			return &Error{Msg: fmt.Sprintf("appended line %d is not valid JSON", line)}
		}
		rest = after
	}
	return nil
}

// compactHead is how a fixture the recorder writes in one line begins.
var compactHead = []byte(`{"schema":"` + Schema + `",`)

// compactBase returns the fixture a file begins with when it is written
// as the recorder writes a running session: on its first line (compact
// JSON holds no line break), its first key the fixture schema; checking
// it is one pass over it, where reading its schema through a decoder
// would take three (the decoder's, the whole text's, the unknown
// fields'). Its first key decides its schema (a decoder would take the
// last of repeated keys; the recorder writes one). A file in another form
// (Encode's indented one, a hand-edited one, damage) is not.
func compactBase(data []byte) ([]byte, bool) {
	base := data
	if i := bytes.IndexByte(data, '\n'); i >= 0 {
		base = data[:i]
	}
	if !bytes.HasPrefix(base, compactHead) || !jsonstr.Valid(base) {
		return nil, false
	}
	return base, true
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

// take keeps the events waiting in the queue, in one batch. Taking and
// keeping under one hold of mu keeps the batches of concurrent callers
// (the run loop, a Flush from the session routes) in order.
func (r *Recorder) take() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.takeLocked()
}

// takeLocked is take; callers hold mu.
func (r *Recorder) takeLocked() {
	evs := r.sub.Take(r.batch)
	for i := range evs {
		r.add(&evs[i])
	}
	// The batch's room is handed back for the next one: the queue then
	// grows only until it holds the most a batch had (Buffer events at
	// most), where dropping the room of a big batch made the queue grow
	// anew through every size for the next, a hundred megabytes of
	// garbage while a big store was loaded.
	clear(evs)
	r.batch = evs
	r.trimPending()
}

// catchUp takes the queue's events, then the events the queue lost that
// the bus's history still holds past the last one kept: a queue that
// overflowed says so (its gap marker) only with the next event it takes
// in, which a session gone quiet never emits. After a reset cleared the
// history the events between are on their way through the queue, or
// lost, which the gap marker counts.
func (r *Recorder) catchUp() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.takeLocked()
	evs := r.sb.Events().Since(r.lastSeq, 0)
	if len(evs) == 0 || evs[0].Seq != r.lastSeq+1 {
		return
	}
	for i := range evs {
		r.keep(&evs[i])
	}
	r.trimPending()
}

// keepFromHistory keeps the events the bus still holds past the last one
// kept and before until, those a gap marker at until stands for; callers
// hold mu. Only they are copied out of the history, not the events after
// them (still in the queue).
func (r *Recorder) keepFromHistory(until uint64) {
	if until <= r.lastSeq+1 {
		return
	}
	evs := r.sb.Events().Since(r.lastSeq, int(min(until-r.lastSeq-1, 1<<30)))
	for i := range evs {
		if evs[i].Seq >= until {
			break
		}
		r.keep(&evs[i])
	}
}

// add keeps e, an event from the queue or the history, unless it is kept
// already; callers hold mu. Events are passed by pointer, here and on to
// their encoding, because each copy of one (~330 bytes) was a good part
// of what keeping a listener event cost.
func (r *Recorder) add(e *event.Event) {
	if e.Kind == event.KindGap {
		// Recover what the bus still keeps; count the rest as lost. The
		// records the lost events changed are unknown: the next flush
		// writes the whole state.
		r.keepFromHistory(e.Seq)
		if r.lastSeq+1 < e.Seq {
			r.lost += e.Seq - 1 - r.lastSeq
			r.rewrite = true
		}
		return
	}
	if e.Seq <= r.lastSeq {
		return
	}
	r.keep(e)
}

// trimPending drops the oldest events not yet flushed past MaxEvents or
// MaxBytes (a flush that could not keep up); callers hold mu.
func (r *Recorder) trimPending() {
	cut := 0
	for cut < len(r.pending) && (len(r.pending)-cut > r.opts.MaxEvents || r.pendingSize > r.opts.MaxBytes) {
		r.pendingSize -= len(r.pending[cut])
		cut++
	}
	if cut > 0 {
		r.trimmed += uint64(cut)
		r.pending = append([][]byte(nil), r.pending[cut:]...)
	}
}

// changed is a record changed since the last flush: with whole, its key
// and value as the last event that changed it left it, taken from that
// event's line (service.EventRecords); else it is read when the flush
// writes it.
type changed struct {
	key   []string
	value []byte
	whole bool
}

// keep notes what e changed and queues its line; callers hold mu.
func (r *Recorder) keep(e *event.Event) {
	r.lastSeq = e.Seq
	line, after, lineErr := r.lines.line(e)
	switch {
	case e.Kind == event.KindRequest || e.Kind == event.KindListener:
		// reads and listeners change no state
	case e.Kind == event.KindBoundary:
		r.rewrite = true // a reset or restore changed everything
	default:
		if rs, ok := r.recs[e.Service]; ok {
			tok, ok := rs.RecordChange(*e)
			if !ok {
				r.rewrite = true
				break
			}
			m := r.dirty[e.Service]
			if m == nil {
				m = map[string]changed{}
				r.dirty[e.Service] = m
			}
			c := changed{}
			if er, ok := rs.(service.EventRecords); ok && lineErr == nil && after[1] > after[0] {
				if key, ok := er.RecordKey(*e); ok {
					c = changed{key: key, value: line[after[0]:after[1]:after[1]], whole: true}
				}
			}
			m[tok] = c
			break
		}
		if r.sb.Service(e.Service) != nil {
			r.stale[e.Service] = true
			break
		}
		for _, svc := range r.sb.Services() {
			if _, ok := r.recs[svc.Name()]; !ok {
				r.stale[svc.Name()] = true
			}
		}
	}
	if lineErr != nil {
		r.lost++ // an event that does not encode cannot be in the file
		return
	}
	r.pending = append(r.pending, line)
	r.pendingSize += len(line)
}

// lineEncoder encodes events as their fixture lines through one buffer
// reused from event to event: a fresh buffer per event grew through
// several sizes and was a quarter of what a write costs pyric serve in
// allocations (e2e/bench's heap profile, session capture on). The lines
// are carved from a slab shared by many of them rather than allocated one
// by one (an allocation per event, every read's included); a slab whose
// lines a flush wrote is reused for the lines after them (spare), so that
// the lines of a steady stream of writes — a ninth of what a set
// allocated in pyric serve — cost no allocation, nor the collections it
// brought closer.
type lineEncoder struct {
	buf  []byte
	slab []byte
	// ev holds the normalized copy of an event whose query needs it
	// (normalizeInto); any other event is encoded where it is.
	ev event.Event
	// full are the slabs filled since a flush last took the lines
	// (sealed); spare the slabs no line in which is referred to any
	// more, for reuse.
	full  [][]byte
	spare [][]byte
}

// maxSpareSlabs bounds the slabs kept for reuse (1 MiB): a burst's past
// it are left to the collector.
const maxSpareSlabs = 16

// sealed hands over the slabs filled so far. Every line in them is in the
// pending lines taken with them, or was dropped; once a flush has written
// those, nothing refers to the slabs and they can be reused (reuse).
func (l *lineEncoder) sealed() [][]byte {
	s := l.full
	l.full = nil
	return s
}

// reuse takes back slabs no line in which is referred to any more.
func (l *lineEncoder) reuse(slabs [][]byte) {
	for _, sl := range slabs {
		if len(l.spare) >= maxSpareSlabs {
			return
		}
		l.spare = append(l.spare, sl[:0])
	}
}

// lineSlab is the size of the slabs lines are carved from; a line longer
// than a quarter of it gets a slice of its own.
const lineSlab = 64 << 10

// maxLineBuf bounds the buffer kept between events, so one huge event
// does not keep its room.
const maxLineBuf = 1 << 20

// maxAppendBuf bounds the buffer appendLines keeps between flushes.
const maxAppendBuf = 4 << 20

// appendChunk is how much of a flush appendLines gathers before writing
// it out.
const appendChunk = 256 << 10

// line is e's fixture line, {"event":E}\n, with E its compact JSON as the
// fixture encoder writes it (no HTML escaping; event.AppendJSON), in a
// slice of its own, and where its commit payload's after value is in it
// (event.AppendJSONAfter). e is normalized first (normalize), in a copy:
// it is shared with the bus and its other readers.
func (l *lineEncoder) line(e *event.Event) ([]byte, [2]int, error) {
	if cap(l.buf) > maxLineBuf {
		l.buf = nil
	}
	if normalizeInto(&l.ev, e) {
		e = &l.ev
	}
	b, after, err := event.AppendJSONAfter(append(l.buf[:0], `{"event":`...), e)
	l.ev = event.Event{} // keeps nothing of it alive
	l.buf = b
	if err != nil {
		return nil, after, err
	}
	n := len(b) + 2
	if n > lineSlab/4 {
		line := make([]byte, 0, n)
		return append(append(line, b...), "}\n"...), after, nil
	}
	if cap(l.slab)-len(l.slab) < n {
		if l.slab != nil {
			l.full = append(l.full, l.slab)
		}
		if k := len(l.spare); k > 0 {
			l.slab, l.spare = l.spare[k-1], l.spare[:k-1]
		} else {
			l.slab = make([]byte, 0, lineSlab)
		}
	}
	start := len(l.slab)
	l.slab = append(append(l.slab, b...), "}\n"...)
	// Capped at its end, so that nothing appended to one line runs into
	// the next.
	return l.slab[start:len(l.slab):len(l.slab)], after, nil
}

// writeEmpty writes the session before its first flush: no events, no
// state, the rules in force, marked unflushed.
func (r *Recorder) writeEmpty() error {
	f := &Fixture{Schema: Schema, CreatedAt: r.created, CapturedBy: r.opts.CapturedBy, Description: r.opts.Description,
		Events: []event.Event{}, Services: map[string]*ServiceData{}}
	addRules(r.sb, f)
	var data bytes.Buffer
	enc := json.NewEncoder(&data)
	enc.SetEscapeHTML(false)                                                          // as rewriteFile writes it
	err := enc.Encode(sessionHead{Fixture: f, KeptPrevious: r.kept, Unflushed: true}) // ends with a newline
	if err == nil {
		err = WriteFileAtomic(r.path, data.Bytes())
	}
	if err != nil {
		return fmt.Errorf("capture: %w", err)
	}
	return nil
}

func (r *Recorder) run(ctx context.Context) {
	defer close(r.done)
	var timer *time.Timer
	var fire <-chan time.Time
	// The first flush writes the whole state (at 100k documents, more
	// CPU than the rest of the start): it waits FirstFlush (unless Flush
	// is called), so that it does not compete with the start, nor with
	// the requests of clients probing the ports as they open (a sign-up
	// among them changes the state). Until then the file is Start's, a
	// session with no events and no state: a kill in that first second
	// loses the session's first events, as a kill loses the last ones
	// before a flush; the data itself is the store's, durable.
	first := time.NewTimer(r.opts.FirstFlush)
	defer first.Stop()
	firstDue := first.C
	for {
		// While no flush is scheduled the first event wakes the recorder
		// (a change after a quiet spell is written at once); while one
		// is, only a queue half full does. The events of a stream of
		// requests are so taken in a few batches, rather than each waking
		// the recorder (a thread wake-up costs more than the event's
		// encoding), and the queue does not overflow before the flush.
		wake := 1
		if timer != nil || (firstDue != nil && r.unflushed()) {
			wake = max(r.opts.Buffer/2, 1)
		}
		select {
		case _, ok := <-r.sub.Ready(wake):
			if !ok {
				r.finish()
				return
			}
			r.take()
			if timer != nil || (firstDue != nil && r.unflushed()) {
				continue
			}
			firstDue = nil
			// Leave at least nine times the last flush between flushes,
			// so capture never takes more than a tenth of the time. The
			// first change after a quiet spell is written at once (a
			// kill then loses nothing of a sparse session); later ones
			// wait for the rest of the interval, coalesced.
			wait := r.opts.Debounce
			r.mu.Lock()
			if w := 9 * r.took; w > wait {
				wait = w
			}
			wait -= time.Since(r.flushed)
			r.mu.Unlock()
			if wait <= 0 {
				r.Flush()
				continue
			}
			timer = time.NewTimer(wait)
			fire = timer.C
		case <-fire:
			timer, fire = nil, nil
			r.Flush()
		case <-firstDue:
			firstDue = nil
			if timer == nil && r.unflushed() {
				r.Flush()
			}
		case <-ctx.Done():
			r.finish()
			return
		case <-r.stop:
			r.finish()
			return
		}
	}
}

// unflushed says no flush has run yet.
func (r *Recorder) unflushed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.flushed.IsZero()
}

// finish flushes the last changes and, when the file holds more events
// than the bounds keep, rewrites it trimmed: writes have stopped.
func (r *Recorder) finish() {
	if r.Flush() != nil {
		return
	}
	r.flushMu.Lock()
	defer r.flushMu.Unlock()
	if r.overBounds() > 0 {
		if err := r.rewriteFile(nil); err != nil {
			r.mu.Lock()
			r.err = err
			r.mu.Unlock()
		}
	}
	if r.f != nil {
		r.f.Close()
	}
	r.closed = true
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

// Fixture is the fixture of the session so far: the file, flushed and
// read back, without the oldest events past the bounds.
func (r *Recorder) Fixture() (*Fixture, error) {
	if err := r.Flush(); err != nil {
		return nil, fmt.Errorf("capture: %w", err)
	}
	r.flushMu.Lock()
	data, err := os.ReadFile(r.path)
	cut := r.overBounds()
	r.flushMu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("capture: %w", err)
	}
	f, err := Decode(data, r.sb.Service)
	if err != nil {
		return nil, err
	}
	if cut > 0 && cut <= len(f.Events) {
		r.mu.Lock()
		lost, trimmed := r.lost, r.trimmed
		r.mu.Unlock()
		f.Events = f.Events[cut:]
		f.Description = r.describe(lost, trimmed+uint64(cut))
	}
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

// overBounds is how many of the file's oldest events are past MaxEvents
// or MaxBytes; callers hold flushMu.
func (r *Recorder) overBounds() int {
	cut, n, size := 0, r.spans.len(), r.evBytes
	for cut < n && (n-cut > r.opts.MaxEvents || size > int64(r.opts.MaxBytes)) {
		_, ln := r.spans.at(cut)
		size -= ln
		cut++
	}
	return cut
}

// outgrown says the file should be rewritten rather than appended to:
// it holds twice the events the bounds keep, or its appended lines
// (records written again and again) outgrew what it was rewritten with;
// callers hold flushMu.
func (r *Recorder) outgrown() bool {
	return r.spans.len() > 2*r.opts.MaxEvents || r.evBytes > 2*int64(r.opts.MaxBytes) ||
		r.size-r.base > r.base+2*int64(r.opts.MaxBytes)
}

// Flush writes what changed since the last flush to the file: it appends
// the new events, the records they changed and the states of the other
// services they changed, or rewrites the file whole (atomically) at
// start, after a reset or restore, and when it outgrew itself.
func (r *Recorder) Flush() error {
	r.catchUp()
	r.flushMu.Lock()
	defer r.flushMu.Unlock()
	if r.closed {
		return nil
	}
	start := time.Now()
	r.mu.Lock()
	pending, dirty, stale, rewrite := r.pending, r.dirty, r.stale, r.rewrite
	r.pending, r.pendingSize, r.dirty, r.stale, r.rewrite = r.sparePending, 0, r.spareDirty, map[string]bool{}, false
	r.sparePending, r.spareDirty = nil, nil
	if r.dirty == nil {
		r.dirty = map[string]map[string]changed{}
	}
	slabs := r.lines.sealed()
	r.mu.Unlock()
	var err error
	appended := false
	if rewrite || r.f == nil || r.outgrown() {
		err = r.rewriteFile(pending)
	} else {
		err = r.appendLines(pending, dirty, stale)
		appended = true
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if appended {
		// Appends pace the flushes (see run); a rewrite, whose cost the
		// appends that outgrew the file amortize, does not.
		r.took = time.Since(start)
	}
	r.flushed = time.Now()
	if err != nil {
		// Nothing of this flush is known to be in the file: the next one
		// rewrites it whole, with these events.
		r.pending = append(pending, r.pending...)
		for _, p := range pending {
			r.pendingSize += len(p)
		}
		r.rewrite = true
	} else {
		// The lines and records of the slabs sealed with them are
		// written: nothing refers to them.
		r.lines.reuse(slabs)
		r.keepSpares(pending, dirty)
	}
	r.err = err
	return err
}

// maxSpare bounds the pending lines and the dirty records of a service
// kept for reuse: a burst's are left to the collector.
const maxSpare = 8192

// keepSpares keeps a written flush's pending and dirty, emptied, for the
// flushes after; callers hold mu.
func (r *Recorder) keepSpares(pending [][]byte, dirty map[string]map[string]changed) {
	if cap(pending) <= maxSpare {
		clear(pending)
		r.sparePending = pending[:0]
	}
	for svc, m := range dirty {
		if len(m) > maxSpare {
			delete(dirty, svc)
			continue
		}
		clear(m)
	}
	r.spareDirty = dirty
}

// appendLines appends the events, the records and the states as lines,
// written in chunks of appendChunk (one write when the flush is smaller),
// the flush-end line last: a flush cut short by a kill or an error lacks
// it and is ignored whole (wholeFlushes). Callers hold flushMu.
func (r *Recorder) appendLines(pending [][]byte, dirty map[string]map[string]changed, stale map[string]bool) error {
	// One buffer, reused from flush to flush (unless one huge line grew
	// it past maxAppendBuf): a flush bigger than a chunk, when flushes
	// fall behind a burst of writes, is written a chunk at a time rather
	// than gathered whole in a buffer allocated (and cleared) anew.
	buf := &r.out
	if buf.Cap() > maxAppendBuf {
		*buf = bytes.Buffer{}
	}
	buf.Reset()
	// Sized up front for the events and the records they carry, up to a
	// chunk: grown as it fills, a flush's buffer was copied and cleared
	// several times.
	n := 0
	for _, l := range pending {
		n += len(l)
	}
	for svc, toks := range dirty {
		for _, c := range toks {
			n += len(svc) + len(c.value) + 32
			for _, k := range c.key {
				n += len(k) + 3
			}
		}
	}
	buf.Grow(min(n, appendChunk) + 512)
	var written int64
	var werr error
	write := func() {
		if werr != nil || buf.Len() == 0 {
			return
		}
		k, err := r.f.Write(buf.Bytes())
		written += int64(k)
		werr = err
		buf.Reset()
	}
	spans := spanList{packed: make([]uint64, 0, len(pending))}
	var evBytes int64
	for _, l := range pending {
		spans.add(r.size+written+int64(buf.Len()), int64(len(l)))
		evBytes += int64(len(l))
		buf.Write(l)
		if buf.Len() >= appendChunk {
			write()
		}
	}
	for svc, toks := range dirty {
		rs := r.recs[svc]
		for tok, c := range toks {
			if c.whole {
				recordLine(buf, svc, c.key, c.value)
				if buf.Len() >= appendChunk {
					write()
				}
				continue
			}
			if err := rs.Records(tok, func(key []string, v json.RawMessage) error {
				err := recordLine(buf, svc, key, v)
				if buf.Len() >= appendChunk {
					write()
				}
				return err
			}); err != nil {
				r.size += written
				return fmt.Errorf("capture: records of %s: %w", svc, err)
			}
		}
	}
	for _, svc := range r.sb.Services() {
		if !stale[svc.Name()] {
			continue
		}
		st, err := serviceState(svc)
		if err != nil {
			r.size += written
			return err
		}
		if err := stateLine(buf, svc.Name(), st); err != nil {
			r.size += written
			return err
		}
	}
	r.metaLines(buf)
	if buf.Len() == 0 && written == 0 {
		return nil
	}
	buf.WriteString(flushEnd)
	write()
	r.size += written
	if werr != nil {
		return fmt.Errorf("capture: %w", werr)
	}
	r.spans.extend(&spans)
	r.evBytes += evBytes
	return nil
}

// rewriteFile writes the file whole: the header with the services' states
// (record services' records as lines), the file's events past the oldest
// beyond the bounds, then pending, through a temporary file renamed over
// it; callers hold flushMu.
func (r *Recorder) rewriteFile(pending [][]byte) error {
	// The events kept are the file's (r.spans) then pending, past the
	// oldest beyond the bounds; they are not gathered in one list, which
	// at 150k events was 6 MB allocated for the rewrite's length.
	old, total := r.spans.len(), r.spans.len()+len(pending)
	evSize := func(i int) int64 {
		if i < old {
			_, n := r.spans.at(i)
			return n
		}
		return int64(len(pending[i-old]))
	}
	bytesIn := r.evBytes
	for _, l := range pending {
		bytesIn += int64(len(l))
	}
	cut := 0
	for cut < total && (total-cut > r.opts.MaxEvents || bytesIn > int64(r.opts.MaxBytes)) {
		bytesIn -= evSize(cut)
		cut++
	}
	r.mu.Lock()
	r.trimmed += uint64(cut)
	lost, trimmed := r.lost, r.trimmed
	r.mu.Unlock()

	dir := filepath.Dir(r.path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(r.path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("capture: %w", err)
	}
	name := tmp.Name()
	fail := func(err error) error {
		tmp.Close()
		os.Remove(name)
		return fmt.Errorf("capture: %w", err)
	}
	w := &countWriter{w: bufio.NewWriterSize(tmp, 1<<16)}
	head := &Fixture{Schema: Schema, Description: r.describe(lost, trimmed), CreatedAt: r.created, CapturedBy: r.opts.CapturedBy,
		Events: []event.Event{}, Services: map[string]*ServiceData{}}
	for _, svc := range r.sb.Services() {
		if _, ok := r.recs[svc.Name()]; ok {
			head.Services[svc.Name()] = &ServiceData{State: json.RawMessage(`{}`)} // its records follow
			continue
		}
		st, err := serviceState(svc)
		if err != nil {
			return fail(err)
		}
		head.Services[svc.Name()] = &ServiceData{State: st}
	}
	addRules(r.sb, head)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(sessionHead{Fixture: head, KeptPrevious: r.kept}); err != nil { // ends with a newline
		return fail(err)
	}
	spans := spanList{packed: make([]uint64, 0, total-cut)}
	var evBytes int64
	// The file's events are read in order through one buffer, skipping
	// the lines between them: a read per event was a system call per
	// event.
	var from *bufio.Reader
	var at int64
	var line []byte
	if cut < old {
		at, _ = r.spans.at(cut)
		from = bufio.NewReaderSize(io.NewSectionReader(r.f, at, r.size-at), 1<<16)
	}
	for i := cut; i < total; i++ {
		off, n := w.n, evSize(i)
		if i < old {
			spOff, spN := r.spans.at(i)
			if _, err := from.Discard(int(spOff - at)); err != nil {
				return fail(err)
			}
			line = slices.Grow(line[:0], int(spN))[:spN]
			if _, err := io.ReadFull(from, line); err != nil {
				return fail(err)
			}
			w.Write(line)
			at = spOff + spN
		} else {
			w.Write(pending[i-old])
		}
		spans.add(off, n)
		evBytes += n
	}
	var rec bytes.Buffer
	for svc, rs := range r.recs {
		if err := rs.EachRecord(func(key []string, v json.RawMessage) error {
			rec.Reset()
			if err := recordLine(&rec, svc, key, v); err != nil {
				return err
			}
			_, err := w.Write(rec.Bytes())
			return err
		}); err != nil {
			return fail(err)
		}
	}
	w.Write([]byte(flushEnd))
	if err := w.w.(*bufio.Writer).Flush(); err != nil {
		return fail(err)
	}
	if err := tmp.Close(); err != nil {
		os.Remove(name)
		return fmt.Errorf("capture: %w", err)
	}
	if err := os.Rename(name, r.path); err != nil {
		os.Remove(name)
		return fmt.Errorf("capture: %w", err)
	}
	f, err := os.OpenFile(r.path, os.O_RDWR|os.O_APPEND, 0)
	if err != nil {
		return fmt.Errorf("capture: %w", err)
	}
	if r.f != nil {
		r.f.Close()
	}
	r.f, r.size, r.base, r.spans, r.evBytes = f, w.n, w.n, spans, evBytes
	r.desc = head.Description
	r.rules = map[string]string{}
	for svc, sd := range head.Services {
		if sd.Rules != nil {
			r.rules[svc] = rulesKey(sd.Rules)
		}
	}
	return nil
}

// metaLines appends the rules that changed since the file last said them
// (a hot reload) and the description when it changed; callers hold
// flushMu.
func (r *Recorder) metaLines(buf *bytes.Buffer) {
	f := &Fixture{Services: map[string]*ServiceData{}}
	addRules(r.sb, f)
	for svc, sd := range f.Services {
		if k := rulesKey(sd.Rules); r.rules[svc] != k {
			b, err := json.Marshal(logLine{Service: svc, Rules: sd.Rules})
			if err != nil {
				continue
			}
			buf.Write(b)
			buf.WriteByte('\n')
			r.rules[svc] = k
		}
	}
	r.mu.Lock()
	d := r.describe(r.lost, r.trimmed)
	r.mu.Unlock()
	if d != r.desc {
		b, _ := json.Marshal(logLine{Description: &d})
		buf.Write(b)
		buf.WriteByte('\n')
		r.desc = d
	}
}

func rulesKey(r *Rules) string {
	return r.Format + "\x00" + r.Name + "\x00" + r.Source + "\x00" + string(r.JSON)
}

// recordLine writes a record's line: {"service","key","value"} (no value:
// the record is absent).
func recordLine(buf *bytes.Buffer, svc string, key []string, v json.RawMessage) error {
	buf.WriteString(`{"service":`)
	writeJSONString(buf, svc)
	buf.WriteString(`,"key":`)
	if key == nil {
		buf.WriteString("null")
	} else {
		buf.WriteByte('[')
		for i, k := range key {
			if i > 0 {
				buf.WriteByte(',')
			}
			writeJSONString(buf, k)
		}
		buf.WriteByte(']')
	}
	if len(v) > 0 && string(v) != "null" {
		buf.WriteString(`,"value":`)
		buf.Write(v)
	}
	buf.WriteString("}\n")
	return nil
}

// writeJSONString writes s as json.Marshal does; a string without
// anything to escape (a record key, nearly always) is written as it is,
// without json.Marshal's reflection and allocations, which were a good
// part of what appending a changed record cost.
func writeJSONString(buf *bytes.Buffer, s string) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' || c >= 0x80 {
			enc, _ := json.Marshal(s)
			buf.Write(enc)
			return
		}
	}
	buf.WriteByte('"')
	buf.WriteString(s)
	buf.WriteByte('"')
}

// stateLine writes a service's whole state as a line.
func stateLine(buf *bytes.Buffer, svc string, st json.RawMessage) error {
	s, _ := json.Marshal(svc)
	var c bytes.Buffer
	if err := json.Compact(&c, st); err != nil {
		return fmt.Errorf("capture: state of %s: %w", svc, err)
	}
	buf.WriteString(`{"service":`)
	buf.Write(s)
	buf.WriteString(`,"state":`)
	buf.Write(c.Bytes())
	buf.WriteString("}\n")
	return nil
}

// countWriter counts what it writes.
type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// FromSandbox is the fixture of sb's current state with the given events
// (in the fixture's JSON form):
// each service's snapshot state, and the rules of the services that have
// rules.
func FromSandbox(sb *sandbox.Sandbox, events []event.Event) (*Fixture, error) {
	// Events straight from the bus carry queries as protobuf messages;
	// a fixture keeps their protojson form (normalize does nothing to
	// events already normalized, such as a Recorder's).
	norm := make([]event.Event, len(events))
	for i, e := range events {
		norm[i] = normalize(e)
	}
	f := &Fixture{Schema: Schema, Events: norm, Services: map[string]*ServiceData{}}
	for _, svc := range sb.Services() {
		st, err := serviceState(svc)
		if err != nil {
			return nil, err
		}
		f.Services[svc.Name()] = &ServiceData{State: st}
	}
	addRules(sb, f)
	return f, nil
}

// serviceState is a service's state as a fixture keeps it.
func serviceState(svc service.Service) (json.RawMessage, error) {
	var st json.RawMessage
	var err error
	if c, ok := svc.(service.Capturer); ok {
		// A service whose snapshot is costly (Storage's object bytes)
		// says what a capture keeps: uploads must not make writing the
		// state cost their size.
		st, err = c.CaptureState()
	} else {
		st, err = svc.Snapshot()
	}
	if err != nil {
		return nil, fmt.Errorf("capture: snapshot %s: %w", svc.Name(), err)
	}
	return st, nil
}

// addRules adds the rules in force of the services that have rules
// (service.LiveRules) to f, in the format their rules file names.
func addRules(sb *sandbox.Sandbox, f *Fixture) {
	for _, s := range sb.Services() {
		rl, ok := s.(service.LiveRules)
		if !ok {
			continue
		}
		svc := s.Name()
		format := rulesFormat(s)
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
	var out event.Event
	if normalizeInto(&out, &e) {
		return out
	}
	return e
}

// normalizeInto is normalize into out, which it fills only when e has a
// query to normalize (it says so); e, which only the encoding reads, is
// not copied otherwise: a copy per event was most of what normalize cost
// (2% of pyric serve's CPU in a 1,000-listener fan-out).
func normalizeInto(out, e *event.Event) bool {
	var lq, rq []byte
	var lok, rok bool
	if l := e.Listener; l != nil && l.Target != nil {
		if m, ok := l.Target.Query.(proto.Message); ok {
			lq, lok = queryForm(m)
		}
	}
	if r := e.Request; r != nil && r.Seen != nil {
		if m, ok := r.Seen.Query.(proto.Message); ok {
			rq, rok = queryForm(m)
		}
	}
	if !lok && !rok {
		return false
	}
	*out = *e
	if lok {
		lc, tc := *e.Listener, *e.Listener.Target
		tc.Query = json.RawMessage(lq)
		lc.Target = &tc
		out.Listener = &lc
	}
	if rok {
		rc, sc := *e.Request, *e.Request.Seen
		sc.Query = json.RawMessage(rq)
		rc.Seen = &sc
		out.Request = &rc
	}
	return true
}

// queryForm is m's protojson form, ok false when it has none.
func queryForm(m proto.Message) ([]byte, bool) {
	b, err := queryJSON.of(m)
	return b, err == nil
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
