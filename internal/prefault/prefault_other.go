//go:build !linux

package prefault

// Available says whether Slice saves faults: only on Linux.
func Available() bool { return false }

func populate(addr, n uintptr) {}

// MapFile returns the contents of the file name, read (mapped on Linux),
// and release, which frees the mapping (here nothing).
func MapFile(name string) (data []byte, release func(), err error) {
	data, err = ReadFile(name)
	return data, func() {}, err
}
