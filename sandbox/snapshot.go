package sandbox

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"

	"github.com/pyric/pyric/auth"
	"github.com/pyric/pyric/firestore"
)

// SnapshotVersion is the version written in snapshots.
const SnapshotVersion = 2

// snapshotJSON is the committable fixture format: the original sandbox's
// blob ({version, savedAt, firestore: {path: fields}, services}) with typed
// values as markers, plus "databases" for databases other than the
// default one (keyed by projects/P/databases/D).
type snapshotJSON struct {
	Version   int                                  `json:"version"`
	SavedAt   string                               `json:"savedAt,omitempty"`
	Firestore map[string]map[string]any            `json:"firestore"`
	Databases map[string]map[string]map[string]any `json:"databases,omitempty"`
	Services  map[string]json.RawMessage           `json:"services"`
}

// Snapshot exports the whole state as indented JSON (keys sorted, so equal
// states give equal bytes).
func (sb *Sandbox) Snapshot() ([]byte, error) {
	s := snapshotJSON{Version: SnapshotVersion, SavedAt: sb.now().UTC().Format(time.RFC3339Nano),
		Firestore: map[string]map[string]any{}, Services: map[string]json.RawMessage{}}
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
			s.Firestore = m
			continue
		}
		if s.Databases == nil {
			s.Databases = map[string]map[string]map[string]any{}
		}
		s.Databases[name.String()] = m
	}
	if as := sb.auth.Snapshot(); len(as.Projects) > 0 {
		b, err := json.Marshal(as)
		if err != nil {
			return nil, fmt.Errorf("sandbox: snapshot auth: %w", err)
		}
		s.Services["auth"] = b
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		return nil, fmt.Errorf("sandbox: snapshot: %w", err)
	}
	return buf.Bytes(), nil
}

// ParseSnapshot decodes a snapshot into documents per database without
// touching any sandbox; project names the default database's project.
func ParseSnapshot(data []byte, project string) (map[firestore.DatabaseName][]*pb.Document, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var raw struct {
		Version   json.Number                          `json:"version"`
		Firestore map[string]map[string]any            `json:"firestore"`
		Databases map[string]map[string]map[string]any `json:"databases"`
	}
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrSnapshot, err)
	}
	if v := raw.Version.String(); v != "" && v != "1" && v != "2" {
		return nil, fmt.Errorf("%w: unsupported version %s", ErrSnapshot, v)
	}
	out := map[firestore.DatabaseName][]*pb.Document{}
	add := func(name firestore.DatabaseName, docs map[string]map[string]any) error {
		paths := make([]string, 0, len(docs))
		for p := range docs {
			paths = append(paths, p)
		}
		sort.Strings(paths)
		for _, p := range paths {
			rel := strings.Trim(p, "/")
			if err := firestore.ValidateDocumentPath(rel); err != nil {
				return fmt.Errorf("%w: document %q: %v", ErrSnapshot, p, err)
			}
			if docs[p] == nil {
				return fmt.Errorf("%w: document %q: fields must be an object", ErrSnapshot, p)
			}
			fields, err := firestore.DecodeFields(docs[p], name)
			if err != nil {
				return fmt.Errorf("%w: document %q: %v", ErrSnapshot, p, err)
			}
			out[name] = append(out[name], &pb.Document{Name: name.DocName(rel), Fields: fields})
		}
		return nil
	}
	def := firestore.DatabaseName{Project: project, Database: firestore.DefaultDatabase}
	if err := add(def, raw.Firestore); err != nil {
		return nil, err
	}
	for n, docs := range raw.Databases {
		name, err := firestore.ParseDatabaseName(n)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrSnapshot, err)
		}
		if err := add(name, docs); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// parseServices decodes the snapshot's "services" (today: "auth", the Auth
// engine's state).
func parseServices(data []byte) (*auth.Snapshot, error) {
	var raw struct {
		Services map[string]json.RawMessage `json:"services"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrSnapshot, err)
	}
	a, ok := raw.Services["auth"]
	if !ok || string(a) == "null" {
		return nil, nil
	}
	var s auth.Snapshot
	if err := json.Unmarshal(a, &s); err != nil {
		return nil, fmt.Errorf("%w: services.auth: %v", ErrSnapshot, err)
	}
	return &s, nil
}

// LoadSnapshot replaces the whole state with a snapshot (clobber restore:
// a reset, then the snapshot's documents and Auth state; persisted too when
// enabled).
func (sb *Sandbox) LoadSnapshot(data []byte) error {
	dbs, err := ParseSnapshot(data, sb.opts.Project)
	if err != nil {
		return err
	}
	as, err := parseServices(data)
	if err != nil {
		return err
	}
	if as != nil {
		// Validate before anything is reset.
		if err := auth.New(auth.Options{}).Restore(*as); err != nil {
			return fmt.Errorf("%w: services.auth: %v", ErrSnapshot, err)
		}
	}
	if err := sb.Reset(); err != nil {
		return err
	}
	if as != nil {
		if err := sb.auth.Restore(*as); err != nil {
			return fmt.Errorf("%w: services.auth: %v", ErrSnapshot, err)
		}
		if err := sb.SaveAuth(); err != nil {
			return err
		}
	}
	for _, name := range sortedDBs(dbs) {
		docs := dbs[name]
		if sb.store != nil {
			changes := make([]firestore.Change, len(docs))
			for i, d := range docs {
				changes[i] = firestore.Change{Path: strings.TrimPrefix(d.Name, name.Documents()+"/"), Doc: d}
			}
			// Persist the documents with the times Restore gives them.
			if err := sb.fs.Restore(name, docs); err != nil {
				return err
			}
			stored := sb.fs.Dump(name)
			changes = changes[:0]
			for _, d := range stored {
				changes = append(changes, firestore.Change{Path: strings.TrimPrefix(d.Name, name.Documents()+"/"), Doc: d})
			}
			if err := sb.store.Commit(name, sb.now(), changes); err != nil {
				return err
			}
			continue
		}
		if err := sb.fs.Restore(name, docs); err != nil {
			return err
		}
	}
	return nil
}
