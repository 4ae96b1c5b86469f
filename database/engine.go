package database

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/identity"
	"github.com/pyric/pyric/internal/jsonstr"
	"github.com/pyric/pyric/rules/rtdb"
	"github.com/pyric/pyric/sandbox/service"
)

// Options configure a Database.
type Options struct {
	// Rules is the database.rules.json every namespace starts with; empty
	// means no rules: everything but admin is denied.
	Rules string
	// RulesName names the rules source in diagnostics.
	RulesName string
}

// Database is the engine: every namespace of one project.
type Database struct {
	env  service.Env
	opts Options
	// defaultNS is DefaultNamespace(env.Project), which every event's
	// path is compared with (built once, not per event).
	defaultNS string

	mu   sync.Mutex
	nss  map[string]*namespace
	live *Rules

	pushMu   sync.Mutex
	lastPush int64
	lastRand []byte
	connSeq  int64

	// eventScope, when set, names the enclosing location whose whole
	// value a write's commit event carries (SetEventScope).
	eventScope atomic.Pointer[func(ns string, keys []string) int]
}

// SetEventScope installs fn, asked for every written location of every
// commit: the depth of the enclosing location (a proper prefix of keys)
// whose whole value before and after the commit the location's commit
// event must carry, or -1 for none. Cloud Functions triggers watching a
// location above a write need it (functions/trigger); nil removes it.
func (d *Database) SetEventScope(fn func(ns string, keys []string) int) {
	if fn == nil {
		d.eventScope.Store(nil)
		return
	}
	d.eventScope.Store(&fn)
}

// scopes are the enclosing locations the event scope asks for, per
// write (nil entries for none), with their values before the commit;
// after fills in their values after it. Writes under one location share
// its Scope, which lists them all in commit order.
func (d *Database) scopes(ns *namespace, ws []write) (per []*event.Scope, after func()) {
	fn := d.eventScope.Load()
	if fn == nil {
		return nil, func() {}
	}
	per = make([]*event.Scope, len(ws))
	byPath := map[string]*event.Scope{}
	keysOf := map[*event.Scope][]string{}
	for i, w := range ws {
		k := (*fn)(ns.name, w.keys)
		if k < 0 || k >= len(w.keys) {
			continue
		}
		p := joinPath(w.keys[:k])
		sc := byPath[p]
		if sc == nil {
			// Copies: the live tree changes in place.
			sc = &event.Scope{Path: p, Before: plainCopy(getAt(ns.root, w.keys[:k]))}
			byPath[p], keysOf[sc] = sc, w.keys[:k]
		}
		sc.Writes = append(sc.Writes, joinPath(w.keys))
		per[i] = sc
	}
	return per, func() {
		for sc, keys := range keysOf {
			sc.After = plainCopy(getAt(ns.root, keys))
		}
	}
}

// namespace is one database: its tree, rules, indexes and listeners.
type namespace struct {
	name string
	// mu serializes commits (write lock) against reads and listen
	// registration (read lock).
	mu   sync.RWMutex
	root any
	live *Rules // the database's: the namespace's rules are live.For(name)

	idxMu   sync.Mutex
	indexes map[string]*index

	// evs is the event batch of the last commit, emptied, which the next
	// one builds its own in (guarded by mu): the bus copies the events
	// it is given, and a small write's batch is otherwise its largest
	// allocation.
	evs []event.Event

	listeners map[*listener]struct{} // guarded by lmu
	lidx      lindex                 // the listeners by location, guarded by lmu
	lmu       sync.Mutex
}

// New creates a Database, restoring what env.Bucket and env.Log hold.
func New(env service.Env, opts Options) (*Database, error) {
	if env.Now == nil {
		env.Now = time.Now
	}
	if env.Events == nil {
		env.Events = event.Discard
	}
	if env.NewID == nil {
		env.NewID = randomID
	}
	d := &Database{env: env, opts: opts, defaultNS: DefaultNamespace(env.Project), nss: map[string]*namespace{}, live: newRules()}
	if err := d.SetDefaultRules(opts.Rules); err != nil {
		return nil, err
	}
	if err := d.load(); err != nil {
		return nil, err
	}
	return d, nil
}

