// Package fsvalue is the Firestore data model every layer of the engine
// shares: values and their total order across types (Compare, Equal),
// field paths (ParseFieldPath, GetField/SetField), database and document
// names with production's validation and __name__ order (CompareNames),
// and the engine's error kinds (ErrInvalidArgument, ..., Errorf). It holds
// no state and imports nothing of Pyric; the storage layer (fsstore) and
// the engine (package firestore, which re-exports its public names) build
// on it.
package fsvalue
