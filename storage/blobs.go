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
)

// blobStore keeps object bytes, one blob per generation. A blob is written
// to a temporary place and becomes readable only when committed.
type blobStore interface {
	// create starts a new temporary blob.
	create() (blobWriter, error)
	// open returns a reader of a committed blob.
	open(gen int64) (blobReader, error)
	// remove deletes a committed blob (missing is fine).
	remove(gen int64)
	// list returns every committed blob's generation (startup cleanup).
	list() ([]int64, error)
	// reset deletes every blob, committed or temporary.
	reset() error
}

// blobWriter receives an upload's bytes and computes its checksums.
type blobWriter interface {
	io.Writer
	// size is the number of bytes written so far.
	size() int64
	// sums returns the base64 MD5 and CRC32C of the bytes written so far.
	sums() (md5sum, crc string)
	// finish flushes the bytes durably (fsync on disk); after it only
	// commit or abort may be called.
	finish() error
	// commit makes the finished blob readable as generation gen.
	commit(gen int64) error
	// abort discards the blob.
	abort()
}

// blobReader reads a committed blob.
type blobReader interface {
	io.ReaderAt
	io.Closer
}

// hasher computes both checksums while bytes stream past.
type hasher struct {
	md5 hash.Hash
	crc hash.Hash32
	n   int64
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func newHasher() hasher { return hasher{md5: md5.New(), crc: crc32.New(castagnoli)} }

func (h *hasher) write(p []byte) {
	h.md5.Write(p)
	h.crc.Write(p)
	h.n += int64(len(p))
}

func (h *hasher) sums() (string, string) {
	var c [4]byte
	binary.BigEndian.PutUint32(c[:], h.crc.Sum32())
	return base64.StdEncoding.EncodeToString(h.md5.Sum(nil)), base64.StdEncoding.EncodeToString(c[:])
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

func (w *memWriter) Write(p []byte) (int, error) {
	w.h.write(p)
	return w.buf.Write(p)
}
func (w *memWriter) size() int64            { return w.h.n }
func (w *memWriter) sums() (string, string) { return w.h.sums() }
func (w *memWriter) abort()                 { w.buf = bytes.Buffer{} }
func (w *memWriter) finish() error          { return nil }
func (w *memWriter) commit(gen int64) error {
	w.s.mu.Lock()
	w.s.blobs[gen] = w.buf.Bytes()
	w.s.mu.Unlock()
	return nil
}

type memReader struct{ *bytes.Reader }

func (memReader) Close() error { return nil }

func (s *memBlobs) open(gen int64) (blobReader, error) {
	s.mu.RLock()
	b, ok := s.blobs[gen]
	s.mu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("blob %d: %w", gen, os.ErrNotExist)
	}
	return memReader{bytes.NewReader(b)}, nil
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
// dir/tmp/* while being written (wiped at startup, so a partial upload
// never survives a crash).
type diskBlobs struct {
	dir string
}

func newDiskBlobs(dir string) (*diskBlobs, error) {
	s := &diskBlobs{dir: dir}
	if err := os.RemoveAll(filepath.Join(dir, "tmp")); err != nil {
		return nil, err
	}
	for _, d := range []string{"blobs", "tmp"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func (s *diskBlobs) path(gen int64) string {
	return filepath.Join(s.dir, "blobs", strconv.FormatInt(gen, 10))
}

type diskWriter struct {
	s *diskBlobs
	f *os.File
	h hasher
}

func (s *diskBlobs) create() (blobWriter, error) {
	f, err := os.CreateTemp(filepath.Join(s.dir, "tmp"), "upload-*")
	if err != nil {
		return nil, err
	}
	return &diskWriter{s: s, f: f, h: newHasher()}, nil
}

func (w *diskWriter) Write(p []byte) (int, error) {
	n, err := w.f.Write(p)
	w.h.write(p[:n])
	return n, err
}
func (w *diskWriter) size() int64            { return w.h.n }
func (w *diskWriter) sums() (string, string) { return w.h.sums() }

func (w *diskWriter) abort() {
	w.f.Close() // may already be closed by finish
	os.Remove(w.f.Name())
}

// finish fsyncs and closes the temporary file.
func (w *diskWriter) finish() error {
	if err := w.f.Sync(); err != nil {
		w.abort()
		return err
	}
	if err := w.f.Close(); err != nil {
		os.Remove(w.f.Name())
		return err
	}
	return nil
}

// commit renames the finished file into blobs/ and fsyncs the directory,
// so the bytes are durable before the metadata naming them is committed.
func (w *diskWriter) commit(gen int64) error {
	name := w.f.Name()
	if err := os.Rename(name, w.s.path(gen)); err != nil {
		os.Remove(name)
		return err
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

func (s *diskBlobs) open(gen int64) (blobReader, error) {
	return os.Open(s.path(gen))
}

func (s *diskBlobs) remove(gen int64) { os.Remove(s.path(gen)) }

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
	var errs []error
	for _, d := range []string{"blobs", "tmp"} {
		p := filepath.Join(s.dir, d)
		errs = append(errs, os.RemoveAll(p), os.MkdirAll(p, 0o755))
	}
	return errors.Join(errs...)
}
