//go:build !linux

package storage

// canSyncFS is false where there is no syncfs: every blob is fsynced
// before it is committed, whatever the sandbox's sync mode.
const canSyncFS = false

func syncFS(string) error { return nil }
