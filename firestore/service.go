package firestore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/firestore/fsstore"
	"github.com/pyric/pyric/firestore/fsvalue"
	"github.com/pyric/pyric/sandbox/service"
)

// ServiceName is Firestore's name in a sandbox: its snapshot key, its
// Log's name and its key in an export's metadata.
const ServiceName = "firestore"

// Registration puts Firestore in a sandbox: an engine on the
// environment's clock, ids and events, durable through the environment's
// Log (one space per database, keyed by relative document path, holding
// each document's deterministic protobuf encoding), restoring what the
// Log holds. opts' Events, Now, NewID and Persister are the environment's.
func Registration(opts Options) service.Registration {
	return service.Registration{Name: ServiceName, New: func(env service.Env) (service.Service, error) {
		opts := opts
		opts.Events, opts.Now, opts.NewID, opts.Persister = env.Events, env.Now, env.NewID, nil
		if env.Log != nil {
			opts.Persister = logPersister{env.Log}
		}
		opts.Outbox = env.Outbox
		project := env.Project
		if project == "" {
			project = service.DefaultProject
		}
		s := &Service{Engine: New(opts), def: DatabaseName{Project: project, Database: DefaultDatabase}, log: env.Log, now: env.Now}
		if s.now == nil {
			s.now = time.Now
		}
		if env.Log != nil {
			if err := s.load(); err != nil {
				return nil, err
			}
		}
		return s, nil
	}}
}

// Service is Firestore as a sandbox runs it: the Engine on the service
// contract, with the sandbox's default database. A tool finds it with
// sandbox.Lookup[*firestore.Service] and calls the engine through it; the
// engine's own capabilities (service.LiveRules) are its.
type Service struct {
	*Engine
	def DatabaseName
	log service.Log
	now func() time.Time
}

var _ service.LiveRules = (*Service)(nil)

// Default names the sandbox's default database: the (default) database
// of its project.
func (s *Service) Default() DatabaseName { return s.def }

// logPersister makes commits durable in a service.Log.
type logPersister struct{ log service.Log }

func (p logPersister) Commit(name DatabaseName, t time.Time, changes []Change) error {
	return p.CommitHeld(name, t, changes, nil)
}

// CommitHeld appends the commits' changes and the outbox entries of
// their events (Options.Outbox) as one Log append: one durable record.
func (p logPersister) CommitHeld(name DatabaseName, _ time.Time, changes []Change, held []fsstore.Held) error {
	// The Log keeps nothing of the changes after Append returns, so their
	// slice is one kept for the next commit's.
	buf := logChangesPool.Get().(*[]service.LogChange)
	defer func() {
		clear(*buf) // the encodings are the commit's, not to be kept alive
		*buf = (*buf)[:0]
		logChangesPool.Put(buf)
	}()
	out := slices.Grow((*buf)[:0], len(changes)+len(held))[:len(changes)]
	*buf = out
	for i, c := range changes {
		out[i].Key = c.Path
		if c.Doc == nil {
			continue
		}
		out[i].Value = c.Data
		if out[i].Value == nil { // a caller without the encoding
			b, err := fsvalue.AppendDocument(nil, c.Doc)
			if err != nil {
				return err
			}
			out[i].Value = b
		}
	}
	for _, h := range held {
		out = append(out, service.LogChange{Key: h.Key, Value: h.Value, Outbox: true})
	}
	*buf = out
	return p.log.Append(logSpace(name), out)
}

// logChangesPool keeps the slices logPersister builds its Log appends in
// (pointers: putting a slice header itself would allocate).
var logChangesPool = sync.Pool{New: func() any { return new([]service.LogChange) }}

// logSpaceName is a database's name with its Log space, the name's
// string form.
type logSpaceName struct {
	name  DatabaseName
	space string
}

// lastLogSpace is the Log space of the database that committed last:
// commits are almost always to one database, and its name's string was
// made again at each.
var lastLogSpace atomic.Pointer[logSpaceName]

// logSpace is name's Log space, name.String().
func logSpace(name DatabaseName) string {
	if l := lastLogSpace.Load(); l != nil && l.name == name {
		return l.space
	}
	l := &logSpaceName{name: name, space: name.String()}
	lastLogSpace.Store(l)
	return l.space
}

