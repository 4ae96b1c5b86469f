package database

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/pyric/pyric/sandbox/service"
)

// Each namespace's tree is stored as one key per leaf, in the Log's
// space named after the namespace (written through the store's
// write-ahead log: a write is one appended record, not a bbolt
// transaction):
//
//	"<path>"           → the leaf (JSON, {".value",".priority"} when it has a priority)
//	"<path>/.priority" → a node's priority
//
// with <path> "/" for the root and "/a/b" below it. A namespace's own
// rules are in the Bucket, under "r\x00<ns>". Without a Log (a caller
// that gives only a Bucket) the leaves are in the Bucket, under
// "d\x00<ns>\x00<path>" with <path> "" for the root — where versions
// before the Log kept them, and where load finds them to move them into
// the Log. A write rewrites only the subtree it changed, from its highest
// ancestor whose shape changed (a leaf turned node, a node created or
// pruned), so its cost is the size of what it wrote.

// leafPath is the stored path of the location at keys: "" for the root.
func leafPath(keys []string) string {
	if len(keys) == 0 {
		return ""
	}
	return joinPath(keys)
}

// treeWriter takes a write's changes to the stored leaves: a Bucket
// transaction (bucketTree) or a Log record being built (logTree). Paths
// are joinPath's ("" for the root).
type treeWriter interface {
	// put stores the leaf (or a node's priority) v at path.
	put(path string, v any) error
	// clear deletes the leaf at path and every leaf below it.
	clear(path string) error
}

// bucketTree writes namespace ns's leaves in a Bucket transaction.
type bucketTree struct {
	tx service.Tx
	ns string
}

func bucketKey(ns, path string) []byte { return []byte("d\x00" + ns + "\x00" + path) }

func (b bucketTree) put(path string, v any) error {
	enc, err := MarshalValue(v)
	if err != nil {
		return err
	}
	return b.tx.Put(bucketKey(b.ns, path), enc)
}

func (b bucketTree) clear(path string) error {
	k := bucketKey(b.ns, path)
	if err := b.tx.Delete(k); err != nil {
		return err
	}
	return b.tx.DeletePrefix(append(k, '/'))
}

// logTree builds the Log record of one write: its leaves are encoded
// one after another into one buffer (the Log copies them as it appends),
// and the changes say where each one ends.
type logTree struct {
	changes []service.LogChange
	ends    []int // per change, the end of its value in buf (-1: no value)
	buf     []byte
}

// logTrees holds the logTrees of finished writes for the next ones,
// which so allocate none (three slices a write).
var logTrees = sync.Pool{New: func() any {
	// Room for a small write's clear, its prefix and a few leaves,
	// instead of growing from nothing.
	return &logTree{changes: make([]service.LogChange, 0, 4), ends: make([]int, 0, 4), buf: make([]byte, 0, 32)}
}}

// logTreeKeep is the largest value buffer a logTree keeps for reuse:
// one large write's need not stay allocated.
const logTreeKeep = 64 << 10

// release empties l (dropping its references to keys and values) and
// gives it back to logTrees.
func (l *logTree) release() {
	if cap(l.buf) > logTreeKeep || cap(l.changes) > logTreeKeep/32 {
		return
	}
	clear(l.changes)
	l.changes, l.ends, l.buf = l.changes[:0], l.ends[:0], l.buf[:0]
	logTrees.Put(l)
}

// logKey is a path's key in the Log: bbolt keys cannot be empty, so the
// root's is "/" (no child's path is: a key is never empty).
func logKey(path string) string {
	if path == "" {
		return "/"
	}
	return path
}

func (l *logTree) put(path string, v any) error {
	var err error
	if l.buf, err = AppendValue(l.buf, v); err != nil {
		return err
	}
	l.changes = append(l.changes, service.LogChange{Key: logKey(path)})
	l.ends = append(l.ends, len(l.buf))
	return nil
}

func (l *logTree) clear(path string) error {
	l.changes = append(l.changes, service.LogChange{Key: logKey(path)}, service.LogChange{Key: path + "/", Prefix: true})
	l.ends = append(l.ends, -1, -1)
	return nil
}

// record is the record's changes, their values in place.
func (l *logTree) record() []service.LogChange {
	from := 0
	for i, end := range l.ends {
		if end >= 0 {
			l.changes[i].Value = l.buf[from:end:end]
			from = end
		}
	}
	return l.changes
}

