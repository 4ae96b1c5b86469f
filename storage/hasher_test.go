package storage

import (
	"bytes"
	"crypto/md5"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"os"
	"sync"
	"testing"
)

// TestWriteHashedShortWrite: a large piece's MD5 trails its write;
// when the write takes only part of the piece, the checksums are those
// of the bytes written, and the next piece continues from them.
func TestWriteHashedShortWrite(t *testing.T) {
	piece := bytes.Repeat([]byte("0123456789abcdef"), trailMin/16*2)
	var written []byte
	h := newHasher()
	full := writerFunc(func(p []byte) (int, error) { written = append(written, p...); return len(p), nil })
	half := writerFunc(func(p []byte) (int, error) {
		written = append(written, p[:len(p)/2]...)
		return len(p) / 2, errors.New("disk full")
	})
	if n, err := h.writeHashed(piece, full); n != len(piece) || err != nil {
		t.Fatalf("full write: %d %v", n, err)
	}
	if n, err := h.writeHashed(piece[1:], half); n != (len(piece)-1)/2 || err == nil {
		t.Fatalf("short write: %d %v", n, err)
	}
	if n, err := h.writeHashed(piece[:100], full); n != 100 || err != nil {
		t.Fatalf("small write: %d %v", n, err)
	}
	m := md5.Sum(written)
	crc := crc32.Checksum(written, castagnoli)
	gotMD5, gotCRC := h.sums()
	if gotMD5 != base64.StdEncoding.EncodeToString(m[:]) || h.crc.Sum32() != crc || h.n != int64(len(written)) ||
		gotCRC != base64.StdEncoding.EncodeToString(binary.BigEndian.AppendUint32(nil, crc)) {
		t.Errorf("after a short write: md5 %s crc %08x n %d, want the %d bytes written: md5 %s crc %08x (crc32c %s)",
			gotMD5, h.crc.Sum32(), h.n, len(written), base64.StdEncoding.EncodeToString(m[:]), crc, gotCRC)
	}
}

// TestHasherTrail: pieces of every size, large ones hashed by the trail
// (more than it queues at once, some larger than its copies), small ones
// in line between them, and an inline write after, give the checksums of
// all the bytes in order; sums may be asked for in between.
func TestHasherTrail(t *testing.T) {
	var all []byte
	h := newHasher()
	full := writerFunc(func(p []byte) (int, error) { return len(p), nil })
	sizes := []int{trailMin, 1, trailPiece, 3 * trailPiece / 2, 100, trailMin - 1}
	for i := range 5 * trailDepth {
		size := sizes[i%len(sizes)]
		p := make([]byte, size)
		for j := range p {
			p[j] = byte(i*7 + j)
		}
		all = append(all, p...)
		if n, err := h.writeHashed(p, full); n != size || err != nil {
			t.Fatalf("piece %d: %d %v", i, n, err)
		}
		for j := range p {
			p[j] = 0 // the caller reuses its buffer at once
		}
		if i == 2*trailDepth {
			m := md5.Sum(all)
			if got, _ := h.sums(); got != base64.StdEncoding.EncodeToString(m[:]) {
				t.Fatalf("md5 after %d pieces: %s, want %s", i+1, got, base64.StdEncoding.EncodeToString(m[:]))
			}
		}
	}
	tail := []byte("the end")
	h.write(tail)
	all = append(all, tail...)
	m := md5.Sum(all)
	c := crc32.Checksum(all, castagnoli)
	gotMD5, _ := h.sums()
	if gotMD5 != base64.StdEncoding.EncodeToString(m[:]) || h.crc.Sum32() != c || h.n != int64(len(all)) {
		t.Errorf("md5 %s crc %08x n %d, want md5 %s crc %08x n %d", gotMD5, h.crc.Sum32(), h.n,
			base64.StdEncoding.EncodeToString(m[:]), c, len(all))
	}
}

// trickle returns at most 1000 bytes a read, then fails with err.
type trickle struct {
	data []byte
	err  error
}

func (r *trickle) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, r.err
	}
	n := copy(p[:min(len(p), 1000)], r.data)
	r.data = r.data[n:]
	return n, nil
}

// TestCopyIn: every byte arrives, in pieces as large as the buffers
// (whatever the reads return), with the checksums of the whole; a read
// that fails keeps what arrived before it and returns its error.
func TestCopyIn(t *testing.T) {
	for _, size := range []int{0, 1, smallCopySize - 1, smallCopySize, smallCopySize + 1, smallCopySize + largeCopySize, smallCopySize + 2*largeCopySize + 5} {
		data := make([]byte, size)
		for i := range data {
			data[i] = byte(i * 31)
		}
		for _, fail := range []error{io.EOF, errors.New("connection reset")} {
			w := &memWriter{s: newMemBlobs(), h: newHasher()}
			n, err := copyIn(w, &trickle{data: data, err: fail})
			wantErr := fail
			if fail == io.EOF {
				wantErr = nil
			}
			if n != int64(size) || err != wantErr || !bytes.Equal(w.buf.Bytes(), data) {
				t.Fatalf("size %d, read error %v: copied %d (%d in the blob, same bytes %v), error %v", size, fail, n, w.buf.Len(), bytes.Equal(w.buf.Bytes(), data), err)
			}
			m := md5.Sum(data)
			if got, _ := w.sums(); got != base64.StdEncoding.EncodeToString(m[:]) {
				t.Fatalf("size %d: md5 %s, want %s", size, got, base64.StdEncoding.EncodeToString(m[:]))
			}
		}
	}
}

