package sandbox

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/pyric/pyric/firestore"
	"github.com/pyric/pyric/sandbox/service"
)

// firestoreService puts the Firestore engine on the service contract. Its
// durability is the store's own "firestore" bucket, written by the
// engine's Persister inside every commit.
type firestoreService struct{ sb *Sandbox }

func (firestoreService) Name() string { return "firestore" }

func (f firestoreService) Reset() error {
	f.sb.fs.Reset()
	return nil
}

// firestoreState is the service's snapshot: the default database's
// documents by relative path, and other databases keyed by
// projects/P/databases/D, fields in the JSON form with typed markers.
type firestoreState struct {
	Documents map[string]map[string]any            `json:"documents"`
	Databases map[string]map[string]map[string]any `json:"databases,omitempty"`
}

func (f firestoreService) Snapshot() (json.RawMessage, error) {
	sb := f.sb
	s := firestoreState{Documents: map[string]map[string]any{}}
	for _, name := range sb.fs.Databases() {
		docs := sb.fs.Dump(name)
		if len(docs) == 0 {
			continue
		}
		m := map[string]map[string]any{}
		for _, d := range docs {
			m[strings.TrimPrefix(d.Name, name.Documents()+"/")] = firestore.EncodeFields(d.Fields, name)
		}
		if name == sb.def {
			s.Documents = m
			continue
		}
		if s.Databases == nil {
			s.Databases = map[string]map[string]map[string]any{}
		}
		s.Databases[name.String()] = m
	}
	return marshalState(s)
}

func (f firestoreService) Restore(state json.RawMessage) error {
	var s firestoreState
	if err := unmarshalState(state, &s); err != nil {
		return err
	}
	dbs, err := firestoreDocuments(f.sb.opts.Project, s.Documents, s.Databases)
	if err != nil {
		return err
	}
	sb := f.sb
	sb.fs.Reset()
	for _, name := range sortedDBs(dbs) {
		if err := sb.fs.Restore(name, dbs[name]); err != nil {
			return err
		}
		if sb.store == nil {
			continue
		}
		// Persist the documents with the times Restore gave them.
		stored := sb.fs.Dump(name)
		changes := make([]firestore.Change, 0, len(stored))
		for _, d := range stored {
			changes = append(changes, firestore.Change{Path: strings.TrimPrefix(d.Name, name.Documents()+"/"), Doc: d})
		}
		if err := sb.store.Commit(name, sb.now(), changes); err != nil {
			return err
		}
	}
	return nil
}

func marshalState(v any) (json.RawMessage, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return b, nil
}

// unmarshalState decodes a service's state, numbers kept exact (an
// integer stays an integer).
func unmarshalState(state json.RawMessage, v any) error {
	dec := json.NewDecoder(bytes.NewReader(state))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%w: %v", ErrSnapshot, err)
	}
	return nil
}

var _ service.Service = firestoreService{}
