package storage

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/pyric/pyric/event"
	srules "github.com/pyric/pyric/rules/storage"
	"github.com/pyric/pyric/sandbox/service"
)

// Service is the engine's service name: its events' service, its snapshot
// key and its bucket's name.
const Service = "storage"

// Options configure an Engine.
type Options struct {
	// Firestore resolves firestore.get()/firestore.exists() in rules
	// (pyric's own Firestore, default database). Nil makes every lookup
	// fail, so a rule that needs one denies.
	Firestore srules.FirestoreLookup
	// MaxObjectSize caps one object's bytes; 0 means 5 TiB (GCS's limit) on
	// disk and 1 GiB in memory.
	MaxObjectSize int64
	// MaxUploads caps concurrent resumable upload sessions; 0 means 1000.
	MaxUploads int
}

// Engine is the Cloud Storage engine. It is safe for concurrent use.
type Engine struct {
	env   service.Env
	opts  Options
	blobs blobStore

	mu      sync.RWMutex
	buckets map[string]*bucket
	lastGen int64
	views   viewCache
	pending pendingSet // commits waiting for the log (pending.go)

	live      *Rules
	rulesMu   sync.RWMutex // guards firestore
	firestore srules.FirestoreLookup

	uploadsMu sync.Mutex
	uploads   map[string]*Upload
}

// bucket is one bucket's objects with a lazily merged sorted name index:
// new names wait in pending and deleted ones are filtered out when a list
// next needs the order, so neither a write nor a list is O(n) per call
// when the other is not happening.
type bucket struct {
	objects map[string]*Object
	sorted  []string
	pending []string
	dirty   bool // sorted may hold deleted names
}

func newBucket() *bucket { return &bucket{objects: map[string]*Object{}} }

func (b *bucket) put(o *Object) {
	if _, ok := b.objects[o.Name]; !ok {
		b.pending = append(b.pending, o.Name)
	}
	b.objects[o.Name] = o
}

func (b *bucket) del(name string) {
	if _, ok := b.objects[name]; ok {
		delete(b.objects, name)
		b.dirty = true
	}
}

// names returns every object name in order; the caller holds the engine's
// write lock (the index is rebuilt in place).
func (b *bucket) names() []string {
	if len(b.pending) == 0 && !b.dirty {
		return b.sorted
	}
	sort.Strings(b.pending)
	merged := make([]string, 0, len(b.sorted)+len(b.pending))
	i, j := 0, 0
	add := func(n string) {
		if _, ok := b.objects[n]; ok && (len(merged) == 0 || merged[len(merged)-1] != n) {
			merged = append(merged, n)
		}
	}
	for i < len(b.sorted) || j < len(b.pending) {
		switch {
		case j >= len(b.pending) || (i < len(b.sorted) && b.sorted[i] <= b.pending[j]):
			add(b.sorted[i])
			i++
		default:
			add(b.pending[j])
			j++
		}
	}
	b.sorted, b.pending, b.dirty = merged, nil, false
	return b.sorted
}

// New creates the engine, restoring the objects env.Bucket holds and
// dropping blobs no object names (an upload a crash interrupted).
func New(env service.Env, opts Options) (*Engine, error) {
	if env.Now == nil {
		env.Now = time.Now
	}
	if env.Events == nil {
		env.Events = event.Discard
	}
	if env.Project == "" {
		env.Project = "demo-pyric"
	}
	e := &Engine{env: env, opts: opts, buckets: map[string]*bucket{}, uploads: map[string]*Upload{}, firestore: opts.Firestore}
	e.live = newRules(e)
	if env.DataDir == "" {
		e.blobs = newMemBlobs()
		if e.opts.MaxObjectSize == 0 {
			e.opts.MaxObjectSize = 1 << 30
		}
	} else {
		d, err := newDiskBlobs(filepath.Join(env.DataDir, Service), env.SyncEach)
		if err != nil {
			return nil, fmt.Errorf("storage: data dir: %w", err)
		}
		e.blobs = d
	}
	if e.opts.MaxObjectSize == 0 {
		e.opts.MaxObjectSize = 5 << 40
	}
	if e.opts.MaxUploads == 0 {
		e.opts.MaxUploads = 1000
	}
	if err := e.load(); err != nil {
		return nil, err
	}
	e.checkBlobs()
	if err := e.loadUploads(); err != nil {
		return nil, err
	}
	return e, nil
}

