package sandbox

import (
	"bytes"
	"fmt"
	"strings"

	bolt "go.etcd.io/bbolt"

	"github.com/pyric/pyric/sandbox/service"
)

// boltBucket is a service's top-level bucket in the store's bbolt file.
type boltBucket struct {
	db   *bolt.DB
	name []byte
}

// Bucket returns the durable bucket named name (created on first write).
// Firestore's bucket ("firestore") is the store's own and is not offered.
func (s *Store) Bucket(name string) service.Bucket { return NewBoltBucket(s.db, name) }

// NewBoltBucket is the service.Bucket in the top-level bbolt bucket name
// of db, created on first write: what every service's bucket in the store
// is, for tests that open a bbolt file of their own.
func NewBoltBucket(db *bolt.DB, name string) service.Bucket {
	return &boltBucket{db: db, name: []byte(name)}
}

func (b *boltBucket) Update(fn func(service.Tx) error) error {
	var hit string // the key killAfterCommitEnv names, once written
	err := b.db.Update(func(tx *bolt.Tx) error {
		bk, err := tx.CreateBucketIfNotExists(b.name)
		if err != nil {
			return err
		}
		if killAfterCommit != "" {
			return fn(boltTx{b: bk, hit: &hit})
		}
		return fn(boltTx{b: bk})
	})
	if err != nil {
		return fmt.Errorf("sandbox: %s store: %w", b.name, err)
	}
	if hit != "" {
		killAfter(hit)
	}
	return nil
}

func (b *boltBucket) View(fn func(service.Tx) error) error {
	return b.db.View(func(tx *bolt.Tx) error {
		bk := tx.Bucket(b.name)
		if bk == nil {
			return fn(emptyTx{})
		}
		return fn(boltTx{b: bk})
	})
}

type boltTx struct {
	b *bolt.Bucket
	// hit, set only under killAfterCommitEnv, is where Put notes a key
	// that contains the variable's value.
	hit *string
}

func (t boltTx) Get(key []byte) []byte { return t.b.Get(key) }

func (t boltTx) Put(key, value []byte) error {
	if t.hit != nil && *t.hit == "" && strings.Contains(string(key), killAfterCommit) {
		*t.hit = string(key)
	}
	return t.b.Put(key, value)
}

func (t boltTx) Delete(key []byte) error { return t.b.Delete(key) }

// putOutbox writes outbox changes (service.Outbox.HoldIn) into the
// outbox's record space in this transaction: the bucket a checkpoint
// applies the outbox's logged changes to, so a Log append that takes
// one (deletes it) later applies after it.
func (t boltTx) putOutbox(changes []service.LogChange) error {
	root, err := t.b.Tx().CreateBucketIfNotExists([]byte(outboxService))
	if err != nil {
		return err
	}
	ob, err := root.CreateBucketIfNotExists([]byte(outboxSpace))
	if err != nil {
		return err
	}
	for _, c := range changes {
		if c.Value == nil {
			err = ob.Delete([]byte(c.Key))
		} else {
			err = ob.Put([]byte(c.Key), c.Value)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (t boltTx) ForEach(prefix []byte, fn func(key, value []byte) error) error {
	c := t.b.Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		if v == nil { // a nested bbolt bucket: not part of the flat key space
			continue
		}
		if err := fn(k, v); err != nil {
			return err
		}
	}
	return nil
}

func (t boltTx) DeletePrefix(prefix []byte) error {
	c := t.b.Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Seek(prefix) {
		if err := c.Delete(); err != nil {
			return err
		}
	}
	return nil
}

// emptyTx is the view of a bucket that was never written.
type emptyTx struct{}

func (emptyTx) Get([]byte) []byte                                   { return nil }
func (emptyTx) Put([]byte, []byte) error                            { return bolt.ErrTxNotWritable }
func (emptyTx) Delete([]byte) error                                 { return bolt.ErrTxNotWritable }
func (emptyTx) ForEach([]byte, func(key, value []byte) error) error { return nil }
func (emptyTx) DeletePrefix([]byte) error                           { return bolt.ErrTxNotWritable }
