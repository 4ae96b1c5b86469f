package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	bolt "go.etcd.io/bbolt"
	"google.golang.org/protobuf/proto"

	"github.com/pyric/pyric/firestore"
)

// Store is the crash-safe on-disk state: a bbolt file with one bucket per
// Firestore database, keyed by relative document path, holding the
// document protos, and one bucket per other service. Every Firestore
// commit batch (the engine group-commits concurrent commits) is one bbolt
// transaction, written to the file before the engine acknowledges it, so
// a write acknowledged to a client survives kill -9; how soon it also
// survives a power loss is the SyncMode.
type Store struct {
	db   *bolt.DB
	mode SyncMode

	stop     chan struct{}
	stopped  chan struct{}
	synced   int // the last transaction id forced to disk
	syncErr  atomic.Pointer[error]
	closeMu  sync.Mutex
	isClosed bool
}

// SyncMode says when the store forces its writes to stable storage.
type SyncMode string

const (
	// SyncBatch (the default) writes each commit batch to the file (into
	// the operating system) before it is acknowledged — enough to survive
	// the process being killed, kill -9 included — and forces the file to
	// disk at most every SyncInterval, so a power loss or OS crash can lose
	// up to that much acknowledged work (and may leave the file damaged,
	// which the next open reports rather than reading). It is what a local
	// development backend needs: as durable as the official emulator is
	// not, at close to in-memory speed.
	SyncBatch SyncMode = "batch"
	// SyncAlways forces every commit batch to disk (fdatasync) before it is
	// acknowledged: acknowledged writes survive a power loss too.
	// Concurrent commits still share one sync.
	SyncAlways SyncMode = "always"
)

// SyncInterval is how often SyncBatch forces written data to disk.
const SyncInterval = time.Second

// ParseSyncMode parses a --sync flag value ("" is the default, batch).
func ParseSyncMode(s string) (SyncMode, error) {
	switch SyncMode(s) {
	case "", SyncBatch:
		return SyncBatch, nil
	case SyncAlways:
		return SyncAlways, nil
	}
	return "", fmt.Errorf("sandbox: unknown sync mode %q: want %q (survive kill -9, sync to disk every %s) or %q (sync every commit)", s, SyncBatch, SyncInterval, SyncAlways)
}

var (
	firestoreBucket = []byte("firestore")
	authBucket      = []byte("auth")
	authStateKey    = []byte("state")
)

// OpenStore opens (creating) dir/pyric.db with the default SyncBatch.
func OpenStore(dir string) (*Store, error) { return OpenStoreSync(dir, SyncBatch) }

// OpenStoreSync opens (creating) dir/pyric.db with the given sync mode.
func OpenStoreSync(dir string, mode SyncMode) (*Store, error) {
	mode, err := ParseSyncMode(string(mode))
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("sandbox: data dir: %w", err)
	}
	if err := checkStoreFile(filepath.Join(dir, "pyric.db")); err != nil {
		return nil, err
	}
	// The free page list is not written with every transaction (for a
	// large file it is several pages each time, a third of a small commit
	// batch's cost); bbolt rebuilds it at open from the tree, which costs
	// ~35 ms for 100k documents.
	db, err := bolt.Open(filepath.Join(dir, "pyric.db"), 0o600, &bolt.Options{Timeout: 2 * time.Second, NoFreelistSync: true, FreelistType: bolt.FreelistMapType})
	if errors.Is(err, bolt.ErrTimeout) {
		return nil, fmt.Errorf("sandbox: %s is in use by another process (another pyric on the same data directory?)", filepath.Join(dir, "pyric.db"))
	}
	if err != nil {
		return nil, fmt.Errorf("sandbox: open store: %w", err)
	}
	s := &Store{db: db, mode: mode}
	if mode == SyncBatch {
		db.NoSync = true
		s.stop, s.stopped = make(chan struct{}), make(chan struct{})
		go s.syncLoop()
	}
	return s, nil
}

// syncLoop forces the file to disk every SyncInterval while there are
// unsynced writes (SyncBatch).
func (s *Store) syncLoop() {
	defer close(s.stopped)
	tick := time.NewTicker(SyncInterval)
	defer tick.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-tick.C:
			s.syncNow()
		}
	}
}

// syncNow forces the file to disk if any write transaction (of any
// service's bucket) committed since the last sync. Only syncLoop and Close
// call it, one at a time.
func (s *Store) syncNow() {
	var id int
	_ = s.db.View(func(tx *bolt.Tx) error { id = tx.ID(); return nil })
	if id == s.synced {
		return
	}
	if err := s.db.Sync(); err != nil {
		s.syncErr.Store(&err)
		return
	}
	s.synced = id
}

