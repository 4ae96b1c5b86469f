package auth

import (
	"strings"
	"testing"
)

// TestKeyStringIsMakeKey: the string form of a key an account's write
// takes is makeKey's bytes, for parts of every length class of their
// uvarint prefix.
func TestKeyStringIsMakeKey(t *testing.T) {
	parts := []string{"", "p", "tenant-1", "u", strings.Repeat("x", 127), strings.Repeat("y", 128), strings.Repeat("z", 20000), "é\x00\xff"}
	for _, a := range parts {
		for _, b := range parts {
			if got, want := userKeyString(a, b, a+b), string(userKey(a, b, a+b)); got != want {
				t.Fatalf("userKeyString(%.20q, %.20q): %.40q, want %.40q", a, b, got, want)
			}
		}
	}
}
