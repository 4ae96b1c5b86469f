package sandbox

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	bolt "go.etcd.io/bbolt"

	"github.com/pyric/pyric/internal/prefault"
	"github.com/pyric/pyric/sandbox/service"
)

// Store is the crash-safe on-disk state: a bbolt file with one top-level
// bucket per service. A service writes through its Bucket (one bbolt
// transaction per write) or its Log: a Log's Append (Firestore's: one
// commit batch, which the engine group-commits from concurrent commits)
// is appended to the write-ahead log (wal.go) before the service
// acknowledges it, and checkpointed into the bbolt file in bulk, under
// the service's bucket in one nested bucket per space (Firestore's: per
// database, keyed by relative document path, holding the document
// protos). Either way a write acknowledged to a client is in
// the operating system's hands and survives kill -9; how soon it also
// survives a power loss is the SyncMode.
type Store struct {
	db   *bolt.DB
	dir  string
	mode SyncMode

	// walMu guards the log being appended to and the records in it not
	// yet applied to the bbolt file.
	walMu       sync.Mutex
	wal         *os.File
	walN        uint64 // wal's number
	walSize     int64  // wal's length: its header and the records in it
	rotateBytes int64  // walRotateBytes (tests set less)
	nextSeq     uint64 // the sequence of the next record logged
	// walWrites counts the write() calls appending records (benchmarks
	// report appends per write).
	walWrites atomic.Int64
	pending   []walBatch
	// walQ is where concurrent appends queue to share a write
	// (groupcommit.go).
	walQ         walQueue
	pendingBytes int
	// ckptMu makes checkpoints (and Clear) one at a time.
	ckptMu sync.Mutex
	// opening is true until Opened: the services are loading. populated
	// says the file's mapping was populated for them. ckptMu guards both.
	opening, populated bool
	// checked are the key counts the file's check made, kept while
	// opening (ckptMu guards it).
	checked *checkedKeys
	kick    chan struct{}

	warn func(string)

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
	// walBucket holds walAppliedKey: the sequence of the last log record
	// a checkpoint applied, written in the checkpoint's transaction.
	walBucket     = []byte("pyric.wal")
	walAppliedKey = []byte("applied")
)

// OpenStore opens (creating) dir/pyric.db with the default SyncBatch.
func OpenStore(dir string) (*Store, error) { return OpenStoreSync(dir, SyncBatch) }

// OpenStoreSync opens (creating) dir/pyric.db with the given sync mode.
func OpenStoreSync(dir string, mode SyncMode) (*Store, error) {
	return OpenStoreWith(dir, StoreOptions{Sync: mode})
}

// StoreOptions configure OpenStoreWith.
type StoreOptions struct {
	// Sync is the sync mode ("" is SyncBatch).
	Sync SyncMode
	// Warn receives the one-line notices of a start that recovered from
	// a crash by dropping data no one was promised (a torn last write);
	// nil writes them to standard error.
	Warn func(string)
}

// OpenStoreWith opens (creating) dir/pyric.db.
func OpenStoreWith(dir string, opts StoreOptions) (*Store, error) {
	mode, err := ParseSyncMode(string(opts.Sync))
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("sandbox: data dir: %w", err)
	}
	checked, err := checkStoreFile(filepath.Join(dir, "pyric.db"))
	if err != nil {
		return nil, err
	}
	// The free page list is written with every transaction, so that an
	// open reads it instead of walking every page of the file to rebuild
	// it (a fifth of opening 100k documents). Writing it costs little now
	// that the documents' commits reach the file only in checkpoints;
	// checkStoreFile proves that it lists no page the tree uses.
	db, err := bolt.Open(filepath.Join(dir, "pyric.db"), 0o600, &bolt.Options{Timeout: 2 * time.Second, FreelistType: bolt.FreelistMapType})
	if errors.Is(err, bolt.ErrTimeout) {
		return nil, fmt.Errorf("sandbox: %s is in use by another process (another pyric on the same data directory?)", filepath.Join(dir, "pyric.db"))
	}
	if err != nil {
		return nil, fmt.Errorf("sandbox: open store: %w", err)
	}
	s := &Store{db: db, dir: dir, mode: mode, kick: make(chan struct{}, 1), warn: opts.Warn, opening: true, checked: checked, rotateBytes: walRotateBytes}
	if s.warn == nil {
		s.warn = func(msg string) { fmt.Fprintln(os.Stderr, "pyric: "+msg) }
	}
	db.NoSync = mode == SyncBatch
	if err := s.replayWAL(); err != nil {
		db.Close()
		return nil, err
	}
	s.stop, s.stopped = make(chan struct{}), make(chan struct{})
	go s.maintain()
	return s, nil
}