// Factory returns a service.Factory for the sandbox.
func Factory(opts Options) service.Factory {
	return func(env service.Env) (service.Service, error) { return New(env, opts) }
}

// DefaultNamespace is the namespace SDKs use when none is given.
func DefaultNamespace(project string) string { return project + "-default-rtdb" }

// Project is the sandbox's project id.
func (d *Database) Project() string { return d.env.Project }

// Name is the service's name.
func (d *Database) Name() string { return serviceName }

// SetDefaultRules replaces the rules of every namespace that has no rules
// of its own (hot reload of database.rules.json). Empty source means no
// rules: deny all but admin.
func (d *Database) SetDefaultRules(src string) error {
	d.mu.Lock()
	name := d.opts.RulesName
	d.mu.Unlock()
	rs, err := d.compileRules(name, src)
	if err != nil {
		return err
	}
	if rs.Compiled == nil {
		d.live.Clear()
	} else {
		d.live.SetCompiled(rs)
	}
	d.mu.Lock()
	var affected []*namespace
	for _, ns := range d.nss {
		if !ns.custom() {
			affected = append(affected, ns)
		}
	}
	d.mu.Unlock()
	for _, ns := range affected {
		ns.mu.Lock()
		d.revokeDenied(ns, nil)
		ns.mu.Unlock()
	}
	return nil
}

// HasRules reports whether the namespace has rules (without them only
// admin is allowed).
func (d *Database) HasRules(name string) bool {
	ns := d.ns(name)
	ns.mu.RLock()
	defer ns.mu.RUnlock()
	return ns.rules() != nil
}

// SetRules replaces one namespace's rules (PUT /.settings/rules.json),
// persisting them, and revokes listens they no longer allow.
func (d *Database) SetRules(name, src string) error {
	rs, err := d.compileRules(".settings/rules.json", src)
	if err != nil {
		return err
	}
	ns := d.ns(name)
	ns.mu.Lock()
	defer ns.mu.Unlock()
	if d.env.Bucket != nil {
		if err := d.env.Bucket.Update(func(tx service.Tx) error {
			return tx.Put([]byte("r\x00"+name), []byte(src))
		}); err != nil {
			return fmt.Errorf("persist rules: %w", err)
		}
	}
	before := ns.rulesSrc()
	d.live.SetScopeCompiled(name, rs)
	d.emitMutation(name, "rules_set", before, src)
	d.revokeDenied(ns, nil)
	return nil
}

// MayWrite reports whether who could be allowed to write at path of the
// namespace, for some data (rtdb.Ruleset.MayWrite): false when the rules
// in force — or their absence — deny every caller but admin there, which
// a server can answer before reading the body.
func (d *Database) MayWrite(who identity.Identity, name, path string) bool {
	if who.IsAdmin() {
		return true
	}
	ns := d.ns(name)
	ns.mu.RLock()
	rs := ns.rules()
	ns.mu.RUnlock()
	return rs.MayWrite(path)
}

// Rules returns a namespace's rules source ("" when it has none).
func (d *Database) Rules(name string) string {
	ns := d.ns(name)
	ns.mu.RLock()
	defer ns.mu.RUnlock()
	return ns.rulesSrc()
}

// ns returns (creating) a namespace.
func (d *Database) ns(name string) *namespace {
	d.mu.Lock()
	defer d.mu.Unlock()
	n := d.nss[name]
	if n == nil {
		n = &namespace{name: name, live: d.live, indexes: map[string]*index{}, listeners: map[*listener]struct{}{}}
		d.nss[name] = n
	}
	return n
}

