//go:build !linux

package sandbox

import bolt "go.etcd.io/bbolt"

// dropMapped releases the store file's mapped pages on Linux only, where
// MADV_DONTNEED on a shared file mapping is known to just unmap them.
func dropMapped(*bolt.DB, *bolt.Tx) {}

// populateMapped prefaults the store file's mapping on Linux only.
func populateMapped(*bolt.DB, *bolt.Tx) {}

// mapPopulate is Linux's MAP_POPULATE; elsewhere pages fault in.
const mapPopulate = 0
