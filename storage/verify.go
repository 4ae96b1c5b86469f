package storage

import (
	"crypto/md5"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"os"
	"sync"
)

// Object bytes on disk can be damaged behind pyric's back: a file cut
// short, overwritten, or deleted. Every read of an object's bytes checks
// the file's size against the stored one before anything is sent, and a
// read of the whole object checks its CRC32C (its MD5 when it has no
// CRC32C) as the bytes stream past (nothing is buffered): the last bytes are held back until they
// match, so a client never receives a damaged object as complete. Ranged
// reads check the size only (a checksum needs every byte). At start
// every object's file is checked for presence and size — one stat each,
// so a bucket of 100,000 objects costs a fraction of a second — and
// hashing waits for a read, which is where damage would be served.
// Damaged files are reported, never deleted or rewritten.

// dataLoss is the error for an object whose stored bytes are damaged.
func dataLoss(o *Object, format string, args ...any) error {
	return errorf(DataLoss, "The stored bytes of object %s/%s are damaged: %s. Pyric has not changed them; "+
		"delete the object or upload it again (or restore the data dir from a backup).", o.Bucket, o.Name, fmt.Sprintf(format, args...))
}

// checkBlob compares a committed blob's presence and size with o's.
func (e *Engine) checkBlob(o *Object) error {
	size, err := e.blobs.size(o.Generation)
	return checkSize(o, size, err)
}

// checkSize compares the size a blob was found to have (or the error of
// finding it) with o's.
func checkSize(o *Object, size int64, err error) error {
	switch {
	case errors.Is(err, os.ErrNotExist):
		return dataLoss(o, "its file (generation %d) is missing from the data dir", o.Generation)
	case err != nil:
		return dataLoss(o, "its file (generation %d) cannot be read: %v", o.Generation, errors.Unwrap(err))
	case size < o.Size:
		return dataLoss(o, "its file holds %d bytes, not the %d stored (it was cut short)", size, o.Size)
	case size > o.Size:
		return dataLoss(o, "its file holds %d bytes, not the %d stored (something was written to it)", size, o.Size)
	}
	return nil
}

// checkBlobs reports, through env.Warn, every object whose file is
// missing or of the wrong size; callers own the engine.
func (e *Engine) checkBlobs() {
	if e.env.Warn == nil {
		return
	}
	for _, bn := range sortedBuckets(e.buckets) {
		b := e.buckets[bn]
		for _, n := range b.names() {
			if err := e.checkBlob(b.objects[n]); err != nil {
				e.env.Warn("storage: " + err.Error())
			}
		}
	}
}

// objectReader reads one generation's bytes: at any offset (ReadAt, with
// the size checked at open), or from a position (Read, Seek), checking
// the checksums when every byte was read in order from the start.
type objectReader struct {
	r    blobReader
	o    *Object
	warn func(string)

	mu     sync.Mutex
	pos    int64
	hashed int64 // bytes hashed, in order from the start
	// The hash of what the stored checksum needs: CRC32C (crc, when
	// hashCRC), which the CPU computes at memory speed, kept as a number
	// (no hash.Hash to allocate, nor its sum: a small download's checks
	// cost no allocation), or MD5 (md5) for an object without one (MD5
	// would cost a 64 MiB download 40% of its throughput).
	hashCRC bool
	crc     uint32
	md5     hash.Hash
	err     error // the damage found
}

// hashing reports whether r checks a checksum.
func (r *objectReader) hashing() bool { return r.hashCRC || r.md5 != nil }

// openObject opens o's bytes and checks their file's size.
func (e *Engine) openObject(o *Object) (*objectReader, error) {
	r, err := e.blobs.open(o.Generation)
	if errors.Is(err, os.ErrNotExist) {
		return nil, checkSize(o, 0, err)
	}
	if err != nil {
		return nil, fmt.Errorf("storage: open %s/%s: %w", o.Bucket, o.Name, err)
	}
	size, err := r.length()
	if err := checkSize(o, size, err); err != nil {
		r.Close()
		return nil, err
	}
	or := &objectReader{r: r, o: o, warn: e.env.Warn}
	or.pickHash()
	return or, nil
}

// pickHash sets up the hash of the checksum r.o has: the CRC32C, or
// else the MD5.
func (r *objectReader) pickHash() {
	switch {
	case r.o.CRC32C != "":
		r.hashCRC = true
	case r.o.MD5Hash != "":
		r.md5 = md5.New()
	}
}

func (r *objectReader) ReadAt(p []byte, off int64) (int, error) { return r.r.ReadAt(p, off) }
func (r *objectReader) Close() error                            { return r.r.Close() }

// Seek implements io.Seeker within the object's size.
func (r *objectReader) Seek(off int64, whence int) (int64, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch whence {
	case io.SeekCurrent:
		off += r.pos
	case io.SeekEnd:
		off += r.o.Size
	}
	if off < 0 {
		return 0, errors.New("storage: seek before the start")
	}
	r.pos = off
	return off, nil
}

// Read implements io.Reader. A read that completes an in-order pass over
// the object returns its bytes only if the checksums match; otherwise
// (and when the file ends early) it returns a DataLoss error.
func (r *objectReader) Read(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err != nil {
		return 0, r.err
	}
	size := r.o.Size
	if r.pos >= size {
		if r.hashed == size && size == 0 && r.hashing() {
			if err := r.verify(); err != nil {
				return 0, err
			}
		}
		return 0, io.EOF
	}
	p = p[:min(int64(len(p)), size-r.pos)]
	n, err := r.r.ReadAt(p, r.pos)
	if n < len(p) {
		if err == nil || err == io.EOF {
			err = dataLoss(r.o, "its file ended at byte %d of %d while it was read", r.pos+int64(n), size)
			r.fail(err)
		}
		return 0, err
	}
	if r.pos == r.hashed && r.hashing() {
		if r.hashCRC {
			r.crc = crc32.Update(r.crc, castagnoli, p)
		} else {
			r.md5.Write(p)
		}
		r.hashed += int64(n)
		if r.hashed == size {
			if err := r.verify(); err != nil {
				return 0, err // the last bytes are held back
			}
		}
	}
	r.pos += int64(n)
	return n, nil
}

// verify compares the hashed bytes with the stored checksums; callers
// hold mu.
func (r *objectReader) verify() error {
	what, stored := "crc32c", r.o.CRC32C
	var crc [4]byte // not handed to the MD5 (an interface): stays on the stack
	sum := crc[:]
	if r.hashCRC {
		binary.BigEndian.PutUint32(crc[:], r.crc)
	} else {
		what, stored = "md5", r.o.MD5Hash
		sum = r.md5.Sum(nil)
	}
	var enc [(md5.Size + 2) / 3 * 4]byte
	n := base64.StdEncoding.EncodedLen(len(sum))
	base64.StdEncoding.Encode(enc[:n], sum)
	if string(enc[:n]) != stored {
		got := string(enc[:n])
		err := dataLoss(r.o, "its file's bytes do not match the stored checksums (%s %s; they hash to %s), so they were overwritten", what, stored, got)
		r.fail(err)
		return err
	}
	return nil
}

func (r *objectReader) fail(err error) {
	r.err = err
	if r.warn != nil {
		r.warn("storage: " + err.Error())
	}
}

// Err returns the damage a read found, nil if none.
func (r *objectReader) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}
