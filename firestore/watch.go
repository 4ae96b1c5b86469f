package firestore

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/firestore/fsvalue"
	"github.com/pyric/pyric/identity"
)

// A hub runs a database's listeners. Commits (and attaches) queue notices;
// one worker goroutine at a time processes them in commit order, computes
// each affected target's new result as of the commit time, and hands the
// differences to the target's watcher outside the database lock. Listeners
// therefore never see uncommitted state and never run inside a writer's
// call.
type hub struct {
	db      *database
	mu      sync.Mutex
	queue   []notice
	running bool
	targets map[*target]struct{}
	idle    *sync.Cond
}

type notice struct {
	t       time.Time
	changes []Change
	all     bool    // every target is affected (reset, restore)
	recheck bool    // rules changed: re-authorize every target
	attach  *target // initialize this target
	detach  *target
}

func newHub(db *database) *hub {
	h := &hub{db: db, targets: map[*target]struct{}{}}
	h.idle = sync.NewCond(&h.mu)
	return h
}

// notify queues a commit's changes; it never blocks on listeners.
func (h *hub) notify(t time.Time, changes []Change, all bool) {
	h.push(notice{t: t, changes: changes, all: all})
}

func (h *hub) recheck() { h.push(notice{recheck: true, all: true}) }

func (h *hub) push(n notice) {
	h.mu.Lock()
	if n.attach == nil && n.detach == nil && len(h.targets) == 0 {
		h.mu.Unlock()
		return
	}
	h.queue = append(h.queue, n)
	if !h.running {
		h.running = true
		go h.run()
	}
	h.mu.Unlock()
}

// Quiesce waits until every queued notice has been delivered.
func (h *hub) quiesce() {
	h.mu.Lock()
	for h.running {
		h.idle.Wait()
	}
	h.mu.Unlock()
}

// Quiesce waits until every listener of every database has been told about
// every commit so far; tests and deterministic replays use it.
func (e *Engine) Quiesce() {
	for _, db := range e.databases() {
		db.hub.quiesce()
	}
}

func (h *hub) run() {
	for {
		h.mu.Lock()
		if len(h.queue) == 0 {
			h.running = false
			h.idle.Broadcast()
			h.mu.Unlock()
			return
		}
		n := h.queue[0]
		h.queue = h.queue[1:]
		if n.attach != nil {
			h.targets[n.attach] = struct{}{}
		}
		if n.detach != nil {
			delete(h.targets, n.detach)
		}
		targets := make([]*target, 0, len(h.targets))
		for t := range h.targets {
			targets = append(targets, t)
		}
		h.mu.Unlock()
		h.process(n, targets)
	}
}

// DocChange is one change in a snapshot: Added and Modified carry the new
// document; Removed carries the last document seen. Indexes follow the
// SDKs' docChanges(): OldIndex is -1 for an addition, NewIndex -1 for a
// removal, and each is computed after the changes before it.
type DocChange struct {
	Kind     ChangeKind
	Doc      *pb.Document
	OldIndex int
	NewIndex int
	// Deleted is set on a removal whose document no longer exists (as
	// opposed to one that stopped matching the query).
	Deleted bool
}

// ChangeKind is added, modified or removed.
type ChangeKind int

// Kinds of change.
const (
	Added ChangeKind = iota
	Modified
	Removed
)

func (k ChangeKind) String() string { return [...]string{"added", "modified", "removed"}[k] }

// delivery is one target's new state.
type delivery struct {
	target  *target
	t       time.Time
	docs    []*pb.Document
	changes []DocChange
	initial bool
	reset   bool // the client must drop what it holds for the target first
	err     error
	missing []string // document names of a documents target that do not exist (initial)
}

// watcher receives deliveries for its targets, in order.
type watcher interface {
	deliver(d *delivery)
	consistent(t time.Time)
}

