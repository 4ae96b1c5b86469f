package authtest

import (
	"path/filepath"
	"testing"

	"go.etcd.io/bbolt"

	"github.com/pyric/pyric/sandbox"
	"github.com/pyric/pyric/sandbox/service"
)

// BoltBucket is a service.Bucket in one bbolt bucket of a file: the
// sandbox's own bucket (sandbox.NewBoltBucket) on a file of the test's.
type BoltBucket struct {
	DB *bbolt.DB
	service.Bucket
}

// OpenBolt opens (creating it) the bbolt file at path and returns its
// "auth" bucket. Close it with Close.
func OpenBolt(path string) (*BoltBucket, error) {
	db, err := bbolt.Open(path, 0o600, nil)
	if err != nil {
		return nil, err
	}
	return &BoltBucket{DB: db, Bucket: sandbox.NewBoltBucket(db, "auth")}, nil
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
