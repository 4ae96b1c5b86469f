package storage

import (
	"bytes"
	"crypto/md5"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// blobStore keeps object bytes, one blob per generation. A blob is written
// to a temporary place and becomes readable only when committed.
type blobStore interface {
	// create starts a new temporary blob.
	create() (blobWriter, error)
	// createSession starts the blob of a resumable upload session, which
	// survives a restart on disk.
	createSession(id string) (blobWriter, error)
	// resumeSession reopens a session's blob at size bytes (what was
	// acknowledged; anything after it is cut), rehashing its bytes, which
	// must match crc when it is set; a blob shorter than size or hashing
	// otherwise is a *sessionDamage, and left as it is.
	resumeSession(id string, size int64, crc *uint32) (blobWriter, error)
	// keepSessionAside moves a damaged session's blob out of the way,
	// unchanged, and returns where it went.
	keepSessionAside(id string) (string, error)
	// removeSession deletes a session's blob (missing is fine).
	removeSession(id string)
	// sessions lists the ids of the session blobs present.
	sessions() []string
	// open returns a reader of a committed blob.
	open(gen int64) (blobReader, error)
	// size returns a committed blob's size (an os.ErrNotExist error
	// when it is missing).
	size(gen int64) (int64, error)
	// remove deletes a committed blob (missing is fine).
	remove(gen int64)
	// inlined returns the bytes of a committed blob kept inline (in
	// memory, stored in its object's record) and whether it is one.
	inlined(gen int64) ([]byte, bool)
	// adopt makes data, read back from an object's record, the inline
	// blob gen.
	adopt(gen int64, data []byte)
	// keepAside moves committed blobs out of the way, unchanged, and
	// returns the folder they went to.
	keepAside(gens []int64) (string, error)
	// list returns every committed blob's generation (startup cleanup).
	list() ([]int64, error)
	// reset deletes every blob, committed or temporary.
	reset() error
}

// blobWriter receives an upload's bytes and computes its checksums.
type blobWriter interface {
	io.Writer
	// writePiece writes *b, a buffer of getTrailBuf, and keeps it: the
	// buffer goes back to the free list once its bytes are hashed.
	writePiece(b *[]byte) (int, error)
	// size is the number of bytes written so far.
	size() int64
	// sync makes the bytes written so far durable.
	sync() error
	// sums returns the base64 MD5 and CRC32C of the bytes written so far.
	sums() (md5sum, crc string)
	// crc32c returns the CRC32C of the bytes written so far.
	crc32c() uint32
	// finish flushes the bytes durably (fsync on disk); after it only
	// commit or abort may be called.
	finish() error
	// commit makes the finished blob readable as generation gen.
	commit(gen int64) error
	// abort discards the blob.
	abort()
	// release lets go of the blob without discarding it (a session's
	// blob stays for the next start).
	release()
}

// The pieces an upload's bytes are copied into a blob in: the first
// 32 KiB (io.Copy's size, all a small object needs), then 256 KiB at a
// time (32 KiB pieces make a 100 MiB upload 3,200 reads of the socket and
// as many writes of the file).
const (
	smallCopySize = 32 << 10
	largeCopySize = 256 << 10
)

var smallCopyBufs = sync.Pool{New: func() any { b := make([]byte, smallCopySize); return &b }}

// copyIn copies r into w: a small object through a small buffer, a large
// one through large buffers, each filled before it is written (a
// multipart body arrives 4 KiB at a time, a socket's reads as the bytes
// happen to come: written as they are, a 100 MiB upload is tens of
// thousands of writes of the file, each too small to hash beside the next
// read). A large piece is read into a buffer of the MD5 trail and handed
// to it after its write (writePiece), so the trail hashes the bytes where
// they were read rather than a copy of them.
func copyIn(w blobWriter, r io.Reader) (int64, error) {
	buf := smallCopyBufs.Get().(*[]byte)
	n, err := copyPiece(w, r, *buf)
	smallCopyBufs.Put(buf)
	if err != nil || n < smallCopySize {
		return n, err
	}
	for {
		m, err := copyOwnedPiece(w, r)
		n += m
		if err != nil || m < largeCopySize {
			return n, err
		}
	}
}

// copyOwnedPiece is copyPiece through a trail buffer of largeCopySize
// bytes, which w's writePiece keeps.
func copyOwnedPiece(w blobWriter, r io.Reader) (int64, error) {
	b := getTrailBuf()
	m, rerr := io.ReadFull(r, (*b)[:largeCopySize])
	if m == 0 {
		putTrailBuf(b)
	} else {
		*b = (*b)[:m]
		k, werr := w.writePiece(b) // b is w's now
		if werr == nil && k < m {
			werr = io.ErrShortWrite
		}
		if werr != nil {
			return int64(k), werr
		}
	}
	if rerr == io.EOF || rerr == io.ErrUnexpectedEOF {
		rerr = nil
	}
	return int64(m), rerr
}

// copyPiece reads r until buf is full or r ends and writes what it read
// to w. It returns the bytes written: fewer than buf holds when r ended
// (without error) or something failed (with it).
func copyPiece(w io.Writer, r io.Reader, buf []byte) (int64, error) {
	m, rerr := io.ReadFull(r, buf)
	if m > 0 {
		k, werr := w.Write(buf[:m])
		if werr == nil && k < m {
			werr = io.ErrShortWrite
		}
		if werr != nil {
			return int64(k), werr
		}
	}
	if rerr == io.EOF || rerr == io.ErrUnexpectedEOF {
		rerr = nil
	}
	return int64(m), rerr
}

// blobReader reads a committed blob.
type blobReader interface {
	io.ReaderAt
	io.Closer
	// length is the blob's size as stored now (on disk, the open file's:
	// no second lookup of its name).
	length() (int64, error)
}

// hasher computes both checksums while bytes stream past: the CRC32C
// in line (it costs little), the MD5 of a large piece on a goroutine of
// its own that trails the writes (MD5 costs about 1.5 ms per MiB, most
// of a large upload's CPU time: it runs beside the reads of the socket
// and the writes of the file that follow, on another core, rather than
// after them).
type hasher struct {
	md5 hash.Hash
	crc runningCRC
	n   int64
	// trail is the MD5's goroutine and its queue, from the first large
	// piece on; while it runs, it alone uses md5.
	trail *md5Trail
	sum   [md5.Size + 4]byte // sums' checksums
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func newHasher() hasher { return hasher{md5: md5.New()} }

// runningCRC is a CRC32C kept as a number while bytes stream past (no
// hash.Hash32 to allocate per upload).
type runningCRC uint32

func (c *runningCRC) Write(p []byte) { *c = runningCRC(crc32.Update(uint32(*c), castagnoli, p)) }
func (c runningCRC) Sum32() uint32   { return uint32(c) }

// write hashes p in line.
func (h *hasher) write(p []byte) {
	h.settle()
	h.md5.Write(p)
	h.crc.Write(p)
	h.n += int64(len(p))
}

// trailMin is the smallest piece whose MD5 trails its write, on the
// trail's goroutine (a smaller one costs less to hash than to hand over).
const trailMin = 64 << 10

// trailPiece is the size of the copies the trail hashes, and trailDepth
// how many wait at most (the bytes it holds, whatever the upload's size).
const (
	trailPiece = largeCopySize
	trailDepth = 8
)

// trailFree keeps the copies' buffers between pieces and uploads: not a
// sync.Pool, which each garbage collection empties — an upload that
// allocated a buffer a piece after each collection paid the page faults
// of fresh memory, and made the next collection come sooner. It holds
// at most two uploads' worth (4 MiB).
var trailFree = make(chan *[]byte, 2*(trailDepth+1))

func getTrailBuf() *[]byte {
	select {
	case b := <-trailFree:
		return b
	default:
		b := make([]byte, 0, trailPiece)
		return &b
	}
}

func putTrailBuf(b *[]byte) {
	select {
	case trailFree <- b:
	default:
	}
}

// md5Trail hashes copies of pieces in the order they were queued. Its
// goroutine runs while the queue holds a piece, and ends when it is
// empty: nothing is left running for a session that waits for its next
// chunk, or that is abandoned.
type md5Trail struct {
	mu      sync.Mutex
	cond    sync.Cond // signalled when a piece leaves the queue, and when the queue empties
	queue   []*[]byte
	running bool
}

// writeHashed writes p to dst and hashes the bytes written. (dst is an
// io.Writer, not a func: a diskWriter's own, memSink, then costs no
// closure per write.)
func (h *hasher) writeHashed(p []byte, dst io.Writer) (int, error) {
	n, err := dst.Write(p)
	h.crc.Write(p[:n])
	h.n += int64(n)
	if n < trailMin {
		h.settle()
		h.md5.Write(p[:n])
		return n, err
	}
	for q := p[:n]; len(q) > 0; {
		k := min(len(q), trailPiece)
		h.queue(q[:k])
		q = q[k:]
	}
	return n, err
}

// writePiece writes *b, a trail buffer, with write, and hashes the bytes
// written: a large piece by handing the buffer itself to the trail (no
// copy), a smaller one in line. Either way the buffer is the hasher's:
// it goes back to the free list once hashed.
func (h *hasher) writePiece(b *[]byte, dst io.Writer) (int, error) {
	n, err := dst.Write(*b)
	p := (*b)[:n]
	h.crc.Write(p)
	h.n += int64(n)
	if n < trailMin {
		h.settle()
		h.md5.Write(p)
		putTrailBuf(b)
		return n, err
	}
	*b = p
	h.hand(b)
	return n, err
}

// queue hands a copy of p to the trail, waiting while it is full.
func (h *hasher) queue(p []byte) {
	b := getTrailBuf()
	*b = append((*b)[:0], p...)
	h.hand(b)
}

// hand queues b, which the trail owns from now on, waiting while the
// queue is full.
func (h *hasher) hand(b *[]byte) {
	t := h.trail
	if t == nil {
		t = &md5Trail{}
		t.cond.L = &t.mu
		h.trail = t
	}
	t.mu.Lock()
	for len(t.queue) >= trailDepth {
		t.cond.Wait()
	}
	t.queue = append(t.queue, b)
	if !t.running {
		t.running = true
		go h.drain(t)
	}
	t.mu.Unlock()
}

// drain is the trail's goroutine.
func (h *hasher) drain(t *md5Trail) {
	t.mu.Lock()
	for len(t.queue) > 0 {
		b := t.queue[0]
		t.queue[0] = nil
		t.queue = t.queue[1:]
		t.cond.Broadcast()
		t.mu.Unlock()
		h.md5.Write(*b)
		putTrailBuf(b)
		t.mu.Lock()
	}
	t.queue = nil
	t.running = false
	t.cond.Broadcast()
	t.mu.Unlock()
}

// settle waits until the trail hashed every piece queued, after which
// the caller may use md5.
func (h *hasher) settle() {
	t := h.trail
	if t == nil {
		return
	}
	t.mu.Lock()
	for t.running {
		t.cond.Wait()
	}
	t.mu.Unlock()
}

// sums are the MD5's and the CRC32C's base64, encoded into one string
// the two share (one allocation, not three).
func (h *hasher) sums() (string, string) {
	h.settle()
	sum := h.md5.Sum(h.sum[:0]) // into the hasher's array: a local one would escape
	sum = binary.BigEndian.AppendUint32(sum, h.crc.Sum32())
	const md5Len = (md5.Size + 2) / 3 * 4
	var enc [md5Len + 8]byte
	base64.StdEncoding.Encode(enc[:md5Len], sum[:md5.Size])
	base64.StdEncoding.Encode(enc[md5Len:], sum[md5.Size:])
	both := string(enc[:])
	return both[:md5Len], both[md5Len:]
}

// memBlobs keeps blobs in memory.
type memBlobs struct {
	mu    sync.RWMutex
	blobs map[int64][]byte
}

func newMemBlobs() *memBlobs { return &memBlobs{blobs: map[int64][]byte{}} }

type memWriter struct {
	s   *memBlobs
	buf bytes.Buffer
	h   hasher
}

func (s *memBlobs) create() (blobWriter, error) { return &memWriter{s: s, h: newHasher()}, nil }

func (w *memWriter) Write(p []byte) (int, error) { return w.h.writeHashed(p, &w.buf) }
func (w *memWriter) writePiece(b *[]byte) (int, error) {
	return w.h.writePiece(b, &w.buf)
}
func (w *memWriter) size() int64            { return w.h.n }
func (w *memWriter) crc32c() uint32         { return w.h.crc.Sum32() }
func (w *memWriter) sums() (string, string) { return w.h.sums() }
func (w *memWriter) abort()                 { w.buf = bytes.Buffer{} }
func (w *memWriter) finish() error          { return nil }
func (w *memWriter) sync() error            { return nil }
func (w *memWriter) release()               {}
func (s *memBlobs) sessions() []string      { return nil }

func (s *memBlobs) createSession(string) (blobWriter, error) { return s.create() }
func (s *memBlobs) removeSession(string)                     {}
func (s *memBlobs) resumeSession(id string, _ int64, _ *uint32) (blobWriter, error) {
	return nil, fmt.Errorf("session %s: %w", id, os.ErrNotExist)
}
func (s *memBlobs) keepSessionAside(id string) (string, error) {
	return "", fmt.Errorf("session %s: %w", id, os.ErrNotExist)
}
func (w *memWriter) commit(gen int64) error {
	w.s.mu.Lock()
	w.s.blobs[gen] = w.buf.Bytes()
	w.s.mu.Unlock()
	return nil
}

type memReader struct{ *bytes.Reader }

func (memReader) Close() error             { return nil }
func (r memReader) length() (int64, error) { return r.Size(), nil }

func (s *memBlobs) open(gen int64) (blobReader, error) {
	s.mu.RLock()
	b, ok := s.blobs[gen]
	s.mu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("blob %d: %w", gen, os.ErrNotExist)
	}
	return memReader{bytes.NewReader(b)}, nil
}

func (s *memBlobs) size(gen int64) (int64, error) {
	s.mu.RLock()
	b, ok := s.blobs[gen]
	s.mu.RUnlock()
	if !ok {
		return 0, fmt.Errorf("blob %d: %w", gen, os.ErrNotExist)
	}
	return int64(len(b)), nil
}

func (s *memBlobs) keepAside([]int64) (string, error) { return "", nil }

// inlined is false: nothing of a memory store is stored in a record.
func (s *memBlobs) inlined(int64) ([]byte, bool) { return nil, false }

func (s *memBlobs) adopt(gen int64, data []byte) {
	s.mu.Lock()
	s.blobs[gen] = data
	s.mu.Unlock()
}

func (s *memBlobs) remove(gen int64) {
	s.mu.Lock()
	delete(s.blobs, gen)
	s.mu.Unlock()
}

func (s *memBlobs) list() ([]int64, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]int64, 0, len(s.blobs))
	for g := range s.blobs {
		out = append(out, g)
	}
	return out, nil
}