// persistWrites stores the changes a write made to namespace ns (whose
// tree is now root; each change's shape is shapeAlong of its keys in the
// tree before it): one Log record, with the outbox entries of its events
// (held), or one Bucket transaction without a Log.
func (d *Database) persistWrites(ns string, root any, changes []change, held []service.LogChange) error {
	if d.env.Log != nil {
		// Append keeps nothing of the record: its slices are reused by
		// the next write.
		l := logTrees.Get().(*logTree)
		defer l.release()
		for _, c := range changes {
			if err := persist(l, c.shape, root, c.keys, c.old); err != nil {
				return err
			}
		}
		if len(l.changes) == 0 && len(held) == 0 {
			return nil
		}
		return d.env.Log.Append(ns, append(l.record(), held...))
	}
	return d.env.Bucket.Update(func(tx service.Tx) error {
		for _, c := range changes {
			if err := persist(bucketTree{tx, ns}, c.shape, root, c.keys, c.old); err != nil {
				return err
			}
		}
		return nil
	})
}

// persist writes the change at keys to root; shape is shapeAlong(keys)
// of the tree before the write, old the value it replaced at keys.
func persist(w treeWriter, shape nodeShape, root any, keys []string, old any) error {
	// Find the shallowest location along keys whose shape changed.
	top := len(keys)
	for i := 0; i < len(keys); i++ {
		on := shape.node(i)
		_, nn := isNode(getAt(root, keys[:i]))
		if !on || !nn {
			top = i
			break
		}
	}
	at := leafPath(keys[:top])
	v := getAt(root, keys[:top])
	if top < len(keys) || !leavesOnly(old, v) {
		if err := w.clear(at); err != nil {
			return err
		}
	}
	return putTree(w, at, v)
}

// leavesOnly reports whether the stored leaves of old, replaced by v at
// one location, all give way to v's own puts, so that the location needs
// no clear (a delete of its key and a seek for what is below it, in the
// record and again when the log is applied): nothing was there (a new
// location), or a leaf (with its priority, if any) that a leaf replaces
// at the same key.
func leavesOnly(old, v any) bool {
	if old == nil {
		return true
	}
	_, oldNode := isNode(old)
	_, newNode := isNode(v)
	return !oldNode && v != nil && !newNode
}

// putTree stores the leaves of v, the value at path.
func putTree(w treeWriter, path string, v any) error {
	if v == nil {
		return nil
	}
	m, node := isNode(v)
	if !node {
		return w.put(path, v)
	}
	// The children's paths are built into one string, one allocation for
	// the node instead of one per child: each path is a substring of what
	// the Builder holds, whose bytes it never changes once written.
	n := 0
	for k := range m {
		n += len(path) + 1 + len(k)
	}
	var paths strings.Builder
	paths.Grow(n)
	for k, c := range m {
		start := paths.Len()
		paths.WriteString(path)
		paths.WriteByte('/')
		paths.WriteString(k)
		cp := paths.String()[start:]
		if k == ".priority" {
			if err := w.put(cp, c); err != nil {
				return err
			}
			continue
		}
		if err := putTree(w, cp, c); err != nil {
			return err
		}
	}
	return nil
}

// load rebuilds every namespace from the store: its rules from the
// Bucket, its tree from the Log — after moving into the Log any leaves a
// version before it left in the Bucket.
func (d *Database) load() error {
	if d.env.Bucket == nil {
		return nil
	}
	raw := map[string]map[string]any{}
	rules := map[string]string{}
	legacy := map[string][]service.LogChange{}
	err := d.env.Bucket.View(func(tx service.Tx) error {
		if err := tx.ForEach([]byte("r\x00"), func(k, v []byte) error {
			rules[string(k[2:])] = string(v)
			return nil
		}); err != nil {
			return err
		}
		return tx.ForEach([]byte("d\x00"), func(k, v []byte) error {
			rest := k[2:]
			i := bytes.IndexByte(rest, 0)
			if i < 0 {
				return fmt.Errorf("malformed key %q", k)
			}
			ns, path := string(rest[:i]), string(rest[i+1:])
			if d.env.Log != nil {
				legacy[ns] = append(legacy[ns], service.LogChange{Key: logKey(path), Value: bytes.Clone(v)})
				return nil
			}
			return placeLeaf(raw, ns, path, v)
		})
	})
	if err != nil {
		return fmt.Errorf("database: restore from bucket: %w", err)
	}
	if d.env.Log != nil {
		if err := d.moveToLog(legacy); err != nil {
			return fmt.Errorf("database: move the stored tree into the log: %w", err)
		}
		if err := d.loadLog(raw, ""); err != nil {
			return fmt.Errorf("database: restore from the log: %w", err)
		}
	}
	for name, r := range raw {
		v, err := Normalize(unwrapRoot(r), nil, 0)
		if err != nil {
			return fmt.Errorf("database: restore %s: %w", name, err)
		}
		d.ns(name).root = v
	}
	for name, src := range rules {
		rs, err := d.compileRules(".settings/rules.json", src)
		if err != nil {
			return fmt.Errorf("database: restore rules of %s: %w", name, err)
		}
		d.ns(name)
		d.live.SetScopeCompiled(name, rs)
	}
	return nil
}

