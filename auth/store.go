package auth

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/sandbox/service"
)

// Durability. Every public operation runs as one mutation (begin … commit)
// under the engine's lock. The space, project and tenant methods that change
// state journal each record they touch (its key, how to read its new value,
// how to undo the change in memory) and the events it caused. commit
// appends only those records to the log (the store's write-ahead log: one
// write, no bbolt transaction) before the operation returns; if the append
// fails, the changes are undone in memory, the events are dropped and the
// caller gets INTERNAL. So a sign-up costs the same with 0 or 50,000
// accounts, and an acknowledged change survives kill -9.
//
// Log layout (one space, logSpace, a flat key space; every part after the
// first byte is length-prefixed with a uvarint, so no id can collide with
// another):
//
//	'c' project                         -> ProjectConfig
//	't' project tenant                  -> Tenant
//	's' project tenant "u" localId      -> User
//	's' project tenant "o" seq(8, BE)   -> OOBCode (outbox order)
//	's' project tenant "v" sessionInfo  -> phoneCode
//	's' project tenant "i" kind/id      -> provider config
//	's' project tenant "m" id           -> pending MFA enrollment
//
// The project's own space has tenant "".

// logSpace is the one space of the log the engine writes. The store keeps
// a log space as a nested bucket of the service's bucket, beside the
// records earlier versions kept there (moveBucketRecords): its name must
// not begin with one of their kind bytes ('c', 't', 's').
const logSpace = "accounts"

const (
	kindUser    = "u"
	kindOOB     = "o"
	kindCode    = "v"
	kindIdp     = "i"
	kindPending = "m"
)

