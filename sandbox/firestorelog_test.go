package sandbox

import (
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/protobuf/proto"

	"github.com/pyric/pyric/firestore"
	"github.com/pyric/pyric/sandbox/service"
)

// The store's tests write and read Firestore's Log directly, as the
// Firestore service does through its environment.

// Commit implements firestore.Persister on Firestore's Log.
func (s *Store) Commit(name firestore.DatabaseName, _ time.Time, changes []firestore.Change) error {
	out := make([]service.LogChange, len(changes))
	for i, c := range changes {
		out[i].Key = c.Path
		if c.Doc == nil {
			continue
		}
		out[i].Value = c.Data
		if out[i].Value == nil {
			b, err := (proto.MarshalOptions{Deterministic: true}).Marshal(c.Doc)
			if err != nil {
				return err
			}
			out[i].Value = b
		}
	}
	return s.Log(firestore.ServiceName).Append(name.String(), out)
}

// LoadStored returns every document in Firestore's Log, encoded, by
// database, in path order.
func (s *Store) LoadStored() (map[firestore.DatabaseName][]firestore.StoredDocument, error) {
	out := map[firestore.DatabaseName][]firestore.StoredDocument{}
	err := s.Log(firestore.ServiceName).Load(func(space string, entries []service.LogChange) error {
		name, err := firestore.ParseDatabaseName(space)
		if err != nil {
			return err
		}
		for _, e := range entries {
			out[name] = append(out[name], firestore.StoredDocument{Path: e.Key, Data: e.Value})
		}
		return nil
	})
	return out, err
}

// Load reads and decodes every document in Firestore's Log.
func (s *Store) Load() (map[firestore.DatabaseName][]*pb.Document, error) {
	stored, err := s.LoadStored()
	if err != nil {
		return nil, err
	}
	out := map[firestore.DatabaseName][]*pb.Document{}
	for name, docs := range stored {
		for _, sd := range docs {
			d := &pb.Document{}
			if err := proto.Unmarshal(sd.Data, d); err != nil {
				return nil, err
			}
			out[name] = append(out[name], d)
		}
	}
	return out, nil
}
