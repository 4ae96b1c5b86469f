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