// placeLeaf decodes a stored leaf and places it in raw[ns] at path ("" for
// the root).
func placeLeaf(raw map[string]map[string]any, ns, path string, v []byte) error {
	val, err := DecodeJSON(v)
	if err != nil {
		return fmt.Errorf("value at %s%s: %w", ns, path, err)
	}
	if raw[ns] == nil {
		raw[ns] = map[string]any{}
	}
	placeRaw(raw[ns], path, val)
	return nil
}

// loadLog places the leaves the Log holds into raw, of namespace only
// (every namespace when "").
func (d *Database) loadLog(raw map[string]map[string]any, only string) error {
	return d.env.Log.Load(func(ns string, entries []service.LogChange) error {
		if only != "" && ns != only {
			return nil
		}
		for _, e := range entries {
			path := e.Key
			if path == "/" {
				path = ""
			}
			if err := placeLeaf(raw, ns, path, e.Value); err != nil {
				return err
			}
		}
		return nil
	})
}

// moveToLog appends the leaves a version before the Log left in the
// Bucket to the Log, then deletes them from the Bucket. A crash between
// the two leaves both copies, and the next start moves them again: no
// write comes between, so they are the same.
func (d *Database) moveToLog(legacy map[string][]service.LogChange) error {
	if len(legacy) == 0 {
		return nil
	}
	for _, ns := range slices.Sorted(maps.Keys(legacy)) {
		if err := d.env.Log.Append(ns, legacy[ns]); err != nil {
			return err
		}
	}
	return d.env.Bucket.Update(func(tx service.Tx) error { return tx.DeletePrefix([]byte("d\x00")) })
}

// reloadTree rebuilds one namespace's tree from the store: after a
// failed persist, the store holds the state before the write the live
// tree already took in place. Caller holds ns.mu for writing.
func (d *Database) reloadTree(ns *namespace) error {
	all := map[string]map[string]any{}
	var err error
	if d.env.Log != nil {
		err = d.loadLog(all, ns.name)
	} else {
		prefix := []byte("d\x00" + ns.name + "\x00")
		err = d.env.Bucket.View(func(tx service.Tx) error {
			return tx.ForEach(prefix, func(k, v []byte) error {
				return placeLeaf(all, ns.name, string(k[len(prefix):]), v)
			})
		})
	}
	if err != nil {
		return err
	}
	raw := all[ns.name]
	if raw == nil {
		raw = map[string]any{}
	}
	v, err := Normalize(unwrapRoot(raw), nil, 0)
	if err != nil {
		return err
	}
	ns.root = v
	ns.idxMu.Lock()
	ns.indexes = map[string]*index{}
	ns.idxMu.Unlock()
	return nil
}

// rootKey marks a primitive stored at the root while rebuilding.
const rootKey = "\x00root"

func placeRaw(m map[string]any, path string, v any) {
	if path == "" {
		m[rootKey] = v
		return
	}
	parts := strings.Split(strings.TrimPrefix(path, "/"), "/")
	for _, p := range parts[:len(parts)-1] {
		c, ok := m[p].(map[string]any)
		if !ok {
			c = map[string]any{}
			m[p] = c
		}
		m = c
	}
	m[parts[len(parts)-1]] = v
}

func unwrapRoot(m map[string]any) any {
	if v, ok := m[rootKey]; ok {
		return v
	}
	return m
}

// State is the service's snapshot state, the one declaration of its
// schema (service.TypedState): every namespace with data or rules of its
// own.
type State struct {
	Namespaces map[string]NamespaceState `json:"namespaces"`
}

// NamespaceState is one namespace in a State: its tree in the export
// format (GET /.json?format=export; null when empty) and its own rules
// source, when it has some.
type NamespaceState struct {
	Data  json.RawMessage `json:"data"`
	Rules *string         `json:"rules,omitempty"`
}

// Snapshot returns every namespace's data (export format) and own rules.
// onDisconnect queues are connection state and are not included.
func (d *Database) Snapshot() (json.RawMessage, error) {
	s := State{Namespaces: map[string]NamespaceState{}}
	for _, name := range d.Namespaces() {
		ns := d.ns(name)
		ns.mu.RLock()
		var e NamespaceState
		if ns.root != nil {
			// Encoded under the lock: the live tree changes in place.
			b, err := MarshalValue(ns.root)
			if err != nil {
				ns.mu.RUnlock()
				return nil, fmt.Errorf("database: snapshot %s: %w", name, err)
			}
			e.Data = json.RawMessage(b)
		}
		if own := d.live.Own(name); own != nil {
			src := own.Text
			e.Rules = &src
		}
		ns.mu.RUnlock()
		if e.Data == nil && e.Rules == nil {
			continue
		}
		s.Namespaces[name] = e
	}
	return json.Marshal(s)
}

