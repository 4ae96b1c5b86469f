package sandbox

import (
	"syscall"

	bolt "go.etcd.io/bbolt"
)

// dropMapped tells the kernel this process no longer needs the pages of
// the store file it has touched through bbolt's read-only mapping, up to
// the file's size as of tx: LoadStored copied every document out of them,
// so after a reopen they would otherwise stay resident (the whole file:
// 25 MiB for 100k documents) for nothing. The mapping stays valid; a page
// read again faults back in from the page cache, where the kernel keeps
// them. tx (a read transaction, which holds bbolt's mapping lock, so the
// file cannot be remapped meanwhile) pins the address. Failure changes
// nothing but the process's resident size, so it is ignored.
func dropMapped(db *bolt.DB, tx *bolt.Tx) {
	info := db.Info()
	size := uintptr(tx.Size())
	if info.Data == 0 || size == 0 {
		return
	}
	_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, info.Data, size, syscall.MADV_DONTNEED)
}

// madvPopulateRead is Linux's MADV_POPULATE_READ (5.14 on; older kernels
// refuse it, which changes nothing).
const madvPopulateRead = 22

// populateMapped maps every page of the store file into the process at
// once, as of tx, before a load reads them all: one system call instead
// of a page fault every few pages, which cost a fifth of opening 100k
// documents on a virtual machine (where a fault is dear). Failure only
// leaves the faults to happen, so it is ignored.
func populateMapped(db *bolt.DB, tx *bolt.Tx) {
	populate(db.Info().Data, uintptr(tx.Size()))
}

// populate asks the kernel to map n bytes of a file mapping at addr.
func populate(addr, n uintptr) {
	if addr == 0 || n == 0 {
		return
	}
	_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, addr, n, madvPopulateRead)
}

// mapPopulate makes a mapping of the store file map its pages at once
// (one system call, not a fault every few pages).
const mapPopulate = syscall.MAP_POPULATE