// RemoveStore deletes the store in dir — pyric.db and its write-ahead
// logs together, since a log left without the file it continues is
// refused at the next open — for starting over (serve --fresh). Other
// services' files under dir are theirs.
func RemoveStore(dir string) error {
	ns, err := walFiles(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	paths := []string{filepath.Join(dir, "pyric.db"), filepath.Join(dir, walTemp)}
	for _, n := range ns {
		paths = append(paths, walFileName(dir, n))
	}
	for _, p := range paths {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("sandbox: %w", err)
		}
	}
	return nil
}

// maintain checkpoints the write-ahead log every SyncInterval (or sooner
// when it grows past walCheckpointBytes) and, with SyncBatch, forces the
// other services' writes to disk as often.
func (s *Store) maintain() {
	defer close(s.stopped)
	tick := time.NewTicker(SyncInterval)
	defer tick.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-s.kick:
			s.checkpoint()
		case <-tick.C:
			s.checkpoint()
			if s.mode == SyncBatch {
				s.syncNow()
			}
		}
	}
}

// replayWAL applies the logs a previous process left (it stopped before
// checkpointing them) to the bbolt file, syncs it, opens a new log, and
// deletes them. It first proves that nothing logged is missing (see
// wal.go); damage other than a torn last record is refused with every
// file left untouched. A torn last record dropped is reported through
// warn.
func (s *Store) replayWAL() error {
	os.Remove(filepath.Join(s.dir, walTemp)) // a header never renamed into place
	ns, err := walFiles(s.dir)
	if err != nil {
		return err
	}
	applied, err := s.appliedSeq()
	if err != nil {
		return err
	}
	logs := make([]*walLog, len(ns))
	for i, n := range ns {
		if logs[i], err = readWAL(walFileName(s.dir, n), i == len(ns)-1); err != nil {
			return err
		}
	}
	if err := s.checkWALSequence(ns, logs, applied); err != nil {
		return err
	}
	through := applied
	var batches []walBatch
	for _, l := range logs {
		for _, b := range l.batches {
			if b.seq != 0 && b.seq <= applied {
				continue // checkpointed before the crash
			}
			batches = append(batches, b)
			through = max(through, b.seq)
		}
	}
	if len(batches) > 0 {
		if err := s.apply(batches, through); err != nil {
			return fmt.Errorf("sandbox: apply the write-ahead log to %s: %w", s.db.Path(), err)
		}
		if err := s.db.Sync(); err != nil {
			return fmt.Errorf("sandbox: sync %s: %w", s.db.Path(), err)
		}
	}
	for _, l := range logs {
		if l.tornBytes > 0 {
			s.warn(fmt.Sprintf("%s ended in a torn write (%d bytes at byte %d, a record a crash or power loss cut short before it was synced): dropped it; the %d records before it were applied",
				l.path, l.tornBytes, l.tornAt, len(l.batches)))
		}
	}
	next := uint64(1)
	if len(ns) > 0 {
		next = ns[len(ns)-1] + 1
	}
	s.nextSeq = through + 1
	if err := s.openWAL(next); err != nil {
		return err
	}
	for _, n := range ns {
		if err := os.Remove(walFileName(s.dir, n)); err != nil {
			return fmt.Errorf("sandbox: remove an applied write-ahead log: %w", err)
		}
	}
	return nil
}

