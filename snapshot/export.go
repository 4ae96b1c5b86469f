package snapshot

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/pyric/pyric/firestore"
	"github.com/pyric/pyric/sandbox"
	"github.com/pyric/pyric/storage"
)

// ExportMetadata is firebase-export-metadata.json, the Emulator Suite's
// index of an export directory.
type ExportMetadata struct {
	Version   string       `json:"version"`
	Firestore *ExportEntry `json:"firestore,omitempty"`
	Auth      *ExportEntry `json:"auth,omitempty"`
	Database  *ExportEntry `json:"database,omitempty"`
	Storage   *ExportEntry `json:"storage,omitempty"`
}

// ExportEntry is one service's part of an export.
type ExportEntry struct {
	Version      string `json:"version"`
	Path         string `json:"path"`
	MetadataFile string `json:"metadata_file,omitempty"`
}

// ExportVersion is the version pyric writes into export metadata.
const ExportVersion = "pyric-1"

const firestoreDir = "firestore_export"

// overallVersion is the first record of an overall_export_metadata file,
// as the official emulator writes it; its import (--seed_from_export,
// what `firebase emulators:start --import` passes) rejects a file without
// it: "Overall export metadata file version not supported".
var overallVersion = []byte{0x33}

// ExportDir writes sb's state into dir in the Emulator Suite's layout:
// firebase-export-metadata.json, firestore_export/ (the default
// database, in the Datastore export format the official emulator
// writes), auth_export/ (accounts.json, config.json as firebase-tools'
// Auth emulator writes them), database_export/<namespace>.json and
// storage_export/ (buckets.json, metadata/, blobs/ as firebase-tools'
// Storage emulator writes them).
func ExportDir(sb *sandbox.Sandbox, dir string) error {
	db := sb.Database()
	docs := sb.Firestore().Dump(db)
	var recs [][]byte
	app := "dev~" + db.Project
	for _, d := range docs {
		rel := strings.TrimPrefix(d.Name, db.Documents()+"/")
		recs = append(recs, encodeEntity(app, rel, d.Fields, db))
	}
	kinds := filepath.Join(dir, firestoreDir, "all_namespaces", "all_kinds")
	if err := os.MkdirAll(kinds, 0o755); err != nil {
		return err
	}
	out := writeLog(recs)
	if err := writeAtomic(filepath.Join(kinds, "output-0"), out); err != nil {
		return err
	}
	now := uint64(time.Now().UnixMicro())
	var inner, files, meta []byte
	inner = protowire.AppendTag(inner, 1, protowire.BytesType)
	inner = protowire.AppendString(inner, firestoreDir)
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
	if err := writeAtomic(filepath.Join(kinds, "all_namespaces_all_kinds.export_metadata"), meta); err != nil {
		return err
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
	overallName := firestoreDir + "." + "overall_export_metadata"
	if err := writeAtomic(filepath.Join(dir, firestoreDir, overallName), writeLog([][]byte{overallVersion, overall})); err != nil {
		return err
	}
	if err := exportAuth(sb, dir); err != nil {
		return err
	}
	md := ExportMetadata{Version: ExportVersion, Firestore: &ExportEntry{Version: ExportVersion, Path: firestoreDir,
		MetadataFile: firestoreDir + "/" + overallName}, Auth: &ExportEntry{Version: ExportVersion, Path: authDir}}
	states, err := serviceStates(sb)
	if err != nil {
		return err
	}
	if st, ok := states["database"]; ok {
		if err := exportDatabase(st, dir); err != nil {
			return err
		}
		md.Database = &ExportEntry{Version: ExportVersion, Path: databaseDir}
	}
	if e := storageEngine(sb); e != nil {
		if err := exportStorage(states[storage.Service], e.Buckets(), dir); err != nil {
			return err
		}
		md.Storage = &ExportEntry{Version: ExportVersion, Path: storageDir}
	}
	js, _ := json.MarshalIndent(md, "", "  ")
	return writeAtomic(filepath.Join(dir, "firebase-export-metadata.json"), js)
}

// serviceStates is every service's snapshot state, taken at one moment.
func serviceStates(sb *sandbox.Sandbox) (map[string]json.RawMessage, error) {
	snap, err := sb.Snapshot()
	if err != nil {
		return nil, err
	}
	var s struct {
		Services map[string]json.RawMessage `json:"services"`
	}
	if err := json.Unmarshal(snap, &s); err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	return s.Services, nil
}

// servicePath is a service's directory in an export, from its metadata
// entry ("" when the export has none); it must stay inside the export.
func servicePath(dir, svc string, e *ExportEntry) (string, error) {
	if e == nil || e.Path == "" {
		return "", nil
	}
	if filepath.IsAbs(e.Path) || strings.Contains(e.Path, "..") {
		return "", fmt.Errorf("%w: firebase-export-metadata.json: %s.path %q must be a relative path inside the export", ErrExport, svc, e.Path)
	}
	return filepath.Join(dir, e.Path), nil
}

func writeAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// ReadExportDir reads an Emulator Suite export directory (with
// firebase-export-metadata.json, or a bare firestore export directory)
// into the default database's documents by relative path.
func ReadExportDir(dir string, db firestore.DatabaseName) (map[string]map[string]*pb.Value, error) {
	fsDir := dir
	data, err := os.ReadFile(filepath.Join(dir, "firebase-export-metadata.json"))
	switch {
	case err == nil:
		var md ExportMetadata
		if err := json.Unmarshal(data, &md); err != nil {
			return nil, fmt.Errorf("%w: firebase-export-metadata.json: %v", ErrExport, err)
		}
		if md.Firestore == nil {
			return map[string]map[string]*pb.Value{}, nil
		}
		if md.Firestore.Path == "" || filepath.IsAbs(md.Firestore.Path) || strings.Contains(md.Firestore.Path, "..") {
			return nil, fmt.Errorf("%w: firebase-export-metadata.json: firestore.path %q must be a relative path inside the export", ErrExport, md.Firestore.Path)
		}
		fsDir = filepath.Join(dir, md.Firestore.Path)
	case !errors.Is(err, os.ErrNotExist):
		return nil, err
	}
	return ReadFirestoreExport(fsDir, db)
}

// ImportDir replaces sb's state with an export directory's: its Firestore
// documents, Realtime Database namespaces and Storage objects in one
// restore (all or nothing), then adds its Auth accounts (what `pyric
// serve --import DIR` does at start).
func ImportDir(sb *sandbox.Sandbox, dir string) error {
	db := sb.Database()
	docs, err := ReadExportDir(dir, db)
	if err != nil {
		return err
	}
	var md ExportMetadata
	if data, err := os.ReadFile(filepath.Join(dir, "firebase-export-metadata.json")); err == nil {
		if err := json.Unmarshal(data, &md); err != nil {
			return fmt.Errorf("%w: firebase-export-metadata.json: %v", ErrExport, err)
		}
	}
	authPath, err := servicePath(dir, "auth", md.Auth)
	if err != nil {
		return err
	}
	dbPath, err := servicePath(dir, "database", md.Database)
	if err != nil {
		return err
	}
	stPath, err := servicePath(dir, "storage", md.Storage)
	if err != nil {
		return err
	}
	state := map[string]map[string]any{}
	for p, f := range docs {
		state[p] = firestore.EncodeFields(f, db)
	}
	services := map[string]any{"firestore": map[string]any{"documents": state}}
	if dbPath != "" && sb.Service("database") != nil {
		st, err := readDatabaseExport(dbPath)
		if err != nil {
			return err
		}
		services["database"] = st
	}
	var buckets []string
	if e := storageEngine(sb); stPath != "" && e != nil {
		st, bs, err := readStorageExport(stPath)
		if err != nil {
			return err
		}
		services[storage.Service], buckets = st, bs
	}
	snap, err := json.Marshal(map[string]any{"version": sandbox.SnapshotVersion, "services": services})
	if err != nil {
		return err
	}
	if err := sb.LoadSnapshot(snap); err != nil {
		return err
	}
	for _, b := range buckets {
		if err := storageEngine(sb).CreateBucket(b); err != nil {
			return fmt.Errorf("storage import: bucket %s: %w", b, err)
		}
	}
	if authPath != "" {
		return importAuth(sb, authPath)
	}
	return nil
}

// ExportHandler is the admin endpoint behind `pyric export DIR --url`:
// POST {"dir": "/abs/path"} writes the export on the server's machine.
// Mount it on the admin plane, e.g. at /__pyric/export.
func ExportHandler(sb *sandbox.Sandbox) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", "POST")
			http.Error(w, `POST {"dir": "/absolute/path"} to export`, http.StatusMethodNotAllowed)
			return
		}
		var req struct {
			Dir string `json:"dir"`
		}
		if err := json.NewDecoder(io.LimitReader(r.Body, 1<<16)).Decode(&req); err != nil || req.Dir == "" || !filepath.IsAbs(req.Dir) {
			http.Error(w, `body must be {"dir": "/absolute/path"}`, http.StatusBadRequest)
			return
		}
		if err := ExportDir(sb, req.Dir); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"ok":true}`+"\n")
	})
}

// ExportDataDir exports the state of a stopped server's data directory.
func ExportDataDir(dataDir, dir string) error {
	sb, err := open(dataDir)
	if err != nil {
		return err
	}
	defer sb.Close()
	return ExportDir(sb, dir)
}

// ImportDataDir replaces a data directory's state with an export.
func ImportDataDir(dataDir, dir string) error {
	sb, err := open(dataDir)
	if err != nil {
		return err
	}
	if err := ImportDir(sb, dir); err != nil {
		sb.Close()
		return err
	}
	return sb.Close()
}