// pieces records the sizes of the writes it takes.
type pieces struct{ sizes []int }

func (p *pieces) Write(b []byte) (int, error) { p.sizes = append(p.sizes, len(b)); return len(b), nil }

// TestCopyPieceFills: a piece is written once its buffer is full, not
// as each read returns.
func TestCopyPieceFills(t *testing.T) {
	var w pieces
	n, err := copyPiece(&w, &trickle{data: make([]byte, 10_000), err: io.EOF}, make([]byte, 4096))
	if n != 4096 || err != nil || len(w.sizes) != 1 || w.sizes[0] != 4096 {
		t.Fatalf("copied %d, %v, in writes of %v; want one write of 4096", n, err, w.sizes)
	}
}

// TestCopyInHandsPiecesOver: uploads copied at once, each larger than
// the trail queues, through the trail's buffers (handed over, not
// copied) store their own bytes and checksums: a buffer back in the
// free list while the trail still hashed it would be read into by the
// other upload (wrong MD5, and a race under -race).
func TestCopyInHandsPiecesOver(t *testing.T) {
	s, err := newDiskBlobs(t.TempDir(), true)
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	size := smallCopySize + (2*trailDepth+3)*largeCopySize + 12345
	var wg sync.WaitGroup
	for u := range 3 {
		wg.Go(func() {
			data := make([]byte, size)
			for i := range data {
				data[i] = byte(i*31 + u*i>>12)
			}
			w, err := s.create()
			if err != nil {
				t.Error(err)
				return
			}
			if n, err := copyIn(w, &trickle{data: data, err: io.EOF}); n != int64(size) || err != nil {
				t.Errorf("upload %d: copied %d, %v", u, n, err)
				return
			}
			gotMD5, gotCRC := w.sums()
			m := md5.Sum(data)
			var c [4]byte
			binary.BigEndian.PutUint32(c[:], crc32.Checksum(data, castagnoli))
			if gotMD5 != base64.StdEncoding.EncodeToString(m[:]) || gotCRC != base64.StdEncoding.EncodeToString(c[:]) {
				t.Errorf("upload %d: md5 %s crc32c %s, want %s %s", u, gotMD5, gotCRC, base64.StdEncoding.EncodeToString(m[:]), base64.StdEncoding.EncodeToString(c[:]))
			}
			if err := w.finish(); err != nil {
				t.Error(err)
				return
			}
			if err := w.commit(int64(u + 1)); err != nil {
				t.Error(err)
				return
			}
			got, err := os.ReadFile(s.path(int64(u + 1)))
			if err != nil || !bytes.Equal(got, data) {
				t.Errorf("upload %d: the file holds %d bytes (%v), same as sent: %v", u, len(got), err, bytes.Equal(got, data))
			}
		})
	}
	wg.Wait()
}

// TestWritePieceShortWrite is TestWriteHashedShortWrite for the pieces
// copyIn hands over (writePiece): a write that takes only part of a
// large piece, or of a small one, leaves the checksums of the bytes
// written, the trail hashing the large ones, and later pieces continue
// from them.
func TestWritePieceShortWrite(t *testing.T) {
	var written []byte
	h := newHasher()
	full := writerFunc(func(p []byte) (int, error) { written = append(written, p...); return len(p), nil })
	cut := func(keep int) io.Writer {
		return writerFunc(func(p []byte) (int, error) {
			written = append(written, p[:keep]...)
			return keep, errors.New("disk full")
		})
	}
	piece := func(size, seed int) *[]byte {
		b := getTrailBuf()
		*b = (*b)[:0]
		for i := range size {
			*b = append(*b, byte(i*seed+seed))
		}
		return b
	}
	for i, step := range []struct {
		size, keep int // keep < 0: the whole piece is written
	}{
		{largeCopySize, -1}, {largeCopySize, largeCopySize - 7}, {largeCopySize, trailMin - 1},
		{trailMin + 3, -1}, {trailMin - 1, 100}, {largeCopySize, 0}, {5, -1}, {largeCopySize, -1},
	} {
		var dst io.Writer = full
		want := step.size
		if step.keep >= 0 {
			dst, want = cut(step.keep), step.keep
		}
		if n, err := h.writePiece(piece(step.size, i+3), dst); n != want || (err == nil) != (step.keep < 0) {
			t.Fatalf("piece %d: wrote %d, %v; want %d", i, n, err, want)
		}
	}
	m := md5.Sum(written)
	crc := crc32.Checksum(written, castagnoli)
	if gotMD5, _ := h.sums(); gotMD5 != base64.StdEncoding.EncodeToString(m[:]) || h.crc.Sum32() != crc || h.n != int64(len(written)) {
		t.Errorf("md5 %s crc %08x n %d, want the %d bytes written: md5 %s crc %08x",
			gotMD5, h.crc.Sum32(), h.n, len(written), base64.StdEncoding.EncodeToString(m[:]), crc)
	}
}

// writerFunc is a func as an io.Writer.
type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
