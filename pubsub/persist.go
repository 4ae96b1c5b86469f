package pubsub

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"runtime"
	"sync"

	"github.com/google/btree"

	"github.com/pyric/pyric/sandbox/service"
)

// The bucket's key space:
//
//	t/<topic name>            a Topic
//	s/<subscription name>     a subState's record (config + queue uid)
//	n/<snapshot name>         a snapshot's record (config + queue uid)
//	x/<schema name>           a Schema
//	q/<uid>/<seq:8 bytes BE>  one message in one queue (a subscription's
//	                          or a snapshot's): a record; or the messages
//	                          of one publish from seq on: a segment
//	k/<uid>/<seq:8 bytes BE>  a segment's acknowledged messages, a bitmap
//	                          (segment.go)
//	lastId                    the newest message id
//	epoch                     bumped at every open; ack ids carry it
//
// A queue's uid changes when it is emptied wholesale (Seek, detach), so
// records a concurrent publish writes under the old uid are garbage that
// the next open deletes, never messages of the new queue.
var (
	keyLastID = []byte("lastId")
	keyEpoch  = []byte("epoch")
)

func topicKey(name string) []byte { return []byte("t/" + name) }
func subKey(name string) []byte   { return []byte("s/" + name) }
func snapKey(name string) []byte  { return []byte("n/" + name) }
func queuePrefix(uid string) []byte {
	return []byte("q/" + uid + "/")
}
func queueKey(uid string, seq uint64) []byte {
	k := make([]byte, 0, len(uid)+11) // one allocation per key
	k = append(append(append(k, "q/"...), uid...), '/')
	return binary.BigEndian.AppendUint64(k, seq)
}

// record is one message in one queue as stored.
type record struct {
	Msg      *Message `json:"m"`
	Attempts int      `json:"a,omitempty"`
	Acked    bool     `json:"k,omitempty"`
}

// subRecord is a subscription as stored.
type subRecord struct {
	Config *Subscription `json:"config"`
	UID    string        `json:"uid"`
}

// snapRecord is a snapshot as stored.
type snapRecord struct {
	Config *Snapshot `json:"config"`
	UID    string    `json:"uid"`
}

func putJSON(tx service.Tx, key []byte, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return tx.Put(key, b)
}

// committer group-commits: concurrent writers' functions run in one
// bucket transaction, so 64 publishers cost one write, not 64.
type committer struct {
	b    service.Bucket
	reqs chan *commitReq
	stop chan struct{}
	done chan struct{}
}

type commitReq struct {
	fn  func(service.Tx) error
	err chan error
}

// maxGroup bounds how many writers share one transaction.
const maxGroup = 512

func newCommitter(b service.Bucket) *committer {
	c := &committer{b: b, reqs: make(chan *commitReq, maxGroup), stop: make(chan struct{}), done: make(chan struct{})}
	go c.loop()
	return c
}

// do runs fn in a durable transaction shared with concurrent callers and
// returns once it is committed. An error of fn fails the whole group.
func (c *committer) do(fn func(service.Tx) error) error {
	r := &commitReq{fn: fn, err: make(chan error, 1)}
	select {
	case c.reqs <- r:
	case <-c.stop:
		return &Error{Kind: ErrUnavailable, Msg: "The Pub/Sub service is shutting down."}
	}
	return <-r.err
}