// Factory is the service.Factory of the engine with opts.
func Factory(opts Options) service.Factory {
	return func(env service.Env) (service.Service, error) { return New(env, opts) }
}

// Name implements service.Service.
func (e *Engine) Name() string { return Service }

// Project is the engine's project.
func (e *Engine) Project() string { return e.env.Project }

// DefaultBuckets are the project's two default bucket names: the legacy
// <project>.appspot.com and the <project>.firebasestorage.app form.
func (e *Engine) DefaultBuckets() []string {
	return []string{e.env.Project + ".appspot.com", e.env.Project + ".firebasestorage.app"}
}

// SetFirestore sets the lookup firestore.get()/exists() use.
func (e *Engine) SetFirestore(l srules.FirestoreLookup) {
	e.rulesMu.Lock()
	e.firestore = l
	e.rulesMu.Unlock()
}

// Buckets lists the buckets: the defaults and every bucket written to.
func (e *Engine) Buckets() []string {
	e.mu.RLock()
	defer e.mu.RUnlock()
	set := map[string]bool{}
	for _, b := range e.DefaultBuckets() {
		set[b] = true
	}
	for b := range e.buckets {
		set[b] = true
	}
	out := make([]string, 0, len(set))
	for b := range set {
		out = append(out, b)
	}
	sort.Strings(out)
	return out
}

// Keys in the service's Bucket: one per bucket created explicitly,
// b/<bucket>, and, without a Log (or from a version before the objects
// moved to it), one per object, o/<bucket>\x00<name>.
const (
	objPrefix    = "o/"
	bucketPrefix = "b/"
)

// objectSpace is the space of the service's Log holding each object's
// metadata at <bucket>\x00<name>: a change is one record appended to the
// store's write-ahead log (a write of the log file), not a transaction
// of the store's file (pages and its meta page written, a third of a
// small upload's CPU time).
const objectSpace = "objects"

func objLogKey(bucket, name string) string { return bucket + "\x00" + name }

// CreateBucket creates an empty bucket (buckets are also created by their
// first write). Creating an existing bucket is a no-op.
func (e *Engine) CreateBucket(name string) error {
	if err := ValidateBucket(name); err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.buckets[name] != nil {
		return nil
	}
	if e.env.Bucket != nil {
		if err := e.env.Bucket.Update(func(tx service.Tx) error { return tx.Put([]byte(bucketPrefix+name), []byte("{}")) }); err != nil {
			return fmt.Errorf("storage: create bucket %s: %w", name, err)
		}
	}
	e.bucketFor(name)
	return nil
}

// HasBucket reports whether the bucket exists: a default one, created, or
// written to.
func (e *Engine) HasBucket(name string) bool {
	for _, b := range e.DefaultBuckets() {
		if b == name {
			return true
		}
	}
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.buckets[name] != nil
}

func objKey(bucket, name string) []byte {
	return []byte(objPrefix + bucket + "\x00" + name)
}