func (s *memBlobs) reset() error {
	s.mu.Lock()
	s.blobs = map[int64][]byte{}
	s.mu.Unlock()
	return nil
}

// diskBlobs keeps blobs as files: dir/blobs/<generation> once committed,
// dir/tmp/* while a whole-object upload is written (wiped at startup, so a
// partial upload never survives a crash), dir/sessions/<id> for resumable
// sessions (kept, and resumed from their acknowledged size). A
// whole-object upload of at most inlineMax bytes gets no file: its bytes
// stay in memory and go into its object's record, so they are durable
// with the one write of the log that commits the object.
type diskBlobs struct {
	dir string

	mu     sync.RWMutex
	inline map[int64][]byte // the committed blobs without a file
	// lazy leaves a finished blob in the operating system (enough to
	// survive kill -9) and forces the blobs to disk at most a second
	// later, in the background (the sandbox's batch sync mode); otherwise
	// every blob is fsynced, and its directory, before it is committed.
	lazy  bool
	dirty atomic.Bool
	stop  chan struct{}
	done  chan struct{}
	// closeOnce makes close idempotent (Engine.Close may run twice).
	closeOnce sync.Once
}

// lazySyncInterval is how often a lazy store forces its blobs to disk.
const lazySyncInterval = time.Second

// inlineMax is the largest object kept inline, in its record, rather
// than in a file: a file costs a small upload five system calls (create,
// write, close, rename, and a remove when it is replaced) and a download
// four, most of their CPU time, and takes at least a 4 KiB block of disk
// anyway, as much as the bytes take in memory.
const inlineMax = 4 << 10