func (c *committer) loop() {
	defer close(c.done)
	for {
		var first *commitReq
		select {
		case first = <-c.reqs:
		case <-c.stop:
			// Answer whoever got in before stop.
			for {
				select {
				case r := <-c.reqs:
					r.err <- &Error{Kind: ErrUnavailable, Msg: "The Pub/Sub service is shutting down."}
				default:
					return
				}
			}
		}
		group := []*commitReq{first}
		// Writers that were just answered are about to send their next
		// change: yield once so they join this transaction rather than
		// wait for the next one.
		runtime.Gosched()
	drain:
		for len(group) < maxGroup {
			select {
			case r := <-c.reqs:
				group = append(group, r)
			default:
				break drain
			}
		}
		err := c.b.Update(func(tx service.Tx) error {
			for _, r := range group {
				if err := r.fn(tx); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			err = &Error{Kind: ErrUnavailable, Msg: fmt.Sprintf("The Pub/Sub service could not persist the change: %v", err)}
		}
		for _, r := range group {
			r.err <- err
		}
	}
}

func (c *committer) close() {
	close(c.stop)
	<-c.done
}

// memBucket is the engine's bucket when the sandbox is in memory: an
// ordered tree, copied on write (btree clones are lazy), so an Update
// that fails changes nothing and a View sees one consistent state.
type memBucket struct {
	mu   sync.Mutex // one writer at a time
	cur  *btree.BTreeG[kv]
	rmu  sync.RWMutex
	size int64
	// cloneMu serializes Clone calls (see clone).
	cloneMu sync.Mutex
}

type kv struct{ k, v []byte }

func kvLess(a, b kv) bool { return bytes.Compare(a.k, b.k) < 0 }

func newMemBucket() *memBucket { return &memBucket{cur: btree.NewG(32, kvLess)} }

func (m *memBucket) tree() *btree.BTreeG[kv] {
	m.rmu.RLock()
	defer m.rmu.RUnlock()
	return m.cur
}

// clone is a copy-on-write copy of the current tree. btree's Clone writes
// to the tree it copies (it hands its nodes to a new owner), so two
// clones of one tree — a writer's and a reader's — must not run at once.
func (m *memBucket) clone() *btree.BTreeG[kv] {
	m.cloneMu.Lock()
	defer m.cloneMu.Unlock()
	return m.tree().Clone()
}

func (m *memBucket) Update(fn func(service.Tx) error) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.clone()
	tx := &memTx{t: t, size: m.size}
	if err := fn(tx); err != nil {
		return err
	}
	m.rmu.Lock()
	m.cur, m.size = t, tx.size
	m.rmu.Unlock()
	return nil
}

func (m *memBucket) View(fn func(service.Tx) error) error {
	return fn(&memTx{t: m.clone(), ro: true})
}

// bytes is the bucket's approximate size.
func (m *memBucket) bytes() int64 {
	m.rmu.RLock()
	defer m.rmu.RUnlock()
	return m.size
}

type memTx struct {
	t    *btree.BTreeG[kv]
	ro   bool
	size int64
}

func (t *memTx) Get(key []byte) []byte {
	if it, ok := t.t.Get(kv{k: key}); ok {
		return it.v
	}
	return nil
}

func (t *memTx) Put(key, value []byte) error {
	if t.ro {
		return fmt.Errorf("pubsub: write in a read-only transaction")
	}
	it := kv{k: bytes.Clone(key), v: bytes.Clone(value)}
	if old, ok := t.t.ReplaceOrInsert(it); ok {
		t.size -= int64(len(old.k) + len(old.v))
	}
	t.size += int64(len(it.k) + len(it.v))
	return nil
}

func (t *memTx) Delete(key []byte) error {
	if t.ro {
		return fmt.Errorf("pubsub: write in a read-only transaction")
	}
	if old, ok := t.t.Delete(kv{k: key}); ok {
		t.size -= int64(len(old.k) + len(old.v))
	}
	return nil
}

func (t *memTx) ForEach(prefix []byte, fn func(key, value []byte) error) error {
	var err error
	t.t.AscendGreaterOrEqual(kv{k: prefix}, func(it kv) bool {
		if !bytes.HasPrefix(it.k, prefix) {
			return false
		}
		err = fn(it.k, it.v)
		return err == nil
	})
	return err
}

func (t *memTx) DeletePrefix(prefix []byte) error {
	var keys [][]byte
	_ = t.ForEach(prefix, func(k, _ []byte) error { keys = append(keys, k); return nil })
	for _, k := range keys {
		if err := t.Delete(k); err != nil {
			return err
		}
	}
	return nil
}