// load restores what the Log holds: the engine checks the encodings and
// copies them out of the Log's values (valid only during its fn).
func (s *Service) load() error {
	return s.log.Load(func(space string, entries []service.LogChange) error {
		name, err := ParseDatabaseName(space)
		if err != nil {
			return &service.DamagedError{Problem: fmt.Sprintf("it holds a Firestore bucket named %q, which is not a database name", space)}
		}
		doc := func(i int) StoredDocument { return StoredDocument{Path: entries[i].Key, Data: entries[i].Value} }
		if err := s.Engine.RestoreStored(name, len(entries), doc); err != nil {
			var de *StoredDocumentError
			if errors.As(err, &de) {
				return &service.DamagedError{Problem: de.Error()}
			}
			return fmt.Errorf("restore %s: %w", name, err)
		}
		return nil
	})
}

func (s *Service) Name() string { return ServiceName }

// Unwrap implements service.Wrapper: sandbox.Lookup[*firestore.Engine]
// finds the engine.
func (s *Service) Unwrap() any { return s.Engine }

// Reset implements service.Service.
func (s *Service) Reset() error {
	s.Engine.Reset()
	return nil
}

// State is Firestore's snapshot state, the one declaration of its schema
// (service.TypedState): the default database's documents by relative
// path, and other databases' keyed by projects/P/databases/D, fields in
// the JSON form with typed markers.
type State struct {
	Documents map[string]map[string]any            `json:"documents"`
	Databases map[string]map[string]map[string]any `json:"databases,omitempty"`
}

// NewState implements service.TypedState.
func (s *Service) NewState() any { return &State{} }

// Describe implements service.Describer.
func (s *Service) Describe() string {
	return "Firestore: every database's documents by path, fields in the JSON form with typed markers."
}

// Snapshot implements service.Service.
func (s *Service) Snapshot() (json.RawMessage, error) {
	st := State{Documents: map[string]map[string]any{}}
	for _, name := range s.Engine.Databases() {
		docs := s.Engine.Dump(name)
		if len(docs) == 0 {
			continue
		}
		m := map[string]map[string]any{}
		for _, d := range docs {
			m[strings.TrimPrefix(d.Name, name.Documents()+"/")] = EncodeFields(d.Fields, name)
		}
		if name == s.def {
			st.Documents = m
			continue
		}
		if st.Databases == nil {
			st.Databases = map[string]map[string]map[string]any{}
		}
		st.Databases[name.String()] = m
	}
	return json.Marshal(st)
}

// ErrState wraps every error in a Firestore state Restore is given.
var ErrState = errors.New("invalid Firestore state")

// CheckState implements service.StateChecker.
func (s *Service) CheckState(state json.RawMessage) error {
	_, err := s.decodeState(state)
	return err
}

// decodeState decodes and validates a state's documents, by database.
func (s *Service) decodeState(state json.RawMessage) (map[DatabaseName][]*pb.Document, error) {
	var st State
	dec := json.NewDecoder(bytes.NewReader(state))
	dec.UseNumber() // an integer stays an integer
	if err := dec.Decode(&st); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrState, err)
	}
	return StateDocuments(s.def.Project, &st)
}

// Restore implements service.Service: the state's documents replace
// every database's, persisted with the times the restore gives them. A
// state that does not decode changes nothing.
func (s *Service) Restore(state json.RawMessage) error {
	dbs, err := s.decodeState(state)
	if err != nil {
		return err
	}
	s.Engine.Reset()
	names := make([]DatabaseName, 0, len(dbs))
	for n := range dbs {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return names[i].String() < names[j].String() })
	for _, name := range names {
		if err := s.Engine.Restore(name, dbs[name]); err != nil {
			return err
		}
		if s.log == nil {
			continue
		}
		stored := s.Engine.Dump(name)
		changes := make([]Change, 0, len(stored))
		for _, d := range stored {
			changes = append(changes, Change{Path: strings.TrimPrefix(d.Name, name.Documents()+"/"), Doc: d})
		}
		if err := (logPersister{s.log}).Commit(name, s.now(), changes); err != nil {
			return err
		}
	}
	return nil
}

