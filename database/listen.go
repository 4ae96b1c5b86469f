package database

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/identity"
	"github.com/pyric/pyric/rules/rtdb"
)

// Push is a server-to-client message of a connection: data at a path (a
// set, or a merge of children), a revoked listen, or something a wire
// adapter queued itself with Conn.Send to keep its replies in order.
type Push struct {
	// Path is where Data applies, without a leading slash ("" = root).
	Path string
	// Data is the value (export format) or, for Merge, the children that
	// changed (null = removed).
	Data  any
	Merge bool
	// Tag is the client's tag of a query listen (0: none).
	Tag int64
	// Revoked marks a listen the rules no longer allow; Query is its
	// query object.
	Revoked bool
	Query   map[string]any
	// AuthRevoked, when set, is production's status for a credential that
	// stopped being valid while the connection used it ("expired_token"),
	// with Reason its explanation: the websocket's {"a":"ac"} push, a
	// stream's auth_revoked event. The connection is signed out and its
	// listens are gone when it is queued.
	AuthRevoked string
	Reason      string
	// Shared, when set, is the one encoding of every copy of this push
	// (the same Path, Data, Merge and Tag, queued to many listeners): a
	// write that reaches a thousand listens of one location is encoded
	// once, not a thousand times. See Encoded.
	Shared *SharedEncoding
}

// SharedEncoding holds the encoding of a push queued to many listeners.
type SharedEncoding struct {
	once sync.Once
	b    []byte
}

// Encoded returns encode(p), computed once for every copy of p that
// shares its encoding. A transport passes its one encoder of pushes (the
// same for every call on p's copies): the bytes are shared, read-only.
func (p Push) Encoded(encode func(Push) []byte) []byte {
	if p.Shared == nil {
		return encode(p)
	}
	p.Shared.once.Do(func() { p.Shared.b = encode(p) })
	return p.Shared.b
}

// maxQueue bounds what a connection may have waiting: a client that
// stops reading is disconnected rather than growing the server's memory.
const maxQueue = 100000

// Conn is one client connection (a websocket, or an SSE stream): its
// identity, its listens, its onDisconnect operations and its ordered
// outbound queue. The wire adapter drains the queue with Next.
type Conn struct {
	d  *Database
	ns *namespace
	id string

	mu  sync.Mutex
	who identity.Identity
	// odWho runs the onDisconnect operations: the identity last set, kept
	// when a token expires (the operations were judged under it).
	odWho   identity.Identity
	expiry  *time.Timer
	authGen int
	listens map[string]*listener
	ondisc  []odOp
	queue   []any
	// spare is a taken queue's array given back (Recycle), empty, for
	// the next queue: a connection that gets a push at a time then
	// queues it without allocating.
	spare  []any
	closed bool
	over   bool
	wake   chan struct{}
	done   chan struct{}
}

type odOp struct {
	keys    []string
	raw     any
	updates map[string]any // non-nil: a merge
}

type listener struct {
	id   string
	conn *Conn
	keys []string
	path string
	// pushPath is the path of the listen's pushes (path without its
	// leading slash), and target what its events name: both fixed for
	// the listen's life, made once instead of per delivery.
	pushPath string
	target   *event.Target
	// delivered is the payload of every delivery event of the listen,
	// the same each time (events are read-only to their consumers).
	delivered *event.Listener
	q         Query
	tag       int64
	windowed  bool
	// whole marks an unindexed query's listen: its window is every child
	// of the location (the SDK filters), kept and diffed like a window so
	// that each change reaches the SDK as whole children.
	whole bool
	win   map[string]any
	// deps are the data locations the read rules observed when they last
	// allowed this listen (rtdb.Decision.DataReads), indexed in ns.lidx and
	// guarded by ns.lmu: a write that touches none of them can't revoke it.
	deps [][]string
}

// Connect opens a connection to a namespace as who.
func (d *Database) Connect(nsName string, who identity.Identity) *Conn {
	n := atomic.AddInt64(&d.connSeq, 1)
	c := &Conn{
		d: d, ns: d.ns(nsName), id: fmt.Sprintf("c%d", n), who: who, odWho: who,
		listens: map[string]*listener{}, wake: make(chan struct{}, 1), done: make(chan struct{}),
	}
	c.mu.Lock()
	c.armExpiryLocked()
	c.mu.Unlock()
	return c
}

