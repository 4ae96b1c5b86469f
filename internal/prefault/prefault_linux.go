package prefault

import (
	"os"
	"syscall"
)

// madvPopulateWrite is Linux's MADV_POPULATE_WRITE (5.14 on; older
// kernels refuse it).
const madvPopulateWrite = 23

// Available says whether the kernel maps pages ahead (MADV_POPULATE_WRITE),
// so that Slice saves faults: older kernels refuse the advice.
func Available() bool {
	_, _, e := syscall.Syscall(syscall.SYS_MADVISE, 0, 0, madvPopulateWrite)
	return e != syscall.EINVAL
}

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

// MapFile returns the contents of the file name mapped read-only, its
// pages mapped at once (one system call; no copy of the page cache, no
// fault per page), and release, which unmaps them. The mapping follows
// the file: reading past its end after another process cut it short is a
// fault (see debug.SetPanicOnFault). A file that cannot be mapped (empty,
// say) is read instead.
func MapFile(name string) (data []byte, release func(), err error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	if size := fi.Size(); size > 0 && int64(int(size)) == size && fi.Mode().IsRegular() {
		m, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED|syscall.MAP_POPULATE)
		if err == nil {
			return m, func() { _ = syscall.Munmap(m) }, nil
		}
	}
	data, err = ReadFile(name)
	return data, func() {}, err
}
