package eval

import (
	"testing"
	"unsafe"
)

// TestRunSize keeps a Run within the allocator's small objects without a
// type header (512 bytes): one is allocated for every decision, and a
// larger one cost a third of a 6-comparison evaluation.
func TestRunSize(t *testing.T) {
	if n := unsafe.Sizeof(Run{}); n > 512 {
		t.Errorf("Run is %d bytes, want at most 512", n)
	}
}