// tokenExpiry is the exp claim of a user's token, if it has one.
func tokenExpiry(who identity.Identity) (time.Time, bool) {
	if !who.IsAuthenticated() || who.IsAdmin() {
		return time.Time{}, false
	}
	var sec float64
	switch e := who.Token["exp"].(type) {
	case int64:
		sec = float64(e)
	case float64:
		sec = e
	case int:
		sec = float64(e)
	default:
		return time.Time{}, false
	}
	return time.UnixMilli(int64(sec * 1000)), true
}

// armExpiryLocked schedules the revocation of the connection's credential
// at its token's exp. A token already expired when presented is accepted,
// as the emulators accept the SDKs' mock tokens (exp in 1970); one that
// expires while in use is revoked, as production does. Caller holds c.mu.
func (c *Conn) armExpiryLocked() {
	c.authGen++
	if c.expiry != nil {
		c.expiry.Stop()
		c.expiry = nil
	}
	exp, ok := tokenExpiry(c.who)
	if !ok {
		return
	}
	wait := exp.Sub(c.d.env.Now())
	if wait <= 0 {
		return
	}
	gen := c.authGen
	c.expiry = time.AfterFunc(wait, func() { c.expire(gen) })
}

// expire revokes the connection's credential: it becomes signed out, its
// listens end without a cancel each (the client re-authenticates and
// listens again), and production's auth-revoked push is queued.
func (c *Conn) expire(gen int) {
	c.ns.mu.RLock()
	defer c.ns.mu.RUnlock()
	c.mu.Lock()
	if c.closed || gen != c.authGen {
		c.mu.Unlock()
		return
	}
	c.who = identity.Anonymous()
	c.expiry = nil
	ls := c.listens
	c.listens = map[string]*listener{}
	c.mu.Unlock()
	c.ns.lmu.Lock()
	for _, l := range ls {
		c.ns.removeListenerLocked(l)
	}
	c.ns.lmu.Unlock()
	for _, l := range ls {
		c.d.emitListener(l, event.Detach, "")
	}
	c.enqueue(Push{AuthRevoked: "expired_token", Reason: "Auth token is expired."})
}

// ID is the connection's session id.
func (c *Conn) ID() string { return c.id }

// Namespace is the connection's namespace.
func (c *Conn) Namespace() string { return c.ns.name }

// Who returns the connection's identity.
func (c *Conn) Who() identity.Identity {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.who
}

// SetAuth changes the connection's identity (auth, unauth) and revokes
// the listens the new identity may not read.
func (c *Conn) SetAuth(who identity.Identity) {
	c.mu.Lock()
	c.who, c.odWho = who, who
	c.armExpiryLocked()
	c.mu.Unlock()
	c.ns.mu.RLock()
	c.d.revokeDenied(c.ns, c)
	c.ns.mu.RUnlock()
}

// enqueue appends to the outbound queue; it never blocks.
func (c *Conn) enqueue(x any) { c.queueItem(x, true) }

