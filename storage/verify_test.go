package storage

import (
	"bytes"
	"crypto/md5"
	"encoding/base64"
	"encoding/binary"
	"hash/crc32"
	"io"
	"strings"
	"testing"
)

// TestReaderChecksEitherSum: the checking reader compares what it read
// with the stored CRC32C, or with the MD5 when an object has no CRC32C
// (kept as a number and a stack buffer, not a hash.Hash and its Sum): the
// intact bytes read whole, and bytes that differ are a DataLoss error
// naming the checksum and what they hash to.
func TestReaderChecksEitherSum(t *testing.T) {
	t.Parallel()
	data := []byte(strings.Repeat("checked bytes ", 100))
	m := md5.Sum(data)
	c := binary.BigEndian.AppendUint32(nil, crc32.Checksum(data, castagnoli))
	md5b64, crcb64 := base64.StdEncoding.EncodeToString(m[:]), base64.StdEncoding.EncodeToString(c)
	bad := bytes.Clone(data)
	bad[7] ^= 1
	bm := md5.Sum(bad)
	bc := binary.BigEndian.AppendUint32(nil, crc32.Checksum(bad, castagnoli))
	for _, tc := range []struct {
		name     string
		o        Object
		badWants string
	}{
		{"crc32c", Object{CRC32C: crcb64, MD5Hash: md5b64}, "crc32c " + crcb64 + "; they hash to " + base64.StdEncoding.EncodeToString(bc)},
		{"md5 alone", Object{MD5Hash: md5b64}, "md5 " + md5b64 + "; they hash to " + base64.StdEncoding.EncodeToString(bm[:])},
	} {
		open := func(b []byte) *objectReader {
			o := tc.o
			o.Bucket, o.Name, o.Size = "b-1", "n", int64(len(b))
			r := &objectReader{r: memReader{bytes.NewReader(b)}, o: &o}
			r.pickHash()
			return r
		}
		if got, err := io.ReadAll(open(data)); err != nil || !bytes.Equal(got, data) {
			t.Errorf("%s: intact bytes read %d bytes, %v", tc.name, len(got), err)
		}
		r := open(bad)
		if _, err := io.ReadAll(r); err == nil || CodeOf(err) != DataLoss || !strings.Contains(err.Error(), tc.badWants) {
			t.Errorf("%s: changed bytes: %v, want DataLoss with %q", tc.name, err, tc.badWants)
		}
	}
}
