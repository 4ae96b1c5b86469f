package prefault

import "syscall"

// madvPopulateWrite is Linux's MADV_POPULATE_WRITE (5.14 on; older
// kernels refuse it).
const madvPopulateWrite = 23

// populate maps the whole pages of [addr, addr+n) writable.
func populate(addr, n uintptr) {
	page := uintptr(syscall.Getpagesize())
	start := (addr + page - 1) &^ (page - 1)
	end := (addr + n) &^ (page - 1)
	if end <= start {
		return
	}
	_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, start, end-start, madvPopulateWrite)
}