// target is one registered listen target.
type target struct {
	id         int32
	who        identity.Identity
	w          watcher
	paths      []string // documents target: relative paths
	q          *query   // query target
	resumeAt   time.Time
	listenerID string
	ready      bool
	dead       atomic.Bool
	docs       []*pb.Document // current result, ordered (documents target: in paths order, present ones)
}

func (t *target) affected(n notice) bool {
	if n.all || n.attach == t {
		return true
	}
	for _, c := range n.changes {
		if t.q != nil {
			if t.q.inScope(c.Path) {
				return true
			}
			continue
		}
		if slices.Contains(t.paths, c.Path) {
			return true
		}
	}
	return false
}

// process computes deliveries under the read lock, then hands them out.
func (h *hub) process(n notice, targets []*target) {
	db, e := h.db, h.db.e
	var out []*delivery
	var suppressed []*target
	db.st.RLock()
	at := n.t
	if at.IsZero() || n.attach != nil || n.recheck {
		at = db.st.ReadTime()
	}
	for _, t := range targets {
		if t.dead.Load() || !t.affected(n) {
			continue
		}
		if n.attach == t {
			out = append(out, h.initial(t, at))
			continue
		}
		if !t.ready {
			continue
		}
		if n.recheck || t.q == nil {
			if err := h.authorize(t, at); err != nil {
				t.dead.Store(true)
				out = append(out, &delivery{target: t, t: at, err: err})
				continue
			}
		}
		docs := h.result(t, at, n)
		changes := diff(t, t.docs, docs)
		t.docs = docs
		if len(changes) == 0 {
			suppressed = append(suppressed, t)
			continue
		}
		out = append(out, &delivery{target: t, t: at, docs: docs, changes: changes})
	}
	db.st.RUnlock()

	var trig *event.Trigger
	if len(n.changes) > 0 {
		trig = &event.Trigger{Method: "commit", Path: n.changes[0].Path}
	}
	watchers := map[watcher]bool{}
	for _, d := range out {
		d.target.deliver(e, d, trig)
		watchers[d.target.w] = true
	}
	for _, t := range suppressed {
		if e.eventsOn() {
			ev := t.listenerEvent(event.Suppress)
			ev.Listener.Trigger = trig
			e.emit(ev)
		}
	}
	for w := range watchers {
		w.consistent(at)
	}
	if n.detach != nil && e.eventsOn() {
		e.emit(n.detach.listenerEvent(event.Detach))
	}
}

func (t *target) deliver(e *Engine, d *delivery, trig *event.Trigger) {
	e.emitDelivery(t, d, trig)
	t.w.deliver(d)
}

// authorize re-checks the target's rules; callers hold db.st's lock.
func (h *hub) authorize(t *target, at time.Time) error {
	db, e := h.db, h.db.e
	ctx := context.Background()
	if t.q != nil {
		dec := e.authorize(ctx, &AuthzRequest{Database: db.name, Method: MethodList, Path: t.q.collPath(), Auth: t.who,
			Time: at, Query: t.q.info(), Get: db.lookupAt(at)})
		if dec.Verdict != Allow {
			return denied(MethodList, t.q.collPath(), dec)
		}
		return nil
	}
	for _, p := range t.paths {
		dec := e.authorize(ctx, &AuthzRequest{Database: db.name, Method: MethodGet, Path: p, Auth: t.who,
			Resource: db.st.GetAt(p, at), Time: at, Get: db.lookupAt(at)})
		if dec.Verdict != Allow {
			return denied(MethodGet, p, dec)
		}
	}
	return nil
}

