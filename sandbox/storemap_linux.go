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