// queueItem appends x to the outbound queue, waking a waiting Next or
// Wait when wake is set; it never blocks.
func (c *Conn) queueItem(x any, wake bool) {
	c.mu.Lock()
	if c.closed || c.over {
		c.mu.Unlock()
		return
	}
	if len(c.queue) >= maxQueue {
		c.over = true
		c.queue = nil
		wake = true // the waiter must see the overflow
	} else {
		if c.queue == nil {
			c.queue, c.spare = c.spare, nil
		}
		c.queue = append(c.queue, x)
	}
	c.mu.Unlock()
	if !wake {
		return
	}
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// Send queues a message of the wire adapter's own (a reply) after
// everything queued so far.
func (c *Conn) Send(x any) { c.enqueue(x) }

// Hold is Send for an adapter that takes the queue itself right after
// (Take), on the goroutine that answered the request: it queues x after
// everything queued so far without waking a goroutine waiting in Next or
// Wait, whose wake-up would cost more than a small reply's writing.
func (c *Conn) Hold(x any) { c.queueItem(x, false) }

// Next waits for queued messages and returns them in order. It returns
// ErrClosed once the connection is closed or overflowed and drained.
func (c *Conn) Next(ctx context.Context) ([]any, error) {
	for {
		if q, err := c.Take(); q != nil || err != nil {
			return q, err
		}
		if err := c.Wait(ctx); err != nil {
			return nil, err
		}
	}
}

// Take returns the queued messages in order without waiting: none (nil,
// nil) when the queue is empty, ErrClosed once the connection is closed
// or overflowed and drained. An adapter writing from two goroutines
// takes and writes under one lock of its own, so that the messages leave
// in order.
func (c *Conn) Take() ([]any, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.over {
		return nil, fmt.Errorf("%w: the client is not reading its pushes", ErrClosed)
	}
	if len(c.queue) > 0 {
		q := c.queue
		c.queue = nil
		return q, nil
	}
	if c.closed {
		return nil, ErrClosed
	}
	return nil, nil
}

// Wake ends a Wait without a message (Take then has nothing to return):
// an adapter whose waiting goroutine waits without a context wakes it so
// at its own end.
func (c *Conn) Wake() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// maxSpare bounds the array Recycle keeps: a burst's large queue is
// left to the collector rather than held for the connection's life.
const maxSpare = 64

// Recycle gives back a queue Take returned, once the caller is done with
// it (it must not read it after): its array, cleared so that it holds no
// message, may be the next queue's.
func (c *Conn) Recycle(q []any) {
	if cap(q) == 0 || cap(q) > maxSpare {
		return
	}
	clear(q)
	c.mu.Lock()
	if c.spare == nil {
		c.spare = q[:0]
	}
	c.mu.Unlock()
}

// Wait waits until a message may be queued (Take then returns it, unless
// another goroutine took it first), the connection is closed or
// overflowed, or ctx ends (its error). Wake ends it too.
func (c *Conn) Wait(ctx context.Context) error {
	c.mu.Lock()
	ready := c.over || c.closed || len(c.queue) > 0
	c.mu.Unlock()
	if ready {
		// A wake-up sent for what is queued now is spent: the caller
		// takes it next. Left in the channel it would wake the next
		// Wait for nothing.
		select {
		case <-c.wake:
		default:
		}
		return nil
	}
	if ctx.Done() == nil {
		// Only the connection can end this wait: one channel, which a
		// push, an overflow, Close and Wake all signal. (A websocket's
		// writer waits so; a fan-out wakes a thousand of them, and a
		// select over three channels costs each wake-up more.)
		<-c.wake
		select {
		case <-c.done:
			c.Wake() // for another waiter, which must see the close too
		default:
		}
		return nil
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-c.wake:
	case <-c.done:
	}
	return nil
}

func listenKey(keys []string, q Query) string {
	return joinPath(keys) + "\x00" + q.Canonical()
}

// Listen starts a listen at path with a query and the client's tag. The
// initial data is queued before Listen returns, so a reply sent after it
// follows the data, as production orders them. hash is the SDK's hash of
// what the client already holds for this listen (its "h", "" for
// nothing): when it equals the Hash of the current data (the window, for
// a query), the data is not sent again and the listen's ok completes the
// client's cache, as production does on a reconnect. warnings are
// production's listen warnings ("no_index").
func (c *Conn) Listen(path string, q Query, tag int64, hash string) (warnings []string, err error) {
	keys, err := ParsePath(path)
	if err != nil {
		return nil, err
	}
	ns := c.ns
	ns.mu.RLock()
	defer ns.mu.RUnlock()
	who := c.Who()
	dec, err := c.d.judgeRead(ns, who, keys, pathOf(path, keys), &q, "listen")
	if err != nil {
		return nil, err
	}
	// An unindexed query is served as production serves it: the listen
	// succeeds with the "no_index" warning (the SDK logs "Using an
	// unspecified index…") and the whole location is sent, tagged for the
	// query, for the SDK to filter ("your data will be downloaded and
	// filtered on the client"). Changes then go as whole children: the
	// SDK drops a deeper change to a child its filtered view lacks.
	indexed := ns.indexed(keys, q)
	if !indexed {
		warnings = append(warnings, "no_index")
	}
	l := &listener{conn: c, keys: keys, path: joinPath(keys), q: q, tag: tag, windowed: !q.IsDefault(), whole: !indexed, deps: readDeps(dec)}
	l.id = c.id + ":" + listenKey(keys, q)
	l.pushPath = strings.Join(keys, "/")
	l.target = &event.Target{Kind: "path", Path: l.path, Query: q.Canonical()}
	l.delivered = &event.Listener{Phase: event.Deliver, ListenerID: l.id, Target: l.target}
	v := getAt(ns.root, keys)
	if l.windowed {
		w, _ := clone(l.window(ns, v)).(map[string]any)
		l.win = w
		v = exportOrNil(w)
	} else {
		v = clone(v)
	}
	// "" is also the hash of no data, but a client that sends it may hold
	// nothing at all: it gets the (null) data, as the captured transcript
	// shows.
	if hash == "" || Hash(v) != hash {
		c.enqueue(Push{Path: l.pushPath, Data: v, Tag: tag})
	}
	c.mu.Lock()
	if old := c.listens[listenKey(keys, q)]; old != nil {
		ns.lmu.Lock()
		ns.removeListenerLocked(old)
		ns.lmu.Unlock()
	}
	c.listens[listenKey(keys, q)] = l
	c.mu.Unlock()
	ns.lmu.Lock()
	ns.addListenerLocked(l)
	ns.lmu.Unlock()
	c.d.emitListener(l, event.Attach, "")
	return warnings, nil
}

func exportOrNil(m map[string]any) any {
	if len(m) == 0 {
		return nil
	}
	return m
}

// Unlisten stops a listen.
func (c *Conn) Unlisten(path string, q Query) error {
	keys, err := ParsePath(path)
	if err != nil {
		return err
	}
	c.mu.Lock()
	l := c.listens[listenKey(keys, q)]
	delete(c.listens, listenKey(keys, q))
	c.mu.Unlock()
	if l != nil {
		c.ns.lmu.Lock()
		c.ns.removeListenerLocked(l)
		c.ns.lmu.Unlock()
		c.d.emitListener(l, event.Detach, "")
	}
	return nil
}

// Put sets a value as the connection's identity; hash, when non-nil,
// makes it a compare-and-set (transactions).
func (c *Conn) Put(path string, value any, hash *string) error {
	return c.PutBy("", path, value, hash)
}

// PutBy is Put made by the function invocation inv (identity.Actor's
// Invocation), so the write's events name it; "" is Put.
func (c *Conn) PutBy(inv, path string, value any, hash *string) error {
	method := "set"
	if hash != nil {
		method = "transaction"
	} else if value == nil {
		method = "remove"
	}
	_, err := c.d.Set(c.Who().ByInvocation(inv), c.ns.name, path, value, WriteOptions{IfHash: hash, Method: method})
	return err
}

// Merge applies a multi-path update as the connection's identity.
func (c *Conn) Merge(path string, updates map[string]any) error {
	return c.MergeBy("", path, updates)
}

// MergeBy is Merge made by the function invocation inv; "" is Merge.
func (c *Conn) MergeBy(inv, path string, updates map[string]any) error {
	return c.d.Update(c.Who().ByInvocation(inv), c.ns.name, path, updates, "update")
}

// Get reads a location or query window as the connection's identity.
//
// A query that filters (a limit or a range) on a child or value the
// rules do not index fails with production's "Index not defined" error:
// the server cannot answer it without the index, and a get has no client
// to filter for it. A query that only orders is answered with the whole
// location.
func (c *Conn) Get(path string, q *Query) (any, error) {
	r, err := c.d.GetWith(c.Who(), c.ns.name, path, q, ReadOptions{FilteringIndex: true})
	return r.Value, err
}

// GetJSON is Get with the value (export format) as JSON text appended
// to b (MarshalValue's), written under the namespace's read lock instead
// of copied out of it: a get answered in JSON (the websocket's) copies
// nothing of what it reads.
func (c *Conn) GetJSON(b []byte, path string, q *Query) ([]byte, error) {
	r, err := c.d.GetWith(c.Who(), c.ns.name, path, q, ReadOptions{FilteringIndex: true, JSON: true, JSONTo: b})
	return r.Encoded, err
}

// OnDisconnectSet queues a set to run when the connection ends. The rules
// judge it now and again when it runs.
func (c *Conn) OnDisconnectSet(path string, value any) error {
	return c.onDisconnect(path, value, nil)
}

// OnDisconnectMerge queues a multi-path update to run when the connection
// ends.
func (c *Conn) OnDisconnectMerge(path string, updates map[string]any) error {
	if updates == nil {
		updates = map[string]any{}
	}
	return c.onDisconnect(path, nil, updates)
}

func (c *Conn) onDisconnect(path string, value any, updates map[string]any) error {
	keys, err := ParsePath(path)
	if err != nil {
		return err
	}
	ws := []write{{keys: keys, raw: value}}
	if updates != nil {
		if ws, err = updateWrites(keys, updates); err != nil {
			return err
		}
	}
	if err := c.d.checkWrite(c.ns, c.Who(), keys, ws, updates != nil); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if updates == nil {
		c.cancelLocked(keys)
	}
	c.ondisc = append(c.ondisc, odOp{keys: keys, raw: value, updates: updates})
	return nil
}

// OnDisconnectCancel drops the queued operations at path and below.
func (c *Conn) OnDisconnectCancel(path string) error {
	keys, err := ParsePath(path)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cancelLocked(keys)
	return nil
}

func (c *Conn) cancelLocked(keys []string) {
	kept := c.ondisc[:0]
	for _, op := range c.ondisc {
		if !rtdb.IsPathPrefix(keys, op.keys) {
			kept = append(kept, op)
		}
	}
	c.ondisc = kept
}

// Close ends the connection: its listens stop and its onDisconnect
// operations run, in the order they were queued, judged by the rules as
// the connection's identity. Closing twice does nothing.
func (c *Conn) Close() {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	ops := c.ondisc
	c.ondisc = nil
	ls := c.listens
	c.listens = map[string]*listener{}
	who := c.odWho
	if c.expiry != nil {
		c.expiry.Stop()
	}
	close(c.done)
	c.mu.Unlock()
	c.Wake() // a Wait without a context waits on wake alone
	c.ns.lmu.Lock()
	for _, l := range ls {
		c.ns.removeListenerLocked(l)
	}
	c.ns.lmu.Unlock()
	for _, op := range ops {
		if op.updates != nil {
			_ = c.d.Update(who, c.ns.name, joinPath(op.keys), op.updates, "ondisconnect")
		} else {
			_, _ = c.d.Set(who, c.ns.name, joinPath(op.keys), op.raw, WriteOptions{Method: "ondisconnect"})
		}
	}
}

// checkWrite judges a write without doing it.
func (d *Database) checkWrite(ns *namespace, who identity.Identity, base []string, ws []write, merge bool) error {
	ns.mu.RLock()
	defer ns.mu.RUnlock()
	now := d.env.Now().UnixMilli()
	req := rtdb.Request{Operation: rtdb.Write, Path: joinPath(base), Data: ns.root}
	if merge {
		req.Updates = map[string]any{}
	}
	for _, w := range ws {
		nw, v, err := normalizeWrite(ns.root, w, now)
		if err != nil {
			return err
		}
		if merge {
			req.Updates[strings.Join(nw.keys[len(base):], "/")] = v
		} else {
			req.Path, req.NewData = joinPath(nw.keys), v
		}
	}
	ok, dec, reason := d.decide(ns, who, req)
	exp := d.emitWrite(ns.name, "ondisconnect_register", joinPath(base), who, resultOf(ok), dec, reason, seenOf(base, ws, merge))
	if !ok {
		return &Denied{Path: joinPath(base), Op: "write", Reason: reason, Why: why(exp)}
	}
	return nil
}

// revokeDenied cancels the listens (of one connection, or all) whose
// reads the rules no longer allow: after an auth change or new rules.
// Caller holds ns.mu.
func (d *Database) revokeDenied(ns *namespace, only *Conn) {
	ns.lmu.Lock()
	var ls []*listener
	for l := range ns.listeners {
		if only == nil || l.conn == only {
			ls = append(ls, l)
		}
	}
	ns.lmu.Unlock()
	d.rejudge(ns, ls)
}

// recheckListens re-judges, after a commit, only the listens whose read
// rules observed a location the changes touched (a rule like
// root.child('members').child(auth.uid).exists()), found through
// ns.lidx, and revokes those no longer allowed. Listens whose rules read
// no data (auth only) are never visited. Caller holds ns.mu for writing.
func (d *Database) recheckListens(ns *namespace, changes []change) {
	ns.lmu.Lock()
	var ls []*listener
	for l := range ns.lidx.concerned(changes, true) {
		ls = append(ls, l)
	}
	ns.lmu.Unlock()
	d.rejudge(ns, ls)
}

// rejudge decides each listen's read again against the current data and
// identity: still allowed, it refreshes the listen's dependencies; denied,
// it drops the listen and queues production's revocation push
// ({"a":"c"}), which the SDKs surface as a permission_denied cancel.
func (d *Database) rejudge(ns *namespace, ls []*listener) {
	for _, l := range ls {
		who := l.conn.Who()
		ok, dec, reason := d.decide(ns, who, readRequest(ns, l.keys, joinPath(l.keys), &l.q))
		if ok {
			ns.lmu.Lock()
			if _, live := ns.listeners[l]; live {
				ns.lidx.setDeps(l, readDeps(dec))
			}
			ns.lmu.Unlock()
			continue
		}
		ns.lmu.Lock()
		live := ns.removeListenerLocked(l)
		ns.lmu.Unlock()
		if !live {
			continue
		}
		l.conn.mu.Lock()
		if l.conn.listens[listenKey(l.keys, l.q)] == l {
			delete(l.conn.listens, listenKey(l.keys, l.q))
		}
		l.conn.mu.Unlock()
		l.conn.enqueue(Push{Path: l.pushPath, Revoked: true, Query: l.q.WireObject()})
		if reason == "" {
			reason = "the rules no longer allow this listen"
		}
		d.emitListener(l, event.Errored, "permission_denied: "+reason)
	}
}

// readDeps are the data locations a read decision observed.
func readDeps(dec *rtdb.Decision) [][]string {
	if dec == nil {
		return nil
	}
	return dec.DataReads
}

// notify queues, for every listener a commit touched, only what changed
// at its location: for a plain listen the written values (one merge for
// an update), for a query the children that entered, left or changed in
// its window. The changes' values are copies (old ones detached), so
// pushes share them. Caller holds ns.mu for writing.
func (d *Database) notify(ns *namespace, base []string, changes []change, merge bool) {
	ns.lmu.Lock()
	concerned := ns.lidx.concerned(changes, false)
	ls := make([]*listener, 0, len(concerned))
	for l := range concerned {
		ls = append(ls, l)
	}
	ns.lmu.Unlock()
	// Pushes that many listeners get alike (untagged: no query of their
	// own) are one queued value with one encoding: per change below the
	// listens, per listened path above them. The value is boxed once (a
	// Push in an interface is an allocation of its own), and every
	// connection's queue holds the same read-only copy.
	var sharedBelow []any
	var sharedAt map[string]any
	if len(ls) > 1 {
		sharedBelow = make([]any, len(changes))
		sharedAt = map[string]any{}
	}
	// Whether each change changed anything, compared once for all the
	// listeners below it (0: not yet, 1: changed, 2: the same).
	changed := make([]uint8, len(changes))
	// items are the indexes in changes of what a listener gets, in one
	// array reused listener after listener.
	var items []int
	for _, l := range ls {
		if l.windowed {
			d.notifyWindow(ns, l, changes)
			continue
		}
		items = items[:0]
		var above *change
		for i, c := range changes {
			if rtdb.IsPathPrefix(l.keys, c.keys) {
				if changed[i] == 0 {
					changed[i] = 2
					if !Equal(c.old, c.new) {
						changed[i] = 1
					}
				}
				if changed[i] == 1 {
					items = append(items, i)
				}
			} else if rtdb.IsPathPrefix(c.keys, l.keys) {
				above = &changes[i] // paths of one write never overlap: at most one
			}
		}
		if above != nil {
			rest := l.keys[len(above.keys):]
			o, n := getAt(above.old, rest), getAt(above.new, rest)
			if !Equal(o, n) {
				if sharedAt == nil || l.tag != 0 {
					l.conn.enqueue(Push{Path: l.pushPath, Data: n, Tag: l.tag})
				} else {
					p := sharedAt[l.pushPath]
					if p == nil {
						p = Push{Path: l.pushPath, Data: n, Shared: &SharedEncoding{}}
						sharedAt[l.pushPath] = p
					}
					l.conn.enqueue(p)
				}
				d.emitListener(l, event.Deliver, "")
			}
			continue
		}
		if len(items) == 0 {
			continue
		}
		if merge && len(items) > 1 {
			// One merge, so the client sees the update as one change: at
			// the update's path, or at the listener's when it is deeper.
			at := base
			if len(l.keys) > len(base) {
				at = l.keys
			}
			m := make(map[string]any, len(items))
			for _, i := range items {
				m[strings.Join(changes[i].keys[len(at):], "/")] = changes[i].new
			}
			l.conn.enqueue(Push{Path: strings.Join(at, "/"), Data: m, Merge: true, Tag: l.tag})
		} else {
			for _, i := range items {
				if sharedBelow == nil || l.tag != 0 {
					l.conn.enqueue(Push{Path: strings.Join(changes[i].keys, "/"), Data: changes[i].new, Tag: l.tag})
					continue
				}
				if sharedBelow[i] == nil {
					sharedBelow[i] = Push{Path: strings.Join(changes[i].keys, "/"), Data: changes[i].new, Shared: &SharedEncoding{}}
				}
				l.conn.enqueue(sharedBelow[i])
			}
		}
		d.emitListener(l, event.Deliver, "")
	}
}

// notifyWindow pushes the members that entered, left or changed in a
// query listen's window. The listen keeps copies of its members; a member
// still equal to the live child keeps its copy.
func (d *Database) notifyWindow(ns *namespace, l *listener, changes []change) {
	touched := false
	for _, c := range changes {
		if rtdb.IsPathPrefix(l.keys, c.keys) || rtdb.IsPathPrefix(c.keys, l.keys) {
			touched = true
			break
		}
	}
	if !touched {
		return
	}
	live, _ := l.window(ns, getAt(ns.root, l.keys)).(map[string]any)
	nw := make(map[string]any, len(live))
	diff := map[string]any{}
	for k := range l.win {
		if _, ok := live[k]; !ok {
			diff[k] = nil
		}
	}
	for k, lv := range live {
		if old, ok := l.win[k]; ok && Equal(old, lv) {
			nw[k] = old
			continue
		}
		c := clone(lv)
		nw[k] = c
		diff[k] = c
	}
	l.win = nw
	if len(diff) == 0 {
		return
	}
	l.conn.enqueue(Push{Path: l.pushPath, Data: diff, Merge: true, Tag: l.tag})
	d.emitListener(l, event.Deliver, "")
}

// window is the part of v, the location's value, a query listen holds:
// the query's window, or all of v for an unindexed query.
func (l *listener) window(ns *namespace, v any) any {
	if l.whole {
		return v
	}
	return ns.window(l.keys, v, l.q)
}

// addListenerLocked registers a listen (caller holds ns.lmu).
func (ns *namespace) addListenerLocked(l *listener) {
	ns.listeners[l] = struct{}{}
	ns.lidx.add(l)
}

// removeListenerLocked unregisters a listen, reporting whether it was
// registered (caller holds ns.lmu).
func (ns *namespace) removeListenerLocked(l *listener) bool {
	if _, ok := ns.listeners[l]; !ok {
		return false
	}
	delete(ns.listeners, l)
	ns.lidx.remove(l)
	return true
}