// result computes the target's result as of at; callers hold db.st's lock.
func (h *hub) result(t *target, at time.Time, n notice) []*pb.Document {
	db := h.db
	if t.q == nil {
		var out []*pb.Document
		for _, p := range t.paths {
			if d := db.st.GetAt(p, at); d != nil {
				out = append(out, d)
			}
		}
		return out
	}
	if n.all || t.q.limit >= 0 || t.q.offset > 0 || n.t.IsZero() {
		return db.runQuery(t.q, at, false)
	}
	// Without limit and offset membership is per document: patch the
	// current result with the commit's changes.
	changed := map[string]*pb.Document{}
	for _, c := range n.changes {
		if t.q.inScope(c.Path) {
			changed[db.name.DocName(c.Path)] = c.Doc
		}
	}
	out := make([]*pb.Document, 0, len(t.docs)+len(changed))
	for _, d := range t.docs {
		if _, ok := changed[d.Name]; !ok {
			out = append(out, d)
		}
	}
	for name, d := range changed {
		_, rel, _ := ParseDocumentName(name)
		if t.q.matches(rel, d) {
			out = append(out, d)
		}
	}
	slices.SortFunc(out, t.q.cmpDocs)
	return out
}

// initial authorizes and computes a new target's first delivery; callers
// hold db.st's lock.
func (h *hub) initial(t *target, at time.Time) *delivery {
	if err := h.authorize(t, at); err != nil {
		t.dead.Store(true)
		return &delivery{target: t, t: at, err: err, initial: true}
	}
	docs := h.result(t, at, notice{t: at, all: true})
	d := &delivery{target: t, t: at, docs: docs, initial: true}
	var old []*pb.Document
	if !t.resumeAt.IsZero() {
		if t.resumeAt.Before(h.db.st.Since()) {
			d.reset = true
		} else {
			old = h.result(t, t.resumeAt, notice{t: t.resumeAt, all: true})
		}
	}
	d.changes = diff(t, old, docs)
	if t.q == nil {
		for _, p := range t.paths {
			if h.db.st.GetAt(p, at) == nil {
				d.missing = append(d.missing, h.db.name.DocName(p))
			}
		}
	}
	t.docs = docs
	t.ready = true
	return d
}

// diff computes the changes from old to new (both ordered) with SDK-style
// indexes.
func diff(t *target, old, new []*pb.Document) []DocChange {
	cmp := func(a, b *pb.Document) int { return fsvalue.CompareNames(a.Name, b.Name) }
	if t.q != nil {
		cmp = t.q.cmpDocs
	}
	newBy := map[string]*pb.Document{}
	for _, d := range new {
		newBy[d.Name] = d
	}
	oldBy := map[string]*pb.Document{}
	for _, d := range old {
		oldBy[d.Name] = d
	}
	var changes []DocChange
	cur := slices.Clone(old)
	for _, d := range old {
		if _, ok := newBy[d.Name]; ok {
			continue
		}
		i := slices.IndexFunc(cur, func(x *pb.Document) bool { return x.Name == d.Name })
		cur = slices.Delete(cur, i, i+1)
		changes = append(changes, DocChange{Kind: Removed, Doc: d, OldIndex: i, NewIndex: -1})
	}
	for _, d := range new {
		o, had := oldBy[d.Name]
		if had && sameVersion(o, d) {
			continue
		}
		oldIndex := -1
		if had {
			oldIndex = slices.IndexFunc(cur, func(x *pb.Document) bool { return x.Name == d.Name })
			cur = slices.Delete(cur, oldIndex, oldIndex+1)
		}
		i, _ := slices.BinarySearchFunc(cur, d, cmp)
		cur = slices.Insert(cur, i, d)
		kind := Added
		if had {
			kind = Modified
		}
		changes = append(changes, DocChange{Kind: kind, Doc: d, OldIndex: oldIndex, NewIndex: i})
	}
	return changes
}