func newDiskBlobs(dir string, syncEach bool) (*diskBlobs, error) {
	s := &diskBlobs{dir: dir, lazy: !syncEach && canSyncFS, inline: map[int64][]byte{}}
	if err := os.RemoveAll(filepath.Join(dir, "tmp")); err != nil {
		return nil, err
	}
	for _, d := range []string{"blobs", "tmp", "sessions"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return nil, err
		}
	}
	if s.lazy {
		s.stop, s.done = make(chan struct{}), make(chan struct{})
		go s.syncLoop()
	}
	return s, nil
}

// syncLoop forces written blobs to disk every lazySyncInterval.
func (s *diskBlobs) syncLoop() {
	defer close(s.done)
	tick := time.NewTicker(lazySyncInterval)
	defer tick.Stop()
	for {
		select {
		case <-s.stop:
			s.flush()
			return
		case <-tick.C:
			s.flush()
		}
	}
}

// flush forces the blobs written since the last flush to disk.
func (s *diskBlobs) flush() {
	if s.dirty.Swap(false) {
		if err := syncFS(s.dir); err != nil {
			s.dirty.Store(true)
		}
	}
}

// close stops the background sync after a last one.
func (s *diskBlobs) close() {
	if s.lazy {
		s.closeOnce.Do(func() { close(s.stop) })
		<-s.done
	}
}

