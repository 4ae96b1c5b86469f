package firestore

import (
	"encoding/json"
	"strings"

	"github.com/pyric/pyric/event"
)

// Firestore's state is record by record: a document is one record, at
// key ["documents", path] of its Snapshot state for the default database
// and ["databases", "projects/P/databases/D", path] for the others.
// Session capture appends the records a commit changed instead of
// encoding the whole state again (the methods below are service.Records).

// RecordChange names the document a Firestore commit event changed, as a
// token for Records: the database id and the document's path (a commit
// event does not carry its project).
func (s *Service) RecordChange(e event.Event) (string, bool) {
	if e.Kind != event.KindCommit || e.Path == "" {
		return "", false
	}
	db := DefaultDatabase
	if e.Commit != nil && e.Commit.Database != "" {
		db = e.Commit.Database
	}
	return db + "\x00" + e.Path, true
}

// RecordKey is the key of the document a commit event leaves in its
// after (service.EventRecords) when that is the document as its commit
// leaves it (Commit.Final: a later write of a batch to the same document
// raises no event of its own). The event names its database by id only,
// so when databases of several projects share the id it says none.
func (s *Service) RecordKey(e event.Event) ([]string, bool) {
	if e.Kind != event.KindCommit || e.Path == "" || e.Commit == nil || !e.Commit.Final {
		return nil, false
	}
	id := e.Commit.Database
	if id == "" {
		id = DefaultDatabase
	}
	name, ok := s.Engine.databaseWithID(id)
	if !ok {
		return nil, false
	}
	return s.recordKey(name, e.Path), true
}

// Records calls fn with the current fields of the document token names
// (nil when absent), in every database with the token's id.
func (s *Service) Records(token string, fn func(key []string, value json.RawMessage) error) error {
	id, rel, ok := strings.Cut(token, "\x00")
	if !ok {
		return nil
	}
	for _, name := range s.Engine.Databases() {
		if name.Database != id {
			continue
		}
		var v json.RawMessage
		if d := s.Engine.Document(name, rel); d != nil {
			v = MarshalFields(d.Fields, name)
		}
		if err := fn(s.recordKey(name, rel), v); err != nil {
			return err
		}
	}
	return nil
}

// EachRecord calls fn with every document of every database, one at a
// time: each is read and encoded when its turn comes, so the state is
// never held decoded or encoded whole — capture rewrites its file with it,
// and a store of twenty 100,000-element documents decoded at once took
// 200 MB. A document the store keeps encoded is written from its encoding
// (recordEncoder), into one buffer: fn's key and value are reused for the
// next document, so fn must not keep them after it returns (capture copies
// each record into its file at once). Each document decoded and encoded
// afresh was 500 bytes and more of garbage, at 100k documents most of a
// capture's memory at its peak.
func (s *Service) EachRecord(fn func(key []string, value json.RawMessage) error) error {
	var enc recordEncoder
	for _, name := range s.Engine.Databases() {
		key := s.recordKey(name, "")
		for _, rel := range s.Engine.documentPaths(name) {
			doc, raw := s.Engine.scanEncoded(name, rel)
			var v []byte
			switch {
			case raw != nil:
				v = enc.document(raw, name)
			case doc != nil:
				v = enc.fields(doc.Fields, name)
			default:
				continue // deleted since
			}
			key[len(key)-1] = rel
			if err := fn(key, v); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s *Service) recordKey(name DatabaseName, rel string) []string {
	if name == s.def {
		return []string{"documents", rel}
	}
	return []string{"databases", name.String(), rel}
}
