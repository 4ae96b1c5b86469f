package firestore

import (
	"testing"
	"unsafe"
)

// TestDecisionSize keeps a Decision, which holds a request's segments,
// lookups, environment, bound values and first results in one
// allocation, within the allocator's 1792-byte size class: at 1880 bytes
// it was served from the 2048 class.
func TestDecisionSize(t *testing.T) {
	if n := unsafe.Sizeof(Decision{}); n > 1792 {
		t.Errorf("Decision is %d bytes, want at most 1792", n)
	}
}
