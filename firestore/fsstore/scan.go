package fsstore

import (
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
)

// ScanEncodedAt is GetAt for a reader that reads every document once and
// can use a document's stored encoding instead of its decoded form (a
// capture writing the whole state): raw is the document's encoding,
// without its name field, when the store keeps the version at t encoded,
// and doc the document otherwise (both nil: absent at t). Decoding every
// document of a large store only to encode it again was most of the
// garbage of a capture's rewrite. A document kept encoded whose raw form
// is gone is decoded for the caller alone, not into the decoded-document
// cache, whose working set such a scan would replace with documents
// nobody reads again. raw is shared and never changes: read it after
// releasing the lock, never change it. Callers hold the lock.
func (s *Store) ScanEncodedAt(rel string, t time.Time) (doc *pb.Document, raw []byte) {
	d, ok := s.docs[rel]
	if !ok {
		return nil, nil
	}
	v, ok := d.versionAt(t)
	switch {
	case !ok:
		return nil, nil
	case v.enc != nil && v.enc.raw != nil:
		return nil, v.enc.raw
	case v.enc != nil:
		return v.enc.decodeOnce(rel), nil
	}
	return v.doc, nil
}