// Namespaces lists the namespaces that exist, sorted.
func (d *Database) Namespaces() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]string, 0, len(d.nss))
	for n := range d.nss {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// rulesAuth is the rules' `auth` for an identity.
func rulesAuth(who identity.Identity) *rtdb.Auth {
	if !who.IsAuthenticated() || who.IsAdmin() {
		return nil
	}
	a := &rtdb.Auth{UID: who.UID, Token: who.Token}
	if fb, ok := who.Token["firebase"].(map[string]any); ok {
		a.Provider, _ = fb["sign_in_provider"].(string)
	}
	return a
}

// decide judges a request; admin bypasses rules, no rules deny.
func (d *Database) decide(ns *namespace, who identity.Identity, req rtdb.Request) (bool, *rtdb.Decision, string) {
	if who.IsAdmin() {
		return true, nil, ""
	}
	lr := ns.live.For(ns.name)
	if lr == nil || lr.Compiled == nil {
		return false, nil, "no rules are loaded for this database: only admin (Bearer owner) is allowed"
	}
	rs, cov := lr.Compiled, lr.Coverage(ns.name)
	req.Auth = rulesAuth(who)
	req.Now = d.env.Now()
	req.Coverage = cov.exprsFor(rs)
	dec, err := rs.Evaluate(req)
	if err != nil {
		return false, nil, err.Error()
	}
	cov.record(&dec)
	if !dec.Allowed {
		// Re-decide with sub-expression traces for the explanation.
		req.Trace, req.Coverage = true, nil
		if full, err := rs.Evaluate(req); err == nil {
			dec = full
		}
	}
	reason := ""
	if len(dec.Notes) > 0 {
		reason = dec.Notes[0]
	}
	return dec.Allowed, &dec, reason
}

// judgeRead decides a read at keys (rendered path, joinPath(keys)) with
// its query (nil for a plain read), returning the decision (nil for admin) when allowed. Caller holds
// ns.mu.
func (d *Database) judgeRead(ns *namespace, who identity.Identity, keys []string, path string, q *Query, method string) (*rtdb.Decision, error) {
	req := readRequest(ns, keys, path, q)
	ok, dec, reason := d.decide(ns, who, req)
	exp := d.emitRead(ns.name, method, path, who, resultOf(ok), dec, reason, req.Query)
	if !ok {
		return nil, &Denied{Path: path, Op: "read", Reason: reason, Why: why(exp)}
	}
	return dec, nil
}

// JudgeRead decides a read of path as who, with the query as the rules
// see it (nil for a plain read), without reading anything: verify's
// replay of a captured read or listen. method names it in the event.
func (d *Database) JudgeRead(who identity.Identity, nsName, path string, rq *rtdb.Query, method string) error {
	keys, err := ParsePath(path)
	if err != nil {
		return err
	}
	ns := d.ns(nsName)
	ns.mu.RLock()
	defer ns.mu.RUnlock()
	req := rtdb.Request{Operation: rtdb.Read, Path: joinPath(keys), Data: ns.root, Query: rq}
	ok, dec, reason := d.decide(ns, who, req)
	d.emitRead(ns.name, method, joinPath(keys), who, resultOf(ok), dec, reason, rq)
	if !ok {
		return &Denied{Path: joinPath(keys), Op: "read", Reason: reason}
	}
	return nil
}

// readRequest is the rules request of a read at keys (rendered path,
// joinPath(keys)) with its query.
func readRequest(ns *namespace, keys []string, path string, q *Query) rtdb.Request {
	req := rtdb.Request{Operation: rtdb.Read, Path: path, Data: ns.root}
	if q != nil {
		req.Query = q.rulesQuery()
	}
	return req
}

// indexed reports whether the rules at keys index q's child or value.
func (ns *namespace) indexed(keys []string, q Query) bool {
	if q.Index == IndexKey || q.Index == IndexPriority {
		return true
	}
	rs := ns.rules()
	if rs == nil {
		return false
	}
	want := q.Index
	for _, k := range rs.IndexOn(joinPath(keys)) {
		if strings.Trim(k, "/") == want {
			return true
		}
	}
	return false
}

// IndexError is production's REST error text for an unindexed query.
func IndexError(keys []string, q Query) error {
	name := q.Index
	return errorf(ErrIndexNotDefined, "Index not defined, add \".indexOn\": \"%s\", for path \"%s\", to the rules", name, joinPath(keys))
}

// Read is the result of a read: a copy of the stored value (export
// format), or of the query's window of it.
type Read struct {
	Value any
	// Encoded is ReadOptions.Encode's result, when it was set (Value is
	// then nil).
	Encoded []byte
	etag    string
}

// ETag is the REST entity tag of the whole location read (not of a query
// window) when ReadOptions.ETag asked for it; "" otherwise.
func (r Read) ETag() string { return r.etag }

// ReadOptions qualify a read beyond its query.
type ReadOptions struct {
	// StrictIndex rejects a query on an unindexed child or value (REST).
	StrictIndex bool
	// FilteringIndex rejects a query on an unindexed child or value that
	// has a limit or a range (a get over the WebSocket).
	FilteringIndex bool
	// ETag takes the ETag of the whole location with the value, under one
	// lock (an If-Match write relies on the pair), at the cost of hashing
	// the location.
	ETag bool
	// Shallow reads a node's children as true (?shallow=true), costing the
	// number of children rather than the subtree.
	Shallow bool
	// Encode, when set, is called under the namespace's read lock with
	// the value read (export format), which it must not keep or change,
	// and its result is the Read's Encoded instead of a copy of the value
	// in Value: a read that is only encoded (a REST GET) copies nothing.
	Encode func(v any) []byte
	// JSON, without Encode, makes the Read's Encoded the value's JSON
	// text (AppendValue's, export format) appended to JSONTo, written
	// under the read lock: nothing of the value is copied, and no
	// function is made for it.
	JSON   bool
	JSONTo []byte
}

// Get reads a location (or a query window of it) as who. strictIndex
// rejects a query on an unindexed child or value (REST). A window read
// costs about the window: only its members are copied.
func (d *Database) Get(who identity.Identity, nsName, path string, q *Query, strictIndex bool) (Read, error) {
	return d.GetWith(who, nsName, path, q, ReadOptions{StrictIndex: strictIndex})
}

// GetWith is Get with options.
func (d *Database) GetWith(who identity.Identity, nsName, path string, q *Query, opts ReadOptions) (Read, error) {
	keys, err := ParsePath(path)
	if err != nil {
		return Read{}, err
	}
	ns := d.ns(nsName)
	ns.mu.RLock()
	defer ns.mu.RUnlock()
	if _, err := d.judgeRead(ns, who, keys, pathOf(path, keys), q, "get"); err != nil {
		return Read{}, err
	}
	if q != nil && (opts.StrictIndex || opts.FilteringIndex && !q.IsDefault()) && !ns.indexed(keys, *q) {
		return Read{}, IndexError(keys, *q)
	}
	whole := getAt(ns.root, keys)
	var r Read
	if opts.ETag {
		r.etag = ETag(whole)
	}
	var v any // live: copied, or encoded under the lock
	switch {
	case q != nil && !q.IsDefault():
		v = ns.window(keys, whole, *q)
	case opts.Shallow:
		v = Shallow(whole)
	default:
		v = whole
	}
	switch {
	case opts.Encode != nil:
		r.Encoded = opts.Encode(v)
	case opts.JSON:
		if r.Encoded, err = AppendValue(opts.JSONTo, v); err != nil {
			return Read{}, err
		}
	default:
		r.Value = clone(v)
	}
	return r, nil
}

// window returns the query's window of v (a node map of the members), or
// nil. Caller holds ns.mu.
func (ns *namespace) window(keys []string, v any, q Query) any {
	m, ok := isNode(v)
	if !ok {
		return nil
	}
	ix := ns.index(keys, q.Index, m)
	win := ix.window(q)
	if len(win) == 0 {
		return nil
	}
	out := make(map[string]any, len(win))
	for _, k := range win {
		out[k] = m[k]
	}
	return out
}

const maxIndexes = 1024

// index returns the up-to-date index of node m at keys by spec.
func (ns *namespace) index(keys []string, spec string, m map[string]any) *index {
	id := joinPath(keys) + "\x00" + spec
	ns.idxMu.Lock()
	defer ns.idxMu.Unlock()
	if ix := ns.indexes[id]; ix != nil && ix.src == mapID(m) {
		return ix
	}
	if len(ns.indexes) >= maxIndexes {
		for k := range ns.indexes {
			delete(ns.indexes, k)
			break
		}
	}
	ix := buildIndex(spec, m)
	ns.indexes[id] = ix
	return ix
}

// write is one location a mutation sets.
type write struct {
	keys []string
	raw  any // as the client sent it
	// shares marks a normalized priority write: the new node shares its
	// children with the node it replaces, which is then not detached.
	shares bool
	// borrowed marks a normalized write whose value is raw itself (sent
	// in the stored form already): the tree takes a copy of it.
	borrowed bool
}

// change is what a write did at one location.
type change struct {
	keys     []string
	old, new any
	scope    *event.Scope // the enclosing location an event consumer asked for
	// shape is shapeAlong(keys) of the tree before the write, which
	// persistence compares against (kept here rather than in a slice of
	// its own: one allocation fewer per write).
	shape nodeShape
}

// WriteOptions qualify a write.
type WriteOptions struct {
	// IfHash makes a put a compare-and-set on the SDK hash of the current
	// value ("" = absent).
	IfHash *string
	// IfMatch makes a put a compare-and-set on the REST ETag.
	IfMatch string
	// Method names the operation in events (set, update, remove, push,
	// transaction, ondisconnect).
	Method string
}

// Set writes value at path as who (null deletes), returning the stored
// value.
func (d *Database) Set(who identity.Identity, nsName, path string, value any, opts WriteOptions) (any, error) {
	keys, err := ParsePath(path)
	if err != nil {
		return nil, err
	}
	if opts.Method == "" {
		opts.Method = "set"
		if value == nil {
			opts.Method = "remove"
		}
	}
	changes, err := d.commit(d.ns(nsName), who, keys, path, []write{{keys: keys, raw: value}}, false, opts)
	if err != nil {
		return nil, err
	}
	return changes[0].new, nil
}

// Update applies a multi-path update at path: each key of updates is a
// path relative to it. All locations are written, or none.
func (d *Database) Update(who identity.Identity, nsName, path string, updates map[string]any, method string) error {
	keys, err := ParsePath(path)
	if err != nil {
		return err
	}
	ws, err := updateWrites(keys, updates)
	if err != nil {
		return err
	}
	if method == "" {
		method = "update"
	}
	_, err = d.commit(d.ns(nsName), who, keys, path, ws, true, WriteOptions{Method: method})
	return err
}

func updateWrites(base []string, updates map[string]any) ([]write, error) {
	rels := make([]string, 0, len(updates))
	for k := range updates {
		rels = append(rels, k)
	}
	sort.Strings(rels)
	ws := make([]write, 0, len(rels))
	for _, rel := range rels {
		if !pathOK(rel) {
			_, err := ParsePath(rel)
			return nil, errorf(ErrInvalidData, "invalid update path %q: %v", rel, err)
		}
		full := keysUnder(base, rel)
		if len(full) == len(base) {
			return nil, errorf(ErrInvalidData, "an update path must not be empty")
		}
		if len(full) > MaxDepth {
			return nil, errorf(ErrInvalidPath, "path %s is deeper than %d levels", joinPath(full), MaxDepth)
		}
		for _, w := range ws {
			if rtdb.IsPathPrefix(w.keys, full) || rtdb.IsPathPrefix(full, w.keys) {
				return nil, errorf(ErrInvalidData, "update paths %s and %s overlap: a path can't be an ancestor of another in one update", joinPath(w.keys), joinPath(full))
			}
		}
		ws = append(ws, write{keys: full, raw: updates[rel]})
	}
	return ws, nil
}

// keysUnder is base followed by the keys of rel, a path ParsePath
// accepts, in one allocation (ParsePath's keys and a copy of base with
// them appended took two per updated path).
func keysUnder(base []string, rel string) []string {
	n := len(base)
	for k := range strings.SplitSeq(rel, "/") {
		if k != "" {
			n++
		}
	}
	keys := make([]string, len(base), n)
	copy(keys, base)
	for k := range strings.SplitSeq(rel, "/") {
		if k != "" {
			keys = append(keys, k)
		}
	}
	return keys
}

// Push writes value under a new server-minted push id at path and returns
// the id.
func (d *Database) Push(who identity.Identity, nsName, path string, value any) (string, error) {
	keys, err := ParsePath(path)
	if err != nil {
		return "", err
	}
	id := d.PushID()
	full := append(append([]string(nil), keys...), id)
	if _, err := d.commit(d.ns(nsName), who, full, "", []write{{keys: full, raw: value}}, false, WriteOptions{Method: "push"}); err != nil {
		return "", err
	}
	return id, nil
}

// Clear deletes every value of a namespace (the emulator's clear).
func (d *Database) Clear(nsName string) error {
	_, err := d.commit(d.ns(nsName), identity.AdminIdentity(), nil, "", []write{{keys: nil, raw: nil}}, false, WriteOptions{Method: "clear"})
	return err
}

// normalizeWrite turns a write's raw value into the stored form, turning a
// trailing .priority key into a write of the node with that priority.
func normalizeWrite(root any, w write, now int64) (write, any, error) {
	old := getAt(root, w.keys)
	if n := len(w.keys); n > 0 && w.keys[n-1] == ".priority" {
		p, err := normalizePriority(w.raw, old, now)
		if err != nil {
			return w, nil, err
		}
		parent := w.keys[:n-1]
		return write{keys: parent, shares: true}, setPriority(getAt(root, parent), p), nil
	}
	if stored(w.raw, len(w.keys)) {
		// What normalize would return is an equal copy: the value sent
		// serves as it is (the request's event holds it already), and
		// only the tree gets a copy of its own.
		w.borrowed = true
		return w, w.raw, nil
	}
	// Production's 32-level limit counts the path and the value together.
	v, err := normalize(w.raw, old, now, len(w.keys))
	return w, v, err
}

// commit applies writes atomically as who. base is the request path (for
// rules and events); merge marks a multi-path update.
func (d *Database) commit(ns *namespace, who identity.Identity, base []string, path string, ws []write, merge bool, opts WriteOptions) ([]change, error) {
	if len(ws) == 0 {
		return nil, nil // an empty update changes nothing
	}
	ns.mu.Lock()
	defer ns.mu.Unlock()
	at := d.env.Now()
	now := at.UnixMilli()
	seen := seenOf(base, ws, merge)
	// A set's one write takes no allocation for itself.
	var one [1]write
	var norm []write
	if len(ws) <= len(one) {
		norm = one[:len(ws)]
	} else {
		norm = make([]write, len(ws))
	}
	vals := make([]any, len(ws))
	for i, w := range ws {
		nw, v, err := normalizeWrite(ns.root, w, now)
		if err != nil {
			d.emitWrite(ns.name, opts.Method, joinPath(base), who, vError, nil, err.Error(), seen)
			return nil, err
		}
		norm[i], vals[i] = nw, v
	}
	if opts.IfHash != nil || opts.IfMatch != "" {
		cur := getAt(ns.root, norm[0].keys)
		if (opts.IfHash != nil && Hash(cur) != *opts.IfHash) || (opts.IfMatch != "" && ETag(cur) != opts.IfMatch) {
			d.emitWrite(ns.name, opts.Method, joinPath(base), who, vStale, nil, "datastale: the value changed since it was read", seen)
			return nil, &Stale{Current: clone(cur), ETag: ETag(cur)}
		}
	}
	// The request's path, rendered once for the rules, the event and
	// any error (the caller's path as sent, when that is the rendering):
	// a set's is its write's.
	basePath := pathOf(path, base)
	var req rtdb.Request
	if !who.IsAdmin() { // admin bypasses the rules: decide reads no request
		req = writeRequest(ns.root, base, basePath, norm, vals, merge)
	}
	ok, dec, reason := d.decide(ns, who, req)
	if !ok {
		exp := d.emitWrite(ns.name, opts.Method, basePath, who, vDeny, dec, reason, seen)
		return nil, &Denied{Path: basePath, Op: "write", Reason: reason, Why: why(exp)}
	}
	// The request event goes out with the commit's, in one batch, once
	// the write is stored (alone if it is not).
	reqEv, _ := d.requestEvent(ns.name, opts.Method, basePath, who, vAllow, dec, reason, seen)
	// Before the tree changes in place: the replaced values (detached by
	// the write, so they stay as they are) and the shapes persistence
	// compares against.
	changes := make([]change, len(norm))
	scopes, scoped := d.scopes(ns, norm)
	for i, w := range norm {
		old := getAt(ns.root, w.keys)
		if w.shares {
			old = clone(old)
		}
		changes[i] = change{keys: w.keys, old: old}
		if scopes != nil {
			changes[i].scope = scopes[i]
		}
		if d.env.Bucket != nil {
			changes[i].shape = shapeAlong(ns.root, w.keys)
		}
	}
	for i, w := range norm {
		v := vals[i]
		if w.borrowed {
			v = clone(v)
		}
		ns.root = setAt(ns.root, w.keys, v)
	}
	// What the write stored, as a copy: events, pushes and the caller take
	// it out of the lock. A borrowed value is such a copy already.
	for i := range changes {
		if norm[i].borrowed {
			changes[i].new = vals[i]
			continue
		}
		changes[i].new = clone(getAt(ns.root, changes[i].keys))
	}
	// The commit events, held in the outbox by the same durable record as
	// the write when a consumer must see them across a crash (the
	// functions' triggers).
	evs := d.commitEvents(ns.evs[:0], reqEv, ns.name, opts.Method, who, changes, time.UnixMilli(now), base, basePath)
	var held []service.LogChange
	if o := d.env.Outbox; o != nil && d.env.Log != nil {
		held = o.Hold(evs[1:])
	}
	if d.env.Bucket != nil {
		if err := d.persistWrites(ns.name, ns.root, changes, held); err != nil {
			d.env.Events.Emit(reqEv)
			// Nothing of the write is stored: the store has the state
			// before it, which the tree took in place. Rebuild from it.
			if rerr := d.reloadTree(ns); rerr != nil {
				return nil, fmt.Errorf("persist %s: %w (and reloading the tree: %v)", basePath, err, rerr)
			}
			return nil, fmt.Errorf("persist %s: %w", basePath, err)
		}
	}
	ns.maintainIndexes(changes)
	scoped()
	event.EmitBatch(d.env.Events, evs)
	ns.keepEvents(evs)
	// Revoke first: a listen the write makes unreadable gets no more data.
	d.recheckListens(ns, changes)
	d.notify(ns, base, changes, merge)
	return changes, nil
}

// keepEvents keeps a commit's emitted batch evs, emptied, for the next
// commit's; a large one is left to the collector. Caller holds ns.mu for
// writing.
func (ns *namespace) keepEvents(evs []event.Event) {
	if cap(evs) > 8 {
		ns.evs = nil
		return
	}
	clear(evs) // the events' documents are the history's now, not ours
	ns.evs = evs[:0]
}

// writeRequest is the rules request of a commit's writes norm (their
// stored values vals) at base (rendered basePath) over the tree root;
// merge marks a multi-path update.
func writeRequest(root any, base []string, basePath string, norm []write, vals []any, merge bool) rtdb.Request {
	req := rtdb.Request{Operation: rtdb.Write, Path: basePath, Data: root, NewData: vals[0]}
	if !merge && !slices.Equal(norm[0].keys, base) {
		req.Path = joinPath(norm[0].keys)
	}
	if merge {
		req.Updates = make(map[string]any, len(norm))
		for i, w := range norm {
			req.Updates[strings.Join(w.keys[len(base):], "/")] = vals[i]
		}
	}
	return req
}

// maintainIndexes moves the children that changed in every index below
// the written paths, and drops indexes a write replaced whole. Caller
// holds ns.mu for writing, after the tree changed.
func (ns *namespace) maintainIndexes(changes []change) {
	ns.idxMu.Lock()
	defer ns.idxMu.Unlock()
next:
	for id, ix := range ns.indexes {
		lkeys, _ := ParsePath(id[:strings.IndexByte(id, 0)])
		touched := map[string]bool{}
		for _, c := range changes {
			if len(c.keys) <= len(lkeys) {
				if rtdb.IsPathPrefix(c.keys, lkeys) {
					delete(ns.indexes, id)
					continue next
				}
				continue
			}
			if rtdb.IsPathPrefix(lkeys, c.keys) {
				touched[c.keys[len(lkeys)]] = true
			}
		}
		if len(touched) == 0 {
			continue
		}
		m, _ := isNode(getAt(ns.root, lkeys))
		if m == nil || mapID(m) != ix.src {
			// Pruned, or a new node: the next query rebuilds it.
			delete(ns.indexes, id)
			continue
		}
		for k := range touched {
			ix.update(k, m[k])
		}
	}
}

// Equal reports whether two stored values are the same data (priorities
// included).
func Equal(a, b any) bool { return reflect.DeepEqual(a, b) }

var adminWho = identity.AdminIdentity()

// DecodeJSON decodes a request body: objects as map[string]any, arrays as
// []any, numbers as float64 (as json.Number when they do not fit one,
// which normalize refuses, naming the number).
func DecodeJSON(b []byte) (any, error) {
	// encoding/json would store invalid UTF-8 and lone surrogate escapes
	// as U+FFFD, silently changing the data; production refuses the body.
	if !utf8.Valid(b) || loneSurrogate(b) {
		return nil, errorf(ErrInvalidData, "Invalid data; couldn't parse JSON object, array, or value.")
	}
	v, ok := parseJSON(b)
	if !ok {
		return nil, errorf(ErrInvalidData, "Invalid data; couldn't parse JSON object, array, or value.")
	}
	return v, nil
}

// loneSurrogate reports whether JSON text holds a \u escape of a UTF-16
// surrogate that is not half of a pair.
func loneSurrogate(b []byte) bool {
	// escape reads the \uXXXX escape at b[i:].
	escape := func(i int) (rune, bool) {
		if i+6 > len(b) || b[i] != '\\' || b[i+1] != 'u' {
			return 0, false
		}
		return jsonstr.Hex4(b, i+2)
	}
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' {
			continue
		}
		r, ok := escape(i)
		if !ok {
			i++ // another escape: skip the escaped byte
			continue
		}
		switch {
		case r >= 0xD800 && r <= 0xDBFF:
			lo, ok := escape(i + 6)
			if !ok || lo < 0xDC00 || lo > 0xDFFF {
				return true
			}
			i += 11
		case r >= 0xDC00 && r <= 0xDFFF:
			return true
		default:
			i += 5
		}
	}
	return false
}

// LoadRulesFile reads a database.rules.json and makes it the rules of
// every namespace without rules of its own (serve's --database-rules and
// its hot reload). A file that does not compile leaves the rules in force
// and returns the diagnostics.
func (d *Database) LoadRulesFile(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("database rules: %w", err)
	}
	d.mu.Lock()
	d.opts.RulesName = filepath.Base(path)
	d.mu.Unlock()
	return d.SetDefaultRules(string(b))
}
