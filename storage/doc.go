// Package storage is the Cloud Storage for Firebase engine: buckets of
// objects (bytes plus metadata), media and resumable uploads, ranged reads,
// metadata patches, listing, copies and preconditions, every client request
// decided by the Storage rules engine (rules/storage) and every request and
// change emitted as an event.
//
// Object bytes are streamed to a temporary file under DataDir/storage,
// fsynced and renamed into place before the object's metadata is committed
// to the service's Log (a record of the store's write-ahead log; without a
// Log, its Bucket), so an acknowledged upload survives kill -9 and a
// partial one is never visible. An object of at most 4 KiB has no file:
// its bytes are in its metadata's record, durable with it. With an empty
// DataDir both live in memory.
//
// The engine speaks no protocol: server/storage adapts the Firebase v0 REST
// API and the GCS JSON and XML APIs to it.
package storage
