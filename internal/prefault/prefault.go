// Package prefault maps the pages of a large fresh allocation into the
// process in one system call before it is filled, instead of one page
// fault per page as the fill first touches each: on a virtual machine,
// where a fault is dear, faults were a third of the CPU time of opening
// a data dir of 100k documents.
package prefault

import (
	"io"
	"os"
	"unsafe"
)

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

// ReadFile is os.ReadFile into a buffer whose pages are mapped before the
// read fills it: reading a file of megabytes costs the copy, not a fault
// per page besides.
func ReadFile(name string) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	size := 0
	if fi, err := f.Stat(); err == nil && int64(int(fi.Size())) == fi.Size() {
		size = int(fi.Size())
	}
	// One byte more than the size, so that a file of that size is read
	// to its end without growing the buffer (as os.ReadFile does).
	data := make([]byte, 0, size+1)
	Slice(data)
	for {
		n, err := f.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if err == io.EOF {
			return data, nil
		}
		if err != nil {
			return data, err
		}
		if len(data) == cap(data) { // the file grew
			data = append(data, 0)[:len(data)]
		}
	}
}