func (s *diskBlobs) sessionPath(id string) string { return filepath.Join(s.dir, "sessions", id) }

func (s *diskBlobs) createSession(id string) (blobWriter, error) {
	f, err := os.OpenFile(s.sessionPath(id), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, err
	}
	return &diskWriter{s: s, f: f, h: newHasher()}, nil
}

// sessionDamage is a session blob that does not hold the bytes its
// record says were acknowledged.
type sessionDamage struct{ problem string }

func (d *sessionDamage) Error() string { return d.problem }

func (s *diskBlobs) resumeSession(id string, size int64, crc *uint32) (blobWriter, error) {
	f, err := os.OpenFile(s.sessionPath(id), os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	w := &diskWriter{s: s, f: f, h: newHasher()}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if st.Size() < size {
		f.Close()
		return nil, &sessionDamage{fmt.Sprintf("its file holds %d bytes, fewer than the %d acknowledged", st.Size(), size)}
	}
	buf := make([]byte, 256<<10)
	if _, err := io.CopyBuffer(hashWriter{&w.h}, io.NewSectionReader(f, 0, size), buf); err != nil {
		f.Close()
		return nil, err
	}
	if crc != nil && w.h.crc.Sum32() != *crc {
		f.Close()
		return nil, &sessionDamage{fmt.Sprintf("the %d bytes acknowledged no longer match their CRC32C (%08x, now %08x), so its file was overwritten", size, *crc, w.h.crc.Sum32())}
	}
	// Bytes past the acknowledged size were never acknowledged (a chunk
	// a crash interrupted): the client sends them again.
	if err := f.Truncate(size); err != nil {
		w.abort()
		return nil, err
	}
	if _, err := f.Seek(size, io.SeekStart); err != nil {
		w.abort()
		return nil, err
	}
	return w, nil
}

func (s *diskBlobs) keepSessionAside(id string) (string, error) {
	dir := filepath.Join(s.dir, "damaged")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	to := filepath.Join(dir, "session-"+id)
	if _, err := os.Lstat(to); err == nil {
		return "", fmt.Errorf("%s already exists", to)
	}
	return to, os.Rename(s.sessionPath(id), to)
}

func (s *diskBlobs) removeSession(id string) { os.Remove(s.sessionPath(id)) }

func (s *diskBlobs) sessions() []string {
	ents, _ := os.ReadDir(filepath.Join(s.dir, "sessions"))
	out := make([]string, 0, len(ents))
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

func (w *diskWriter) release() {
	if w.f != nil {
		w.f.Close()
	}
}

type hashWriter struct{ h *hasher }

func (w hashWriter) Write(p []byte) (int, error) {
	w.h.write(p)
	return len(p), nil
}

func (s *diskBlobs) path(gen int64) string {
	return filepath.Join(s.dir, "blobs", strconv.FormatInt(gen, 10))
}

// diskWriter writes a blob: to its file, or, for a whole-object upload
// while it is at most inlineMax bytes, to mem (its file is created when
// it grows past that).
type diskWriter struct {
	s   *diskBlobs
	f   *os.File // nil while the bytes are in mem
	mem []byte
	h   hasher
}

func (s *diskBlobs) create() (blobWriter, error) {
	return &diskWriter{s: s, h: newHasher()}, nil
}

func (w *diskWriter) Write(p []byte) (int, error) {
	if w.f == nil && len(w.mem)+len(p) <= inlineMax {
		return w.h.writeHashed(p, (*memSink)(w))
	}
	if w.f == nil {
		if err := w.spill(); err != nil {
			return 0, err
		}
	}
	return w.h.writeHashed(p, w.f)
}

func (w *diskWriter) writePiece(b *[]byte) (int, error) {
	if w.f == nil && len(w.mem)+len(*b) > inlineMax {
		if err := w.spill(); err != nil {
			putTrailBuf(b)
			return 0, err
		}
	}
	if w.f == nil {
		return w.h.writePiece(b, (*memSink)(w))
	}
	return w.h.writePiece(b, w.f)
}

// memSink is a diskWriter's bytes held in memory, as an io.Writer.
type memSink diskWriter

func (m *memSink) Write(p []byte) (int, error) {
	m.mem = append(m.mem, p...)
	return len(p), nil
}

// spill moves the bytes held in memory to a new temporary file (their
// checksums are already computed).
func (w *diskWriter) spill() error {
	f, err := os.CreateTemp(filepath.Join(w.s.dir, "tmp"), "upload-*")
	if err != nil {
		return err
	}
	if _, err := f.Write(w.mem); err != nil {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	w.f, w.mem = f, nil
	return nil
}

func (w *diskWriter) size() int64    { return w.h.n }
func (w *diskWriter) crc32c() uint32 { return w.h.crc.Sum32() }
func (w *diskWriter) sync() error {
	if w.f == nil {
		return nil
	}
	if w.s.lazy {
		w.s.dirty.Store(true)
		return nil
	}
	return w.f.Sync()
}
func (w *diskWriter) sums() (string, string) { return w.h.sums() }

func (w *diskWriter) abort() {
	if w.f == nil {
		w.mem = nil
		return
	}
	w.f.Close() // may already be closed by finish
	os.Remove(w.f.Name())
}

// finish fsyncs (unless the store is lazy) and closes the temporary
// file; bytes held in memory need nothing.
func (w *diskWriter) finish() error {
	if w.f == nil {
		return nil
	}
	if !w.s.lazy {
		if err := w.f.Sync(); err != nil {
			w.abort()
			return err
		}
	}
	if err := w.f.Close(); err != nil {
		os.Remove(w.f.Name())
		return err
	}
	return nil
}

// commit renames the finished file into blobs/ and fsyncs the directory,
// so the bytes are durable before the metadata naming them is committed
// (a lazy store leaves both to its next flush: a crash of the machine,
// not of the process, can then leave an object whose blob is short or
// missing, which the next start reports and never serves).
func (w *diskWriter) commit(gen int64) error {
	if w.f == nil {
		if cap(w.mem) > len(w.mem)+len(w.mem)/8 {
			w.mem = bytes.Clone(w.mem) // without append's spare room
		}
		w.s.adopt(gen, w.mem)
		w.mem = nil
		return nil
	}
	name := w.f.Name()
	if err := os.Rename(name, w.s.path(gen)); err != nil {
		os.Remove(name)
		return err
	}
	if w.s.lazy {
		w.s.dirty.Store(true)
		return nil
	}
	return syncDir(filepath.Join(w.s.dir, "blobs"))
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// diskReader reads a committed blob's file.
type diskReader struct{ *os.File }

func (r diskReader) length() (int64, error) {
	fi, err := r.Stat()
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

func (s *diskBlobs) open(gen int64) (blobReader, error) {
	if b, ok := s.inlined(gen); ok {
		return memReader{bytes.NewReader(b)}, nil
	}
	f, err := os.Open(s.path(gen))
	if err != nil {
		return nil, err
	}
	return diskReader{f}, nil
}

func (s *diskBlobs) size(gen int64) (int64, error) {
	if b, ok := s.inlined(gen); ok {
		return int64(len(b)), nil
	}
	fi, err := os.Stat(s.path(gen))
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

func (s *diskBlobs) remove(gen int64) {
	s.mu.Lock()
	_, ok := s.inline[gen]
	delete(s.inline, gen)
	s.mu.Unlock()
	if !ok {
		os.Remove(s.path(gen))
	}
}

func (s *diskBlobs) inlined(gen int64) ([]byte, bool) {
	s.mu.RLock()
	b, ok := s.inline[gen]
	s.mu.RUnlock()
	return b, ok
}

func (s *diskBlobs) adopt(gen int64, data []byte) {
	if data == nil {
		data = []byte{} // an empty blob, not none
	}
	s.mu.Lock()
	s.inline[gen] = data
	s.mu.Unlock()
}

func (s *diskBlobs) keepAside(gens []int64) (string, error) {
	dir := filepath.Join(s.dir, "orphans")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	for _, g := range gens {
		if err := os.Rename(s.path(g), filepath.Join(dir, strconv.FormatInt(g, 10))); err != nil {
			return "", err
		}
	}
	return dir, nil
}

func (s *diskBlobs) list() ([]int64, error) {
	ents, err := os.ReadDir(filepath.Join(s.dir, "blobs"))
	if err != nil {
		return nil, err
	}
	var out []int64
	for _, e := range ents {
		if g, err := strconv.ParseInt(e.Name(), 10, 64); err == nil {
			out = append(out, g)
		} else if strings.HasPrefix(e.Name(), ".") {
			continue
		}
	}
	return out, nil
}

func (s *diskBlobs) reset() error {
	s.mu.Lock()
	s.inline = map[int64][]byte{}
	s.mu.Unlock()
	var errs []error
	for _, d := range []string{"blobs", "tmp", "sessions"} {
		p := filepath.Join(s.dir, d)
		errs = append(errs, os.RemoveAll(p), os.MkdirAll(p, 0o755))
	}
	return errors.Join(errs...)
}
