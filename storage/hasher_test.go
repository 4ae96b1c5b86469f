package storage

import (
	"bytes"
	"crypto/md5"
	"encoding/base64"
	"errors"
	"hash/crc32"
	"testing"
)

// TestWriteHashedShortWrite: a large piece's MD5 runs beside its write;
// when the write takes only part of the piece, the checksums are those
// of the bytes written, and the next piece continues from them.
func TestWriteHashedShortWrite(t *testing.T) {
	piece := bytes.Repeat([]byte("0123456789abcdef"), concurrentMD5Min/16*2)
	var written []byte
	h := newHasher()
	full := func(p []byte) (int, error) { written = append(written, p...); return len(p), nil }
	half := func(p []byte) (int, error) {
		written = append(written, p[:len(p)/2]...)
		return len(p) / 2, errors.New("disk full")
	}
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
	if gotMD5 != base64.StdEncoding.EncodeToString(m[:]) || h.crc.Sum32() != crc || h.n != int64(len(written)) {
		t.Errorf("after a short write: md5 %s crc %08x n %d, want the %d bytes written: md5 %s crc %08x (crc32c %s)",
			gotMD5, h.crc.Sum32(), h.n, len(written), base64.StdEncoding.EncodeToString(m[:]), crc, gotCRC)
	}
}