// newTarget validates a pb.Target.
func (e *Engine) newTarget(who identity.Identity, pt *pb.Target, w watcher) (*target, DatabaseName, error) {
	t := &target{id: pt.GetTargetId(), who: who, w: w, listenerID: fmt.Sprintf("listener-%d", e.seq.Add(1))}
	var name DatabaseName
	switch x := pt.GetTargetType().(type) {
	case *pb.Target_Documents:
		docs := x.Documents.GetDocuments()
		if len(docs) == 0 {
			return nil, name, fsvalue.Errorf(ErrInvalidArgument, "A documents target must name at least one document.")
		}
		for i, dn := range docs {
			db, rel, err := ParseDocumentName(dn)
			if err != nil {
				return nil, name, err
			}
			if i > 0 && db != name {
				return nil, name, fsvalue.Errorf(ErrInvalidArgument, "Document %q is not in database %s.", dn, name)
			}
			name = db
			t.paths = append(t.paths, rel)
		}
	case *pb.Target_Query:
		db, parent, err := ParseParentName(x.Query.GetParent())
		if err != nil {
			return nil, name, err
		}
		q, err := compileQuery(db, parent, x.Query.GetStructuredQuery())
		if err != nil {
			return nil, name, err
		}
		if err := e.checkIndex(q); err != nil {
			return nil, name, err
		}
		name, t.q = db, q
	default:
		return nil, name, fsvalue.Errorf(ErrInvalidArgument, "A target must be a documents target or a query target.")
	}
	switch x := pt.GetResumeType().(type) {
	case *pb.Target_ResumeToken:
		rt, err := decodeToken(x.ResumeToken)
		if err != nil {
			return nil, name, err
		}
		t.resumeAt = rt
	case *pb.Target_ReadTime:
		t.resumeAt = x.ReadTime.AsTime()
	}
	return t, name, nil
}

func (e *Engine) attach(name DatabaseName, t *target) {
	if e.eventsOn() {
		e.emit(t.listenerEvent(event.Attach))
	}
	e.db(name).hub.push(notice{attach: t})
}

func (e *Engine) detach(name DatabaseName, t *target) {
	e.db(name).hub.push(notice{detach: t})
}

// Resume tokens are "pr" + big-endian microseconds since the epoch.
func encodeToken(t time.Time) []byte {
	b := make([]byte, 10)
	copy(b, "pr")
	binary.BigEndian.PutUint64(b[2:], uint64(t.UnixMicro()))
	return b
}

func decodeToken(b []byte) (time.Time, error) {
	if len(b) != 10 || string(b[:2]) != "pr" {
		return time.Time{}, fsvalue.Errorf(ErrInvalidArgument, "Invalid resume token.")
	}
	return time.UnixMicro(int64(binary.BigEndian.Uint64(b[2:]))).UTC(), nil
}

// Snapshot is what an in-process listener receives: the full ordered
// result and the changes since the previous snapshot.
type Snapshot struct {
	ReadTime time.Time
	Docs     []*pb.Document
	Changes  []DocChange
}

// Watch is an in-process listener.
type Watch struct {
	e    *Engine
	db   DatabaseName
	t    *target
	mu   sync.Mutex
	fn   func(*Snapshot, error)
	done bool
}

// Watch registers an in-process listener on a documents or query target.
// fn receives the initial snapshot and one snapshot per commit that changes
// the result, in commit order, always on a goroutine other than the
// caller's (never during Watch). A rules denial is delivered as an error,
// after which fn is not called again. Stop unregisters.
func (e *Engine) Watch(who identity.Identity, pt *pb.Target, fn func(*Snapshot, error)) (*Watch, error) {
	w := &Watch{e: e, fn: fn}
	t, name, err := e.newTarget(who, pt, w)
	if err != nil {
		return nil, err
	}
	w.t, w.db = t, name
	e.attach(name, t)
	return w, nil
}

func (w *Watch) deliver(d *delivery) {
	w.mu.Lock()
	if w.done {
		w.mu.Unlock()
		return
	}
	if d.err != nil {
		w.done = true
	}
	w.mu.Unlock()
	if d.err != nil {
		w.fn(nil, d.err)
		return
	}
	w.fn(&Snapshot{ReadTime: d.t, Docs: d.docs, Changes: d.changes}, nil)
}

