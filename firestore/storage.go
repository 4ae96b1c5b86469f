package firestore

import (
	"time"

	"github.com/pyric/pyric/firestore/fsstore"
)

// The storage layer is fsstore; these are its names callers of the engine
// use.

// DefaultHistoryBytes is the history's memory bound when
// Options.HistoryBytes is 0 (see fsstore.DefaultHistoryBytes).
const DefaultHistoryBytes = fsstore.DefaultHistoryBytes

// DecodedCacheBytes bounds the decoded documents a database keeps beside
// their encodings (see fsstore.DecodedCacheBytes).
const DecodedCacheBytes = fsstore.DecodedCacheBytes

// StoredDocument is a document as a Persister stored it: its relative path
// and its protobuf encoding.
type StoredDocument = fsstore.StoredDocument

// StoredDocumentError reports a stored document that cannot be restored.
type StoredDocumentError = fsstore.StoredDocumentError

// RestoreStored loads a database's n stored documents, doc(i) being the
// i-th, as Restore does, without decoding them (see
// fsstore.Store.RestoreStored): each encoding is checked and copied
// (without its name), and decoded on its first read; doc's Data need only
// be valid during the call. A damaged document is a *StoredDocumentError
// and nothing is restored. Listeners are refreshed.
func (e *Engine) RestoreStored(name DatabaseName, n int, doc func(i int) StoredDocument) error {
	c, err := fsstore.CheckStored(name, n, doc)
	if err != nil {
		return err
	}
	_, err = e.db(name).st.RestoreStored(c)
	return err
}

// HistoryStats reports a database's kept history: how many superseded
// versions, their bytes, and the oldest read time still served.
func (e *Engine) HistoryStats(name DatabaseName) (versions, bytes int, oldest time.Time) {
	st := e.db(name).st
	st.RLock()
	defer st.RUnlock()
	return st.HistoryStats()
}