func (e *Engine) load() error {
	var objs []*Object
	decode := func(v []byte) error {
		rec := objectRecord{Object: new(Object)}
		if err := json.Unmarshal(v, &rec); err != nil {
			return err
		}
		if rec.Inline {
			e.blobs.adopt(rec.Generation, rec.Data)
		}
		objs = append(objs, rec.Object)
		return nil
	}
	var legacy []service.LogChange // objects the Bucket holds, for the Log
	if e.env.Bucket != nil {
		err := e.env.Bucket.View(func(tx service.Tx) error {
			if err := tx.ForEach([]byte(bucketPrefix), func(k, _ []byte) error {
				e.bucketFor(string(k[len(bucketPrefix):]))
				return nil
			}); err != nil {
				return err
			}
			return tx.ForEach([]byte(objPrefix), func(k, v []byte) error {
				if e.env.Log != nil {
					legacy = append(legacy, service.LogChange{Key: string(k[len(objPrefix):]), Value: bytes.Clone(v)})
					return nil
				}
				return decode(v)
			})
		})
		if err != nil {
			return fmt.Errorf("storage: load: %w", err)
		}
	}
	if e.env.Log != nil {
		if err := e.moveToLog(legacy); err != nil {
			return fmt.Errorf("storage: move the objects' metadata into the log: %w", err)
		}
		err := e.env.Log.Load(func(space string, entries []service.LogChange) error {
			if space != objectSpace {
				return nil
			}
			for _, c := range entries {
				if err := decode(c.Value); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("storage: load: %w", err)
		}
	}
	live := map[int64]bool{}
	for _, o := range objs {
		e.bucketFor(o.Bucket).put(o)
		live[o.Generation] = true
		if o.Generation > e.lastGen {
			e.lastGen = o.Generation
		}
	}
	gens, err := e.blobs.list()
	if err != nil {
		return fmt.Errorf("storage: blobs: %w", err)
	}
	var orphans []int64
	for _, g := range gens {
		if !live[g] {
			orphans = append(orphans, g)
		}
		if g > e.lastGen {
			e.lastGen = g
		}
	}
	if len(orphans) > 0 && len(objs) == 0 && len(e.buckets) == 0 && e.env.Bucket != nil {
		// Files and no object at all: the metadata is gone (pyric.db
		// moved aside or replaced, --fresh), not a crash mid-write. The
		// bytes are the user's: kept, not deleted.
		dir, err := e.blobs.keepAside(orphans)
		if err != nil {
			return fmt.Errorf("storage: keep the files of objects pyric.db no longer names: %w", err)
		}
		if e.env.Warn != nil {
			e.env.Warn(fmt.Sprintf("storage: %d object files are named by no object (pyric.db is new or was replaced): moved them, unchanged, to %s; delete it to reclaim the space", len(orphans), dir))
		}
		return nil
	}
	// A crash between a blob's commit and its object's (or between an
	// object's replacement and its old blob's removal) leaves a blob no
	// object names, of a write never acknowledged or already replaced.
	for _, g := range orphans {
		e.blobs.remove(g)
	}
	return nil
}

func (e *Engine) bucketFor(name string) *bucket {
	b := e.buckets[name]
	if b == nil {
		b = newBucket()
		e.buckets[name] = b
	}
	return b
}

func (e *Engine) lookup(bucket, name string) *Object {
	if b := e.buckets[bucket]; b != nil {
		return b.objects[name]
	}
	return nil
}

// nextGen mints a generation: the clock in microseconds, as GCS does, kept
// strictly increasing. The caller holds e.mu.
func (e *Engine) nextGen() int64 {
	g := e.env.Now().UnixMicro()
	if g <= e.lastGen {
		g = e.lastGen + 1
	}
	e.lastGen = g
	return g
}

// moveToLog appends the objects a version before the Log left in the
// Bucket to the Log, then deletes them from the Bucket. A crash between
// the two leaves both copies, and the next start moves them again: no
// write comes between, so they are the same.
func (e *Engine) moveToLog(legacy []service.LogChange) error {
	if len(legacy) == 0 {
		return nil
	}
	if err := e.env.Log.Append(objectSpace, legacy); err != nil {
		return err
	}
	return e.env.Bucket.Update(func(tx service.Tx) error { return tx.DeletePrefix([]byte(objPrefix)) })
}

// objectRecord is what the Log (or the Bucket) holds of an object: its
// metadata and, when its blob is inline (blobStore.inlined), its bytes.
type objectRecord struct {
	*Object
	Inline bool   `json:"inline,omitempty"`
	Data   []byte `json:"data,omitempty"`
}

// record encodes o's objectRecord; callers hold e.mu.
func (e *Engine) record(o *Object) ([]byte, error) {
	data, inline := e.blobs.inlined(o.Generation)
	return marshalRecord(o, data, inline)
}

// persist writes the object (or its deletion, when o is nil) durably:
// to the Log, with the outbox entries of its change event (held,
// heldChange), or without one to the Bucket; an inline blob's bytes go
// with its metadata, in every record of it.
func (e *Engine) persist(bucket, name string, o *Object, held ...service.LogChange) error {
	if e.env.Log != nil {
		var rec *[]byte
		var v []byte
		if o != nil {
			var err error
			if rec, v, err = e.pooledRecord(o); err != nil {
				return err
			}
		}
		err := e.env.Log.Append(objectSpace, append([]service.LogChange{{Key: objLogKey(bucket, name), Value: v}}, held...))
		putRecordBuf(rec)
		return err
	}
	var v []byte
	if o != nil {
		var err error
		if v, err = e.record(o); err != nil {
			return err
		}
	}
	if e.env.Bucket == nil {
		return nil
	}
	return e.env.Bucket.Update(func(tx service.Tx) error {
		if v == nil {
			return tx.Delete(objKey(bucket, name))
		}
		return tx.Put(objKey(bucket, name), v)
	})
}

// queuePersist is persist through a queued log (service.QueuedLog): the
// record takes its place in the log now, under e.mu, and is durable once
// the wait returns nil, which the caller calls after releasing e.mu. The
// wait is nil when the engine's Log is not a queued one: then the object
// was persisted here, as persist does. A nil o queues a delete's record.
func (e *Engine) queuePersist(bucket, name string, o *Object, held ...service.LogChange) (service.LogWait, error) {
	ql, ok := e.env.Log.(service.QueuedLog)
	if !ok {
		return nil, e.persist(bucket, name, o, held...)
	}
	var rec *[]byte
	var v []byte // nil: a delete's record
	if o != nil {
		var err error
		if rec, v, err = e.pooledRecord(o); err != nil {
			return nil, err
		}
	}
	wait, err := ql.Queue(objectSpace, append([]service.LogChange{{Key: objLogKey(bucket, name), Value: v}}, held...))
	putRecordBuf(rec)
	return wait, err
}

// recordBufs are the buffers records are encoded in for a Log, which
// keeps nothing of a record after its Append or Queue returns (it copies
// it): one record's buffer serves the next, instead of a new one of a
// kilobyte or more per upload (an inline object's bytes are in it). A
// Bucket may keep the value it was given, so its records are not pooled.
var recordBufs = sync.Pool{New: func() any { b := make([]byte, 0, 2<<10); return &b }}

// recordBufKeep bounds the buffers kept: a record with large custom
// metadata does not keep its buffer.
const recordBufKeep = 64 << 10

// pooledRecord encodes o's record (record) into a buffer of recordBufs,
// which the caller gives back with putRecordBuf once the Log returned.
func (e *Engine) pooledRecord(o *Object) (*[]byte, []byte, error) {
	rec := recordBufs.Get().(*[]byte)
	data, inline := e.blobs.inlined(o.Generation)
	v, err := appendRecord((*rec)[:0], o, data, inline)
	if err != nil {
		recordBufs.Put(rec)
		return nil, nil, err
	}
	*rec = v
	return rec, v, nil
}

func putRecordBuf(rec *[]byte) {
	if rec != nil && cap(*rec) <= recordBufKeep {
		recordBufs.Put(rec)
	}
}

// Reset implements service.Service: every object, blob and upload session
// is dropped.
func (e *Engine) Reset() error {
	e.dropUploads(false)
	e.lockAllSettled()
	defer e.mu.Unlock()
	e.buckets = map[string]*bucket{}
	err := e.blobs.reset()
	return err
}

// Close implements service.Closer: open upload sessions are closed; on
// disk they resume at the next start.
func (e *Engine) Close() error {
	e.dropUploads(true)
	if d, ok := e.blobs.(*diskBlobs); ok {
		d.close()
	}
	return nil
}

// ValidateBucket checks a bucket name: 3 to 222 characters of lowercase
// letters, digits, '-', '_' and '.'.
func ValidateBucket(name string) error {
	if len(name) < 3 || len(name) > 222 {
		return errorf(InvalidArgument, "Invalid bucket name: '%s'", name)
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return errorf(InvalidArgument, "Invalid bucket name: '%s'", name)
		}
	}
	return nil
}

// ValidateName checks an object name as GCS does: 1 to 1024 bytes of
// UTF-8 without carriage returns or line feeds, and not "." or "..".
func ValidateName(name string) error {
	switch {
	case name == "":
		return errorf(InvalidArgument, "Object name is required.")
	case len(name) > 1024:
		return errorf(InvalidArgument, "The object name is too long: %d bytes (at most 1024).", len(name))
	case !utf8.ValidString(name):
		return errorf(InvalidArgument, "The object name is not valid UTF-8.")
	case strings.ContainsAny(name, "\r\n\x00"):
		return errorf(InvalidArgument, "The object name must not contain carriage returns, line feeds or NUL.")
	case name == "." || name == "..":
		return errorf(InvalidArgument, "The object name must not be '.' or '..'.")
	}
	return nil
}

func validate(bucket, name string) error {
	if err := ValidateBucket(bucket); err != nil {
		return err
	}
	return ValidateName(name)
}

// Registration is the service's sandbox registration.
func Registration(opts Options) service.Registration {
	return service.Registration{Name: Service, New: Factory(opts)}
}
