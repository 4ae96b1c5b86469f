package database

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

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

	mu      sync.Mutex
	who     identity.Identity
	listens map[string]*listener
	ondisc  []odOp
	queue   []any
	closed  bool
	over    bool
	wake    chan struct{}
	done    chan struct{}
}

type odOp struct {
	keys    []string
	raw     any
	updates map[string]any // non-nil: a merge
}

type listener struct {
	id       string
	conn     *Conn
	keys     []string
	path     string
	q        Query
	tag      int64
	windowed bool
	win      map[string]any
}

// Connect opens a connection to a namespace as who.
func (d *Database) Connect(nsName string, who identity.Identity) *Conn {
	n := atomic.AddInt64(&d.connSeq, 1)
	return &Conn{
		d: d, ns: d.ns(nsName), id: fmt.Sprintf("c%d", n), who: who,
		listens: map[string]*listener{}, wake: make(chan struct{}, 1), done: make(chan struct{}),
	}
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
	c.who = who
	c.mu.Unlock()
	c.ns.mu.RLock()
	c.d.revokeDenied(c.ns, c)
	c.ns.mu.RUnlock()
}

// enqueue appends to the outbound queue; it never blocks.
func (c *Conn) enqueue(x any) {
	c.mu.Lock()
	if c.closed || c.over {
		c.mu.Unlock()
		return
	}
	if len(c.queue) >= maxQueue {
		c.over = true
		c.queue = nil
	} else {
		c.queue = append(c.queue, x)
	}
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// Send queues a message of the wire adapter's own (a reply) after
// everything queued so far.
func (c *Conn) Send(x any) { c.enqueue(x) }

// Next waits for queued messages and returns them in order. It returns
// ErrClosed once the connection is closed or overflowed and drained.
func (c *Conn) Next(ctx context.Context) ([]any, error) {
	for {
		c.mu.Lock()
		if c.over {
			c.mu.Unlock()
			return nil, fmt.Errorf("%w: the client is not reading its pushes", ErrClosed)
		}
		if len(c.queue) > 0 {
			q := c.queue
			c.queue = nil
			c.mu.Unlock()
			return q, nil
		}
		closed := c.closed
		c.mu.Unlock()
		if closed {
			return nil, ErrClosed
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-c.wake:
		case <-c.done:
		}
	}
}

func listenKey(keys []string, q Query) string {
	return joinPath(keys) + "\x00" + q.Canonical()
}

// Listen starts a listen at path with a query and the client's tag. The
// initial data is queued before Listen returns, so a reply sent after it
// follows the data, as production orders them. warnings are production's
// listen warnings ("no_index").
func (c *Conn) Listen(path string, q Query, tag int64) (warnings []string, err error) {
	keys, err := ParsePath(path)
	if err != nil {
		return nil, err
	}
	ns := c.ns
	ns.mu.RLock()
	defer ns.mu.RUnlock()
	who := c.Who()
	if err := c.d.canRead(ns, who, keys, "listen"); err != nil {
		return nil, err
	}
	if !ns.indexed(keys, q) {
		warnings = append(warnings, "no_index")
	}
	l := &listener{conn: c, keys: keys, path: joinPath(keys), q: q, tag: tag, windowed: !q.IsDefault()}
	l.id = c.id + ":" + listenKey(keys, q)
	v := getAt(ns.root, keys)
	if l.windowed {
		w, _ := ns.window(keys, v, q).(map[string]any)
		l.win = w
		c.enqueue(Push{Path: strings.Join(keys, "/"), Data: exportOrNil(w), Tag: tag})
	} else {
		c.enqueue(Push{Path: strings.Join(keys, "/"), Data: v, Tag: tag})
	}
	c.mu.Lock()
	if old := c.listens[listenKey(keys, q)]; old != nil {
		ns.lmu.Lock()
		delete(ns.listeners, old)
		ns.lmu.Unlock()
	}
	c.listens[listenKey(keys, q)] = l
	c.mu.Unlock()
	ns.lmu.Lock()
	ns.listeners[l] = struct{}{}
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
		delete(c.ns.listeners, l)
		c.ns.lmu.Unlock()
		c.d.emitListener(l, event.Detach, "")
	}
	return nil
}

// Put sets a value as the connection's identity; hash, when non-nil,
// makes it a compare-and-set (transactions).
func (c *Conn) Put(path string, value any, hash *string) error {
	method := "set"
	if hash != nil {
		method = "transaction"
	} else if value == nil {
		method = "remove"
	}
	_, err := c.d.Set(c.Who(), c.ns.name, path, value, WriteOptions{IfHash: hash, Method: method})
	return err
}