func (w *Watch) consistent(time.Time) {}

// Stop unregisters the listener; no callback starts after Stop returns
// (Stop may be called from inside the callback).
func (w *Watch) Stop() {
	w.mu.Lock()
	if w.done {
		w.mu.Unlock()
		return
	}
	w.done = true
	w.mu.Unlock()
	w.e.detach(w.db, w.t)
}

// ListenStream is the engine side of one Listen RPC: any number of
// targets with client-chosen ids, and one ordered queue of ListenResponses
// following the protocol the SDKs expect (ADD, documents, CURRENT, then a
// global NO_CHANGE with the read time and resume token at every consistent
// point; REMOVE with a status on errors).
type ListenStream struct {
	e     *Engine
	who   identity.Identity
	name  DatabaseName
	mu    sync.Mutex
	queue []*pb.ListenResponse
	wake  chan struct{}
	tgts  map[int32]*target
	done  bool
}

// Listen opens a listen stream on a database.
func (e *Engine) Listen(who identity.Identity, database string) (*ListenStream, error) {
	name, err := ParseDatabaseName(database)
	if err != nil {
		return nil, err
	}
	return &ListenStream{e: e, who: who, name: name, wake: make(chan struct{}, 1), tgts: map[int32]*target{}}, nil
}

// Handle processes one client request: add_target or remove_target.
func (s *ListenStream) Handle(req *pb.ListenRequest) error {
	switch x := req.GetTargetChange().(type) {
	case *pb.ListenRequest_AddTarget:
		t, name, err := s.e.newTarget(s.who, x.AddTarget, s)
		if err != nil {
			s.push(&pb.ListenResponse{ResponseType: &pb.ListenResponse_TargetChange{TargetChange: &pb.TargetChange{
				TargetChangeType: pb.TargetChange_REMOVE, TargetIds: []int32{x.AddTarget.GetTargetId()}, Cause: Status(err).Proto()}}})
			return nil
		}
		if name != s.name {
			return fsvalue.Errorf(ErrInvalidArgument, "Target is in database %s, but the stream is for %s.", name, s.name)
		}
		s.mu.Lock()
		if _, dup := s.tgts[t.id]; dup {
			s.mu.Unlock()
			return fsvalue.Errorf(ErrInvalidArgument, "Target id %d is already in use on this stream.", t.id)
		}
		s.tgts[t.id] = t
		s.mu.Unlock()
		s.e.attach(name, t)
	case *pb.ListenRequest_RemoveTarget:
		s.mu.Lock()
		t, ok := s.tgts[x.RemoveTarget]
		delete(s.tgts, x.RemoveTarget)
		s.mu.Unlock()
		if ok {
			t.dead.Store(true)
			s.e.detach(s.name, t)
			s.push(targetChange(pb.TargetChange_REMOVE, nil, time.Time{}, x.RemoveTarget))
		}
	default:
		return fsvalue.Errorf(ErrInvalidArgument, "A listen request must add or remove a target.")
	}
	return nil
}

func targetChange(kind pb.TargetChange_TargetChangeType, cause error, t time.Time, ids ...int32) *pb.ListenResponse {
	tc := &pb.TargetChange{TargetChangeType: kind, TargetIds: ids}
	if cause != nil {
		tc.Cause = Status(cause).Proto()
	}
	if !t.IsZero() {
		tc.ReadTime = timestamppb.New(t)
		tc.ResumeToken = encodeToken(t)
	}
	return &pb.ListenResponse{ResponseType: &pb.ListenResponse_TargetChange{TargetChange: tc}}
}

