package prefault

import "testing"

// Slice changes nothing a slice holds, whatever its size and alignment.
func TestSliceKeepsContents(t *testing.T) {
	for _, n := range []int{0, 1, 100, minBytes - 1, minBytes, 3*minBytes + 7} {
		b := make([]byte, n, n+5)
		for i := range b {
			b[i] = byte(i*7 + 1)
		}
		Slice(b[min(1, n):]) // unaligned start
		Slice(b)
		for i := range b {
			if b[i] != byte(i*7+1) {
				t.Fatalf("len %d: byte %d changed to %d", n, i, b[i])
			}
		}
	}
	Slice([]struct{}(nil))
	Slice(make([]struct{}, 10))
}