// StateDocuments validates and converts a State's documents, by
// database; project names the default database's project.
func StateDocuments(project string, st *State) (map[DatabaseName][]*pb.Document, error) {
	out := map[DatabaseName][]*pb.Document{}
	add := func(name DatabaseName, docs map[string]map[string]any) error {
		paths := make([]string, 0, len(docs))
		for p := range docs {
			paths = append(paths, p)
		}
		sort.Strings(paths)
		for _, p := range paths {
			rel := strings.Trim(p, "/")
			if err := ValidateDocumentPath(rel); err != nil {
				return fmt.Errorf("%w: document %q: %v", ErrState, p, err)
			}
			if docs[p] == nil {
				return fmt.Errorf("%w: document %q: fields must be an object", ErrState, p)
			}
			fields, err := DecodeFields(docs[p], name)
			if err != nil {
				return fmt.Errorf("%w: document %q: %v", ErrState, p, err)
			}
			out[name] = append(out[name], &pb.Document{Name: name.DocName(rel), Fields: fields})
		}
		return nil
	}
	if err := add(DatabaseName{Project: project, Database: DefaultDatabase}, st.Documents); err != nil {
		return nil, err
	}
	for n, docs := range st.Databases {
		name, err := ParseDatabaseName(n)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrState, err)
		}
		if err := add(name, docs); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// exportDir is Firestore's part of an export, as the official emulator
// writes it.
const exportDir = "firestore_export"

// overallVersion is the first record of an overall_export_metadata file,
// as the official emulator writes it; its import (--seed_from_export,
// what `firebase emulators:start --import` passes) rejects a file without
// it: "Overall export metadata file version not supported".
var overallVersion = []byte{0x33}

// Export implements service.Exporter: the default database, in the
// Datastore export format the official emulator writes.
func (s *Service) Export(root string) (service.ExportEntry, error) {
	db := s.def
	docs := s.Engine.Dump(db)
	var recs [][]byte
	app := "dev~" + db.Project
	for _, d := range docs {
		rel := strings.TrimPrefix(d.Name, db.Documents()+"/")
		recs = append(recs, encodeEntity(app, rel, d.Fields, db))
	}
	fail := func(err error) (service.ExportEntry, error) { return service.ExportEntry{}, err }
	kinds := filepath.Join(root, exportDir, "all_namespaces", "all_kinds")
	if err := os.MkdirAll(kinds, 0o755); err != nil {
		return fail(err)
	}
	out := writeLog(recs)
	if err := writeExportFile(filepath.Join(kinds, "output-0"), out); err != nil {
		return fail(err)
	}
	now := uint64(time.Now().UnixMicro())
	var inner, files, meta []byte
	inner = protowire.AppendTag(inner, 1, protowire.BytesType)
	inner = protowire.AppendString(inner, exportDir)
	inner = protowire.AppendTag(inner, 2, protowire.VarintType)
	inner = protowire.AppendVarint(inner, now)
	inner = protowire.AppendTag(inner, 3, protowire.VarintType)
	inner = protowire.AppendVarint(inner, now)
	files = protowire.AppendTag(files, 1, protowire.BytesType)
	files = protowire.AppendString(files, "")
	files = protowire.AppendTag(files, 2, protowire.BytesType)
	files = protowire.AppendString(files, "output-0")
	meta = protowire.AppendTag(meta, 1, protowire.BytesType)
	meta = protowire.AppendBytes(meta, inner)
	meta = protowire.AppendTag(meta, 2, protowire.BytesType)
	meta = protowire.AppendBytes(meta, files)
	if err := writeExportFile(filepath.Join(kinds, "all_namespaces_all_kinds.export_metadata"), meta); err != nil {
		return fail(err)
	}
	var kind, entry []byte
	kind = protowire.AppendTag(kind, 1, protowire.VarintType)
	kind = protowire.AppendVarint(kind, 2)
	kind = protowire.AppendTag(kind, 3, protowire.VarintType)
	kind = protowire.AppendVarint(kind, 3)
	entry = protowire.AppendTag(entry, 1, protowire.BytesType)
	entry = protowire.AppendBytes(entry, kind)
	entry = protowire.AppendTag(entry, 2, protowire.BytesType)
	entry = protowire.AppendString(entry, "all_namespaces/all_kinds/all_namespaces_all_kinds.export_metadata")
	entry = protowire.AppendTag(entry, 3, protowire.VarintType)
	entry = protowire.AppendVarint(entry, 1)
	entry = protowire.AppendTag(entry, 4, protowire.VarintType)
	entry = protowire.AppendVarint(entry, uint64(len(out)))
	var overall []byte
	overall = protowire.AppendTag(overall, 1, protowire.BytesType)
	overall = protowire.AppendBytes(overall, entry)
	overallName := exportDir + ".overall_export_metadata"
	if err := writeExportFile(filepath.Join(root, exportDir, overallName), writeLog([][]byte{overallVersion, overall})); err != nil {
		return fail(err)
	}
	return service.ExportEntry{Path: exportDir, MetadataFile: exportDir + "/" + overallName}, nil
}

