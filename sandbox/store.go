package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	bolt "go.etcd.io/bbolt"
	"google.golang.org/protobuf/proto"

	"github.com/pyric/pyric/firestore"
)

// Store is the crash-safe on-disk state: a bbolt file with one bucket per
// Firestore database, keyed by relative document path, holding the
// document protos, and the Auth engine's state as one JSON value. Every
// commit is one bbolt transaction, fsync'd before the engine acknowledges
// it, so a write acknowledged to a client survives kill -9.
type Store struct {
	db *bolt.DB
}

var (
	firestoreBucket = []byte("firestore")
	authBucket      = []byte("auth")
	authStateKey    = []byte("state")
)

// OpenStore opens (creating) dir/pyric.db.
func OpenStore(dir string) (*Store, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("sandbox: data dir: %w", err)
	}
	db, err := bolt.Open(filepath.Join(dir, "pyric.db"), 0o600, &bolt.Options{Timeout: 2 * time.Second})
	if errors.Is(err, bolt.ErrTimeout) {
		return nil, fmt.Errorf("sandbox: %s is in use by another process (another pyric on the same data directory?)", filepath.Join(dir, "pyric.db"))
	}
	if err != nil {
		return nil, fmt.Errorf("sandbox: open store: %w", err)
	}
	return &Store{db: db}, nil
}

// Close closes the file.
func (s *Store) Close() error { return s.db.Close() }

// Commit implements firestore.Persister.
func (s *Store) Commit(name firestore.DatabaseName, _ time.Time, changes []firestore.Change) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		root, err := tx.CreateBucketIfNotExists(firestoreBucket)
		if err != nil {
			return err
		}
		b, err := root.CreateBucketIfNotExists([]byte(name.String()))
		if err != nil {
			return err
		}
		for _, c := range changes {
			if c.Doc == nil {
				if err := b.Delete([]byte(c.Path)); err != nil {
					return err
				}
				continue
			}
			data, err := proto.MarshalOptions{Deterministic: true}.Marshal(c.Doc)
			if err != nil {
				return err
			}
			if err := b.Put([]byte(c.Path), data); err != nil {
				return err
			}
		}
		return nil
	})
}

// Load reads every stored document.
func (s *Store) Load() (map[firestore.DatabaseName][]*pb.Document, error) {
	out := map[firestore.DatabaseName][]*pb.Document{}
	err := s.db.View(func(tx *bolt.Tx) error {
		root := tx.Bucket(firestoreBucket)
		if root == nil {
			return nil
		}
		return root.ForEachBucket(func(k []byte) error {
			name, err := firestore.ParseDatabaseName(string(k))
			if err != nil {
				return err
			}
			return root.Bucket(k).ForEach(func(path, v []byte) error {
				d := &pb.Document{}
				if err := proto.Unmarshal(v, d); err != nil {
					return fmt.Errorf("document %s: %w", path, err)
				}
				out[name] = append(out[name], d)
				return nil
			})
		})
	})
	if err != nil {
		return nil, fmt.Errorf("sandbox: load store: %w", err)
	}
	return out, nil
}

// LoadAuth returns the whole-state Auth blob versions before the service
// contract kept, nil when there is none.
func (s *Store) LoadAuth() ([]byte, error) {
	var out []byte
	err := s.db.View(func(tx *bolt.Tx) error {
		if b := tx.Bucket(authBucket); b != nil {
			if v := b.Get(authStateKey); v != nil {
				out = append([]byte(nil), v...)
			}
		}
		return nil
	})
	return out, err
}

// Clear deletes every service's stored state.
func (s *Store) Clear() error {
	return s.db.Update(func(tx *bolt.Tx) error {
		var names [][]byte
		if err := tx.ForEach(func(name []byte, _ *bolt.Bucket) error {
			names = append(names, append([]byte(nil), name...))
			return nil
		}); err != nil {
			return err
		}
		for _, name := range names {
			if err := tx.DeleteBucket(name); err != nil {
				return err
			}
		}
		return nil
	})
}
