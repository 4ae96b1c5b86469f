package storage

import (
	"encoding/json"
	"math/rand/v2"
	"testing"
	"time"
)

// TestRecordJSONMatchesEncodingJSON: objects and their records written
// by hand are the bytes encoding/json writes, over random objects: every
// optional field present or not, metadata nil, empty or not, strings
// that need escapes, times zero, in any zone, with and without
// nanoseconds, and outside the years JSON writes (where both refuse).
func TestRecordJSONMatchesEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(27, 11))
	str := func() string {
		const alphabet = "az09/ .\"\\<>&\x01\xc3\xa9\xff"
		b := make([]byte, r.IntN(10))
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		return string(b)
	}
	opt := func() string {
		if r.IntN(2) == 0 {
			return ""
		}
		return str()
	}
	stamp := func() time.Time {
		switch r.IntN(5) {
		case 0:
			return time.Time{}
		case 1:
			return time.Date(10000+r.IntN(5), 1, 1, 0, 0, 0, 0, time.UTC)
		case 2:
			return time.Unix(r.Int64N(4e9), 0).UTC()
		}
		return time.Unix(r.Int64N(4e9), r.Int64N(1e9)).In(time.FixedZone("z", r.IntN(80000)-40000))
	}
	for i := range 5000 {
		o := &Object{Bucket: str(), Name: str(), Generation: r.Int64() >> r.IntN(63), Metageneration: r.Int64N(5) - 1, Size: r.Int64N(1 << 40),
			ContentType: opt(), ContentEncoding: opt(), ContentDisposition: opt(), ContentLanguage: opt(), CacheControl: opt(),
			MD5Hash: opt(), CRC32C: opt(), TimeCreated: stamp(), Updated: stamp()}
		switch r.IntN(3) {
		case 0:
			o.Metadata = map[string]string{}
		case 1:
			o.Metadata = map[string]string{str(): str(), str(): str(), TokenKey: str()}
		}
		want, wantErr := json.Marshal(o)
		got, err := marshalObject(o)
		if (err != nil) != (wantErr != nil) || string(got) != string(want) {
			t.Fatalf("object %d:\n got %s (%v)\nwant %s (%v)", i, got, err, want, wantErr)
		}
		var data []byte
		if n := r.IntN(3); n > 0 {
			data = make([]byte, r.IntN(20)*(n-1))
			for j := range data {
				data[j] = byte(r.IntN(256))
			}
		}
		inline := r.IntN(2) == 0
		want, wantErr = json.Marshal(objectRecord{Object: o, Inline: inline, Data: data})
		got, err = marshalRecord(o, data, inline)
		if (err != nil) != (wantErr != nil) || string(got) != string(want) {
			t.Fatalf("record %d:\n got %s (%v)\nwant %s (%v)", i, got, err, want, wantErr)
		}
	}
}
