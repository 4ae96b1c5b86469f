package authtest

import (
	"bytes"
	"errors"
	"path/filepath"
	"testing"

	"github.com/pyric/pyric/sandbox/service"
	"go.etcd.io/bbolt"
)

// BoltBucket is a service.Bucket in one bbolt bucket of a file: the shape
// of the sandbox's store, small enough for tests of the engine's
// durability.
type BoltBucket struct {
	DB   *bbolt.DB
	name []byte
}

// OpenBolt opens (creating it) the bbolt file at path and returns its
// "auth" bucket. Close it with Close.
func OpenBolt(path string) (*BoltBucket, error) {
	db, err := bbolt.Open(path, 0o600, nil)
	if err != nil {
		return nil, err
	}
	return &BoltBucket{DB: db, name: []byte("auth")}, nil
}

// TempBolt opens a bucket in a new file under t.TempDir, closed when the
// test ends.
func TempBolt(t testing.TB) *BoltBucket {
	t.Helper()
	b, err := OpenBolt(filepath.Join(t.TempDir(), "auth.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

// Close closes the file.
func (b *BoltBucket) Close() error { return b.DB.Close() }

// Update runs fn in one durable write transaction.
func (b *BoltBucket) Update(fn func(service.Tx) error) error {
	return b.DB.Update(func(tx *bbolt.Tx) error {
		bk, err := tx.CreateBucketIfNotExists(b.name)
		if err != nil {
			return err
		}
		return fn(boltTx{bk})
	})
}

// View runs fn in a read-only transaction.
func (b *BoltBucket) View(fn func(service.Tx) error) error {
	return b.DB.View(func(tx *bbolt.Tx) error { return fn(boltTx{tx.Bucket(b.name)}) })
}

// boltTx is a Tx on a bbolt bucket (nil: the bucket does not exist yet).
type boltTx struct{ b *bbolt.Bucket }

var errReadOnly = errors.New("read-only transaction")

func (t boltTx) Get(key []byte) []byte {
	if t.b == nil {
		return nil
	}
	return t.b.Get(key)
}

func (t boltTx) Put(key, value []byte) error {
	if t.b == nil {
		return errReadOnly
	}
	return t.b.Put(key, value)
}

func (t boltTx) Delete(key []byte) error {
	if t.b == nil {
		return errReadOnly
	}
	return t.b.Delete(key)
}

func (t boltTx) ForEach(prefix []byte, fn func(k, v []byte) error) error {
	if t.b == nil {
		return nil
	}
	c := t.b.Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		if err := fn(k, v); err != nil {
			return err
		}
	}
	return nil
}

func (t boltTx) DeletePrefix(prefix []byte) error {
	if t.b == nil {
		return errReadOnly
	}
	var keys [][]byte
	c := t.b.Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		keys = append(keys, bytes.Clone(k))
	}
	for _, k := range keys {
		if err := t.b.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

var _ service.Bucket = (*BoltBucket)(nil)