// Mode returns the store's sync mode.
func (s *Store) Mode() SyncMode { return s.mode }

// Close forces pending writes to disk and closes the file.
func (s *Store) Close() error {
	s.closeMu.Lock()
	defer s.closeMu.Unlock()
	if s.isClosed {
		return nil
	}
	s.isClosed = true
	if s.stop != nil {
		close(s.stop)
		<-s.stopped
		s.syncNow()
	}
	return s.db.Close()
}

// Commit implements firestore.Persister.
func (s *Store) Commit(name firestore.DatabaseName, _ time.Time, changes []firestore.Change) error {
	if p := s.syncErr.Load(); p != nil {
		// The disk refused a sync: what was acknowledged since may not be
		// durable; stop acknowledging more.
		return fmt.Errorf("the data file could not be synced to disk: %w", *p)
	}
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
			data := c.Data
			if data == nil {
				var err error
				if data, err = (proto.MarshalOptions{Deterministic: true}).Marshal(c.Doc); err != nil {
					return err
				}
			}
			if err := b.Put([]byte(c.Path), data); err != nil {
				return err
			}
		}
		return nil
	})
}

// LoadStored returns every stored Firestore document, encoded, by
// database, in path order, for firestore.Engine.RestoreStored. The
// encodings and paths are copied out of the file into a few large blocks
// (not one allocation per document), so that opening a big store is cheap.
func (s *Store) LoadStored() (map[firestore.DatabaseName][]firestore.StoredDocument, error) {
	out := map[firestore.DatabaseName][]firestore.StoredDocument{}
	var slab []byte
	err := s.db.View(func(tx *bolt.Tx) error {
		root := tx.Bucket(firestoreBucket)
		if root == nil {
			return nil
		}
		return root.ForEachBucket(func(k []byte) error {
			name, err := firestore.ParseDatabaseName(string(k))
			if err != nil {
				return &DamagedStoreError{Path: s.db.Path(), Problem: fmt.Sprintf("it holds a Firestore bucket named %q, which is not a database name", k)}
			}
			b := root.Bucket(k)
			var docs []firestore.StoredDocument
			var keys []byte
			var ends []int
			err = b.ForEach(func(path, v []byte) error {
				if v == nil {
					return &DamagedStoreError{Path: s.db.Path(), Problem: fmt.Sprintf("the database bucket %s holds a nested bucket %q", name, path)}
				}
				keys = append(keys, path...)
				ends = append(ends, len(keys))
				if len(v) > slabSize/4 {
					docs = append(docs, firestore.StoredDocument{Data: bytes.Clone(v)})
					return nil
				}
				if len(slab)+len(v) > cap(slab) {
					slab = make([]byte, 0, slabSize)
				}
				at := len(slab)
				slab = append(slab, v...)
				docs = append(docs, firestore.StoredDocument{Data: slab[at:len(slab):len(slab)]})
				return nil
			})
			if err != nil {
				return err
			}
			all, start := string(keys), 0
			for i, end := range ends {
				docs[i].Path = all[start:end]
				start = end
			}
			out[name] = docs
			return nil
		})
	})
	if err == nil {
		// Everything was copied out of the mapped file: let its pages go.
		_ = s.db.View(func(tx *bolt.Tx) error { dropMapped(s.db, tx); return nil })
	}
	var de *DamagedStoreError
	if errors.As(err, &de) {
		return nil, de
	}
	if err != nil {
		return nil, fmt.Errorf("sandbox: load store %s: %w", s.db.Path(), err)
	}
	return out, nil
}

// slabSize is the size of the blocks LoadStored copies encodings into.
const slabSize = 1 << 20

// Load reads and decodes every stored document (tests and tools; the
// sandbox restores the encodings with LoadStored).
func (s *Store) Load() (map[firestore.DatabaseName][]*pb.Document, error) {
	stored, err := s.LoadStored()
	if err != nil {
		return nil, err
	}
	out := map[firestore.DatabaseName][]*pb.Document{}
	for name, docs := range stored {
		for _, sd := range docs {
			d := &pb.Document{}
			if err := proto.Unmarshal(sd.Data, d); err != nil {
				return nil, &DamagedStoreError{Path: s.db.Path(), Problem: fmt.Sprintf("the stored document %s cannot be decoded (%v)", sd.Path, err)}
			}
			out[name] = append(out[name], d)
		}
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