// Restore replaces all state with a Snapshot's output, persisting it.
// Listeners see the new data as a change. On error nothing changes.
func (d *Database) Restore(state json.RawMessage) error {
	var s State
	if err := json.Unmarshal(state, &s); err != nil {
		return fmt.Errorf("database: restore: %w", err)
	}
	type parsed struct {
		root  any
		rules *string
	}
	next := map[string]parsed{}
	for name, e := range s.Namespaces {
		var v any
		if len(e.Data) > 0 {
			raw, err := DecodeJSON(e.Data)
			if err != nil {
				return fmt.Errorf("database: restore %s: %w", name, err)
			}
			if v, err = Normalize(raw, nil, 0); err != nil {
				return fmt.Errorf("database: restore %s: %w", name, err)
			}
		}
		if e.Rules != nil {
			if _, err := d.compileRules(".settings/rules.json", *e.Rules); err != nil {
				return fmt.Errorf("database: restore rules of %s: %w", name, err)
			}
		}
		next[name] = parsed{v, e.Rules}
	}
	for _, name := range d.Namespaces() {
		if _, ok := next[name]; !ok {
			next[name] = parsed{}
		}
	}
	for name, p := range next {
		if p.rules != nil {
			if err := d.SetRules(name, *p.rules); err != nil {
				return err
			}
		} else {
			d.clearRules(name)
		}
		if _, err := d.commit(d.ns(name), adminWho, nil, "", []write{{raw: p.root}}, false, WriteOptions{Method: "restore"}); err != nil {
			return err
		}
	}
	return nil
}

func (d *Database) clearRules(name string) {
	ns := d.ns(name)
	ns.mu.Lock()
	defer ns.mu.Unlock()
	if !ns.custom() {
		return
	}
	if d.env.Bucket != nil {
		_ = d.env.Bucket.Update(func(tx service.Tx) error { return tx.Delete([]byte("r\x00" + name)) })
	}
	d.live.ClearScope(name)
	d.live.For(name).ResetCoverage(name)
}

// Reset wipes every namespace in memory (the sandbox clears the bucket);
// connections stay open and their listeners see the data vanish, their
// onDisconnect queues are dropped without running.
func (d *Database) Reset() error {
	for _, name := range d.Namespaces() {
		ns := d.ns(name)
		ns.lmu.Lock()
		conns := map[*Conn]bool{}
		for l := range ns.listeners {
			conns[l.conn] = true
		}
		ns.lmu.Unlock()
		for c := range conns {
			c.mu.Lock()
			c.ondisc = nil
			c.mu.Unlock()
		}
		ns.mu.Lock()
		old := ns.root
		ns.root = nil
		ns.idxMu.Lock()
		ns.indexes = map[string]*index{}
		ns.idxMu.Unlock()
		d.live.ClearScope(name)
		d.live.For(name).ResetCoverage(name)
		d.notify(ns, nil, []change{{keys: nil, old: old, new: nil}}, false)
		ns.mu.Unlock()
	}
	d.emitMutation("", "reset", nil, nil)
	return nil
}

// --- push ids ---

const pushChars = "-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz"

// PushID mints a push id as the SDKs do: 8 characters of the timestamp
// then 12 random ones, incremented within one millisecond so ids sort in
// creation order.
func (d *Database) PushID() string {
	d.pushMu.Lock()
	defer d.pushMu.Unlock()
	now := d.env.Now().UnixMilli()
	if now != d.lastPush || d.lastRand == nil {
		src := d.env.NewID()
		d.lastRand = make([]byte, 12)
		for i := range d.lastRand {
			d.lastRand[i] = src[i%len(src)] % 64
		}
	} else {
		i := 11
		for ; i >= 0 && d.lastRand[i] == 63; i-- {
			d.lastRand[i] = 0
		}
		if i >= 0 {
			d.lastRand[i]++
		}
	}
	d.lastPush = now
	var b [20]byte
	t := now
	for i := 7; i >= 0; i-- {
		b[i] = pushChars[t%64]
		t /= 64
	}
	for i, r := range d.lastRand {
		b[8+i] = pushChars[r]
	}
	return string(b[:])
}

func randomID() string {
	var b [20]byte
	_, _ = rand.Read(b[:])
	for i := range b {
		b[i] = pushChars[b[i]%64]
	}
	return string(b[:])
}