func appendPart(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// makeKey is a key of kind with parts, in one allocation.
func makeKey(kind byte, parts ...string) []byte {
	n := 1
	for _, p := range parts {
		n += uvarintLen(len(p)) + len(p)
	}
	b := append(make([]byte, 0, n), kind)
	for _, p := range parts {
		b = appendPart(b, p)
	}
	return b
}

// uvarintLen is the length of n's uvarint.
func uvarintLen(n int) int {
	l := 1
	for ; n >= 0x80; n >>= 7 {
		l++
	}
	return l
}

// keyString is makeKey's key as a string, in one allocation: the key of
// an account's write, which the log's change takes as a string.
func keyString(kind byte, parts ...string) string {
	n := 1
	for _, p := range parts {
		n += uvarintLen(len(p)) + len(p)
	}
	var sb strings.Builder
	sb.Grow(n)
	sb.WriteByte(kind)
	var l [binary.MaxVarintLen64]byte
	for _, p := range parts {
		sb.Write(binary.AppendUvarint(l[:0], uint64(len(p))))
		sb.WriteString(p)
	}
	return sb.String()
}

func configKey(p string) []byte         { return makeKey('c', p) }
func tenantKey(p, t string) []byte      { return makeKey('t', p, t) }
func spacePrefix(p, t string) []byte    { return makeKey('s', p, t) }
func spaceKey(p, t, kind string) []byte { return makeKey('s', p, t, kind) }
func userKey(p, t, id string) []byte    { return makeKey('s', p, t, kindUser, id) }
func userKeyString(p, t, id string) string {
	return keyString('s', p, t, kindUser, id)
}
func oobKey(p, t string, seq uint64) []byte {
	return recordKey(p, t, kindOOB, string(binary.BigEndian.AppendUint64(nil, seq)))
}
func recordKey(p, t, kind, id string) []byte { return makeKey('s', p, t, kind, id) }

// splitKey decodes a key's parts after its kind byte.
func splitKey(k []byte) (byte, []string, error) {
	if len(k) == 0 {
		return 0, nil, errors.New("empty key")
	}
	kind, rest := k[0], k[1:]
	var parts []string
	for len(rest) > 0 {
		n, w := binary.Uvarint(rest)
		if w <= 0 || uint64(len(rest)-w) < n {
			return 0, nil, fmt.Errorf("malformed key %q", k)
		}
		parts = append(parts, string(rest[w:w+int(n)]))
		rest = rest[w+int(n):]
	}
	return kind, parts, nil
}

// encodeUser is a user's record: its JSON, nil when it is gone. It calls
// MarshalJSON itself: json.Marshal would check and copy the same bytes
// again.
func encodeUser(u *User) ([]byte, error) {
	if u == nil {
		return nil, nil
	}
	return u.MarshalJSON()
}

// write is one journaled record: a key to put (value returns its bytes, nil
// to delete it) or, with prefix, every key to delete under it. value runs
// at commit, so it encodes the record's last state.
type write struct {
	key    string
	prefix bool
	value  func() ([]byte, error)
	// user, when value is nil, is the space whose account userID the
	// record is: encoded from the space at commit, with no closure to
	// allocate on every sign-in.
	user   *space
	userID string
}

// encode is the record's value now.
func (w write) encode() ([]byte, error) {
	if w.value == nil {
		return encodeUser(w.user.users[w.userID])
	}
	return w.value()
}

// journal collects a mutation's writes, undos and events.
type journal struct {
	open    bool // a mutation is running (events are held until commit)
	durable bool // a log is attached (undos are kept)
	writes  []write
	undos   []func()
	events  []event.Event
	// changeBuf is the last mutation's log changes (changes).
	changeBuf []service.LogChange
	// unnamed are the keys (each length-prefixed, as a key's parts are)
	// that mutations without an event wrote since the last event, and
	// unnamedAll whether one of them deleted a prefix or was rolled
	// back: the next event names them too (name).
	unnamed    []byte
	unnamedAll bool
}

// recording says whether a mutation is running: its writes are kept,
// for the log and for the records its events name.
func (j *journal) recording() bool { return j != nil && j.open }

// undoing says whether the undos are kept too: with a log, to take back
// a change the log refused.
func (j *journal) undoing() bool { return j.recording() && j.durable }

func (j *journal) record(key []byte, value func() ([]byte, error), undo func()) {
	j.recordWrite(write{key: string(key), value: value}, undo)
}

// recordUser journals the account id of space sp, at key (userKeyString).
func (j *journal) recordUser(key string, sp *space, id string, undo func()) {
	j.recordWrite(write{key: key, user: sp, userID: id}, undo)
}

func (j *journal) recordWrite(w write, undo func()) {
	if !j.recording() {
		return
	}
	// A record written again in the same mutation (a sign-up stores the
	// account, then stamps lastRefreshAt) is written once, with its last
	// value: the earlier entry takes the new value in place, unless a
	// prefix deletion since then must stay between the two.
	replaced := false
	for i := len(j.writes) - 1; i >= 0 && !j.writes[i].prefix; i-- {
		if j.writes[i].key == w.key {
			j.writes[i], replaced = w, true
			break
		}
	}
	if !replaced {
		j.writes = append(j.writes, w)
	}
	if undo != nil && j.durable {
		j.undos = append(j.undos, undo)
	}
}

func (j *journal) recordPrefix(prefix []byte, undo func()) {
	if !j.recording() {
		return
	}
	j.writes = append(j.writes, write{key: string(prefix), prefix: true})
	if undo != nil && j.durable {
		j.undos = append(j.undos, undo)
	}
}

// setMap sets (or deletes) m[k], journaling how to undo it.
func setMap[K comparable, V any](j *journal, m map[K]V, k K, v V, del bool) {
	old, had := m[k]
	if del {
		delete(m, k)
	} else {
		m[k] = v
	}
	if j.undoing() {
		j.undos = append(j.undos, func() {
			if had {
				m[k] = old
			} else {
				delete(m, k)
			}
		})
	}
}

// begin starts a mutation: it takes the lock and returns the function that
// commits (or, on a panic, undoes) it and releases the lock. Use it as
//
//	func (e *Engine) Op(...) (_ *Resp, err error) {
//		defer e.begin()(&err)
func (e *core) begin() func(*error) {
	e.mu.Lock()
	e.seq.reconcile()
	e.j.open = true
	return e.end
}

// endFunc is the function begin returns, made once per engine rather
// than on every call: it commits the mutation (or, on a panic, undoes
// it), releases the lock and, when the commit was queued (sequence.go),
// waits for it. It recovers, so it must be what defer calls.
func (e *core) endFunc() func(*error) {
	return func(errp *error) {
		if r := recover(); r != nil {
			e.rollback()
			e.mu.Unlock()
			panic(r)
		}
		t, err := e.queueCommit()
		e.mu.Unlock()
		if t != nil {
			if err = e.seq.finish(t, e.events); err != nil {
				e.mu.Lock()
				e.seq.reconcile()
				e.mu.Unlock()
			}
		}
		if err != nil {
			*errp = err
		}
	}
}

// ErrPersist is wrapped by the INTERNAL error a mutation returns when its
// change could not be written to the log.
var ErrPersist = errors.New("auth: persisting the change failed")

// persistError is the INTERNAL error of a change the log refused.
func persistError(err error) error {
	ie := Internal("INTERNAL_ERROR : " + ErrPersist.Error() + ": " + err.Error())
	ie.cause = fmt.Errorf("%w: %w", ErrPersist, err)
	return ie
}

// commit commits the running mutation and waits for it, with the lock
// held (an operation that goes on after it: a blocking function's call).
func (e *core) commit() error {
	t, err := e.queueCommit()
	if t == nil {
		return err
	}
	// The commits ahead in line finish without the lock.
	if err := e.seq.finish(t, e.events); err != nil {
		e.seq.reconcile()
		return err
	}
	return nil
}

// queueCommit ends the running mutation under the lock: it puts its
// records in the log's order, names them to its events and either emits
// the events now (nothing to wait for) or returns the commit to finish
// (sequence.go). If the log refuses the records at once, the changes are
// undone in memory, the events are dropped and it returns INTERNAL.
func (e *core) queueCommit() (*pendingCommit, error) {
	j := e.j
	defer j.reset()
	var wait service.LogWait
	if len(j.writes) > 0 && e.log != nil {
		changes, err := j.changes()
		if err == nil {
			// The events go out once the records are durable; those a
			// consumer must see across a crash are held with them.
			if e.outbox != nil {
				changes = append(changes, e.outbox.Hold(j.events)...)
			}
			wait, err = e.queue(changes)
		}
		if err != nil {
			j.undo()
			return nil, persistError(err)
		}
	}
	j.name()
	if wait == nil && !e.seq.busy() {
		for _, ev := range j.events {
			e.events.Emit(ev)
		}
		return nil, nil
	}
	return e.seq.add(wait, j), nil
}

// queue puts changes in the log's order: queued when the log can group
// concurrent appends (its wait returned), else appended (nil wait).
func (e *core) queue(changes []service.LogChange) (service.LogWait, error) {
	if q, ok := e.log.(service.QueuedLog); ok {
		return q.Queue(logSpace, changes)
	}
	return nil, e.log.Append(logSpace, changes)
}

// name tells the mutation's events the records it wrote (Event.Records,
// a token for Records), with those that mutations without an event wrote
// since the last event, so that a session capture appends exactly what
// changed. A prefix deletion is no record: its events name none, and the
// capture writes Auth's records again whole.
func (j *journal) name() {
	for _, w := range j.writes {
		if w.prefix {
			j.unnamedAll = true
			continue
		}
		j.unnamed = binary.AppendUvarint(j.unnamed, uint64(len(w.key)))
		j.unnamed = append(j.unnamed, w.key...)
	}
	if len(j.events) == 0 {
		return
	}
	tok := ""
	if !j.unnamedAll {
		tok = recordsToken + string(j.unnamed)
	}
	for i := range j.events {
		j.events[i].Records = tok
	}
	j.unnamed, j.unnamedAll = j.unnamed[:0], false
}

func (e *core) rollback() {
	e.j.undo()
	if !e.j.durable {
		// Without undos what the mutation changed stays, unnamed.
		e.j.unnamedAll = true
	}
	e.j.reset()
}

func (j *journal) undo() {
	for i := len(j.undos) - 1; i >= 0; i-- {
		j.undos[i]()
	}
}

func (j *journal) reset() {
	j.open = false
	j.writes, j.undos, j.events = j.writes[:0], j.undos[:0], j.events[:0]
}

// changes is the journal's writes as log changes, the values encoded now.
// The slice is the journal's, reused by the next mutation: the log keeps
// nothing of an append's changes once it returns.
func (j *journal) changes() ([]service.LogChange, error) {
	clear(j.changeBuf) // the previous mutation's values
	out := j.changeBuf[:0]
	for _, w := range j.writes {
		c := service.LogChange{Key: w.key, Prefix: w.prefix}
		if !w.prefix {
			v, err := w.encode()
			if err != nil {
				return nil, err
			}
			c.Value = v
		}
		out = append(out, c)
	}
	j.changeBuf = out
	return out, nil
}

// publish sends an event now, or at commit when a mutation is running.
func (e *core) publish(ev event.Event) {
	if e.j.open {
		e.j.events = append(e.j.events, ev)
		return
	}
	e.events.Emit(ev)
}

// ---- loading ----

// load reads the log into an empty engine.
func (e *core) load() error {
	projects := map[string]*project{}
	// The log's values are valid only inside Load's callback, so the
	// records are decoded there.
	err := e.log.Load(func(space string, entries []service.LogChange) error {
		if space != logSpace {
			return nil
		}
		return decodeRecords(e.j, projects, entries)
	})
	if err != nil {
		return fmt.Errorf("auth: load: %w", err)
	}
	for _, p := range projects {
		p.reindex()
	}
	e.projects = projects
	return nil
}

// decodeRecords adds records in the log's layout (entries in key order,
// as the log and a captured state's records hand them) to projects,
// creating the projects and tenants they name; callers rebuild the
// spaces' indexes after. It visits the records of one kind at a time: the
// configs, then the tenants, then the spaces' records, which need both.
func decodeRecords(j *journal, projects map[string]*project, entries []service.LogChange) error {
	proj := func(id string) *project {
		p := projects[id]
		if p == nil {
			p = newProject(j, id)
			projects[id] = p
		}
		return p
	}
	forEach := func(kind byte, fn func(k, v []byte) error) error {
		for _, en := range entries {
			if en.Key != "" && en.Key[0] == kind {
				if err := fn([]byte(en.Key), en.Value); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := forEach('c', func(k, v []byte) error {
		_, parts, err := splitKey(k)
		if err != nil || len(parts) != 1 {
			return fmt.Errorf("config key %q: %v", k, err)
		}
		p := proj(parts[0])
		var cfg ProjectConfig
		if err := json.Unmarshal(v, &cfg); err != nil {
			return fmt.Errorf("project %s config: %w", parts[0], err)
		}
		p.config = cloneConfig(cfg)
		return nil
	}); err != nil {
		return err
	}
	if err := forEach('t', func(k, v []byte) error {
		_, parts, err := splitKey(k)
		if err != nil || len(parts) != 2 {
			return fmt.Errorf("tenant key %q: %v", k, err)
		}
		var cfg Tenant
		if err := json.Unmarshal(v, &cfg); err != nil {
			return fmt.Errorf("project %s tenant %s: %w", parts[0], parts[1], err)
		}
		cfg.TenantID = parts[1]
		proj(parts[0]).addTenant(cfg)
		return nil
	}); err != nil {
		return err
	}
	return forEach('s', func(k, v []byte) error {
		_, parts, err := splitKey(k)
		if err != nil || len(parts) != 4 {
			return fmt.Errorf("record key %q: %v", k, err)
		}
		p := proj(parts[0])
		sp := p.space
		if parts[1] != "" {
			sp = p.tenant(parts[1]).space
		}
		if err := sp.loadRecord(parts[2], parts[3], v); err != nil {
			return fmt.Errorf("project %s tenant %q %s %q: %w", parts[0], parts[1], parts[2], parts[3], err)
		}
		return nil
	})
}

// reindex rebuilds the indexes of the project's spaces after records
// were added to them.
func (p *project) reindex() {
	p.space.reindex()
	for _, t := range p.tenants {
		t.space.reindex()
	}
}

// loadRecord adds one stored record of a space (indexes are rebuilt after).
func (s *space) loadRecord(kind, id string, v []byte) error {
	switch kind {
	case kindUser:
		var u User
		if err := json.Unmarshal(v, &u); err != nil {
			return err
		}
		u.LocalID = id
		s.users[id] = &u
	case kindOOB:
		var o OOBCode
		if err := json.Unmarshal(v, &o); err != nil {
			return err
		}
		if len(id) != 8 {
			return errors.New("bad sequence")
		}
		o.seq = binary.BigEndian.Uint64([]byte(id))
		s.oobs = append(s.oobs, &o)
		s.oobSeq = max(s.oobSeq, o.seq+1)
	default:
		return s.loadExtra(kind, id, v)
	}
	return nil
}

// ---- the service contract ----

// Name is the service's key in the sandbox: "auth".
func (e *Engine) Name() string { return Service }

// Snapshot returns the whole state as JSON (the State layout).
func (e *Engine) Snapshot() (json.RawMessage, error) { return json.Marshal(e.State()) }

// Restore replaces the whole state with a Snapshot's output, writing it to
// the log when there is one. On error nothing changes.
func (e *Engine) Restore(state json.RawMessage) error {
	var s Snapshot
	if err := json.Unmarshal(state, &s); err != nil {
		return fmt.Errorf("auth: snapshot: %w", err)
	}
	return e.RestoreState(s)
}

// Reset wipes the state in memory (the sandbox clears the store itself),
// emitting users_clear for every project.
func (e *Engine) Reset() error { return e.RestoreState(Snapshot{}) }

var _ service.Service = (*Engine)(nil)
