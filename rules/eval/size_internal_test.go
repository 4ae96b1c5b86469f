package eval

import (
	"testing"
	"unsafe"
)

// TestRunSize keeps a Run within 256 bytes: one is allocated for every
// decision, and at 512 bytes its allocation (refilling the allocator's
// spans twice as often) cost a fifth of a 6-comparison evaluation.
func TestRunSize(t *testing.T) {
	if n := unsafe.Sizeof(Run{}); n > 256 {
		t.Errorf("Run is %d bytes, want at most 256", n)
	}
}
