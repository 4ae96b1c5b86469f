package storage

import (
	"os"

	"golang.org/x/sys/unix"
)

// canSyncFS: Linux forces a whole file system's writes to disk with one
// call, so the blobs written since the last flush need no list.
const canSyncFS = true

// syncFS forces every write on dir's file system to disk (syncfs(2)).
func syncFS(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return unix.Syncfs(int(f.Fd()))
}