func (s *ListenStream) deliver(d *delivery) {
	s.mu.Lock()
	_, live := s.tgts[d.target.id]
	if live && d.err != nil {
		delete(s.tgts, d.target.id)
	}
	s.mu.Unlock()
	if !live {
		return
	}
	id := d.target.id
	if d.err != nil {
		if d.initial {
			s.push(targetChange(pb.TargetChange_ADD, nil, time.Time{}, id))
		}
		s.push(targetChange(pb.TargetChange_REMOVE, d.err, time.Time{}, id))
		return
	}
	if d.initial {
		s.push(targetChange(pb.TargetChange_ADD, nil, time.Time{}, id))
		if d.reset {
			s.push(targetChange(pb.TargetChange_RESET, nil, time.Time{}, id))
		}
	}
	for _, c := range d.changes {
		switch {
		case c.Kind != Removed:
			s.push(&pb.ListenResponse{ResponseType: &pb.ListenResponse_DocumentChange{DocumentChange: &pb.DocumentChange{
				Document: c.Doc, TargetIds: []int32{id}}}})
		case c.Deleted || d.target.q == nil || !d.target.q.inScopeName(c.Doc.Name) || s.e.isDeleted(s.name, c.Doc.Name, d.t):
			s.push(&pb.ListenResponse{ResponseType: &pb.ListenResponse_DocumentDelete{DocumentDelete: &pb.DocumentDelete{
				Document: c.Doc.Name, RemovedTargetIds: []int32{id}, ReadTime: timestamppb.New(d.t)}}})
		default:
			s.push(&pb.ListenResponse{ResponseType: &pb.ListenResponse_DocumentRemove{DocumentRemove: &pb.DocumentRemove{
				Document: c.Doc.Name, RemovedTargetIds: []int32{id}, ReadTime: timestamppb.New(d.t)}}})
		}
	}
	if d.initial {
		for _, name := range d.missing {
			s.push(&pb.ListenResponse{ResponseType: &pb.ListenResponse_DocumentDelete{DocumentDelete: &pb.DocumentDelete{
				Document: name, RemovedTargetIds: []int32{id}, ReadTime: timestamppb.New(d.t)}}})
		}
		s.push(targetChange(pb.TargetChange_CURRENT, nil, d.t, id))
	}
}

func (q *query) inScopeName(name string) bool {
	_, rel, err := ParseDocumentName(name)
	return err == nil && q.inScope(rel)
}

func (e *Engine) isDeleted(name DatabaseName, doc string, at time.Time) bool {
	_, rel, err := ParseDocumentName(doc)
	if err != nil {
		return true
	}
	db := e.db(name)
	db.st.RLock()
	defer db.st.RUnlock()
	return db.st.GetAt(rel, at) == nil
}

func (s *ListenStream) consistent(t time.Time) {
	s.push(targetChange(pb.TargetChange_NO_CHANGE, nil, t))
}

func (s *ListenStream) push(r *pb.ListenResponse) {
	s.mu.Lock()
	if !s.done {
		s.queue = append(s.queue, r)
	}
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Recv returns the next response, blocking until there is one, the stream
// is closed (io.EOF-like ErrUnavailable) or ctx ends.
func (s *ListenStream) Recv(ctx context.Context) (*pb.ListenResponse, error) {
	for {
		s.mu.Lock()
		if len(s.queue) > 0 {
			r := s.queue[0]
			s.queue = s.queue[1:]
			s.mu.Unlock()
			return r, nil
		}
		done := s.done
		s.mu.Unlock()
		if done {
			return nil, fsvalue.Errorf(ErrUnavailable, "The listen stream is closed.")
		}
		select {
		case <-s.wake:
		case <-ctx.Done():
			return nil, checkCtx(ctx)
		}
	}
}

// Close removes every target and ends the stream.
func (s *ListenStream) Close() {
	s.mu.Lock()
	if s.done {
		s.mu.Unlock()
		return
	}
	s.done = true
	tgts := s.tgts
	s.tgts = map[int32]*target{}
	s.mu.Unlock()
	for _, t := range tgts {
		t.dead.Store(true)
		s.e.detach(s.name, t)
	}
	select {
	case s.wake <- struct{}{}:
	default:
	}
}
