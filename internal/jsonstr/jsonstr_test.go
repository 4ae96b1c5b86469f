package jsonstr

import (
	"encoding/json"
	"math/rand/v2"
	"testing"
)

// TestAppendMatchesEncodingJSON over random strings of the bytes that
// are escaped, written as they are, and invalid or multi-byte UTF-8.
func TestAppendMatchesEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(27, 9))
	const alphabet = " azAZ09\"\\<>&/\x01\x1f\x7f\xc3\xa9\xe2\x80\xa8\xff"
	for i := range 50000 {
		b := make([]byte, r.IntN(24))
		for j := range b {
			b[j] = alphabet[r.IntN(len(alphabet))]
			if i%2 == 0 && (b[j] < 0x20 || b[j] >= 0x80) {
				b[j] = 'q' // half the strings printable ASCII
			}
		}
		want, _ := json.Marshal(string(b))
		if got := Append([]byte("x"), string(b)); string(got) != "x"+string(want) {
			t.Fatalf("%q: %s, want %s", b, got, want)
		}
	}
}

// TestAppendMapMatchesEncodingJSON: maps of escaped and plain keys and
// values, empty and nil ones included, as encoding/json writes them.
func TestAppendMapMatchesEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 31))
	const alphabet = "az<&\"\\\x01\xc3\xa9\xff"
	str := func() string {
		b := make([]byte, r.IntN(6))
		for j := range b {
			b[j] = alphabet[r.IntN(len(alphabet))]
		}
		return string(b)
	}
	for range 2000 {
		var m map[string]string
		if n := r.IntN(5); n > 0 {
			m = map[string]string{}
			for range n {
				m[str()] = str()
			}
		}
		want, _ := json.Marshal(m)
		if m == nil {
			want = []byte("{}") // AppendMap writes an object for nil too
		}
		if got := AppendMap([]byte("x"), m); string(got) != "x"+string(want) {
			t.Fatalf("%q: %s, want %s", m, got, want)
		}
	}
}