// ImportState implements service.Importer: the export's documents become
// the default database's.
func (s *Service) ImportState(dir string) (json.RawMessage, func() error, error) {
	docs, err := ReadExport(dir, s.def)
	if err != nil {
		return nil, nil, err
	}
	st := State{Documents: map[string]map[string]any{}}
	for p, f := range docs {
		st.Documents[p] = EncodeFields(f, s.def)
	}
	b, err := json.Marshal(st)
	return b, nil, err
}

func writeExportFile(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

var (
	_ service.Wrapper      = (*Service)(nil)
	_ service.TypedState   = (*Service)(nil)
	_ service.Exporter     = (*Service)(nil)
	_ service.Importer     = (*Service)(nil)
	_ service.Describer    = (*Service)(nil)
	_ service.StateChecker = (*Service)(nil)
	_ service.Records      = (*Service)(nil)

	_ service.SessionChecker = (*Service)(nil)
)

// CheckCapturedState implements service.SessionChecker: a captured
// Firestore state is {documents: {path: fields}} whose keys are document
// paths (an even number of segments).
func (s *Service) CheckCapturedState(state json.RawMessage, at string) error {
	var st struct {
		Documents map[string]map[string]any `json:"documents"`
	}
	dec := json.NewDecoder(bytes.NewReader(state))
	dec.UseNumber()
	err := dec.Decode(&st)
	if err == nil && dec.More() {
		err = errors.New("trailing data")
	}
	if err != nil {
		return &service.SessionError{Path: at, Msg: "must be {documents: {path: fields}}: " + err.Error()}
	}
	for p := range st.Documents {
		if strings.Count(strings.Trim(p, "/"), "/")%2 != 1 {
			return &service.SessionError{Path: at + ".documents", Msg: fmt.Sprintf("key %q is not a document path", p)}
		}
	}
	return nil
}

// CheckCommit implements service.SessionChecker: a Firestore commit
// changes a document, so its before and after are fields or null.
func (s *Service) CheckCommit(c *event.Commit, at string) error {
	return service.CheckRecordCommit(c, at)
}

// Seed implements service.Seeder: records maps document paths of the
// default database ("users/alice") to their fields in the JSON form; each
// is checked before any is written, then written as the admin in path
// order.
func (s *Service) Seed(ctx context.Context, records map[string]json.RawMessage) error {
	paths := make([]string, 0, len(records))
	for p := range records {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	docs := make(map[string]map[string]any, len(paths))
	for _, p := range paths {
		clean := strings.Trim(p, "/")
		if clean == "" || strings.Count(clean, "/")%2 != 1 || strings.Contains(clean, "//") {
			return fmt.Errorf("%w: key %q is not a document path (collection/doc)", service.ErrSeed, p)
		}
		var fields map[string]any
		d := json.NewDecoder(bytes.NewReader(records[p]))
		d.UseNumber()
		if err := d.Decode(&fields); err != nil || fields == nil {
			return fmt.Errorf("%w: %q: the document's fields must be a JSON object", service.ErrSeed, p)
		}
		docs[clean] = fields
	}
	adm := s.Admin()
	for _, p := range paths {
		clean := strings.Trim(p, "/")
		if err := adm.SetDocument(ctx, clean, docs[clean]); err != nil {
			return fmt.Errorf("%w: %q: %v", service.ErrSeed, p, err)
		}
	}
	return nil
}