// checkWALSequence proves that the logs hold every record after the last
// one the bbolt file holds: their numbers follow each other, the first
// log (of format 2) begins at or before the record after applied, and
// each begins where the one before it ends.
func (s *Store) checkWALSequence(ns []uint64, logs []*walLog, applied uint64) error {
	var prev *walLog
	for i, l := range logs {
		if i > 0 && ns[i] != ns[i-1]+1 {
			missing := walFileName(s.dir, ns[i-1]+1)
			return &DamagedStoreError{Path: missing, Problem: fmt.Sprintf("it is missing: %s and %s are there, and it held the writes between them", filepath.Base(logs[i-1].path), filepath.Base(l.path)),
				Advice: walAdvice(l.path)}
		}
		if l.format != 2 {
			continue
		}
		switch {
		case prev != nil && l.first != prev.end()+1:
			return &DamagedStoreError{Path: l.path, Problem: fmt.Sprintf("it starts at write %d, but %s ends at write %d", l.first, filepath.Base(prev.path), prev.end()),
				Advice: walAdvice(l.path)}
		case prev == nil && l.first > applied+1:
			return &DamagedStoreError{Path: l.path, Problem: fmt.Sprintf("it starts at write %d, but %s holds the writes only through %d: writes %d to %d are in neither "+
				"(a log was deleted, or %s was replaced by an older copy)", l.first, s.db.Path(), applied, applied+1, l.first-1, filepath.Base(s.db.Path())),
				Advice: fmt.Sprintf("Restore the data dir from a backup, or move it aside (mv %s %s.damaged), with any later %s*, to start from %s as it is, losing the writes they hold.",
					l.path, l.path, walPrefix, filepath.Base(s.db.Path()))}
		}
		prev = l
	}
	return nil
}

// appliedSeq reads the sequence of the last log record applied to the
// bbolt file (0: none, or a file from before sequences).
func (s *Store) appliedSeq() (uint64, error) {
	var seq uint64
	err := s.db.View(func(tx *bolt.Tx) error {
		if b := tx.Bucket(walBucket); b != nil {
			if v := b.Get(walAppliedKey); v != nil {
				if len(v) != 8 {
					return &DamagedStoreError{Path: s.db.Path(), Problem: fmt.Sprintf("its write-ahead log position is %d bytes, not 8", len(v))}
				}
				seq = binary.LittleEndian.Uint64(v)
			}
		}
		return nil
	})
	return seq, err
}

// putApplied records in tx that the log records through seq are applied.
func putApplied(tx *bolt.Tx, seq uint64) error {
	b, err := tx.CreateBucketIfNotExists(walBucket)
	if err != nil {
		return err
	}
	return b.Put(walAppliedKey, binary.LittleEndian.AppendUint64(nil, seq))
}

// openWAL starts log file n, whose first record will be s.nextSeq, and
// makes it the one appended to; callers hold walMu or own the store alone.
// The header is written and synced under a temporary name and renamed
// into place, and the directory synced, so that the file exists whole
// before any record goes into it: a pyric.wal.<n> shorter than its header
// is damage, never a file being created.
func (s *Store) openWAL(n uint64) error {
	tmp, final := filepath.Join(s.dir, walTemp), walFileName(s.dir, n)
	if _, err := os.Lstat(final); err == nil {
		return fmt.Errorf("sandbox: create the write-ahead log: %s already exists", final)
	}
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("sandbox: create the write-ahead log: %w", err)
	}
	fail := func(what string, err error) error {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("sandbox: %s: %w", what, err)
	}
	if _, err := f.Write(appendWALHeader(nil, s.nextSeq)); err != nil {
		return fail("write the write-ahead log", err)
	}
	if err := f.Sync(); err != nil {
		return fail("sync the write-ahead log", err)
	}
	if err := os.Rename(tmp, final); err != nil {
		return fail("name the write-ahead log", err)
	}
	if d, err := os.Open(s.dir); err == nil {
		err = d.Sync()
		d.Close()
		if err != nil {
			f.Close()
			return fmt.Errorf("sandbox: sync the data dir: %w", err)
		}
	}
	s.wal, s.walN, s.walSize = f, n, int64(walHeaderSize)
	return nil
}

