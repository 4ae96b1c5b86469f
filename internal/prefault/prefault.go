// Package prefault maps the pages of a large fresh allocation into the
// process in one system call before it is filled, instead of one page
// fault per page as the fill first touches each: on a virtual machine,
// where a fault is dear, faults were a third of the CPU time of opening
// a data dir of 100k documents.
package prefault

import "unsafe"

// minBytes is the least allocation worth a system call.
const minBytes = 64 << 10

// Slice maps the pages of s's backing array, up to its capacity, that
// lie wholly inside it. Failure (an old kernel, another system) only
// leaves the faults to happen, so it is ignored. The contents are not
// changed.
func Slice[T any](s []T) {
	if cap(s) == 0 {
		return
	}
	var zero T
	n := uintptr(cap(s)) * unsafe.Sizeof(zero)
	if n < minBytes {
		return
	}
	populate(uintptr(unsafe.Pointer(unsafe.SliceData(s))), n)
}