// Merge applies a multi-path update as the connection's identity.
func (c *Conn) Merge(path string, updates map[string]any) error {
	return c.d.Update(c.Who(), c.ns.name, path, updates, "update")
}

// Get reads a location or query window as the connection's identity.
func (c *Conn) Get(path string, q *Query) (any, error) {
	r, err := c.d.Get(c.Who(), c.ns.name, path, q, false)
	return r.Value, err
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
		if !isPrefix(keys, op.keys) {
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
	who := c.who
	close(c.done)
	c.mu.Unlock()
	c.ns.lmu.Lock()
	for _, l := range ls {
		delete(c.ns.listeners, l)
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
	d.emitWrite(ns.name, "ondisconnect_register", joinPath(base), who, resultOf(ok), dec, reason, seenOf(base, ws, merge))
	if !ok {
		return &Denied{Path: joinPath(base), Op: "write", Reason: reason}
	}
	return nil
}

// revokeDenied cancels the listens (of one connection, or all) whose
// reads the rules no longer allow. Caller holds ns.mu.
func (d *Database) revokeDenied(ns *namespace, only *Conn) {
	ns.lmu.Lock()
	var ls []*listener
	for l := range ns.listeners {
		if only == nil || l.conn == only {
			ls = append(ls, l)
		}
	}
	ns.lmu.Unlock()
	for _, l := range ls {
		who := l.conn.Who()
		ok, _, _ := d.decide(ns, who, rtdb.Request{Operation: rtdb.Read, Path: l.path, Data: ns.root})
		if ok {
			continue
		}
		ns.lmu.Lock()
		delete(ns.listeners, l)
		ns.lmu.Unlock()
		l.conn.mu.Lock()
		delete(l.conn.listens, listenKey(l.keys, l.q))
		l.conn.mu.Unlock()
		l.conn.enqueue(Push{Path: strings.Join(l.keys, "/"), Revoked: true, Query: l.q.WireObject()})
		d.emitListener(l, event.Errored, "permission_denied: the rules no longer allow this listen")
	}
}

// notify queues, for every listener a commit touched, only what changed
// at its location: for a plain listen the written values (one merge for
// an update), for a query the children that entered, left or changed in
// its window. Caller holds ns.mu for writing.
func (d *Database) notify(ns *namespace, old, root any, base []string, changes []change, merge bool) {
	ns.lmu.Lock()
	ls := make([]*listener, 0, len(ns.listeners))
	for l := range ns.listeners {
		ls = append(ls, l)
	}
	ns.lmu.Unlock()
	for _, l := range ls {
		if l.windowed {
			d.notifyWindow(ns, l, root, changes)
			continue
		}
		var items []change
		above := false
		for _, c := range changes {
			if isPrefix(l.keys, c.keys) {
				if !Equal(c.old, c.new) {
					items = append(items, c)
				}
			} else if isPrefix(c.keys, l.keys) {
				above = true
			}
		}
		if above {
			o, n := getAt(old, l.keys), getAt(root, l.keys)
			if !Equal(o, n) {
				l.conn.enqueue(Push{Path: strings.Join(l.keys, "/"), Data: n, Tag: l.tag})
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
			for _, c := range items {
				m[strings.Join(c.keys[len(at):], "/")] = c.new
			}
			l.conn.enqueue(Push{Path: strings.Join(at, "/"), Data: m, Merge: true, Tag: l.tag})
		} else {
			for _, c := range items {
				l.conn.enqueue(Push{Path: strings.Join(c.keys, "/"), Data: c.new, Tag: l.tag})
			}
		}
		d.emitListener(l, event.Deliver, "")
	}
}

func (d *Database) notifyWindow(ns *namespace, l *listener, root any, changes []change) {
	touched := false
	for _, c := range changes {
		if isPrefix(l.keys, c.keys) || isPrefix(c.keys, l.keys) {
			touched = true
			break
		}
	}
	if !touched {
		return
	}
	nw, _ := ns.window(l.keys, getAt(root, l.keys), l.q).(map[string]any)
	diff := map[string]any{}
	for k, v := range l.win {
		if nv, ok := nw[k]; !ok {
			diff[k] = nil
		} else if !Equal(v, nv) {
			diff[k] = nv
		}
	}
	for k, v := range nw {
		if _, ok := l.win[k]; !ok {
			diff[k] = v
		}
	}
	l.win = nw
	if len(diff) == 0 {
		return
	}
	l.conn.enqueue(Push{Path: strings.Join(l.keys, "/"), Data: diff, Merge: true, Tag: l.tag})
	d.emitListener(l, event.Deliver, "")
}