// apply writes logged batches, in order, to the bbolt file in one
// transaction (synced when the mode syncs every commit), with the
// sequence of the last record they hold (through).
func (s *Store) apply(batches []walBatch, through uint64) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		if err := putApplied(tx, through); err != nil {
			return err
		}
		var b *bolt.Bucket
		var bname string
		use := func(db string) error {
			if b != nil && db == bname {
				return nil
			}
			svc, space := splitLogSpace(db)
			root, err := tx.CreateBucketIfNotExists([]byte(svc))
			if err != nil {
				return err
			}
			if b, err = root.CreateBucketIfNotExists([]byte(space)); err != nil {
				return err
			}
			// Pages are filled to 90% (bbolt's default is half) when
			// a page splits: a checkpoint inserts many keys in order,
			// and half-full pages made the file twice the size of its
			// data, every page of which an open walks. The tenth left
			// free lets a document grow without splitting its page.
			b.FillPercent = 0.9
			bname = db
			return nil
		}
		skip := superseded(batches)
		i := -1 // the change's number across batches
		for _, batch := range batches {
			if err := use(batch.db); err != nil {
				return err
			}
			var err error
			for _, c := range batch.changes {
				if i++; skip != nil && skip[i] {
					continue
				}
				db := batch.db
				if c.space != "" {
					db = c.space
				}
				if err := use(db); err != nil {
					return err
				}
				// The path's bytes as they are: bbolt never writes
				// into a key, and the batch (so the string) outlives
				// the transaction. A copy per change was a third of
				// a checkpoint's allocations.
				key := unsafe.Slice(unsafe.StringData(c.path), len(c.path))
				switch {
				case c.prefix:
					err = deletePrefix(b, key)
				case c.data == nil:
					err = b.Delete(key)
				default:
					err = b.Put(key, c.data)
				}
				if err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// walKey is a key of a record space.
type walKey struct{ space, path string }

// superseded marks the changes of batches, numbered in order across them,
// that a later change of theirs undoes: a put or deletion of a key that a
// later change puts or deletes again. A checkpoint skips them: the bbolt
// file ends as it would have (each key as its last change left it), at
// the cost of a map entry per change instead of a bbolt put's search and
// copies, and a key written again and again between checkpoints (a
// counter, a user's record through a sign-up) is written once. A prefix
// deletion is never skipped, nor does it make an earlier change skipped
// (a later one may put some of the keys it covers back). nil: no change
// is skipped.
func superseded(batches []walBatch) []bool {
	n := 0
	for _, b := range batches {
		n += len(b.changes)
	}
	if n < 2 {
		return nil
	}
	skip := make([]bool, n)
	later := make(map[walKey]struct{}, n)
	i := n
	for bi := len(batches) - 1; bi >= 0; bi-- {
		b := &batches[bi]
		for ci := len(b.changes) - 1; ci >= 0; ci-- {
			i--
			c := &b.changes[ci]
			if c.prefix {
				continue
			}
			k := walKey{b.db, c.path}
			if c.space != "" {
				k.space = c.space
			}
			if _, ok := later[k]; ok {
				skip[i] = true
				continue
			}
			later[k] = struct{}{}
		}
	}
	return skip
}

// deletePrefix deletes every key of b that begins with prefix.
func deletePrefix(b *bolt.Bucket, prefix []byte) error {
	c := b.Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Seek(prefix) {
		if err := c.Delete(); err != nil {
			return err
		}
	}
	return nil
}

// rotateWAL starts the next log file for the commits to come and closes
// the current one, returning the records it holds that are not yet in the
// bbolt file and its number; callers hold ckptMu and walMu. On an error
// nothing has changed. A checkpoint rotates only a log past
// walRotateBytes (see checkpoint).
func (s *Store) rotateWAL() ([]walBatch, uint64, error) {
	old, oldN := s.wal, s.walN
	if err := s.openWAL(oldN + 1); err != nil {
		return nil, 0, err
	}
	old.Close()
	batches := s.pending
	s.pending, s.pendingBytes = nil, 0
	return batches, oldN, nil
}

// walRotateBytes is the length past which a checkpoint moves the commits
// to come to a new log file and deletes the one it applied. Below it the
// log stays the one appended to: the records it holds that a checkpoint
// applied are skipped at a replay (the bbolt file holds their sequence),
// so a checkpoint costs no file creation, no renaming and no directory
// sync, which would all happen under walMu, holding commits up. It bounds
// what a start after a crash reads twice.
const walRotateBytes = 4 << 20

// checkpoint applies the logged records not yet in the bbolt file and
// syncs it. The commits go on appending meanwhile, to the same log unless
// it passed walRotateBytes: then they go to a new log file, started before
// the apply so that they never wait for a checkpoint, and the old one is
// deleted once the bbolt file holds its records. A failure is kept in
// syncErr (no further commit is acknowledged) and the log stays, to be
// replayed at the next open.
func (s *Store) checkpoint() {
	s.ckptMu.Lock()
	defer s.ckptMu.Unlock()
	s.walMu.Lock()
	if len(s.pending) == 0 || s.syncErr.Load() != nil {
		s.walMu.Unlock()
		return
	}
	if s.walSize >= s.rotateBytes {
		batches, oldN, err := s.rotateWAL()
		s.walMu.Unlock()
		s.applyRotated(batches, oldN, err)
		return
	}
	batches := s.pending
	s.pending, s.pendingBytes = nil, 0
	s.walMu.Unlock()
	s.applyBatches(batches)
}

// applyBatches puts logged batches into the bbolt file and, with
// SyncBatch, syncs it; callers hold ckptMu. A failure is kept in syncErr.
func (s *Store) applyBatches(batches []walBatch) bool {
	err := s.apply(batches, batches[len(batches)-1].seq)
	if err == nil && s.mode == SyncBatch {
		err = s.db.Sync()
	}
	if err != nil {
		err = fmt.Errorf("checkpoint the write-ahead log into %s: %w", s.db.Path(), err)
		s.syncErr.Store(&err)
		return false
	}
	return true
}

// applyRotated is the second half of a checkpoint that rotated: the
// batches a rotateWAL took (which failed with err, or left them in log
// oldN) go into the bbolt file, and their log is deleted. The caller
// holds ckptMu.
func (s *Store) applyRotated(batches []walBatch, oldN uint64, err error) {
	if err != nil {
		s.syncErr.Store(&err)
		return
	}
	if len(batches) > 0 && !s.applyBatches(batches) {
		return
	}
	if err := os.Remove(walFileName(s.dir, oldN)); err != nil {
		err = fmt.Errorf("remove a checkpointed write-ahead log: %w", err)
		s.syncErr.Store(&err)
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
	close(s.stop)
	<-s.stopped
	s.checkpoint()
	if s.mode == SyncBatch {
		s.syncNow()
	}
	// The log stays, holding only its header when every record is in
	// the bbolt file: its sequence is what the next start checks the
	// bbolt file's against. One that still holds applied records (the
	// checkpoints did not rotate it) is replaced by a new one, so that
	// the next start reads nothing twice.
	s.ckptMu.Lock()
	s.walMu.Lock()
	if s.wal != nil && s.walSize > int64(walHeaderSize) && s.syncErr.Load() == nil && len(s.pending) == 0 {
		batches, oldN, err := s.rotateWAL()
		s.applyRotated(batches, oldN, err)
	}
	s.walMu.Unlock()
	s.ckptMu.Unlock()
	s.walMu.Lock()
	wal := s.wal
	s.wal = nil
	s.walMu.Unlock()
	if wal != nil {
		wal.Close()
	}
	return s.db.Close()
}

// applyDirect makes a commit too large for one log record (past
// walMaxRecord: a snapshot restore of many objects or documents, a
// Realtime Database write of hundreds of MiB) durable as one bbolt
// transaction instead, as atomic as a record: the records logged before
// it are checkpointed first and no commit is logged until it is in, so
// the order of commits holds. It takes no sequence number (the file's
// applied sequence stays that of the last record), so the log's sequence
// check at the next open is as it would be without it.
func (s *Store) applyDirect(space string, changes []service.LogChange) error {
	batch := walBatch{db: space, changes: make([]walChange, len(changes))}
	for i, c := range changes {
		batch.changes[i] = walChange{space: changeSpace(c), path: c.Key, prefix: c.Prefix && c.Value == nil, data: c.Value}
	}
	s.ckptMu.Lock()
	defer s.ckptMu.Unlock()
	s.walMu.Lock()
	defer s.walMu.Unlock()
	if s.wal == nil {
		return errors.New("the store is closed")
	}
	if len(s.pending) > 0 && s.syncErr.Load() == nil {
		batches, oldN, err := s.rotateWAL()
		s.applyRotated(batches, oldN, err)
	}
	if p := s.syncErr.Load(); p != nil {
		return fmt.Errorf("the data file could not be synced to disk: %w", *p)
	}
	// bbolt's commit writes the file (kill -9 cannot undo it) and, when
	// the store syncs every commit, syncs it.
	if err := s.apply([]walBatch{batch}, s.nextSeq-1); err != nil {
		err = fmt.Errorf("write a commit of %d changes into %s: %w", len(changes), s.db.Path(), err)
		s.syncErr.Store(&err)
		return err
	}
	return nil
}

// loadLog calls fn with every space of service svc's Log and its keys
// and values, in key order, inside one read transaction: the values are
// the store file's mapped bytes (copying them is the service's, which
// keeps only what it needs, in the form it needs: a copy here would be a
// second one), valid and read-only until fn returns. The keys are copied
// into a few large blocks (not one allocation per key). While the store
// opens, the first load of a big file populates the file's mapping at
// once, for every service's load (Opened releases it); a load after
// that releases the pages it touched.
func (s *Store) loadLog(svc string, fn func(space string, entries []service.LogChange) error) error {
	s.checkpoint() // what is logged is read too
	if p := s.syncErr.Load(); p != nil {
		return fmt.Errorf("sandbox: load store %s: %w", s.db.Path(), *p)
	}
	// The log's spaces change only in checkpoints (and Clear), which
	// ckptMu holds off: fn sees the state the walk saw.
	s.ckptMu.Lock()
	defer s.ckptMu.Unlock()
	err := s.db.View(func(tx *bolt.Tx) error {
		root := tx.Bucket([]byte(svc))
		if root == nil {
			return nil
		}
		switch {
		case !s.opening:
			defer dropMapped(s.db, tx) // fn copied what it keeps
		case !s.populated && tx.Size() >= populateBytes:
			populateMapped(s.db, tx)
			s.populated = true
		}
		var keys stringBlock
		return root.ForEachBucket(func(k []byte) error {
			b := root.Bucket(k)
			// Sized from the count the file's check made, else from the
			// bucket's page headers (a walk that copies nothing, but
			// reads every page: a tenth of opening 100k documents):
			// growing it by doubling cost most of the load's time at
			// 100k documents (the copies, and the page faults of every
			// larger array).
			n, counted := s.checked.of(tx.ID(), uint64(b.Root()))
			if !counted {
				n = b.Stats().KeyN
			}
			sp, split := s.checked.splitOf(tx.ID(), uint64(b.Root()))
			w := bucketWalk{path: s.db.Path(), svc: svc, space: string(k), n: n}
			var entries []service.LogChange
			var err error
			if split && n >= parallelWalk && sp.before > 0 && sp.before < n {
				entries, err = w.halves(b, sp, &keys)
			} else {
				entries, err = w.whole(b, &keys)
			}
			if err != nil {
				return err
			}
			if err := fn(w.space, entries); err != nil {
				return serviceError{err}
			}
			return nil
		})
	})
	var se serviceError
	if errors.As(err, &se) {
		return se.err
	}
	var de *DamagedStoreError
	if errors.As(err, &de) {
		return de
	}
	if err != nil {
		return fmt.Errorf("sandbox: load store %s: %w", s.db.Path(), err)
	}
	return nil
}

// Opened ends the store's opening: the services have loaded what they
// keep, so the pages of the file's mapping populated for them are
// released (the kernel keeps them in its page cache; a page read again
// faults back in).
func (s *Store) Opened() {
	s.ckptMu.Lock()
	defer s.ckptMu.Unlock()
	if s.opening && s.populated {
		// Releasing the ~8k page mappings of a 100k-document file takes
		// milliseconds the ports need not wait for. Anything that reads
		// the mapping meanwhile faults a released page back in.
		go func() { _ = s.db.View(func(tx *bolt.Tx) error { dropMapped(s.db, tx); return nil }) }()
	}
	s.opening, s.populated, s.checked = false, false, nil
}

// parallelWalk is the number of keys from which a load walks a bucket's
// two halves at once (when the file's check found where they divide).
const parallelWalk = 4096

// bucketWalk lists the n keys and values of a service's bucket (space)
// for its load: the keys copied (into a stringBlock), the values slices
// of the file's mapping. Keys beyond the count, fewer keys, or a nested
// bucket are damage.
type bucketWalk struct {
	path, svc, space string
	n                int
}

// whole walks the bucket with one cursor.
func (w bucketWalk) whole(b *bolt.Bucket, keys *stringBlock) ([]service.LogChange, error) {
	entries := make([]service.LogChange, w.n)
	prefault.Slice(entries)
	c := b.Cursor()
	k, v := c.First()
	got, err := w.fill(c, k, v, nil, entries, keys)
	if err == nil && got < w.n {
		err = w.damaged(fmt.Sprintf("holds %d keys, not the %d its pages count", got, w.n))
	}
	return entries, err
}

// halves walks the keys below sp.key and the rest at once, each with its
// own cursor: the bucket's pages are read, and its keys copied, on two
// cores. Both cursors are made here; neither changes the read-only
// transaction (a cursor reads the mapping), so they may run together.
func (w bucketWalk) halves(b *bolt.Bucket, sp checkedSplit, keys *stringBlock) ([]service.LogChange, error) {
	entries := make([]service.LogChange, w.n)
	prefault.Slice(entries)
	low, high := b.Cursor(), b.Cursor()
	var highGot int
	var highErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		var highKeys stringBlock
		k, v := high.Seek(sp.key)
		highGot, highErr = w.fill(high, k, v, nil, entries[sp.before:], &highKeys)
	}()
	k, v := low.First()
	got, err := w.fill(low, k, v, sp.key, entries[:sp.before], keys)
	<-done
	switch {
	case err != nil:
		return nil, err
	case highErr != nil:
		return nil, highErr
	case got < sp.before || highGot < w.n-sp.before:
		return nil, w.damaged(fmt.Sprintf("holds %d keys, not the %d its pages count", got+highGot, w.n))
	}
	return entries, nil
}

// fill lists the keys from k (value v; c at it) up to stop (nil: the
// end) into entries and returns how many it listed.
func (w bucketWalk) fill(c *bolt.Cursor, k, v, stop []byte, entries []service.LogChange, keys *stringBlock) (int, error) {
	got := 0
	for ; k != nil && (stop == nil || bytes.Compare(k, stop) < 0); k, v = c.Next() {
		if v == nil {
			return got, w.damaged(fmt.Sprintf("holds a nested bucket %q", k))
		}
		if got == len(entries) {
			return got, w.damaged(fmt.Sprintf("holds more keys than the %d its pages count", w.n))
		}
		entries[got] = service.LogChange{Key: keys.add(k), Value: v[:len(v):len(v)]}
		got++
	}
	return got, nil
}

func (w bucketWalk) damaged(problem string) error {
	return &DamagedStoreError{Path: w.path, Problem: fmt.Sprintf("the %s bucket %s %s", w.svc, w.space, problem)}
}

// serviceError carries the error of a Load's fn through the read
// transaction, to be returned as fn returned it.
type serviceError struct{ err error }

func (e serviceError) Error() string { return e.err.Error() }

// populateBytes is the size of a file from which its mapping is
// populated at once for the services' loads.
const populateBytes = 1 << 20

// stringBlock makes strings of byte slices by appending them to large
// blocks, never written again where a string was made: one allocation
// per block instead of one per string.
type stringBlock struct{ b []byte }

// stringBlockSize is the size of a stringBlock's blocks.
const stringBlockSize = 64 << 10

// add returns b as a string.
func (sb *stringBlock) add(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if len(b) > stringBlockSize/4 {
		return string(b)
	}
	if len(sb.b)+len(b) > cap(sb.b) {
		sb.b = make([]byte, 0, stringBlockSize)
		prefault.Slice(sb.b)
	}
	at := len(sb.b)
	sb.b = append(sb.b, b...)
	return unsafe.String(&sb.b[at], len(b))
}

// Log returns the write-ahead-logged key space of service name.
func (s *Store) Log(name string) service.Log {
	return &storeLog{s: s, name: name, spaces: map[string]string{}}
}

// storeLog is a service's Log in the store.
type storeLog struct {
	s    *Store
	name string
	// spaces keeps the record spaces (logSpace) of the spaces appended
	// to, which a service has few of (the Realtime Database: one per
	// namespace), so that an Append does not build one each time.
	spacesMu sync.RWMutex
	spaces   map[string]string
}

// storeLogSpaces bounds a storeLog's spaces; past it, record spaces are
// built each time.
const storeLogSpaces = 1024

// recordSpace is logSpace(l.name, space).
func (l *storeLog) recordSpace(space string) string {
	if l.name == firstLogService {
		return space
	}
	l.spacesMu.RLock()
	rec, ok := l.spaces[space]
	l.spacesMu.RUnlock()
	if ok {
		return rec
	}
	rec = logSpace(l.name, space)
	l.spacesMu.Lock()
	if len(l.spaces) < storeLogSpaces {
		l.spaces[space] = rec
	}
	l.spacesMu.Unlock()
	return rec
}

func (l *storeLog) Append(space string, changes []service.LogChange) error {
	if space == "" {
		return errors.New("sandbox: a log space needs a name")
	}
	w, err := l.s.queueLog(l.recordSpace(space), changes)
	if err == nil {
		err = w.Wait()
	}
	if err == nil && killAfterCommit != "" {
		maybeKillAfterCommit(changes)
	}
	return err
}

var _ service.QueuedLog = (*storeLog)(nil)

// Queue is service.QueuedLog's.
func (l *storeLog) Queue(space string, changes []service.LogChange) (service.LogWait, error) {
	if killAfterCommit != "" {
		// The test hook kills the process once the changes are durable,
		// which the caller's Wait would be too late to see.
		return walWritten{}, l.Append(space, changes)
	}
	if space == "" {
		return nil, errors.New("sandbox: a log space needs a name")
	}
	return l.s.queueLog(l.recordSpace(space), changes)
}

func (l *storeLog) Load(fn func(space string, entries []service.LogChange) error) error {
	return l.s.loadLog(l.name, fn)
}

// firstLogService is the service whose records name only their space:
// the log was Firestore's alone before every service could have one, and
// the logs and files of that time must read the same. Every other
// service's record space is its name, a NUL and the space.
const firstLogService = "firestore"

// logSpace is the space a record of service svc's space names.
func logSpace(svc, space string) string {
	if svc == firstLogService {
		return space
	}
	return svc + "\x00" + space
}

// splitLogSpace is logSpace's inverse: the service and its space.
func splitLogSpace(rec string) (svc, space string) {
	if i := strings.IndexByte(rec, 0); i >= 0 {
		return rec[:i], rec[i+1:]
	}
	return firstLogService, rec
}

// Clear deletes every service's stored state, the logged Firestore
// commits not yet checkpointed included: the bbolt file records them as
// applied (dropped), and their log is deleted once that is on disk.
func (s *Store) Clear() error {
	s.ckptMu.Lock()
	defer s.ckptMu.Unlock()
	s.walMu.Lock()
	var err error
	var oldN uint64
	rotated := false
	if len(s.pending) > 0 {
		_, oldN, err = s.rotateWAL()
		rotated = err == nil
	}
	through := s.nextSeq - 1
	s.walMu.Unlock()
	if err != nil {
		return err
	}
	err = s.db.Update(func(tx *bolt.Tx) error {
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
		return putApplied(tx, through)
	})
	if err == nil && rotated && s.mode == SyncBatch {
		err = s.db.Sync()
	}
	if err == nil && rotated {
		if err = os.Remove(walFileName(s.dir, oldN)); err != nil {
			err = fmt.Errorf("sandbox: remove the write-ahead log: %w", err)
		}
	}
	return err
}
