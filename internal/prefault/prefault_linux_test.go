package prefault

import (
	"syscall"
	"testing"
	"unsafe"
)

// resident counts the pages of [addr, addr+n) (whole pages) in memory.
func resident(t *testing.T, addr, n uintptr) (in, all int) {
	t.Helper()
	page := uintptr(syscall.Getpagesize())
	start := (addr + page - 1) &^ (page - 1)
	end := (addr + n) &^ (page - 1)
	vec := make([]byte, (end-start)/page)
	if _, _, e := syscall.Syscall(syscall.SYS_MINCORE, start, end-start, uintptr(unsafe.Pointer(&vec[0]))); e != 0 {
		t.Skipf("mincore: %v", e)
	}
	for _, v := range vec {
		if v&1 != 0 {
			in++
		}
	}
	return in, len(vec)
}

// A fresh allocation's pages are in memory after Slice, before anything
// touched them (unless the kernel refuses MADV_POPULATE_WRITE).
func TestSliceMapsPages(t *testing.T) {
	s := make([]uint64, 0, 4<<20/8) // 4 MiB: fresh pages from the OS
	addr, n := uintptr(unsafe.Pointer(unsafe.SliceData(s))), uintptr(cap(s)*8)
	before, all := resident(t, addr, n)
	if _, _, e := syscall.Syscall(syscall.SYS_MADVISE, 0, 0, madvPopulateWrite); e == syscall.EINVAL {
		t.Skip("the kernel has no MADV_POPULATE_WRITE")
	}
	if before == all {
		t.Skip("the allocation's pages were in memory already")
	}
	Slice(s)
	after, _ := resident(t, addr, n)
	if after != all {
		t.Fatalf("%d of %d pages resident after Slice (%d before)", after, all, before)
	}
}
